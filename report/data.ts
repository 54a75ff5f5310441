/**
 * What the HTML report shows, gathered from the cache alone (never runs
 * anything): per experiment its tables (the engine's `buildTables`), the
 * training curves of every stage group, each engineer's configuration
 * trajectory, a few failure cases with their pictures, and the nodes the
 * cache lacks with the command that computes them.
 *
 * Stage nodes are recognised by their `stage` (the engine's unrolling of a
 * `stages` node: stage index and name in `each`); a curve or trajectory of a matrix
 * variant follows, at every stage, the node whose variant is a subset of the
 * variant of the last stage's node.
 *
 * @module
 */
import { CorruptEntryError } from "@envsmith/engine/errors";
import type { Json } from "@envsmith/engine/kind";
import type { Experiment, GraphNode } from "@envsmith/engine/compile";
import { computeKeys, type Entry, Store } from "@envsmith/engine/cache";
import { type CollapsedGraph, collapseGraph } from "@envsmith/engine/run";
import { experimentWarningLines, type Table } from "@envsmith/engine/tables";
import {
  buildTables,
  type CommandContext,
  load,
  resumeCommand,
} from "@envsmith/engine/cli";
import type { Instance } from "../mapf/instance.ts";
import type { Episode } from "../mapf/trajectory.ts";
import { episodesFromRollouts } from "../engineer/from_rollouts.ts";
import { renderFailureCase } from "../engineer/render_case.ts";
import { loadRollouts } from "../nodes/diagnose.ts";
import { renderFailureSvg } from "./failure_svg.ts";

/** One point of a training curve. */
export interface CurvePoint {
  /** Stage index (0-based). */
  readonly stage: number;
  /** Update number of the policy (cumulative over stages). */
  readonly update: number;
  /** Cumulative samples (agent-steps) of the policy at this update. */
  readonly samples: number;
  /** Success rate of the training episodes that ended in this update (null when none ended). */
  readonly success: number | null;
}

/** The curve of one matrix variant across the stages of a group. */
export interface CurveSeries {
  /** The variant (axis -> label). */
  readonly variant: Readonly<Record<string, string>>;
  /** Its label, e.g. `full` or `context=full, seed=1`. */
  readonly label: string;
  /** The label without the `over` axis (series of one colour), e.g. `full`. */
  readonly series: string;
  /** The points, stage after stage. */
  readonly points: readonly CurvePoint[];
  /** Samples at the start of each stage (the previous stage's last point; 0 for stage 0), null when unknown. */
  readonly stageStarts: readonly (number | null)[];
  /** Train node ids, one per stage. */
  readonly nodes: readonly string[];
  /** Ids of the stages' train nodes the cache lacks. */
  readonly missing: readonly string[];
  /** Why the variant was not run, when it is skipped. */
  readonly skipped?: string;
  /**
   * Held-out success of each stage's policy, where the experiment evaluates
   * it (an evaluate node in the stage reading its policy): at the stage's
   * last cumulative sample count, the mean success over the suites.
   */
  readonly heldout: readonly {
    readonly stage: number;
    readonly samples: number;
    readonly success: number;
  }[];
}

/** Learning curves of the train nodes of one stage group. */
export interface CurveSet {
  /** Group (the stages node's id, e.g. `curriculum`). */
  readonly group: string;
  /** Name of the train node in the stage (e.g. `policy`); `""` for a train node outside stages (then `group` is its id). */
  readonly name: string;
  /** Number of stages (with a train node outside the stages that trains on the last redesign drawn as one more). */
  readonly stages: number;
  /** That node outside the stages drawn as the last stage (e.g. `last`), when there is one. */
  readonly appended?: string;
  /** The evaluate nodes of the held-out points (`curriculum.*.heldout`), when any. */
  readonly heldoutNode?: string;
  /** One series per variant. */
  readonly series: readonly CurveSeries[];
}

