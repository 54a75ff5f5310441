/**
 * Where nodes run: the {@linkcode Executor} interface and the `local`
 * executor. {@linkcode runPlan} keeps the graph (dependency order, failure
 * propagation, manifest); an executor only runs one ready node at a time
 * through its {@linkcode JobRunner} and resolves when the node's entry is in
 * the store. The `slurm` executor (`slurm_executor.ts`) submits each node as
 * an sbatch job that runs `run-node KEY` against the shared cache.
 *
 * @module
 */
import { executeJob, type JobRunner } from "./executor.ts";

/** Runs ready nodes somewhere. */
export interface Executor {
  /** `local`, `slurm`, ... (recorded in the manifest). */
  readonly name: string;
  /** How many nodes it runs at once unless `--jobs` says otherwise. */
  readonly jobs?: number;
  /** Runs one node (see {@linkcode JobRunner}). */
  readonly run: JobRunner;
  /** One line for the start of a run (where nodes go, where logs are). */
  describe(): string;
  /** Called once after the run: stops polling, cancels anything left. */
  close(): Promise<void>;
}

/** Options of {@linkcode localExecutor}. */
export interface LocalExecutorOptions {
  /** Nodes in parallel. @default navigator.hardwareConcurrency */
  readonly jobs?: number;
}

/**
 * The default executor: nodes run in this process, heavy kinds in Web
 * Workers, up to `jobs` at once.
 *
 * @example
 * ```ts
 * import { localExecutor } from "./executor_api.ts";
 * const ex = localExecutor({ jobs: 2 });
 * console.log(ex.name, ex.jobs); // local 2
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
