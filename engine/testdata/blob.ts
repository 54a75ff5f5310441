/** Test kind `test.blob`: writes `size` seeded bytes as a blob; with `read`, sums the bytes of a blob. @module */
import * as v from "valibot";
import type { BlobRef, NodeKind } from "../types.ts";
import { record } from "./_record.ts";

const params = v.strictObject({
  size: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 0),
  read: v.optional(v.unknown()),
});

/** Writes or reads a blob. */
export const kind: NodeKind<v.InferOutput<typeof params>> = {
  name: "test.blob",
  description: "writes/reads a blob (test kind)",
  params,
  module: import.meta.url,
  async run(p, ctx) {
    record(ctx);
    if (p.read) {
      const bytes = await ctx.readBlob(p.read as BlobRef);
      let sum = 0;
      for (const b of bytes) sum += b;
      return { value: { sum, size: bytes.length } };
    }
    const bytes = new Uint8Array(p.size);
    let x = ctx.seed;
    for (let i = 0; i < bytes.length; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      bytes[i] = x >>> 24;
    }
    const ref = await ctx.writeBlob(bytes, "application/octet-stream");
    return { value: { blob: ref as never } };
  },
};
