/**
 * The engine's command implementations (plan, run, status, run-node), shared
 * by `cli.ts` and tests. Each returns an exit code and writes through the
 * given output functions.
 *
 * @module
 */
import { dirname } from "node:path";
import { loadExperiment } from "../compile/experiment.ts";
import type { Experiment } from "../compile/experiment.ts";
import { computeKeys } from "../cache/keys.ts";
import { sha256Hex } from "../canonical.ts";
import {
  latestManifest,
  latestManifestWhere,
  newRunId,
  ranWith,
} from "../cache/manifest.ts";
import {
  checkExecutor,
  chosenExecutor,
  createExecutor,
  type ExecutorKind,
} from "../run/executor.ts";
import { executors as builtinExecutors } from "../run/executors/builtin.ts";
import { makePlan, type Plan, type PlanItem } from "../run/plan.ts";
import { checkReadiness } from "../run/readiness.ts";
import { announceRun } from "../cache/run_start.ts";
import { collapseGraph, toDot, toMermaid } from "../run/plan_graph.ts";
import { experimentWarningLines } from "../tables/result_warnings.ts";
import {
  defaultReporter,
  formatDuration,
  ProgressFileReporter,
  type Reporter,
} from "../run/progress.ts";
import { executeJob, type NodeFailure } from "../run/job.ts";
import { runOutline } from "../run/run_progress.ts";
import { jobFromSpec } from "../run/job_spec.ts";
import { displayParams, runPlan, type RunResult } from "../run/scheduler.ts";
import { Store } from "../cache/store.ts";
import type { NodeKind } from "../types.ts";
import { UserError } from "../errors.ts";
import { getField } from "../refs.ts";
import { didYouMean } from "../suggest.ts";
import type { Limits } from "../limits.ts";
import { FileSystemError } from "../fs_errors.ts";
import {
  declaredPlugins,
  type LoadedPlugin,
  loadPlugins,
  type PluginHandler,
} from "../compile/plugins.ts";

/**
 * Where command output goes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Output } from "./commands.ts";
 * const lines: string[] = [];
 * const output: Output = { out: (l) => lines.push(l), err: (l) => lines.push(`ERR ${l}`) };
 * output.out("plan: 1 to run");
 * output.err("e.yaml:3:7: unknown kind");
 * assert.deepEqual(lines, ["plan: 1 to run", "ERR e.yaml:3:7: unknown kind"]);
 * ```
 */
export interface Output {
  /** Results (stdout). */
  out(line: string): void;
  /** Diagnostics and progress (stderr). */
  err(line: string): void;
}

/**
 * stdout/stderr output.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { consoleOutput } from "./commands.ts";
 * import type { CommandContext } from "./commands.ts";
 * // What a project's command line passes: lines to stdout (out) and stderr (err).
 * const ctx: CommandContext = { kinds: [], cache: ".envsmith/cache", output: consoleOutput };
 * assert.equal(ctx.output, consoleOutput);
 * ```
 */
export const consoleOutput: Output = {
  out: (l) => console.log(l),
  err: (l) => console.error(l),
};