/** One stage of a configuration trajectory. */
export interface TrajectoryRow {
  /** Stage index. */
  readonly stage: number;
  /** The redesign node id. */
  readonly id: string;
  /** `ok`, `missing` (not in the cache) or `skipped`. */
  readonly status: "ok" | "missing" | "skipped";
  /** Why missing/skipped. */
  readonly why?: string;
  /** Engineer name (`rules`, `llm`, ...). */
  readonly engineer?: string;
  /** Context type it saw. */
  readonly context?: string;
  /** Config id before the redesign. */
  readonly fromId?: string;
  /** Config id after the redesign (what the next stage trains on). */
  readonly toId?: string;
  /** Whether the config changed. */
  readonly changed?: boolean;
  /** Dimensions (field paths) that changed, in first-seen order. */
  readonly dimensions?: readonly string[];
  /** One line per change (the diff's summary). */
  readonly changes?: readonly string[];
  /** The engineer's rationale. */
  readonly rationale?: string;
  /**
   * The model the engineer ran, when it names one: the node whose model
   * file it read (e.g. `curriculum.1.policy.gguf`, the checkpoint trained
   * in that stage), else the model as the engineer reported it.
   */
  readonly model?: string;
  /** The configuration after the redesign (its value). */
  readonly config?: Json;
  /** The configuration before it, as far as the diff tells: changed path -> old value. */
  readonly before?: Readonly<Record<string, Json>>;
  /** Notable events (fallbacks, clamps, re-asks); rule firings are omitted. */
  readonly events?: readonly {
    readonly type: string;
    readonly detail: string;
  }[];
}

/** The configuration trajectory of one variant in one stage group. */
export interface ConfigTrajectory {
  /** Stage group. */
  readonly group: string;
  /** Name of the redesign node in the stage (e.g. `config`). */
  readonly name: string;
  /** The variant. */
  readonly variant: Readonly<Record<string, string>>;
  /** Its label. */
  readonly label: string;
  /** One row per stage. */
  readonly rows: readonly TrajectoryRow[];
}

/** A rendered failure case. */
export interface FailureFigure {
  /** `training`: from the last stage's findings; `evaluation`: from an evaluate node's trajectories. */
  readonly source: "training" | "evaluation";
  /** Node the case comes from (a diagnose or evaluate node). */
  readonly node: string;
  /** Label of its variant. */
  readonly label: string;
  /** Episode index in the trajectories. */
  readonly episode: number;
  /** Instance id. */
  readonly instance: string;
  /** Suite of the instance, when it is a suite instance. */
  readonly suite?: string;
  /** Failure type. */
  readonly outcome: string;
  /** Step of the failure. */
  readonly step: number;
  /** Agents involved. */
  readonly agents: readonly number[];
  /** First line of the text rendering (what failed, when, who). */
  readonly caption: string;
  /** Full text rendering of the case (map and moves). */
  readonly text: string;
  /** The picture: a standalone SVG element. */
  readonly svg: string;
}

/** Everything the report shows about one experiment. */
export interface ExperimentReport {
  /** `experiment:` name. */
  readonly name: string;
  /** File as given. */
  readonly file: string;
  /** `description:` of the file, when given. */
  readonly description?: string;
  /** Matrix axes: name and labels. */
  readonly axes: readonly { name: string; values: readonly string[] }[];
  /** Axis that tables aggregate over (usually `seed`), when any. */
  readonly over?: string;
  /** The tables, as `./envsmith tables` builds them. */
  readonly tables: readonly Table[];
  /** Learning curves, one set per stage group with train nodes. */
  readonly curves: readonly CurveSet[];
  /** Configuration trajectories, one per stage group and variant. */
  readonly trajectories: readonly ConfigTrajectory[];
  /** Rendered failure cases. */
  readonly failures: readonly FailureFigure[];
  /** Notes on what the failure-case section omits. */
  readonly failureNotes: readonly string[];
  /** Ids of every node a section needed that the cache lacks. */
  readonly missing: readonly string[];
  /** Warnings about the results (a policy that did not learn), one line each. */
  readonly warnings: readonly string[];
  /** The experiment's graph collapsed by stage and variant (the DAG picture). */
  readonly graph: CollapsedGraph;
  /**
   * Nodes whose data the failure cases are drawn from but the cache holds
   * without it (results imported without their blobs), with the command that
   * computes them.
   */
  readonly failuresAbsent?: {
    readonly nodes: readonly string[];
    readonly command: string;
  };
  /** The command that computes the missing nodes. */
  readonly command?: string;
  /** Earliest and latest creation time of the entries shown (ISO). */
  readonly computed?: {
    readonly first: string;
    readonly last: string;
    /** `results`: the entries the tables read; `entries`: every entry shown (no tables). */
    readonly of: "results" | "entries";
  };
}

