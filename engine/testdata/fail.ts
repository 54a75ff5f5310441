/** Test kind `test.fail`: always throws. @module */
import * as v from "valibot";
import type { NodeKind } from "../types.ts";
import { record } from "./_record.ts";

const params = v.strictObject({
  message: v.string(),
  input: v.optional(v.unknown()),
});

/** Fails. */
export const kind: NodeKind<v.InferOutput<typeof params>> = {
  name: "test.fail",
  description: "throws an error (test kind)",
  params,
  module: import.meta.url,
  run(p, ctx) {
    record(ctx);
    ctx.log("about to fail");
    return Promise.reject(new Error(p.message));
  },
};