/**
 * What every command needs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import type { CommandContext } from "./commands.ts";
 * import { SilentReporter } from "../run/progress.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const dir = await Deno.makeTempDir();
 * const file = `${dir}/e.yaml`;
 * Deno.writeTextFileSync(file, "experiment: e\nseed: 1\nnodes:\n  a: { kind: one, with: { x: 4 } }\n");
 * const lines: string[] = [];
 * const ctx: CommandContext = {
 *   kinds: [one as NodeKind], cache: `${dir}/cache`, reporter: new SilentReporter(),
 *   output: { out: (l) => lines.push(l), err: (l) => lines.push(`ERR ${l}`) },
 * };
 * import { runCommand } from "./commands.ts";
 * const { code } = await runCommand(ctx, file);
 * assert.equal(code, 0);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export interface CommandContext {
  /** Registered kinds. */
  readonly kinds: readonly NodeKind[];
  /** Cache directory. */
  readonly cache: string;
  /** Output. */
  readonly output: Output;
  /** Progress reporter for runs. @default defaultReporter() */
  readonly reporter?: Reporter;
  /** Cancels runs. */
  readonly signal?: AbortSignal;
  /** Environment lookup (requires_env). */
  readonly env?: (name: string) => string | undefined;
  /**
   * Deno arguments that start this CLI elsewhere (without the binary and
   * without `--cache`), e.g. `["run", "-A", "/repo/cli.ts", "--kinds",
   * "x.ts"]`: what a remote executor (Slurm) runs with `--cache DIR
   * run-node KEY` appended. Set by `cli.ts`.
   */
  readonly command?: readonly string[];
  /**
   * The registered executors (`--executor`, `executor:`): the built-in
   * ones and those of plugin modules (`registerExecutors`); tests
   * replace the Slurm commands here.
   * @default builtinExecutors
   */
  readonly executors?: readonly ExecutorKind[];
  /**
   * Resource limits of experiment files (`--limit NAME=N`), over the
   * defaults of `limits.ts`.
   */
  readonly limits?: Partial<Limits>;
  /**
   * Called when a command enters a phase that stops cleanly when `signal`
   * aborts (a run's scheduler: nodes are cancelled, locks released, the
   * manifest written); returns the function that ends the phase. The CLI
   * listens for SIGINT and SIGTERM only inside such phases: elsewhere
   * (loading, planning, building tables, which run without yielding to the
   * event loop) an interrupt ends the process at once, as its default
   * action, which the cache survives like any kill.
   */
  readonly interruptible?: () => () => void;
  /**
   * Named exports of plugin modules the project registers (`engineers` in
   * envsmith), for experiment files' `plugins:`. Set by `cli.ts`.
   */
  readonly pluginHandlers?: Readonly<Record<string, PluginHandler>>;
  /** Plugin modules loaded from the command line (`--plugins`), shown by `plan`. */
  readonly plugins?: readonly LoadedPlugin[];
  /**
   * `--set PATH=VALUE` overrides applied to every experiment file this
   * command loads (typed and validated as YAML; recorded in run manifests).
   */
  readonly overrides?: readonly string[];
  /**
   * The program's root directory, whose source the shipped tables memo
   * digests (see `key_inputs.ts`). @default the directory of `Deno.mainModule`
   */
  readonly programRoot?: string;
}

/**
 * The command that reruns `ids` of `file` (with `extra` flags, e.g. `--executor slurm`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resumeCommand } from "./commands.ts";
 * assert.equal(resumeCommand("experiments/quick.yaml"), "./envsmith run experiments/quick.yaml");
 * assert.equal(resumeCommand("my exp.yaml", ["a"]), "./envsmith run 'my exp.yaml' --only a");
 * ```
 */