/** Options of {@linkcode collectExperiment}. */
export interface CollectOptions {
  /** Failure cases per variant and source. @default 2 */
  readonly cases?: number;
}

type _Look =
  | { status: "ok"; entry: Entry }
  | { status: "missing"; why?: string }
  | { status: "skipped"; why: string };

/** Stage index and name of a stage node, or null. */
function _stageOf(n: GraphNode): { stage: number; name: string } | null {
  return n.stage ? { stage: n.stage.index, name: n.stage.name } : null;
}

function _isSubset(
  a: Readonly<Record<string, string>>,
  b: Readonly<Record<string, string>>,
): boolean {
  return Object.entries(a).every(([k, x]) => b[k] === x);
}

/**
 * `full` for one axis, `context=full, seed=1` for several, `` for none;
 * without the axis `without` and, when `only` is given, axes not in it.
 */
export function variantLabel(
  variant: Readonly<Record<string, string>>,
  exp: Pick<Experiment, "axes">,
  without?: string,
  only?: ReadonlySet<string>,
): string {
  const keys = exp.axes.map((a) => a.name).filter((k) =>
    k !== without && variant[k] !== undefined && (!only || only.has(k))
  );
  if (keys.length === 1) return variant[keys[0]!]!;
  return keys.map((k) => `${k}=${variant[k]}`).join(", ");
}

function _obj(x: unknown): Record<string, unknown> | undefined {
  return typeof x === "object" && x !== null && !Array.isArray(x)
    ? x as Record<string, unknown>
    : undefined;
}

function _num(x: unknown): number | null {
  return typeof x === "number" && Number.isFinite(x) ? x : null;
}

function _str(x: unknown): string | undefined {
  return typeof x === "string" ? x : undefined;
}

/**
 * The command computing `ids` of `file`: `--only` the missing nodes no other
 * missing node depends on (`--only` brings their inputs along), or the whole
 * experiment when that is every end node or more than 12 ids.
 */
function _command(exp: Experiment, ids: ReadonlySet<string>): string {
  const inputOfMissing = new Set<number>();
  const sinks = new Set(exp.nodes.map((n) => n.index));
  for (const n of exp.nodes) {
    for (const d of n.deps) {
      sinks.delete(d);
      if (ids.has(n.id)) inputOfMissing.add(d);
    }
  }
  // Transitive inputs of missing nodes.
  for (let i = exp.nodes.length - 1; i >= 0; i--) {
    if (!inputOfMissing.has(i)) continue;
    for (const d of exp.nodes[i]!.deps) inputOfMissing.add(d);
  }
  const top = exp.nodes.filter((n) =>
    ids.has(n.id) && !inputOfMissing.has(n.index)
  );
  const allEnds = [...sinks].every((i) => {
    const n = exp.nodes[i]!;
    return n.skipped !== undefined || ids.has(n.id);
  });
  const whole = allEnds || top.length > 12;
  return resumeCommand(exp.file, whole ? [] : top.map((n) => n.id));
}

/** What the cache holds for the nodes of one experiment, read once per node. */
class _CacheView {
  /** Ids of nodes whose entries are missing. */
  readonly missing = new Set<string>();
  /** Creation times of the entries read. */
  readonly times: string[] = [];
  #exp: Experiment;
  #store: Store;
  #keys;
  #looked = new Map<number, _Look>();

  constructor(exp: Experiment, store: Store) {
    this.#exp = exp;
    this.#store = store;
    this.#keys = computeKeys(exp);
  }

  /** What the cache has for `n`. */
  look(n: GraphNode): _Look {
    let r = this.#looked.get(n.index);
    if (r) return r;
    r = this.#read(n);
    this.#looked.set(n.index, r);
    return r;
  }

  /** Like {@linkcode _CacheView.look}, recording `n` as missing when it is. */
  need(n: GraphNode): _Look {
    const r = this.look(n);
    if (r.status === "missing") this.missing.add(n.id);
    return r;
  }

