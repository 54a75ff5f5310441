/**
 * `runs EXPERIMENT` (the run history of an experiment, from its manifests)
 * and `runs diff A B` (the changed parameters and table cells of two runs).
 *
 * @module
 */
import { existsSync } from "node:fs";
import { type CommandContext, load } from "./commands.ts";
import { UserError } from "../errors.ts";
import type { Experiment } from "../compile/experiment.ts";
import {
  listManifests,
  type Manifest,
  readManifest,
} from "../cache/manifest.ts";
import { formatDuration } from "../run/progress.ts";
import {
  describeChanges,
  diffRuns,
  type RunChanges,
  wallMs,
} from "../cache/run_history.ts";
import { Store } from "../cache/store.ts";
import { didYouMean } from "../suggest.ts";
import { buildTable, formatCell, type Table } from "../tables/tables.ts";
import { overridesDigest } from "../tables/trial.ts";

/** The experiment name of a file argument, or the argument itself (a name). */
async function _experimentName(
  ctx: CommandContext,
  arg: string,
): Promise<string> {
  if (/\.ya?ml$/.test(arg) && existsSync(arg)) {
    return (await load(ctx, arg)).name;
  }
  return arg;
}

/** Every readable manifest of an experiment, oldest first. */
function _manifests(store: Store, experiment: string): Manifest[] {
  return listManifests(store, experiment).map((p) => readManifest(p)).filter((
    m,
  ): m is Manifest => m !== null);
}

/** The names of the experiments with runs in this cache. */
function _experimentsWithRuns(store: Store): string[] {
  try {
    return [...Deno.readDirSync(`${store.root}/runs`)].filter((d) =>
      d.isDirectory
    ).map((d) => d.name).sort();
  } catch {
    return [];
  }
}

