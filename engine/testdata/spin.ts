/** Test kind `test.spin` (heavy: runs in a worker): busy arithmetic, value {x, inWorker}. @module */
import * as v from "valibot";
import type { NodeKind } from "../types.ts";
import { record } from "./_record.ts";

const params = v.strictObject({
  n: v.pipe(v.number(), v.integer(), v.minValue(1)),
  input: v.optional(v.unknown()),
  fail: v.optional(v.string()),
});

/** Spins. */
export const kind: NodeKind<v.InferOutput<typeof params>> = {
  name: "test.spin",
  description: "busy loop (heavy test kind)",
  params,
  module: import.meta.url,
  heavy: true,
  async run(p, ctx) {
    let x = ctx.seed >>> 0;
    for (let i = 0; i < p.n; i++) {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      if (i % 100000 === 0) ctx.progress(i, p.n);
    }
    if (p.fail) {
      ctx.log("failing on purpose");
      throw new RangeError(p.fail);
    }
    const bytes = new TextEncoder().encode(`spin ${x}`);
    const blob = await ctx.writeBlob(bytes, "text/plain");
    record(ctx);
    const inWorker = "WorkerGlobalScope" in globalThis;
    return { value: { x, inWorker, blob: blob as never } };
  },
};