  /** Reads (and verifies) a blob. */
  readonly readBlob = (ref: { $blob: string }): Promise<Uint8Array> =>
    Promise.resolve(this.#store.readBlob(ref));

  #read(n: GraphNode): _Look {
    if (n.skipped) return { status: "skipped", why: n.skipped };
    const k = this.#keys[n.index]!;
    if (!k.cacheable) {
      return { status: "missing", why: `not cacheable: ${k.reason}` };
    }
    try {
      const e = this.#store.readEntry(k.key);
      if (!e) return { status: "missing" };
      this.times.push(e.created);
      return { status: "ok", entry: e };
    } catch (e) {
      if (!(e instanceof CorruptEntryError)) throw e;
      return { status: "missing", why: e.message };
    }
  }
}

/** What the parts of a report share. */
interface _Report {
  readonly exp: Experiment;
  readonly cache: _CacheView;
  /** Failure cases per variant and source. */
  readonly cases: number;
  /** The `over` axis (seeds), if any. */
  readonly over: string | undefined;
  /** Its first value: failure cases are shown for it only. */
  readonly firstOver: string | undefined;
  /** A variant's label (axes that do not vary between running variants left out). */
  readonly label: (
    v: Readonly<Record<string, string>>,
    skipped: boolean,
    without?: string,
  ) => string;
}

/** Axes whose value differs between variants that run: the others (e.g. `engineer=rules` when the llm variants are skipped) stay out of labels. */
function _varyingAxes(exp: Experiment): Set<string> {
  const varying = new Set<string>();
  for (const a of exp.axes) {
    const seen = new Set(
      exp.nodes.filter((n) => !n.skipped && n.variant[a.name] !== undefined)
        .map((n) => n.variant[a.name]),
    );
    if (seen.size > 1) varying.add(a.name);
  }
  return varying;
}

/** A stage group: the nodes of each `each` name, by stage. */
interface _Group {
  stages: number;
  byName: Map<string, GraphNode[][]>;
  /** A train node outside the stages drawn as one more stage. */
  appended?: string;
}

/**
 * Stage groups: group -> name -> nodes by stage. A train node outside the
 * stages that trains the last stage's policy further (the `last` node that
 * trains on the last redesign) is drawn as one more stage of that group;
 * other train nodes outside stages make a one-stage group of their own.
 */
function _stageGroups(exp: Experiment): Map<string, _Group> {
  const groups = new Map<string, _Group>();
  for (const n of exp.nodes) {
    if (!n.stage && n.kind.name === "train") {
      const from = n.deps.map((i) => exp.nodes[i]!).find((d) =>
        d.stage !== undefined && d.kind.name === "train"
      );
      const g = from ? groups.get(from.group) : undefined;
      const list = from && g ? g.byName.get(from.stage!.name) : undefined;
      if (from && g && list && from.stage!.index === g.stages - 1) {
        (list[g.stages] ??= []).push(n);
        g.appended ??= n.plain;
        continue;
      }
    }
    const s = _stageOf(n) ??
      (n.kind.name === "train" ? { stage: 0, name: "" } : null);
    if (!s) continue;
    const key = s.name === "" ? n.plain : n.group;
    let g = groups.get(key);
    if (!g) groups.set(key, g = { stages: 0, byName: new Map() });
    g.stages = Math.max(g.stages, s.stage + 1);
    let list = g.byName.get(s.name);
    if (!list) g.byName.set(s.name, list = []);
    (list[s.stage] ??= []).push(n);
  }
  return groups;
}

/** Per variant of the last stage: the node of each stage on its chain. */
function _chains(perStage: GraphNode[][]) {
  const last = perStage[perStage.length - 1] ?? [];
  return last.map((tail) => ({
    variant: tail.variant,
    nodes: perStage.map((list) =>
      (list ?? []).find((n) => _isSubset(n.variant, tail.variant))
    ),
  }));
}

