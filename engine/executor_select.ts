/**
 * Chooses the executor of a run: `--executor` on the command line wins over
 * the experiment's `executor:` block; without either, nodes run locally.
 * `--executor slurm` on a file without a Slurm block uses the cluster's
 * defaults (default partition, the site's default resources).
 *
 * @module
 */
import { join } from "node:path";
import type { SlurmExecutorSpec } from "../schemas/experiment.ts";
import { UserError } from "./errors.ts";
import type { Experiment } from "./experiment.ts";
import { type Executor, localExecutor } from "./executor_api.ts";
import type { SlurmClient } from "./slurm_client.ts";
import { SlurmExecutor } from "./slurm_executor.ts";
import type { Store } from "./store.ts";

/** The executor names `--executor` accepts. */
export const EXECUTORS = ["local", "slurm"] as const;

/** An executor name. */
export type ExecutorName = typeof EXECUTORS[number];

/** Options of {@linkcode createExecutor}. */
export interface CreateExecutorOptions {
  /** `--executor`. @default the experiment's `executor.type`, else "local" */
  readonly executor?: string;
  /** `--jobs` (local: nodes in parallel). */
  readonly jobs?: number;
  /** Run id (the Slurm executor keeps its files in the run directory). */
  readonly runId: string;
  /**
   * Deno arguments that start this CLI on another machine, without the
   * binary and `--cache` (e.g. `["run", "-A", "/repo/cli.ts"]`). Needed by
   * remote executors.
   */
  readonly command?: readonly string[];
  /** Slurm commands (tests). @default the real ones */
  readonly slurmClient?: SlurmClient;
  /** Poll/check intervals of the Slurm executor (tests). */
  readonly slurmCheckMs?: number;
}

/** The executor for a run of `exp`. Throws {@linkcode UserError} for an unknown name. */
export function createExecutor(
  exp: Experiment,
  store: Store,
  options: CreateExecutorOptions,
): Executor {
  const name = options.executor ?? exp.executor?.type ?? "local";
  if (!(EXECUTORS as readonly string[]).includes(name)) {
    throw new UserError(
      `Unknown executor "${name}": use ${EXECUTORS.join(" or ")}`,
    );
  }
  if (name === "local") {
    const jobs = options.jobs ??
      (exp.executor?.type === "local" ? exp.executor.jobs : undefined);
    return localExecutor(jobs !== undefined ? { jobs } : {});
  }
  if (!options.command) {
    throw new UserError(
      "The slurm executor needs the command that starts envsmith's CLI on the compute nodes; run it through cli.ts",
    );
  }
  const spec: SlurmExecutorSpec = exp.executor?.type === "slurm"
    ? exp.executor
    : { type: "slurm" };
  return new SlurmExecutor({
    spec: options.jobs !== undefined ? { ...spec, jobs: options.jobs } : spec,
    experiment: exp.name,
    dir: join(store.runDir(exp.name, options.runId), "slurm"),
    command: options.command,
    ...(options.slurmClient ? { client: options.slurmClient } : {}),
    ...(options.slurmCheckMs !== undefined
      ? { checkMs: options.slurmCheckMs }
      : {}),
  });
}
