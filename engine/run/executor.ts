/**
 * Where nodes run. An executor runs one ready node at a time through its
 * {@linkcode JobRunner} and resolves when the node's entry is in the store;
 * the scheduler ({@linkcode runPlan}) keeps the graph (dependency order,
 * failure propagation, manifest). Executors are registered like node kinds:
 * an {@linkcode ExecutorKind} names itself, declares the schema of its
 * `executor:` block and its capabilities, and creates the executor of a
 * run. The registry is a list: the built-in executors (`local`, the
 * default, and `slurm`, in `executors/builtin.ts`) are registered the same
 * way a plugin module's `executors` export is
 * ({@linkcode registerExecutors}, {@linkcode executorsOfModule}). Remote
 * backends are built on `executors/remote.ts`.
 *
 * @module
 */
import { UserError } from "../errors.ts";
import type { ExecutorSpec } from "../compile/experiment_schema.ts";
import type { JobRunner } from "./job.ts";
import type {
  BlockIssues,
  ExecutorDeclaration,
} from "../compile/executor_block.ts";
import { didYouMean } from "../suggest.ts";

export type { BlockIssues, ExecutorDeclaration };

/**
 * Runs ready nodes somewhere.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { ExecutorKind } from "./executor.ts";
 * import { executeJob } from "./job.ts";
 * // An executor that is not a cluster: each node in this process.
 * const inline: ExecutorKind = {
 *   name: "inline",
 *   description: "runs each node in this process",
 *   spec: v.strictObject({ type: v.literal("inline") }),
 *   create: () => ({
 *     name: "inline",
 *     run: (job, store, options) => executeJob(job, store, options),
 *     describe: () => "executor inline",
 *     close: () => Promise.resolve(),
 *   }),
 * };
 * import type { ExecutorRun } from "./executor.ts";
 * const run: ExecutorRun = {
 *   exp: { name: "e", nodes: [] },
 *   store: { runDir: (exp, id) => `/cache/runs/${exp}/${id}` },
 *   runId: "r1",
 * };
 * const executor = inline.create(undefined, run);
 * assert.equal(executor.describe(), "executor inline");
 * await executor.close();
 * ```
 */
export interface Executor {
  /** `local`, `slurm`, ... (recorded in the manifest). */
  readonly name: string;
  /** How many nodes it runs at once unless `--jobs` says otherwise. */
  readonly jobs?: number;
  /** Runs one node (see {@linkcode JobRunner}). */
  readonly run: JobRunner;
  /** One line for the start of a run (where nodes go, where logs are). */
  describe(): string;
  /**
   * One line for the end of a run (e.g. the workers' peak memory), or
   * `undefined` when there is nothing to say.
   */
  summary?(): string | undefined;
  /** Called once after the run: stops polling, cancels anything left. */
  close(): Promise<void>;
}

/**
 * What an executor reads of the experiment it runs: its name, its
 * `executor:` block and, per node, whether the node's kind is heavy and
 * which module defines it (the local executor warms its workers with them).
 * A compiled `Experiment` is one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ExecutorExperiment } from "./executor.ts";
 * const exp: ExecutorExperiment = {
 *   name: "smoke",
 *   executor: { type: "local" },
 *   nodes: [{ kind: { module: "file:///kinds/train.ts", heavy: true } }],
 * };
 * const heavy = exp.nodes.filter((n) => n.kind.heavy).map((n) => n.kind.module);
 * assert.deepEqual(heavy, ["file:///kinds/train.ts"]);
 * ```
 */
export interface ExecutorExperiment {
  /** The experiment's name (the run directory is named by it). */
  readonly name: string;
  /** Its `executor:` block, when it has one. */
  readonly executor?: ExecutorSpec | undefined;
  /** Its nodes: of each, what its kind runs in. */
  readonly nodes: readonly {
    readonly kind: { readonly module: string; readonly heavy?: boolean };
  }[];
}

/**
 * What an executor uses of the cache when it is created: the directory of
 * a run, where it keeps its files (job scripts, logs, `jobs.tsv`). A
 * `Store` is one. Jobs reach the whole store through {@linkcode JobRunner}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ExecutorStore } from "./executor.ts";
 * const store: ExecutorStore = {
 *   runDir: (experiment, run) => `/cache/runs/${experiment}/${run}`,
 * };
 * assert.equal(store.runDir("smoke", "r1"), "/cache/runs/smoke/r1");
 * ```
 */
export interface ExecutorStore {
  /** The directory of run `run` of experiment `experiment`. */
  runDir(experiment: string, run: string): string;
}

