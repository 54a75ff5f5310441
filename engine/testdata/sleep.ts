/** Test kind `test.sleep`: waits `ms` in `steps` steps with progress, returns {value, seed}. @module */
import * as v from "valibot";
import type { NodeKind } from "../types.ts";
import { record } from "./_record.ts";

const params = v.strictObject({
  ms: v.pipe(v.number(), v.minValue(0)),
  steps: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 4),
  value: v.optional(v.unknown()),
  tag: v.optional(v.string()),
});

/** Sleeps. */
export const kind: NodeKind<v.InferOutput<typeof params>> = {
  name: "test.sleep",
  description: "sleeps ms milliseconds (test kind)",
  params,
  module: import.meta.url,
  async run(p, ctx) {
    for (let i = 0; i < p.steps; i++) {
      ctx.progress(i, p.steps, `step ${i}`);
      await new Promise((r) => setTimeout(r, p.ms / p.steps));
      if (ctx.signal.aborted) throw new Error("aborted");
    }
    ctx.progress(p.steps, p.steps);
    ctx.log(`slept ${p.ms} ms`);
    record(ctx);
    return { value: { value: (p.value ?? null) as never, seed: ctx.seed } };
  },
};
