import assert from "node:assert/strict";
import { buildAll, buildWat, DERIVED_KERNELS, KERNEL_NAMES } from "./build.ts";

Deno.test("the committed .wasm kernels are exactly what their WAT sources build to", async () => {
  const lines: string[] = [];
  const built = await buildAll((line) => lines.push(line));
  assert.deepEqual([...built.keys()], [
    ...KERNEL_NAMES,
    ...DERIVED_KERNELS.map((d) => d.name),
  ]);
  for (const [name, bytes] of built) {
    const committed = await Deno.readFile(
      new URL(`./${name}.wasm`, import.meta.url),
    );
    assert.ok(
      committed.length === bytes.length &&
        committed.every((b, i) => b === bytes[i]),
      `${name}.wasm is stale: run ./envsmith build:wasm and commit it`,
    );
  }
  // every multiply-add of mlp.wat is fused in mlp_fma (none left for a side effect)
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /^mlp_fma: \d+ multiply-adds fused$/);
});

Deno.test("mlp_fma.wasm has mlp.wasm's interface and rounds a gemm multiply-add once", async () => {
  const load = async (name: string) =>
    new WebAssembly.Module(
      await Deno.readFile(new URL(`./${name}.wasm`, import.meta.url)),
    );
  const plain = await load("mlp"), fma = await load("mlp_fma");
  assert.deepEqual(
    WebAssembly.Module.exports(fma),
    WebAssembly.Module.exports(plain),
  );
  assert.deepEqual(
    WebAssembly.Module.imports(fma),
    WebAssembly.Module.imports(plain),
  );
  // C = bias + A B with A = 1 + 2^-23, B = 1 - 2^-23, bias = -1: the exact
  // value is -2^-46; rounding the product first gives 0
  const gemm = (mod: WebAssembly.Module) => {
    const memory = new WebAssembly.Memory({ initial: 1 });
    const k = new WebAssembly.Instance(mod, { env: { memory } }).exports as {
      gemm(...args: number[]): void;
    };
    const f = new Float32Array(memory.buffer);
    f.fill(1 + 2 ** -23, 0, 4); // A at 0 (1 x 1)
    f.fill(1 - 2 ** -23, 4, 8); // B at 16 (1 x 4)
    f.fill(-1, 8, 12); // bias at 32
    k.gemm(0, 1, 16, 4, 64, 4, 32, 1, 1, 4);
    return [...f.slice(16, 20)];
  };
  assert.deepEqual(gemm(plain), [0, 0, 0, 0]);
  // what this CPU's relaxed_madd gives (fused wherever V8 has FMA)
  const probe = new WebAssembly.Instance(
    new WebAssembly.Module(
      await buildWat(
        "probe",
        `(module (func (export "madd") (param f32 f32 f32) (result f32)
          (f32x4.extract_lane 0 (f32x4.relaxed_madd (f32x4.splat (local.get 0))
            (f32x4.splat (local.get 1)) (f32x4.splat (local.get 2))))))`,
        true,
      ) as Uint8Array<ArrayBuffer>,
    ),
  ).exports as { madd(a: number, b: number, c: number): number };
  const fused = probe.madd(1 + 2 ** -23, 1 - 2 ** -23, -1);
  assert.ok(fused === -(2 ** -46) || fused === 0);
  assert.deepEqual(gemm(fma), [fused, fused, fused, fused]);
});
