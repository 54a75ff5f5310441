import { scaledMs } from "../engine/testdata/load.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { checkGgufHeader } from "./gguf_header.ts";
import { LlmConfigError } from "./errors.ts";
import { encodeGguf } from "./gguf_write.ts";
import { randomGgufBytes } from "./random_gguf.ts";

function u64(n: bigint): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, n, true);
  return b;
}

function cat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const enc = new TextEncoder();
const u32 = (n: number) => new Uint8Array(new Uint32Array([n]).buffer);

Deno.test("checkGgufHeader: accepts what the writer and the random models write (every tensor type, alignments)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-gguf-" });
  try {
    for (const type of ["f32", "f16", "q8_0"] as const) {
      const bytes = randomGgufBytes({ shape: "tiny", seed: 1, type });
      const p = join(dir, `tiny-${type}.gguf`);
      Deno.writeFileSync(p, bytes);
      const info = checkGgufHeader(p);
      assert.equal(info.version, 3);
      assert.ok(info.tensors > 10);
      assert.ok(info.metadata > 5);
    }
    for (const alignment of [32, 64, 256]) {
      const p = join(dir, `a${alignment}.gguf`);
      Deno.writeFileSync(
        p,
        encodeGguf({
          alignment,
          metadata: [
            { key: "general.architecture", type: "string", value: "llama" },
            { key: "v", type: "array", itemType: "u32", value: [1, 2, 3] },
            { key: "s", type: "array", itemType: "string", value: ["a", ""] },
          ],
          tensors: [
            { name: "w", dims: [64], type: "q8_0", data: new Float32Array(64) },
            {
              name: "b",
              dims: [3, 5],
              type: "f16",
              data: new Float32Array(15),
            },
          ],
        }),
      );
      assert.equal(checkGgufHeader(p).alignment, alignment);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("checkGgufHeader: refuses in milliseconds, in one line, a file that cannot be a model", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-gguf-" });
  try {
    const good = randomGgufBytes({ shape: "tiny", seed: 1, type: "f32" });
    const cases: [string, Uint8Array, RegExp][] = [
      [
        "magic",
        enc.encode("GGML-not-a-model"),
        /is not a GGUF model file \(it does not start with "GGUF"\)/,
      ],
      [
        "version",
        cat(enc.encode("GGUF"), u32(7), u64(0n), u64(0n)),
        /version 7/,
      ],
      [
        "tensor count 2^63-1",
        cat(
          enc.encode("GGUF"),
          u32(3),
          u64(2n ** 63n - 1n),
          u64(0n),
          new Uint8Array(64),
        ),
        /the tensor count at byte 8 is 9223372036854775807, more than the \d+ bytes left/,
      ],
      [
        "kv count 2^62",
        cat(
          enc.encode("GGUF"),
          u32(3),
          u64(0n),
          u64(2n ** 62n),
          new Uint8Array(64),
        ),
        /the metadata count at byte 16 is 4611686018427387904/,
      ],
      [
        "key length",
        cat(
          enc.encode("GGUF"),
          u32(3),
          u64(0n),
          u64(1n),
          u64(2n ** 40n),
          new Uint8Array(16),
        ),
        /the length of key 0 at byte 24 is 1099511627776/,
      ],
      [
        "truncated",
        good.subarray(0, good.length - 5000),
        /needs bytes .*\(truncated\?\)/,
      ],
      ["header cut", good.subarray(0, 200), /truncated|more than the/],
    ];
    for (const [name, bytes, expected] of cases) {
      const p = join(dir, "bad.gguf");
      Deno.writeFileSync(p, bytes);
      const t0 = performance.now();
      assert.throws(
        () => checkGgufHeader(p),
        (e: unknown) =>
          e instanceof LlmConfigError && expected.test(e.message) &&
          !e.message.includes("\n") && e.message.startsWith(p),
        name,
      );
      assert.ok(
        performance.now() - t0 < scaledMs(200),
        `${name}: ${performance.now() - t0} ms`,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