/** The training curve of every chain of a group's train nodes. */
function _curveSet(
  r: _Report,
  group: string,
  name: string,
  perStage: GraphNode[][],
  appended?: string,
): CurveSet {
  const series: CurveSeries[] = [];
  const evaluations = _stageEvaluations(r.exp, group);
  for (const chain of _chains(perStage)) {
    const points: CurvePoint[] = [];
    const starts: (number | null)[] = [];
    const miss: string[] = [];
    const heldout: { stage: number; samples: number; success: number }[] = [];
    let skipped: string | undefined;
    let prevEnd: number | null = 0;
    chain.nodes.forEach((n, stage) => {
      starts.push(prevEnd);
      prevEnd = null;
      if (!n) return;
      const look = r.cache.need(n);
      if (look.status === "skipped") skipped = look.why;
      if (look.status === "missing") miss.push(n.id);
      if (look.status !== "ok") return;
      const curve = _obj(look.entry.report)?.curve;
      if (!Array.isArray(curve)) return;
      for (const p of curve) {
        const o = _obj(p);
        const samples = _num(o?.samples);
        if (!o || samples === null) continue;
        points.push({
          stage,
          update: _num(o.update) ?? points.length + 1,
          samples,
          success: _num(o.success),
        });
        prevEnd = samples;
      }
      const ev = evaluations.get(n.index);
      if (ev && prevEnd !== null) {
        const got = r.cache.need(ev);
        const success = got.status === "ok"
          ? meanSuiteSuccess(got.entry.value)
          : null;
        if (success !== null) {
          heldout.push({ stage, samples: prevEnd, success });
        }
      }
    });
    series.push({
      variant: chain.variant,
      label: r.label(chain.variant, skipped !== undefined),
      series: r.label(chain.variant, skipped !== undefined, r.over),
      points,
      stageStarts: starts,
      nodes: chain.nodes.map((n) => n?.id ?? ""),
      missing: miss,
      ...(skipped ? { skipped } : {}),
      heldout,
    });
  }
  const heldoutNode = [...evaluations.values()].find((e) => e.stage)?.stage;
  return {
    group,
    name,
    stages: perStage.length,
    ...(appended ? { appended } : {}),
    ...(heldoutNode ? { heldoutNode: `${group}.*.${heldoutNode.name}` } : {}),
    series,
  };
}

/**
 * The held-out evaluation of each train node of a stage group: an evaluate
 * node inside the stages that reads the stage's policy, and for a train node
 * appended after the stages, an evaluate node reading it on the same
 * instances (train node index -> evaluate node).
 */
function _stageEvaluations(
  exp: Experiment,
  group: string,
): Map<number, GraphNode> {
  const out = new Map<number, GraphNode>();
  const envsOf = (e: GraphNode) =>
    e.deps.map((i) => exp.nodes[i]!).find((d) => d.kind.name !== "train")
      ?.plain;
  const inStages = new Set<string>();
  for (const e of exp.nodes) {
    if (e.kind.name !== "evaluate" || e.group !== group || !e.stage) continue;
    for (const d of e.deps) {
      if (exp.nodes[d]!.kind.name === "train") out.set(d, e);
    }
    const envs = envsOf(e);
    if (envs) inStages.add(envs);
  }
  if (inStages.size === 0) return out;
  for (const e of exp.nodes) {
    if (e.kind.name !== "evaluate" || e.stage) continue;
    const envs = envsOf(e);
    if (!envs || !inStages.has(envs)) continue;
    for (const d of e.deps) {
      if (exp.nodes[d]!.kind.name === "train") out.set(d, e);
    }
  }
  return out;
}

/** The mean success over an evaluate value's suites (its `success_rate` without suites); null when neither is there. */
export function meanSuiteSuccess(value: Json): number | null {
  const suites = _obj(_obj(value)?.suites);
  if (suites) {
    const xs = Object.values(suites).map((x) => _num(_obj(x)?.success_rate))
      .filter((x): x is number => x !== null);
    if (xs.length) return xs.reduce((a, b) => a + b, 0) / xs.length;
  }
  return _num(_obj(value)?.success_rate);
}

/** The configuration trajectory of every chain of a group's redesign nodes. */
function _trajectories(
  r: _Report,
  group: string,
  name: string,
  perStage: GraphNode[][],
): ConfigTrajectory[] {
  return _chains(perStage).map((chain) => {
    const rows: TrajectoryRow[] = [];
    chain.nodes.forEach((n, stage) => {
      if (!n) return;
      const look = r.cache.need(n);
      if (look.status !== "ok") {
        rows.push({
          stage,
          id: n.id,
          status: look.status,
          ...(look.why ? { why: look.why } : {}),
        });
      } else {
        rows.push({
          stage,
          id: n.id,
          status: "ok",
          ..._redesignRow(look.entry),
        });
      }
    });
    return {
      group,
      name,
      variant: chain.variant,
      label: r.label(
        chain.variant,
        rows.length > 0 && rows.every((x) => x.status === "skipped"),
      ),
      rows,
    };
  });
}

