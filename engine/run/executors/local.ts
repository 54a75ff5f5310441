/**
 * The `local` executor (the default): nodes run in this process, heavy
 * kinds in warm Web Workers (one per job slot, see `../worker_pool.ts`), up
 * to `jobs` at once.
 *
 * @module
 */
import * as v from "valibot";
import type { Executor, ExecutorKind } from "../executor.ts";
import { executeJob } from "../job.ts";
import { DEFAULT_WORKER_MEMORY_BYTES, WorkerPool } from "../worker_pool.ts";

/** A parsed `executor: {type: local}` block. */
export interface LocalExecutorSpec {
  /** `local`. */
  readonly type: "local";
  /** Nodes in parallel. */
  readonly jobs?: number | undefined;
  /** `warm` (default): one long-lived worker per job slot; `fresh`: one per heavy node. */
  readonly workers?: "warm" | "fresh" | undefined;
  /** Retire a warm worker whose heap passes this many MiB after a node. @default 1024 */
  readonly worker_memory_mb?: number | undefined;
  /** No other fields. */
  readonly [field: string]: unknown;
}

/** `executor: {type: local}`: workers on this machine (the default). */
export const LocalExecutorSchema: ExecutorKind<LocalExecutorSpec>["spec"] = v
  .strictObject({
    type: v.literal("local"),
    jobs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
    workers: v.optional(v.picklist(["warm", "fresh"])),
    worker_memory_mb: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(64)),
    ),
  });

/** Options of {@linkcode localExecutor}. */
export interface LocalExecutorOptions {
  /** Nodes in parallel. @default navigator.hardwareConcurrency */
  readonly jobs?: number;
  /** A new worker for every heavy node instead of warm ones. @default false */
  readonly fresh?: boolean;
  /** Memory bound of a warm worker (bytes). @default 1 GiB */
  readonly workerMemoryBytes?: number;
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
  return _localExecutor(options, []);
}

function _localExecutor(
  options: LocalExecutorOptions,
  heavyModules: readonly string[],
): Executor {
  const jobs = options.jobs ?? navigator.hardwareConcurrency ?? 2;
  const workers = new WorkerPool({
    size: jobs,
    fresh: options.fresh ?? false,
    memoryBytes: options.workerMemoryBytes ?? DEFAULT_WORKER_MEMORY_BYTES,
  });
  return {
    name: "local",
    ...(options.jobs !== undefined ? { jobs: options.jobs } : {}),
    run: (job, store, o) => {
      // the first heavy node to run has every warm worker import the
      // experiment's heavy kinds (a fully cached run starts no worker)
      if (job.kind.heavy) workers.preload(heavyModules);
      return executeJob(job, store, { ...o, workers });
    },
    describe: () =>
      `executor local (${jobs} at once, ${
        workers.fresh ? "a fresh worker per heavy node" : "warm workers"
      })`,
    summary: () => workerSummary(workers),
    close: () => workers.close(),
  };
}

/**
 * The end-of-run line of a worker pool: the largest heap a worker had after
 * a node against the bound, and how many workers were retired for memory;
 * `undefined` when no node ran in a worker.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { WorkerPool } from "../worker_pool.ts";
 * import { workerSummary } from "./local.ts";
 * assert.equal(workerSummary(new WorkerPool({ size: 2 })), undefined);
 * ```
 */
export function workerSummary(pool: WorkerPool): string | undefined {
  const s = pool.stats;
  if (s.nodes === 0) return undefined;
  const mb = (b: number) => Math.round(b / 2 ** 20);
  return `workers: ${s.nodes} node${
    s.nodes === 1 ? "" : "s"
  } in ${s.started} worker${
    s.started === 1 ? "" : "s"
  }; largest heap after a node ${mb(s.peakHeapBytes)} MB (bound ${
    mb(pool.memoryBytes)
  } MB per worker, ${s.retiredForMemory} retired for memory)`;
}

/**
 * The `local` executor kind: `--jobs` over the block's `jobs`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { local } from "./local.ts";
 * const run = {
 *   exp: { name: "e", nodes: [] },
 *   store: { runDir: () => "/tmp" },
 *   runId: "r1",
 *   jobs: 3,
 * };
 * const executor = local.create({ type: "local", jobs: 2 }, run);
 * assert.equal(executor.jobs, 3); // --jobs wins over the block
 * assert.match(executor.describe(), /^executor local \(3 at once/);
 * await executor.close();
 * ```
 */
export const local: ExecutorKind<LocalExecutorSpec> = {
  name: "local",
  description: "nodes run on this machine, heavy kinds in workers",
  module: import.meta.url,
  spec: LocalExecutorSchema,
  create(spec, run) {
    const jobs = run.jobs ?? spec?.jobs;
    const heavy = [
      ...new Set(
        run.exp.nodes.filter((n) => n.kind.heavy).map((n) => n.kind.module),
      ),
    ];
    return _localExecutor({
      ...(jobs !== undefined ? { jobs } : {}),
      ...(spec?.workers === "fresh" ? { fresh: true } : {}),
      ...(spec?.worker_memory_mb !== undefined
        ? { workerMemoryBytes: spec.worker_memory_mb * 2 ** 20 }
        : {}),
    }, heavy);
  },
};