/**
 * What an executor of one run is created with.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { local } from "./executors/local.ts";
 * import type { ExecutorRun } from "./executor.ts";
 * const run: ExecutorRun = {
 *   exp: { name: "e", nodes: [] },
 *   store: { runDir: (exp, id) => `/cache/runs/${exp}/${id}` },
 *   runId: "r1",
 * };
 * const executor = local.create({ type: "local", jobs: 2 }, run);
 * assert.equal(executor.jobs, 2);
 * await executor.close();
 * ```
 */
export interface ExecutorRun {
  /** The experiment (what an executor reads of it). */
  readonly exp: ExecutorExperiment;
  /** The cache (what an executor uses of it when created). */
  readonly store: ExecutorStore;
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
 * The programs an executor needs for a block `S`. Declared as a method so
 * that a kind of a narrower block (`ExecutorKind<SlurmExecutorSpec>`) is
 * still an `ExecutorKind` of the registry: the registry only ever calls it
 * with the block of the kind it belongs to.
 */
export type ProgramsOf<S> = { of(spec: S): readonly string[] }["of"];

/** What an executor declares about itself (shown by `plan`, checked before a run). */
export interface ExecutorCapabilities<S extends ExecutorSpec = ExecutorSpec> {
  /**
   * Nodes run on other machines, which read their inputs from and write
   * their entries into the cache directory itself: it must be on a file
   * system this machine and the workers share.
   */
  readonly sharedCache: boolean;
  /**
   * Programs this machine needs (e.g. `sbatch`: a name is looked up on PATH,
   * a path must be an executable file), of the experiment's block when they
   * depend on it; checked once, at `plan` and before `run`.
   */
  readonly programs:
    | readonly string[]
    | ProgramsOf<S>;
  /** The fix when one is missing (one clause, e.g. `run envsmith on a login node`). */
  readonly programsFix?: string;
}

/**
 * A kind of executor: what `executor: {type: NAME}` and `--executor NAME`
 * name. The compiler reads its {@linkcode ExecutorDeclaration} (name, block
 * schema, checks); a run creates the executor.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { ExecutorKind } from "./executor.ts";
 * import { executeJob } from "./job.ts";
 * // An executor that is not a cluster: each node in this process.
 * const inline: ExecutorKind = {
 *   name: "inline",
 *   description: "runs each node in this process",
 *   spec: v.strictObject({ type: v.literal("inline") }),
 *   create: () => ({
 *     name: "inline",
 *     run: (job, store, options) => executeJob(job, store, options),
 *     describe: () => "executor inline",
 *     close: () => Promise.resolve(),
 *   }),
 * };
 * import { createExecutor } from "./executor.ts";
 * import { local } from "./executors/local.ts";
 * const run = {
 *   exp: { name: "e", nodes: [], executor: { type: "inline" } },
 *   store: { runDir: () => "/tmp" },
 *   runId: "r1",
 * };
 * // The experiment's `executor: { type: inline }` chooses it.
 * const executor = createExecutor([local, inline], run);
 * assert.equal(executor.name, "inline");
 * await executor.close();
 * ```
 */
export interface ExecutorKind<S extends ExecutorSpec = ExecutorSpec>
  extends ExecutorDeclaration<S> {
  /** The module that defines it (`import.meta.url`), named when a name is registered twice. */
  readonly module?: string;
  /** What it needs; none declared: nodes run in this process's reach. */
  readonly capabilities?: ExecutorCapabilities<S>;
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
  executors: readonly ExecutorKind[],
  run: ExecutorRun,
  name?: string,
): Executor {
  const kind = chosenExecutor(executors, run.exp, name);
  const spec = run.exp.executor?.type === kind.name
    ? run.exp.executor
    : undefined;
  return kind.create(spec, run);
}

/**
 * The executor kind a run would use: `name` (`--executor`), else the
 * experiment's `executor:` block, else the first registered (`local`).
 *
 * @throws {UserError} for a name no executor has.
 */
export function chosenExecutor(
  executors: readonly ExecutorKind[],
  exp: Pick<ExecutorExperiment, "executor">,
  name?: string,
): ExecutorKind {
  const chosen = name ?? exp.executor?.type ?? executors[0]?.name;
  const kind = executors.find((e) => e.name === chosen);
  if (!kind) {
    const names = executors.map((e) => e.name);
    throw new UserError(
      `Unknown executor "${chosen}": use ${names.join(" or ")}${
        didYouMean(chosen ?? "", names)
      }`,
    );
  }
  return kind;
}

/** The programs of `programs` found nowhere on `path` (a `PATH` value) as executable files. */
export function missingPrograms(
  programs: readonly string[],
  path: string = Deno.env.get("PATH") ?? "",
): string[] {
  const dirs = path.split(":").filter((d) => d);
  const found = (p: string) =>
    (p.includes("/") ? [p] : dirs.map((d) => `${d}/${p}`)).some((f) => {
      try {
        const st = Deno.statSync(f);
        return st.isFile && ((st.mode ?? 0o111) & 0o111) !== 0;
      } catch {
        return false;
      }
    });
  return programs.filter((p) => !found(p));
}

/**
 * Checks, once, that this machine has what the run's executor declares it
 * needs (its programs on PATH), before anything runs: `plan` and `run` call
 * it.
 *
 * @throws {UserError} one line naming the executor, where it was chosen,
 * what is missing and the fix.
 */
export function checkExecutor(
  executors: readonly ExecutorKind[],
  exp: Pick<ExecutorExperiment, "executor"> & { readonly file: string },
  name?: string,
  path: string = Deno.env.get("PATH") ?? "",
): void {
  const kind = chosenExecutor(executors, exp, name);
  const caps = kind.capabilities;
  if (!caps) return;
  const spec = exp.executor?.type === kind.name
    ? exp.executor
    : { type: kind.name };
  const programs = typeof caps.programs === "function"
    ? caps.programs(spec)
    : caps.programs;
  const missing = missingPrograms(programs, path);
  if (missing.length === 0) return;
  const where = name !== undefined
    ? `--executor ${name}`
    : `${exp.file}: executor ${kind.name}`;
  throw new UserError(
    `${where}: ${missing.join(", ")} ${missing.length > 1 ? "are" : "is"} ${
      missing.some((p) => p.includes("/"))
        ? "not an executable file"
        : "not on PATH"
    } on this machine; ${
      caps.programsFix ??
        "install them, or choose another executor (--executor local)"
    }`,
  );
}

/** A module's `executors` export, checked (a plugin module's, or the built-in one). */
export function executorsOfModule(
  mod: Readonly<Record<string, unknown>>,
  source: string,
): ExecutorKind[] {
  const list = mod.executors;
  if (list === undefined) return [];
  if (!Array.isArray(list)) {
    throw new UserError(
      `${source}: "executors" must be an array of executor kinds`,
    );
  }
  return list.map((e, i) => _checkKind(e, `${source}: executors[${i}]`));
}

function _checkKind(e: unknown, at: string): ExecutorKind {
  const k = e as Partial<ExecutorKind> | null;
  const bad = (what: string) =>
    new UserError(`${at}: ${what} (see docs/engine.md, "An executor")`);
  if (typeof k !== "object" || k === null) throw bad("not an executor kind");
  if (typeof k.name !== "string" || !/^[a-z][a-z0-9_-]*$/.test(k.name)) {
    throw bad(
      `its name must be lower-case letters, digits, "-" or "_", got ${
        JSON.stringify(k.name)
      }`,
    );
  }
  if (typeof k.description !== "string" || !k.description) {
    throw bad(`executor "${k.name}" has no description`);
  }
  if (
    typeof k.spec !== "object" || k.spec === null ||
    typeof k.spec.entries !== "object" || !("type" in k.spec.entries)
  ) {
    throw bad(
      `executor "${k.name}" has no block schema (a valibot strictObject with type: v.literal("${k.name}"))`,
    );
  }
  if (typeof k.create !== "function") {
    throw bad(`executor "${k.name}" has no create function`);
  }
  return k as ExecutorKind;
}

/**
 * The registry `registry` plus `added` (from `source`, e.g. a plugin
 * module's path): each checked, and no name registered twice.
 *
 * @throws {UserError} naming `source` and the module that already has the name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { registerExecutors } from "./executor.ts";
 * import { executors as builtin } from "./executors/builtin.ts";
 * import { local } from "./executors/local.ts";
 * const registry = registerExecutors(builtin, [], "my_plugin.ts");
 * assert.deepEqual(registry.map((k) => k.name), ["local", "slurm"]);
 * assert.throws(
 *   () => registerExecutors(registry, [{ ...local }], "my_plugin.ts"),
 *   /my_plugin\.ts: an executor named "local" is already registered/,
 * );
 * assert.throws(() => registerExecutors([], [{ name: "x" }], "p.ts"), /has no description/);
 * ```
 */
export function registerExecutors(
  registry: readonly ExecutorKind[],
  added: readonly unknown[],
  source: string,
): ExecutorKind[] {
  const out = [...registry];
  added.forEach((e, i) => {
    const k = _checkKind(e, `${source}: executors[${i}]`);
    const prev = out.find((x) => x.name === k.name);
    if (prev) {
      throw new UserError(
        `${source}: an executor named "${k.name}" is already registered${
          prev.module ? ` by ${prev.module}` : ""
        }; rename it`,
      );
    }
    out.push(k);
  });
  return out;
}