/** Whether failure cases are shown for a variant (the first `over` value only). */
function _shownForFailures(
  r: _Report,
  v: Readonly<Record<string, string>>,
): boolean {
  return !r.over || v[r.over] === undefined || v[r.over] === r.firstOver;
}

/** Training failure cases: the recorded failures of the last stage's diagnose nodes, pictured from their rollouts. */
async function _trainingFailures(
  r: _Report,
  lastStage: readonly GraphNode[],
  failures: FailureFigure[],
  notes: string[],
  absent: GraphNode[],
): Promise<void> {
  let omitted = 0;
  for (const n of lastStage) {
    if (n.skipped) continue;
    if (!_shownForFailures(r, n.variant)) {
      omitted++;
      continue;
    }
    const look = r.cache.need(n);
    if (look.status !== "ok") continue;
    const found = _obj(look.entry.value)?.failures;
    if (!Array.isArray(found) || found.length === 0) continue;
    const ro = n.deps.map((i) => r.exp.nodes[i]!).find((d) =>
      d.kind.name === "rollout"
    );
    const rr = ro ? r.cache.need(ro) : undefined;
    if (!rr || rr.status !== "ok") continue;
    let loaded;
    try {
      loaded = await loadRollouts(rr.entry.value, undefined, null, {
        readBlob: r.cache.readBlob,
      });
    } catch {
      // The entry came without its trajectories (a JSON-only bundle), or
      // they are unreadable: said once, with the command, below.
      absent.push(ro!);
      continue;
    }
    const byId = new Map(loaded.instances.map((i) => [i.id, i]));
    for (const c of found.slice(0, r.cases)) {
      const fc = _obj(c);
      const epIndex = _num(fc?.episode);
      if (!fc || epIndex === null) continue;
      const ep = loaded.episodes[epIndex];
      const inst = ep ? byId.get(ep.instance) : undefined;
      if (!ep || !inst) continue;
      const text = _str(fc.text) ?? "";
      const agents = Array.isArray(fc.agents)
        ? fc.agents.filter((a): a is number => typeof a === "number")
        : [];
      failures.push(
        _figure("training", n.id, r.label(n.variant, false), {
          epIndex,
          ep,
          inst,
          outcome: _str(fc.outcome) ?? ep.outcome,
          step: _num(fc.step) ?? ep.steps,
          agents,
          text,
        }),
      );
    }
  }
  if (omitted > 0) notes.push(_omittedNote(r, "Training", omitted));
}

function _omittedNote(r: _Report, what: string, omitted: number): string {
  return `${what} failure cases are shown for ${r.over}=${r.firstOver} only (${omitted} other variant${
    omitted > 1 ? "s" : ""
  } omitted).`;
}

/** Evaluation failure cases: evaluate nodes with recorded trajectories. */
async function _evaluationFailures(
  r: _Report,
  failures: FailureFigure[],
  notes: string[],
  absent: GraphNode[],
): Promise<void> {
  let omitted = 0;
  for (const n of r.exp.nodes) {
    if (n.kind.name !== "evaluate" || n.skipped) continue;
    if (!_shownForFailures(r, n.variant)) {
      omitted++;
      continue;
    }
    const look = r.cache.need(n);
    if (look.status !== "ok") continue;
    const traj = _obj(_obj(look.entry.value)?.trajectories);
    if (!traj || typeof traj.$blob !== "string") continue;
    const gen = n.deps.map((i) => r.exp.nodes[i]!).find((d) =>
      d.kind.name === "generate"
    );
    const gr = gen ? r.cache.need(gen) : undefined;
    if (!gr || gr.status !== "ok") continue;
    try {
      const loaded = await loadRollouts(
        { trajectories: traj },
        gr.entry.value,
        null,
        { readBlob: r.cache.readBlob },
      );
      const views = episodesFromRollouts(loaded.episodes, loaded.instances);
      const byId = new Map(loaded.instances.map((i) => [i.id, i]));
      for (const i of _pickFailures(loaded.episodes, r.cases)) {
        const ep = loaded.episodes[i]!;
        failures.push(
          _figure("evaluation", n.id, r.label(n.variant, false), {
            epIndex: i,
            ep,
            inst: byId.get(ep.instance)!,
            outcome: ep.outcome === "running" ? "timeout" : ep.outcome,
            step: ep.failStep >= 0 ? ep.failStep : ep.steps,
            agents: ep.failAgents,
            text: renderFailureCase(views[i]!, { episode: i, window: 4 }),
          }),
        );
      }
    } catch {
      absent.push(n);
    }
  }
  if (omitted > 0) notes.push(_omittedNote(r, "Evaluation", omitted));
}

