/** Test kind `test.add`: value {sum, parts}. @module */
import * as v from "valibot";
import type { NodeKind } from "../types.ts";
import { record } from "./_record.ts";

const params = v.strictObject({
  a: v.number(),
  b: v.optional(v.number(), 0),
  more: v.optional(v.array(v.number()), []),
  note: v.optional(v.unknown()),
});

/** Adds numbers. */
export const kind: NodeKind<v.InferOutput<typeof params>> = {
  name: "test.add",
  description: "adds a, b and more (test kind)",
  params,
  module: import.meta.url,
  run(p, ctx) {
    record(ctx);
    const sum = p.a + p.b + p.more.reduce((s, x) => s + x, 0);
    return Promise.resolve({
      value: { sum, parts: [p.a, p.b, ...p.more] },
      report: { seed: ctx.seed },
    });
  },
};
