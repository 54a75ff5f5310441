/**
 * Builds the WebAssembly kernels from their WAT sources with npm `wabt`
 * (pinned in `deno.json`), offline and reproducibly: the same sources and
 * the same wabt version give the same bytes, and the committed `.wasm`
 * files must be exactly those bytes (`build_test.ts` checks it).
 *
 * `mlp_fma.wasm` is derived from the same `mlp.wat`: every f32x4 multiply
 * followed by an add becomes one relaxed-SIMD `f32x4.relaxed_madd`
 * (`fuse_madd.ts`), fused on a CPU with FMA, so its results are not
 * bit-identical across CPUs; the build prints how many it fused.
 *
 * ```sh
 * ./envsmith build:wasm             # rewrite policy/kernels/*.wasm
 * ./envsmith build:wasm --check     # exit 1 if a committed .wasm is stale
 * ```
 *
 * @module
 */
import wabtInit from "wabt";
import { fuseMultiplyAdds } from "./fuse_madd.ts";

/** The kernels built here: `<name>.wat` -> `<name>.wasm` in this folder. */
export const KERNEL_NAMES = ["mlp", "obs"] as const;

/** Kernels derived from another's source by a rewrite: `<name>.wasm` from `<from>.wat`. */
export const DERIVED_KERNELS = [
  { name: "mlp_fma", from: "mlp" },
] as const;

/** WebAssembly features the sources use (beyond the MVP). */
const FEATURES = { simd: true, multi_value: true, bulk_memory: true };

/**
 * Compile WAT text to a binary module (with its name section, for readable
 * stack traces); `relaxed` also accepts relaxed-SIMD instructions.
 */
export async function buildWat(
  name: string,
  wat: string,
  relaxed = false,
): Promise<Uint8Array> {
  const wabt = await wabtInit();
  const module = wabt.parseWat(
    `${name}.wat`,
    wat,
    relaxed ? { ...FEATURES, relaxed_simd: true } : FEATURES,
  );
  try {
    module.resolveNames();
    module.validate();
    const { buffer } = module.toBinary({
      log: false,
      canonicalize_lebs: true,
      relocatable: false,
      write_debug_names: true,
    });
    return new Uint8Array(buffer);
  } finally {
    module.destroy();
  }
}

/**
 * Build every kernel from the sources beside this file, the derived ones
 * last; returns name -> bytes. `log` receives one line per derived kernel
 * (what the rewrite did).
 */
export async function buildAll(
  log: (line: string) => void = () => {},
): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>();
  const read = (name: string) =>
    Deno.readTextFile(new URL(`./${name}.wat`, import.meta.url));
  for (const name of KERNEL_NAMES) {
    out.set(name, await buildWat(name, await read(name)));
  }
  for (const { name, from } of DERIVED_KERNELS) {
    const { wat, fused, kept } = fuseMultiplyAdds(await read(from));
    log(
      `${name}: ${fused} multiply-adds fused${
        kept ? `, ${kept} left unfused (a side effect would move)` : ""
      }`,
    );
    out.set(name, await buildWat(name, wat, true));
  }
  return out;
}

function _same(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

if (import.meta.main) {
  const check = Deno.args.includes("--check");
  let stale = 0;
  for (const [name, bytes] of await buildAll(console.log)) {
    const url = new URL(`./${name}.wasm`, import.meta.url);
    let old: Uint8Array | undefined;
    try {
      old = await Deno.readFile(url);
    } catch { /* not built yet */ }
    if (old && _same(old, bytes)) {
      console.log(`${name}.wasm is up to date (${bytes.length} bytes)`);
    } else if (check) {
      stale++;
      console.error(
        `${name}.wasm does not match its WAT source: run ./envsmith build:wasm and commit the result`,
      );
    } else {
      await Deno.writeFile(url, bytes);
      console.log(`wrote ${name}.wasm (${bytes.length} bytes)`);
    }
  }
  if (stale > 0) Deno.exit(1);
}