/** Gathers the report of one experiment file from the cache. */
export async function collectExperiment(
  ctx: CommandContext,
  file: string,
  options: CollectOptions = {},
): Promise<ExperimentReport> {
  const exp = await load(ctx, file);
  const cache = new _CacheView(exp, new Store(ctx.cache));
  const varying = _varyingAxes(exp);
  const tables = await buildTables(ctx, file);
  for (const t of tables) for (const id of t.missing) cache.missing.add(id);
  const over = tables.find((t) => t.over)?.over?.axis ??
    (exp.axes.some((a) => a.name === "seed") ? "seed" : undefined);
  const r: _Report = {
    exp,
    cache,
    cases: options.cases ?? 2,
    over,
    firstOver: over
      ? exp.axes.find((a) => a.name === over)?.values[0]?.label
      : undefined,
    label: (v, skipped, without) =>
      variantLabel(v, exp, without, skipped ? undefined : varying),
  };
  const curves: CurveSet[] = [];
  const trajectories: ConfigTrajectory[] = [];
  const failures: FailureFigure[] = [];
  const failureNotes: string[] = [];
  const absent: GraphNode[] = [];
  for (const [group, g] of _stageGroups(exp)) {
    for (const [name, perStage] of g.byName) {
      const kind = perStage.find((l) => l?.length)?.[0]?.kind.name;
      if (kind === "train") {
        curves.push(
          _curveSet(r, group, name, perStage, g.appended),
        );
      } else if (kind === "redesign") {
        trajectories.push(..._trajectories(r, group, name, perStage));
      } else if (kind === "diagnose" && r.cases > 0) {
        const last = perStage[perStage.length - 1] ?? [];
        await _trainingFailures(r, last, failures, failureNotes, absent);
      }
    }
  }
  if (r.cases > 0) {
    await _evaluationFailures(r, failures, failureNotes, absent);
  }
  const description = exp.description?.trim();
  const ids = [...cache.missing];
  // One time stamp: when the results in the tables were computed (their
  // entries may come from a bundle, computed elsewhere and earlier than the
  // curves' entries here); without tables, the entries shown.
  // (from the tables, which know them without reading their entries again)
  const tableTimes = tables.flatMap((t) =>
    t.computed ? [t.computed.first, t.computed.last] : []
  );
  const times = (tableTimes.length ? tableTimes : [...cache.times]).sort();
  const store = new Store(ctx.cache);
  return {
    name: exp.name,
    file,
    warnings: experimentWarningLines(exp, store).map((w) =>
      w.replace(/^warning: /, "")
    ),
    graph: collapseGraph(exp),
    ...(absent.length
      ? {
        failuresAbsent: {
          nodes: absent.map((n) => n.id),
          command: resumeCommand(
            exp.file,
            absent.length > 12 ? [] : absent.map((n) => n.id),
          ),
        },
      }
      : {}),
    ...(description ? { description } : {}),
    axes: exp.axes.map((a) => ({
      name: a.name,
      values: a.values.map((v) => v.label),
    })),
    ...(over ? { over } : {}),
    tables,
    curves,
    trajectories,
    failures,
    failureNotes,
    missing: ids,
    ...(ids.length ? { command: _command(exp, cache.missing) } : {}),
    ...(times.length
      ? {
        computed: {
          first: times[0]!,
          last: times[times.length - 1]!,
          of: tableTimes.length ? "results" : "entries",
        },
      }
      : {}),
  };
}

