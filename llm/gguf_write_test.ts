import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  encodeGguf,
  encodeTensorData,
  f16Bits,
  GgufWriteError,
} from "./gguf_write.ts";
import { GGUF_SHAPES, randomGguf, randomGgufBytes } from "./random_gguf.ts";

Deno.test("f16Bits rounds to the nearest half-precision value", () => {
  assert.equal(f16Bits(1), 0x3c00);
  assert.equal(f16Bits(-2), 0xc000);
  assert.equal(f16Bits(0.5), 0x3800);
  assert.equal(f16Bits(65504), 0x7bff); // largest finite half
  assert.equal(f16Bits(1e6), 0x7c00); // overflow: infinity
  assert.equal(f16Bits(-0), 0x8000);
  assert.equal(f16Bits(2 ** -24), 0x0001); // smallest subnormal
  assert.equal(f16Bits(2 ** -26), 0x0000); // underflow
  assert.equal(f16Bits(1 + 2 ** -11), 0x3c00); // tie: to even
  assert.equal(f16Bits(1 + 3 * 2 ** -11), 0x3c02);
  assert.equal(f16Bits(Number.NaN) & 0x7c00, 0x7c00);
});

Deno.test("q8_0 blocks: an f16 scale and 32 int8 values that reconstruct the input", () => {
  const x = Float32Array.from({ length: 64 }, (_, i) => Math.sin(i) * 0.05);
  const b = encodeTensorData("q8_0", x);
  assert.equal(b.length, 2 * 34);
  const view = new DataView(b.buffer);
  for (let blk = 0; blk < 2; blk++) {
    const h = view.getUint16(blk * 34, true);
    // decode the half scale
    const e = (h >> 10) & 0x1f, m = h & 0x3ff;
    const d = e === 0 ? m / 1024 * 2 ** -14 : (1 + m / 1024) * 2 ** (e - 15);
    for (let i = 0; i < 32; i++) {
      const q = view.getInt8(blk * 34 + 2 + i);
      assert.ok(Math.abs(q * d - x[blk * 32 + i]!) <= d * 0.51 + 1e-6);
    }
  }
  assert.throws(
    () =>
      encodeGguf({
        metadata: [],
        tensors: [{
          name: "w",
          dims: [48],
          type: "q8_0",
          data: new Float32Array(48),
        }],
      }),
    (e) => e instanceof GgufWriteError && /multiple of 32/.test(e.message),
  );
});

Deno.test("encodeGguf writes the v3 header, typed metadata and aligned tensor offsets", () => {
  const bytes = encodeGguf({
    metadata: [
      { key: "general.architecture", type: "string", value: "llama" },
      { key: "n", type: "u32", value: 7 },
      { key: "list", type: "array", itemType: "i32", value: [1, -2] },
    ],
    tensors: [
      { name: "a", dims: [3], type: "f32", data: new Float32Array([1, 2, 3]) },
      { name: "b", dims: [2, 2], type: "f16", data: new Float32Array(4) },
    ],
  });
  const v = new DataView(bytes.buffer);
  assert.equal(new TextDecoder().decode(bytes.subarray(0, 4)), "GGUF");
  assert.equal(v.getUint32(4, true), 3);
  assert.equal(Number(v.getBigUint64(8, true)), 2); // tensors
  assert.equal(Number(v.getBigUint64(16, true)), 3); // metadata entries
  // first key: u64 length + "general.architecture", then type 8 (string)
  assert.equal(Number(v.getBigUint64(24, true)), 20);
  assert.equal(v.getUint32(24 + 8 + 20, true), 8);
  // the data section starts aligned to 32, tensor a's values first
  const dataStart = bytes.length - 32 - 32; // a: 12 B padded to 32; b: 8 B padded to 32
  assert.equal(dataStart % 32, 0);
  assert.deepEqual(
    [...new Float32Array(bytes.buffer.slice(dataStart, dataStart + 12))],
    [1, 2, 3],
  );
  assert.throws(
    () =>
      encodeGguf({
        metadata: [],
        tensors: [{
          name: "c",
          dims: [4],
          type: "f32",
          data: new Float32Array(3),
        }],
      }),
    /3 values for dimensions 4/,
  );
});

Deno.test("random models: deterministic per seed, tiny under 1 MB, real shapes' parameter counts", () => {
  const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
  const a = randomGgufBytes({ seed: 1 });
  assert.ok(a.length < 1_000_000, `${a.length} bytes`);
  assert.equal(sha(a), sha(randomGgufBytes({ seed: 1 })));
  assert.notEqual(sha(a), sha(randomGgufBytes({ seed: 2 })));
  const count = (shape: string) =>
    randomGguf({ shape }).tensors.reduce(
      (n, t) => n + t.dims.reduce((x, y) => x * y, 1),
      0,
    );
  // SmolLM2-135M: 134.5M parameters (tied embeddings); Qwen2.5-0.5B: 494M.
  assert.equal(Math.round(count("smollm2-135m") / 1e5) / 10, 134.5);
  assert.equal(Math.round(count("qwen2.5-0.5b") / 1e6), 494);
  const tokens = randomGguf({ shape: "qwen2.5-0.5b" }).metadata.find((m) =>
    m.key === "tokenizer.ggml.tokens"
  )!.value as readonly string[];
  assert.equal(tokens.length, GGUF_SHAPES["qwen2.5-0.5b"]!.vocab);
  assert.equal(new Set(tokens).size, tokens.length);
  assert.throws(() => randomGguf({ shape: "gpt-5" }), /unknown GGUF shape/);
});