/**
 * `runs EXPERIMENT`: one line per run (oldest first): its id, start, wall
 * time, status, nodes computed / cached / failed, and what changed against
 * the run before it (overrides, parameters, code files, nodes added or
 * removed).
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
 * import { runsCommand } from "./runs_command.ts";
 * await runCommand(ctx, file);
 * lines.length = 0;
 * assert.equal(await runsCommand(ctx, file), 0);
 * assert.ok(lines.length > 0);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function runsCommand(
  ctx: CommandContext,
  experiment: string,
): Promise<number> {
  const store = new Store(ctx.cache);
  const name = await _experimentName(ctx, experiment);
  const runs = _manifests(store, name);
  if (runs.length === 0) {
    const known = _experimentsWithRuns(store);
    throw new UserError(
      `No runs of "${name}" in ${ctx.cache}${didYouMean(name, known)}${
        known.length ? ` (experiments with runs: ${known.join(", ")})` : ""
      }; a run records one: ./envsmith run experiments/FILE.yaml`,
    );
  }
  const trials = runs.filter((m) => m.overrides?.length).length;
  ctx.output.out(
    `runs of ${name} (${runs.length}, oldest first${
      trials
        ? `; ${trials} trial${
          trials > 1 ? "s" : ""
        } with --set, marked \`trial\`, the rest of the file as committed`
        : ""
    }):`,
  );
  let prev: Manifest | null = null;
  for (const m of runs) {
    const c = m.counts ?? {};
    const wall = wallMs(m);
    ctx.output.out(
      `  ${m.run}  ${m.started.slice(0, 19).replace("T", " ")}  ${
        wall === null ? "(did not finish)" : formatDuration(wall)
      }  ${m.status}: ${c.done ?? 0} computed, ${c.cached ?? 0} cached${
        c.failed ? `, ${c.failed} failed` : ""
      }${m.executor ? ` on ${m.executor}` : ""}${
        m.overrides?.length ? "  trial" : ""
      }`,
    );
    if (m.overrides?.length) {
      ctx.output.out(
        `      trial with ${
          m.overrides.map((o) => `--set ${o}`).join(" ")
        } (its tables: NAME.trial-${overridesDigest(m.overrides)})`,
      );
    }
    const changes = prev === null
      ? ["first run in this cache"]
      : describeChanges(diffRuns(store, prev, m));
    for (const l of changes.length ? changes : ["nothing changed"]) {
      ctx.output.out(`      ${l}`);
    }
    prev = m;
  }
  ctx.output.out(
    `(./envsmith runs diff A B compares two runs, by id or a unique part of it, e.g. ${
      runs.at(-1)!.run.slice(-4)
    })`,
  );
  return 0;
}

/** The manifest a run reference names: a run id or a unique part of one. */
function _findRun(store: Store, ref: string): Manifest {
  const all = listManifests(store);
  const ids = all.map((f) => f.replace(/^.*\//, "").replace(/\.json$/, ""));
  const exact = ids.indexOf(ref);
  const hits = exact >= 0
    ? [exact]
    : ids.flatMap((id, i) => (id.includes(ref) ? [i] : []));
  if (hits.length !== 1) {
    throw new UserError(
      hits.length === 0
        ? `No run "${ref}" in ${store.root}${
          didYouMean(ref, ids)
        } (./envsmith runs EXPERIMENT lists them)`
        : `"${ref}" names ${hits.length} runs (${
          hits.slice(0, 4).map((i) => ids[i]).join(", ")
        }${hits.length > 4 ? ", …" : ""}); give more of the id`,
    );
  }
  const m = readManifest(all[hits[0]!]!);
  if (!m) {
    throw new UserError(`The manifest of run ${ids[hits[0]!]} is unreadable`);
  }
  return m;
}

/** The tables of `exp` as run `m` left them (each node read by the key it had in that run). */
function _tablesOf(store: Store, exp: Experiment, m: Manifest): Table[] {
  const keyOf = new Map(m.nodes.map((n) => [n.id, n.key]));
  return exp.tables.map((spec) =>
    buildTable(exp, spec, (node) => {
      if (node.skipped) return { status: "skipped", why: node.skipped };
      const key = keyOf.get(node.id);
      if (key === undefined) return { status: "missing" };
      try {
        const e = store.readEntry(key);
        return e
          ? {
            status: "ok",
            value: e.value,
            ...(e.report !== undefined ? { report: e.report } : {}),
          }
          : { status: "missing" };
      } catch {
        return { status: "missing" };
      }
    }, () => "")
  );
}

/** Changed cells of two builds of the same tables: `table: row / column: A -> B`. */
export function changedCells(
  before: readonly Table[],
  after: readonly Table[],
): string[] {
  const lines: string[] = [];
  // A trial's table is compared with the same table of the other run,
  // trial or not (`trial.of` is the committed name).
  const base = (t: Table) => t.trial?.of ?? t.name;
  for (const tb of after) {
    const ta = before.find((t) => base(t) === base(tb));
    if (!ta) continue;
    for (const cb of tb.cells) {
      const ca = ta.cells.find((c) =>
        c.row === cb.row && c.column === cb.column
      );
      const a = ca ? formatCell(ta, ca) : "—";
      const b = formatCell(tb, cb);
      if (a !== b) {
        lines.push(`${base(tb)}: ${cb.row} / ${cb.column}: ${a} -> ${b}`);
      }
    }
  }
  return lines;
}

/**
 * `runs diff A B`: the changes from run A to run B (overrides, parameters,
 * code files, nodes) and the table cells that differ, each table built from
 * the entries each run had (the file is read with each run's overrides).
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
 * import { runsDiffCommand } from "./runs_command.ts";
 * import { listManifests } from "../cache/manifest.ts";
 * import { Store } from "../cache/store.ts";
 * await runCommand(ctx, file);
 * Deno.writeTextFileSync(file, "experiment: e\nseed: 1\nnodes:\n  a: { kind: one, with: { x: 5 } }\n");
 * await runCommand(ctx, file);
 * lines.length = 0;
 * const [a, b] = listManifests(new Store(ctx.cache), "e").map((f) =>
 *   f.replace(/^.*\//, "").replace(/\.json$/, "")
 * );
 * assert.equal(await runsDiffCommand(ctx, a!, b!), 0);
 * assert.ok(lines.some((l) => l.includes("x")), lines.join("\n"));
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function runsDiffCommand(
  ctx: CommandContext,
  refA: string,
  refB: string,
): Promise<number> {
  const store = new Store(ctx.cache);
  const a = _findRun(store, refA), b = _findRun(store, refB);
  if (a.experiment !== b.experiment) {
    throw new UserError(
      `Runs ${a.run} (${a.experiment}) and ${b.run} (${b.experiment}) are of different experiments`,
    );
  }
  ctx.output.out(`runs diff ${a.experiment}: ${a.run} -> ${b.run}`);
  const changes: RunChanges = diffRuns(store, a, b);
  const lines = describeChanges(changes, Infinity);
  for (const l of lines.length ? lines : ["nothing changed"]) {
    ctx.output.out(`  ${l}`);
  }
  if (!existsSync(b.file)) {
    ctx.output.out(
      `  (table cells not compared: ${b.file} is not here; run from the directory the runs were made in)`,
    );
    return 0;
  }
  const expOf = (m: Manifest) =>
    load(
      m.overrides?.length ? { ...ctx, overrides: m.overrides } : ctx,
      m.file,
    );
  let ta: Table[], tb: Table[];
  try {
    ta = _tablesOf(store, await expOf(a), a);
    tb = _tablesOf(store, await expOf(b), b);
  } catch (e) {
    ctx.output.out(
      `  (table cells not compared: ${b.file} no longer loads with the runs' overrides: ${
        (e as Error).message.split("\n")[0]
      })`,
    );
    return 0;
  }
  if (tb.length === 0) {
    ctx.output.out(`  (${b.file} has no tables)`);
    return 0;
  }
  const cells = changedCells(ta, tb);
  ctx.output.out(
    cells.length
      ? `table cells that changed (${cells.length}):`
      : "no table cell changed",
  );
  for (const l of cells) ctx.output.out(`  ${l}`);
  return 0;
}