/** The trajectory fields of a redesign entry. */
function _redesignRow(entry: Entry): Partial<TrajectoryRow> {
  const rep = _obj(entry.report) ?? {};
  const diff = _obj(rep.diff) ?? {};
  const dims: string[] = [];
  const before: Record<string, Json> = {};
  for (const c of Array.isArray(diff.components) ? diff.components : []) {
    const comp = _obj(c);
    for (const ch of Array.isArray(comp?.changes) ? comp.changes : []) {
      const p = _str(_obj(ch)?.path);
      if (p !== undefined && !dims.includes(p)) dims.push(p);
      const from = _obj(ch)?.from;
      if (p !== undefined && from !== undefined && !(p in before)) {
        before[p] = from as Json;
      }
    }
  }
  const events = (Array.isArray(rep.events) ? rep.events : [])
    .map((e) => ({
      type: _str(_obj(e)?.type) ?? "",
      detail: _str(_obj(e)?.detail) ?? "",
    }))
    .filter((e) => e.type !== "rule");
  const out: Partial<TrajectoryRow> = {
    config: entry.value,
    before,
    dimensions: dims,
    changes: (Array.isArray(diff.summary) ? diff.summary : []).filter((
      s,
    ): s is string => typeof s === "string"),
    events,
  };
  const set = <K extends keyof TrajectoryRow>(k: K, x: TrajectoryRow[K]) => {
    if (x !== undefined) (out as Record<string, unknown>)[k] = x;
  };
  set("engineer", _str(rep.engineer));
  set("context", _str(rep.context));
  set("fromId", _str(diff.from_id));
  set("toId", _str(diff.to_id));
  set("changed", typeof diff.changed === "boolean" ? diff.changed : undefined);
  set("rationale", _str(rep.rationale));
  set("model", _modelSource(entry) ?? _str(rep.model));
  return out;
}

/**
 * The node output an engineer's model file came from: the first file
 * reference (`$node.gguf`) in the redesign's `engineer` parameters, as
 * `<node>.<output>` with the variant part of the node id dropped (the row
 * is that variant's).
 */
function _modelSource(entry: Entry): string | undefined {
  const params = _obj(_obj(entry.components)?.params);
  const find = (x: unknown): string | undefined => {
    const o = _obj(x);
    if (o === undefined) {
      return Array.isArray(x) ? x.map(find).find((s) => s) : undefined;
    }
    const ref = _obj(o.$ref);
    if (ref?.file === true && typeof ref.key === "string") {
      const id = entry.inputs[ref.key];
      const path = Array.isArray(ref.path) ? ref.path.join(".") : "";
      return id === undefined
        ? undefined
        : `${id.replace(/\[.*$/, "")}.${path}`;
    }
    return Object.values(o).map(find).find((s) => s);
  };
  return find(params?.engineer);
}

/** Up to `n` failed episodes, one per failure type first, in episode order. */
function _pickFailures(episodes: readonly Episode[], n: number): number[] {
  const failed = episodes.map((e, i) => ({ e, i })).filter(({ e }) =>
    e.outcome !== "success"
  );
  const out: number[] = [];
  const seen = new Set<string>();
  for (const { e, i } of failed) {
    if (out.length >= n) break;
    if (seen.has(e.outcome)) continue;
    seen.add(e.outcome);
    out.push(i);
  }
  for (const { i } of failed) {
    if (out.length >= n) break;
    if (!out.includes(i)) out.push(i);
  }
  return out.sort((a, b) => a - b);
}

function _figure(
  source: FailureFigure["source"],
  node: string,
  label: string,
  c: {
    epIndex: number;
    ep: Episode;
    inst: Instance;
    outcome: string;
    step: number;
    agents: readonly number[];
    text: string;
  },
): FailureFigure {
  const step = Math.max(0, Math.min(c.step, c.ep.steps));
  return {
    source,
    node,
    label,
    episode: c.epIndex,
    instance: c.inst.id,
    ...(c.inst.suite ? { suite: c.inst.suite } : {}),
    outcome: c.outcome,
    step,
    agents: [...c.agents],
    caption: c.text.split("\n")[0] ?? c.outcome,
    text: c.text,
    svg: renderFailureSvg(c.inst, c.ep, {
      step,
      outcome: c.outcome,
      agents: c.agents,
      title: `${c.outcome} at step ${step} in ${c.inst.id} (${node})`,
    }),
  };
}
