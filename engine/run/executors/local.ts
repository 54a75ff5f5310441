/**
 * The `local` executor (the default): nodes run in this process, heavy
 * kinds in Web Workers, up to `jobs` at once.
 *
 * @module
 */
import * as v from "valibot";
import type { Executor, ExecutorKind } from "../executor.ts";
import { executeJob } from "../job.ts";

/** A parsed `executor: {type: local}` block. */
export interface LocalExecutorSpec {
  /** `local`. */
  readonly type: "local";
  /** Nodes in parallel. */
  readonly jobs?: number | undefined;
  /** No other fields. */
  readonly [field: string]: unknown;
}

/** `executor: {type: local}`: workers on this machine (the default). */
export const LocalExecutorSchema: ExecutorKind<LocalExecutorSpec>["spec"] = v
  .strictObject({
    type: v.literal("local"),
    jobs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  });

/** Options of {@linkcode localExecutor}. */
export interface LocalExecutorOptions {
  /** Nodes in parallel. @default navigator.hardwareConcurrency */
  readonly jobs?: number;
}

/**
 * The local executor.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { localExecutor } from "./local.ts";
 * const ex = localExecutor({ jobs: 2 });
 * assert.equal(ex.name, "local");
 * assert.equal(ex.jobs, 2);
 * ```
 */
export function localExecutor(options: LocalExecutorOptions = {}): Executor {
  return {
    name: "local",
    ...(options.jobs !== undefined ? { jobs: options.jobs } : {}),
    run: executeJob,
    describe: () =>
      `executor local (${
        options.jobs ?? navigator.hardwareConcurrency ?? 2
      } at once)`,
    close: () => Promise.resolve(),
  };
}

/** The `local` executor kind: `--jobs` over the block's `jobs`. */
export const local: ExecutorKind<LocalExecutorSpec> = {
  name: "local",
  description: "nodes run on this machine, heavy kinds in workers",
  module: import.meta.url,
  spec: LocalExecutorSchema,
  create(spec, run) {
    const jobs = run.jobs ?? spec?.jobs;
    return localExecutor(jobs !== undefined ? { jobs } : {});
  },
};
