/**
 * Where nodes run. An executor runs one ready node at a time through its
 * {@linkcode JobRunner} and resolves when the node's entry is in the store;
 * the scheduler ({@linkcode runPlan}) keeps the graph (dependency order,
 * failure propagation, manifest). Executors are registered like node kinds:
 * an {@linkcode ExecutorKind} names itself, declares the schema of its
 * `executor:` block, and creates the executor of a run.
 * {@linkcode builtinExecutors} are `local` (the default) and `slurm`.
 *
 * @module
 */
import { UserError } from "../errors.ts";
import type { Experiment } from "../compile/experiment.ts";
import type { ExecutorSpec } from "../compile/experiment_schema.ts";
import type { JobRunner } from "./job.ts";
import type {
  BlockIssues,
  ExecutorDeclaration,
} from "../compile/executor_block.ts";
import type { Store } from "../cache/store.ts";
import { local } from "./executors/local.ts";
import { slurm } from "./executors/slurm.ts";

export type { BlockIssues, ExecutorDeclaration };

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

/** What an executor of one run is created with. */
export interface ExecutorRun {
  /** The experiment. */
  readonly exp: Experiment;
  /** The cache. */
  readonly store: Store;
  /** Run id (an executor may keep its files in the run directory). */
  readonly runId: string;
  /** `--jobs`, when given. */
  readonly jobs?: number;
  /**
   * Deno arguments that start this CLI on another machine, without the
   * binary and `--cache` (e.g. `["run", "-A", "/repo/cli.ts"]`). Needed by
   * remote executors.
   */
  readonly command?: readonly string[];
}

/**
 * A kind of executor: what `executor: {type: NAME}` and `--executor NAME`
 * name. The compiler reads its {@linkcode ExecutorDeclaration} (name, block
 * schema, checks); a run creates the executor.
 */
export interface ExecutorKind<S extends ExecutorSpec = ExecutorSpec>
  extends ExecutorDeclaration<S> {
  /**
   * Creates the executor of a run: `spec` is the experiment's block when it
   * names this executor, else undefined (the executor's defaults).
   *
   * @throws {UserError} when the run lacks what the executor needs.
   */
  create(spec: S | undefined, run: ExecutorRun): Executor;
}

/**
 * The executor of a run: `name` (`--executor`) wins over the experiment's
 * `executor:` block; without either, the first registered executor (`local`).
 *
 * @throws {UserError} for a name no executor has.
 */
export function createExecutor(
  // deno-lint-ignore no-explicit-any
  executors: readonly ExecutorKind<any>[],
  run: ExecutorRun,
  name?: string,
): Executor {
  const chosen = name ?? run.exp.executor?.type ?? executors[0]?.name;
  const kind = executors.find((e) => e.name === chosen);
  if (!kind) {
    throw new UserError(
      `Unknown executor "${chosen}": use ${
        executors.map((e) => e.name).join(" or ")
      }`,
    );
  }
  const spec = run.exp.executor?.type === kind.name
    ? run.exp.executor
    : undefined;
  return kind.create(spec, run);
}

/** The executors built into the engine: `local` (the default) and `slurm`. */
// deno-lint-ignore no-explicit-any
export const builtinExecutors: readonly ExecutorKind<any>[] = [local, slurm];