export function resumeCommand(
  file: string,
  ids?: readonly string[],
  extra: readonly string[] = [],
): string {
  const q = (s: string) =>
    /^[A-Za-z0-9_./=,:@-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
  return `./envsmith run ${q(file)}${
    ids && ids.length ? " --only " + ids.map(q).join(" ") : ""
  }${extra.map((x) => " " + q(x)).join("")}`;
}

const _loaded = new WeakMap<CommandContext, Map<string, Promise<Experiment>>>();

/**
 * Loads an experiment with the context's kinds. The same file (by the hash
 * of its text) with the same overrides and context is loaded once per
 * process: `report` and `tables` read one file several times.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import type { CommandContext } from "./commands.ts";
 * import { SilentReporter } from "../run/progress.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const dir = await Deno.makeTempDir();
 * const file = `${dir}/e.yaml`;
 * Deno.writeTextFileSync(file, "experiment: e\nseed: 1\nnodes:\n  a: { kind: one, with: { x: 4 } }\n");
 * const lines: string[] = [];
 * const ctx: CommandContext = {
 *   kinds: [one as NodeKind], cache: `${dir}/cache`, reporter: new SilentReporter(),
 *   output: { out: (l) => lines.push(l), err: (l) => lines.push(`ERR ${l}`) },
 * };
 * import { load } from "./commands.ts";
 * const exp = await load(ctx, file);
 * assert.deepEqual(exp.nodes.map((n) => n.id), ["a"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function load(ctx: CommandContext, file: string): Promise<Experiment> {
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch {
    return _load(ctx, file); // reports the file's problem
  }
  const id = `${file}\0${sha256Hex(text)}\0${
    JSON.stringify(ctx.overrides ?? [])
  }`;
  let byFile = _loaded.get(ctx);
  if (!byFile) _loaded.set(ctx, byFile = new Map());
  let p = byFile.get(id);
  if (!p) {
    p = _load(ctx, file);
    byFile.set(id, p);
    p.catch(() => byFile!.delete(id));
  }
  return p;
}

function _load(ctx: CommandContext, file: string): Promise<Experiment> {
  return loadExperiment(file, {
    kinds: ctx.kinds,
    executors: ctx.executors ?? builtinExecutors,
    ...(ctx.env ? { env: ctx.env } : {}),
    ...(ctx.limits ? { limits: ctx.limits } : {}),
    ...(ctx.pluginHandlers ? { pluginHandlers: ctx.pluginHandlers } : {}),
    ...(ctx.overrides?.length ? { overrides: ctx.overrides } : {}),
  });
}

/**
 * What a plugin module registered, in one line: `engineers: a, b; kinds: c`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pluginSummary } from "./commands.ts";
 * assert.equal(
 *   pluginSummary({ module: "./mine.ts", url: "file:///x/mine.ts", registered: { kinds: ["a", "b"], engineers: ["crowd"] } }),
 *   "kinds: a, b; engineers: crowd",
 * );
 * ```
 */
export function pluginSummary(p: LoadedPlugin): string {
  return Object.entries(p.registered).map(([what, names]) =>
    `${what}: ${names.join(", ")}`
  ).join("; ");
}

/** Width of the id column: the longest id, between 4 and 48 (no spread: a plan may be large). */
function _idWidth(items: readonly PlanItem[]): number {
  let w = 4;
  for (const it of items) if (it.node.id.length > w) w = it.node.id.length;
  return Math.min(48, w);
}

function _counts(items: readonly PlanItem[]): string {
  const c = { cached: 0, run: 0, blocked: 0, skipped: 0 };
  const why = new Map<string, number>();
  for (const it of items) {
    c[it.status]++;
    if (it.status === "skipped") {
      const w = it.node.skipped ?? it.why.join("; ");
      why.set(w, (why.get(w) ?? 0) + 1);
    }
  }
  let note = "";
  if (c.skipped > 0) {
    // The headline counts the whole graph; say what a run of it computes
    // or reuses, and why the rest is left out, in one line.
    const [top] = [...why].sort((a, b) => b[1] - a[1]);
    const others = why.size - 1;
    note = ` (${
      items.length - c.skipped
    } to compute or reuse; the ${c.skipped} skipped are not run on this machine: ${
      top![0]
    }${
      others > 0 ? ` and ${others} other reason${others > 1 ? "s" : ""}` : ""
    })`;
  }
  return `${c.cached} cached, ${c.run} to run, ${c.blocked} blocked, ${c.skipped} skipped${note}`;
}

/** ` with --set A=1 --set B=2`, or nothing. */
function _setsNote(exp: Experiment): string {
  return exp.overrides?.length
    ? exp.overrides.map((o) => ` --set ${o}`).join("")
    : "";
}

function _pad(s: string, n: number): string {
  return s.length >= n ? s : s + " ".repeat(n - s.length);
}

/** Options of {@linkcode planCommand}. */
export interface PlanCommandOptions {
  /** Restrict to these nodes (and their uncached inputs). */
  readonly only?: readonly string[];
  /** Print JSON instead of text. */
  readonly json?: boolean;
  /** Also list cached nodes. @default true */
  readonly all?: boolean;
  /** The executor a run would use (`--executor`), checked like `run` checks it. @default the experiment's, else local */
  readonly executor?: string;
  /**
   * `text` (the list), or the graph collapsed by stage and variant as
   * Graphviz `dot` or `mermaid`. @default "text"
   */
  readonly format?: "text" | "dot" | "mermaid";
}

/**
 * `plan FILE`: every node as cached / run / blocked / skipped, and why not cached.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import type { CommandContext } from "./commands.ts";
 * import { SilentReporter } from "../run/progress.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const dir = await Deno.makeTempDir();
 * const file = `${dir}/e.yaml`;
 * Deno.writeTextFileSync(file, "experiment: e\nseed: 1\nnodes:\n  a: { kind: one, with: { x: 4 } }\n");
 * const lines: string[] = [];
 * const ctx: CommandContext = {
 *   kinds: [one as NodeKind], cache: `${dir}/cache`, reporter: new SilentReporter(),
 *   output: { out: (l) => lines.push(l), err: (l) => lines.push(`ERR ${l}`) },
 * };
 * import { planCommand } from "./commands.ts";
 * assert.equal(await planCommand(ctx, file), 0);
 * assert.ok(lines.some((l) => /\ba\b/.test(l)), lines.join("\n"));
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function planCommand(
  ctx: CommandContext,
  file: string,
  options: PlanCommandOptions = {},
): Promise<number> {
  const exp = await load(ctx, file);
  const store = new Store(ctx.cache);
  _checkExecutor(ctx, exp, store, options.executor, true);
  const plan = makePlan(exp, store, options.only ? { only: options.only } : {});
  for (const n of plan.notes) ctx.output.err(`warning: ${n}`);
  // What this machine lacks for the nodes to run: one line, before the list.
  checkReadiness(plan);
  if (options.format === "dot" || options.format === "mermaid") {
    const g = collapseGraph(exp, (n) => plan.byIndex.get(n.index)?.status);
    ctx.output.out(options.format === "dot" ? toDot(g) : toMermaid(g));
    return 0;
  }
  if (options.json) {
    ctx.output.out(JSON.stringify(
      {
        experiment: exp.name,
        file: exp.file,
        nodes: plan.items.map((it) => ({
          id: it.node.id,
          key: it.key.key,
          kind: it.node.kind.name,
          status: it.status,
          cacheable: it.key.cacheable,
          why: it.why,
          waitingFor: it.waitingFor,
        })),
      },
      null,
      2,
    ));
    return 0;
  }
  ctx.output.out(
    `plan ${exp.name} (${file}${_setsNote(exp)}): ${plan.items.length} nodes: ${
      _counts(plan.items)
    }`,
  );
  for (const p of [...(ctx.plugins ?? []), ...(exp.plugins?.modules ?? [])]) {
    ctx.output.out(`  plugin ${p.module}: ${pluginSummary(p)}`);
  }
  const width = _idWidth(plan.items);
  for (const it of plan.items) {
    if (it.status === "cached" && options.all === false) continue;
    let why = it.why.join("; ");
    if (it.status === "blocked") {
      const w = it.waitingFor.slice(0, 3).join(", ") +
        (it.waitingFor.length > 3
          ? ` and ${it.waitingFor.length - 3} more`
          : "");
      why = `after ${w}` + (why ? `; ${why}` : "");
    }
    ctx.output.out(
      `  ${_pad(it.status, 8)} ${_pad(it.node.id, width)}  ${
        it.status === "cached" ? it.key.key.slice(0, 12) : why
      }`,
    );
  }
  return 0;
}

/**
 * The node kinds of the `plugins:` of the experiment a job spec names (and
 * the project's plugin exports, registered on the way), so `run-node KEY`
 * runs a plugin's node in a process that never loaded the experiment.
 */
async function _specPluginKinds(
  ctx: CommandContext,
  store: Store,
  key: string,
): Promise<readonly NodeKind[]> {
  let file: string;
  let text: string;
  try {
    file = (JSON.parse(Deno.readTextFileSync(store.jobPath(key))) as {
      file: string;
    }).file;
    text = Deno.readTextFileSync(file);
  } catch {
    return []; // jobFromSpec reports a missing spec
  }
  const modules = declaredPlugins(text);
  if (modules.length === 0) return [];
  const set = await loadPlugins(modules, {
    from: `${file}: plugins:`,
    baseDir: dirname(file),
    kinds: ctx.kinds,
    executors: ctx.executors ?? builtinExecutors,
    ...(ctx.pluginHandlers ? { handlers: ctx.pluginHandlers } : {}),
  });
  return set.kinds;
}

/**
 * The run's executor has what it declares it needs (else one line, exit 2,
 * nothing run); an executor whose workers share the cache says so once.
 */
function _checkExecutor(
  ctx: CommandContext,
  exp: Experiment,
  store: Store,
  name: string | undefined,
  note = false,
): void {
  const executors = ctx.executors ?? builtinExecutors;
  checkExecutor(
    executors,
    exp,
    name,
    ...(ctx.env ? [ctx.env("PATH") ?? ""] : []),
  );
  const kind = chosenExecutor(executors, exp, name);
  if (note && kind.capabilities?.sharedCache) {
    ctx.output.err(
      `executor ${kind.name}: nodes run elsewhere and read and write the cache ${store.root} directly, so it must be on a file system the workers share`,
    );
  }
}

/** Prints the failure block of each failed node (DESIGN §11). */
export function printFailures(
  ctx: CommandContext,
  plan: Plan,
  failures: readonly NodeFailure[],
  resumeFlags: readonly string[] = [],
): void {
  const ids = (i: number) => plan.exp.nodes[i]!.id;
  for (const f of failures) {
    const idx = plan.exp.byId.get(f.id);
    const node = idx === undefined ? undefined : plan.exp.nodes[idx];
    const params = node ? JSON.stringify(displayParams(node, ids)) : "?";
    ctx.output.err(
      [
        `✗ node    ${f.id}`,
        `  key     ${f.key}`,
        `  params  ${
          params.length > 2000 ? params.slice(0, 2000) + " …" : params
        }`,
        `  error   ${f.message.split("\n").join("\n          ")}`,
        ...Object.entries(f.details).map(([k, v]) =>
          `  ${k.length < 8 ? _pad(k, 7) : k} ${v}`
        ),
        `  log     ${f.log}`,
        `  resume  ${resumeCommand(plan.exp.file, [f.id], resumeFlags)}`,
      ].join("\n"),
    );
  }
}

/** Options of {@linkcode runCommand}. */
export interface RunCommandOptions {
  /** Parallel nodes. @default cores */
  readonly jobs?: number;
  /** Restrict to these nodes (and their uncached inputs). */
  readonly only?: readonly string[];
  /** A registered executor's name. @default the experiment's `executor.type`, else the first registered (local) */
  readonly executor?: string;
}

/**
 * `run FILE`: runs what is not cached; returns 0, 1 (failures) or 130 (interrupted).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import type { CommandContext } from "./commands.ts";
 * import { SilentReporter } from "../run/progress.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const dir = await Deno.makeTempDir();
 * const file = `${dir}/e.yaml`;
 * Deno.writeTextFileSync(file, "experiment: e\nseed: 1\nnodes:\n  a: { kind: one, with: { x: 4 } }\n");
 * const lines: string[] = [];
 * const ctx: CommandContext = {
 *   kinds: [one as NodeKind], cache: `${dir}/cache`, reporter: new SilentReporter(),
 *   output: { out: (l) => lines.push(l), err: (l) => lines.push(`ERR ${l}`) },
 * };
 * import { runCommand } from "./commands.ts";
 * const first = await runCommand(ctx, file);
 * assert.equal(first.code, 0);
 * assert.deepEqual(first.plan.items.map((i) => i.status), ["run"]);
 * const again = await runCommand(ctx, file);
 * assert.deepEqual(again.plan.items.map((i) => i.status), ["cached"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function runCommand(
  ctx: CommandContext,
  file: string,
  options: RunCommandOptions = {},
): Promise<{ code: number; result: RunResult; plan: Plan }> {
  const exp = await load(ctx, file);
  const store = new Store(ctx.cache);
  _checkExecutor(ctx, exp, store, options.executor);
  // A read-only, full or foreign cache stops here, before anything runs.
  store.ensureWritable();
  const reporter = ctx.reporter ?? defaultReporter();
  // This host's leftovers only (another host's job may still be running).
  const left = store.cleanLeftovers(Infinity);
  if (left.removed > 0) {
    reporter.info(
      `removed ${left.removed} leftover${
        left.removed > 1 ? "s" : ""
      } of killed runs from ${store.root}/tmp (${
        (left.bytes / 1e6).toFixed(1)
      } MB)`,
    );
  }
  const runId = newRunId();
  // Before planning (a plan reads which entries are cached): `cache gc`
  // sees this run from now on, and a gc that runs is waited for.
  const announced = await announceRun(store, runId, `run ${exp.name}`, {
    onWait: (line) => reporter.info(line),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  try {
    return await _runAnnounced(ctx, file, options, exp, store, reporter, runId);
  } finally {
    announced.release();
  }
}

// Long by design: a run's warnings, run, failure lines and exit code, in the order the user reads them.
async function _runAnnounced(
  ctx: CommandContext,
  file: string,
  options: RunCommandOptions,
  exp: Awaited<ReturnType<typeof load>>,
  store: Store,
  reporter: NonNullable<CommandContext["reporter"]>,
  runId: string,
): Promise<{ code: number; result: RunResult; plan: Plan }> {
  const plan = makePlan(exp, store, options.only ? { only: options.only } : {});
  for (const n of plan.notes) reporter.info(`warning: ${n}`);
  checkReadiness(plan);
  reporter.info(
    `run ${exp.name}${_setsNote(exp)}: ${plan.items.length} nodes: ${
      _counts(plan.items)
    }`,
  );
  const t0 = performance.now();
  const endInterruptible = ctx.interruptible?.() ?? (() => {});
  let result: RunResult;
  let resumeFlags: string[];
  let executorLine: string | undefined;
  try {
    const executor = createExecutor([
      ...(ctx.executors ?? builtinExecutors),
      // loadPlugins checked that each has `create`: they are executor kinds.
      ...(exp.plugins?.executors ?? []) as readonly ExecutorKind[],
    ], {
      exp,
      store,
      runId,
      ...(options.jobs !== undefined ? { jobs: options.jobs } : {}),
      ...(ctx.command ? { command: ctx.command } : {}),
    }, options.executor);
    if (executor.name !== "local") reporter.info(executor.describe());
    resumeFlags = executor.name !==
        (exp.executor?.type ?? (ctx.executors ?? builtinExecutors)[0]?.name)
      ? ["--executor", executor.name]
      : [];
    reporter.begin?.(
      runOutline(
        plan,
        store,
        executor.jobs ?? navigator.hardwareConcurrency ?? 2,
      ),
    );
    try {
      result = await runPlan(plan, store, {
        reporter,
        ...(executor.jobs !== undefined ? { jobs: executor.jobs } : {}),
        runId,
        runner: executor.run,
        executorName: executor.name,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
    } finally {
      executorLine = executor.summary?.();
      await executor.close();
    }
  } finally {
    endInterruptible();
  }
  const c = result.manifest.counts;
  const summary =
    `${exp.name}: ${c.done ?? 0} computed, ${c.cached ?? 0} cached, ${
      c.failed ?? 0
    } failed, ` +
    `${c.blocked ?? 0} blocked, ${c.skipped ?? 0} skipped in ${
      formatDuration(performance.now() - t0)
    } (${
      result.manifestError
        ? "manifest not written"
        : `manifest ${result.manifestPath}`
    })`;
  ctx.output.err(summary);
  if (executorLine !== undefined) ctx.output.err(executorLine);
  for (const w of experimentWarningLines(exp, store, plan.keys)) {
    ctx.output.err(w);
  }
  const fsFailed = result.failures.filter((f) =>
    f.cause instanceof FileSystemError
  );
  const failures = result.failures.filter((f) => !fsFailed.includes(f));
  if (failures.length > 0) printFailures(ctx, plan, failures, resumeFlags);
  if (result.cacheError) {
    // One line for the cause, not a failure block per node it stopped.
    ctx.output.err(`error: ${result.cacheError.message}`);
    if (fsFailed.length > 0) {
      ctx.output.err(
        `not stored: ${fsFailed.slice(0, 10).map((f) => f.id).join(", ")}${
          fsFailed.length > 10 ? ` and ${fsFailed.length - 10} more` : ""
        } (they run again next time)`,
      );
    }
  }
  if (result.failures.length > 0) {
    ctx.output.err(
      `${result.failures.length} node${
        result.failures.length > 1 ? "s" : ""
      } failed; finished nodes are cached. Resume with: ${
        resumeCommand(file, [], resumeFlags)
      }`,
    );
  }
  const code = result.manifest.status === "interrupted"
    ? 130
    : result.failures.length > 0
    ? 1
    : 0;
  return { code, result, plan };
}

/**
 * `status FILE`: what the cache holds for each node, and what the last run did.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import type { CommandContext } from "./commands.ts";
 * import { SilentReporter } from "../run/progress.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const dir = await Deno.makeTempDir();
 * const file = `${dir}/e.yaml`;
 * Deno.writeTextFileSync(file, "experiment: e\nseed: 1\nnodes:\n  a: { kind: one, with: { x: 4 } }\n");
 * const lines: string[] = [];
 * const ctx: CommandContext = {
 *   kinds: [one as NodeKind], cache: `${dir}/cache`, reporter: new SilentReporter(),
 *   output: { out: (l) => lines.push(l), err: (l) => lines.push(`ERR ${l}`) },
 * };
 * import { runCommand, statusCommand } from "./commands.ts";
 * await runCommand(ctx, file);
 * lines.length = 0;
 * assert.equal(await statusCommand(ctx, file), 0);
 * assert.ok(lines.some((l) => l.includes("a")), lines.join("\n"));
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function statusCommand(
  ctx: CommandContext,
  file: string,
): Promise<number> {
  const exp = await load(ctx, file);
  const store = new Store(ctx.cache);
  const plan = makePlan(exp, store);
  // Bad manifests were reported in the plan's notes.
  for (const n of plan.notes) ctx.output.err(`warning: ${n}`);
  // The last run of the file as loaded: as committed, or with exactly
  // these --set overrides; a trial run never stands for the committed file.
  const last = latestManifestWhere(
    store,
    exp.name,
    (m) => ranWith(m, exp.overrides),
  );
  const newest = latestManifest(store, exp.name);
  const lastById = new Map((last?.nodes ?? []).map((n) => [n.id, n]));
  ctx.output.out(
    `status ${exp.name} (${file}${_setsNote(exp)}): ${_counts(plan.items)}`,
  );
  const what = exp.overrides?.length
    ? `trial run with${_setsNote(exp)}`
    : "run of the file as committed";
  if (last) {
    const c = last.counts;
    ctx.output.out(
      `last ${what} ${last.run}: ${last.status}, started ${last.started}${
        last.finished ? `, finished ${last.finished}` : " (did not finish)"
      }; ` +
        Object.entries(c).map(([k, n]) => `${n} ${k}`).join(", "),
    );
  } else ctx.output.out(`no ${what} recorded in this cache`);
  if (newest && newest.run !== last?.run && !ranWith(newest, exp.overrides)) {
    ctx.output.out(
      `newer: ${
        newest.overrides?.length
          ? `trial run ${newest.run} with ${
            newest.overrides.map((o) => `--set ${o}`).join(" ")
          }`
          : `run ${newest.run} of the file as committed`
      } (${newest.status}; not counted above; \`runs ${exp.name}\` lists every run)`,
    );
  }
  const width = _idWidth(plan.items);
  for (const it of plan.items) {
    const l = lastById.get(it.node.id);
    let extra = "";
    if (it.status === "cached") {
      const e = store.readEntry(it.key.key);
      extra = `computed in ${formatDuration(e?.ms ?? 0)} on ${
        e?.created.slice(0, 19) ?? "?"
      }`;
    } else if (l?.status === "failed" && l.key === it.key.key) {
      extra = `failed last run: ${l.error ?? "?"} (log ${store.root}/${
        l.log ?? ""
      })`;
    } else extra = it.why.join("; ");
    ctx.output.out(
      `  ${_pad(it.status, 8)} ${_pad(it.node.id, width)}  ${extra}`,
    );
  }
  return 0;
}

/**
 * `run-node KEY` or `run-node FILE NODE_ID`: runs exactly one node whose inputs are cached.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import type { CommandContext } from "./commands.ts";
 * import { SilentReporter } from "../run/progress.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const dir = await Deno.makeTempDir();
 * const file = `${dir}/e.yaml`;
 * Deno.writeTextFileSync(file, "experiment: e\nseed: 1\nnodes:\n  a: { kind: one, with: { x: 4 } }\n");
 * const lines: string[] = [];
 * const ctx: CommandContext = {
 *   kinds: [one as NodeKind], cache: `${dir}/cache`, reporter: new SilentReporter(),
 *   output: { out: (l) => lines.push(l), err: (l) => lines.push(`ERR ${l}`) },
 * };
 * import { runNodeCommand } from "./commands.ts";
 * // run-node FILE NODE: one node (and what it needs), here and now.
 * assert.equal(await runNodeCommand(ctx, file, "a"), 0);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
// Long by design: the two argument forms resolved, then the one node run with its checks, in order.
export async function runNodeCommand(
  ctx: CommandContext,
  a: string,
  b?: string,
): Promise<number> {
  const store = new Store(ctx.cache);
  const progressFile = Deno.env.get("ENVSMITH_PROGRESS_FILE");
  const reporter = progressFile
    ? new ProgressFileReporter(ctx.reporter ?? defaultReporter(), progressFile)
    : ctx.reporter ?? defaultReporter();
  let job;
  if (b === undefined) {
    if (!/^[0-9a-f]{64}$/.test(a)) {
      throw new UserError(
        `run-node: "${a}" is not a key (64 hex digits); use run-node FILE NODE_ID`,
      );
    }
    job = jobFromSpec(
      store,
      a,
      new Map(
        [...ctx.kinds, ...await _specPluginKinds(ctx, store, a)].map((k) => [
          k.name,
          k,
        ]),
      ),
    );
  } else {
    const exp = await load(ctx, a);
    const idx = exp.byId.get(b);
    if (idx === undefined) {
      const plain = exp.nodes.filter((n) => n.plain === b || n.group === b);
      throw new UserError(
        `run-node: ${a} has no node "${b}"` +
          (plain.length
            ? ` (it has ${plain.slice(0, 5).map((n) => n.id).join(", ")}${
              plain.length > 5 ? ", …" : ""
            })`
            : ""),
      );
    }
    const keys = computeKeys(exp);
    const plan = makePlan(exp, store, { only: [b], exact: true, keys });
    const it = plan.byIndex.get(idx)!;
    if (it.status === "skipped") {
      throw new UserError(`run-node: ${b} is skipped: ${it.why.join("; ")}`);
    }
    if (it.status === "cached") {
      ctx.output.err(`${b} is cached (key ${it.key.key})`);
      return 0;
    }
    checkReadiness(plan);
    const endInterruptible = ctx.interruptible?.() ?? (() => {});
    let r;
    try {
      r = await runPlan(plan, store, {
        reporter,
        jobs: 1,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
    } finally {
      endInterruptible();
    }
    if (r.failures.length > 0) {
      printFailures(ctx, plan, r.failures);
      return 1;
    }
    return 0;
  }
  reporter.start(job.id);
  const endInterruptible = ctx.interruptible?.() ?? (() => {});
  try {
    const r = await executeJob(job, store, {
      reporter,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    reporter.end(job.id, r.status, r.ms);
    reporter.close();
    return 0;
  } catch (e) {
    reporter.end(job.id, "failed", 0, (e as Error).message);
    reporter.close();
    const f = e as NodeFailure;
    ctx.output.err(
      `✗ node ${job.id}\n  key     ${job.key}\n  error   ${f.message}\n  log     ${
        f.log ?? "?"
      }\n  resume  run-node ${job.key}`,
    );
    return 1;
  } finally {
    endInterruptible();
  }
}

/**
 * The node ids a partial id names: `score` or `score[context=full]` (some of
 * the variant's coordinates, in any order) for `score[context=full,seed=1]`
 * and its other seeds.
 */
export function partialIdMatches(exp: Experiment, id: string): string[] {
  const m = /^([^[\]]+)(?:\[(.*)\])?$/.exec(id.trim());
  if (!m) return [];
  const plain = m[1]!;
  const pairs = (m[2] ?? "").split(",").map((p) => p.trim()).filter((p) =>
    p !== ""
  ).map((p) => p.split("=").map((x) => x.trim()));
  return exp.nodes.filter((n) =>
    n.plain === plain &&
    pairs.every(([k, v]) => k !== undefined && n.variant[k] === v)
  ).map((n) => n.id);
}

/** Options of {@linkcode showCommand}. */
export interface ShowOptions {
  /** A field path into the entry (`value.suites.base`, `report.rationale`); default: the value. */
  path?: string;
}

/**
 * `show FILE NODE [PATH]`: print what the cache holds for one node as JSON
 * (its value by default; `report...` or `value...` paths select parts), e.g.
 * which config a redesign chose and why. Never runs anything.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import type { CommandContext } from "./commands.ts";
 * import { SilentReporter } from "../run/progress.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const dir = await Deno.makeTempDir();
 * const file = `${dir}/e.yaml`;
 * Deno.writeTextFileSync(file, "experiment: e\nseed: 1\nnodes:\n  a: { kind: one, with: { x: 4 } }\n");
 * const lines: string[] = [];
 * const ctx: CommandContext = {
 *   kinds: [one as NodeKind], cache: `${dir}/cache`, reporter: new SilentReporter(),
 *   output: { out: (l) => lines.push(l), err: (l) => lines.push(`ERR ${l}`) },
 * };
 * import { runCommand, showCommand } from "./commands.ts";
 * await runCommand(ctx, file);
 * lines.length = 0;
 * assert.equal(await showCommand(ctx, file, "a"), 0);
 * assert.ok(lines.some((l) => l.includes("4")), lines.join("\n"));
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function showCommand(
  ctx: CommandContext,
  file: string,
  id: string,
  options: ShowOptions = {},
): Promise<number> {
  const exp = await load(ctx, file);
  const index = exp.nodes.findIndex((n) => n.id === id);
  if (index < 0) {
    const partial = partialIdMatches(exp, id);
    throw new UserError(
      `No node "${id}" in ${file}${
        partial.length
          ? `; it names ${partial.length} node${
            partial.length > 1 ? "s" : ""
          }, give one in full: ${partial.slice(0, 6).join(", ")}${
            partial.length > 6 ? `, … (${partial.length - 6} more)` : ""
          }`
          : didYouMean(id, exp.nodes.map((n) => n.id))
      } (\`./envsmith plan ${file}\` lists every node id)`,
    );
  }
  const key = computeKeys(exp)[index]!;
  const store = new Store(ctx.cache);
  const entry = store.readEntry(key.key);
  const mark = entry ? store.importMark(key.key) : null;
  if (mark) {
    ctx.output.err(
      `${id}: imported from ${mark.bundle}${
        mark.imported ? ` on ${mark.imported.slice(0, 10)}` : ""
      }, not computed here (${resumeCommand(file, [id])} computes it)`,
    );
  }
  if (!entry) {
    ctx.output.err(
      `${id} is not in the cache (${ctx.cache}); compute it with: ${
        resumeCommand(file, [id])
      }`,
    );
    return 1;
  }
  const path = (options.path ?? "value").split(".").filter((p) => p !== "");
  const root = path[0];
  if (root !== "value" && root !== "report") {
    throw new UserError(
      `A path starts at "value" or "report" (got "${options.path}"), e.g. value.suites or report.rationale.`,
    );
  }
  const got = getField(
    root === "value" ? entry.value : entry.report ?? null,
    path.slice(1),
  );
  if (got === undefined) {
    throw new UserError(
      `${id} has no field ${path.join(".")}; fields here: ${
        Object.keys(
          (getField(
            root === "value" ? entry.value : entry.report ?? null,
            path.slice(1, -1),
          ) ?? {}) as object,
        ).join(", ") || "(none)"
      }`,
    );
  }
  ctx.output.out(JSON.stringify(got, null, 2));
  return 0;
}
