/**
 * Run-wide progress: how many of a run's nodes are done, which are running,
 * and when the run will end. The ETA comes from the cache's own history of
 * node times (earlier runs' manifests: the same node, else the same node of
 * another variant, else the same kind), scaled by how this run's recently
 * finished nodes compare with their history (a window of recent work, so
 * the estimate follows a change of pace, shrunk towards the history while
 * few have finished, so one slow first node does not swing it), and bounded
 * below by the longest chain of remaining nodes (a run cannot finish before
 * its critical path does). A node without history takes the recent mean of
 * its kind in this run; until every remaining kind has one, and until a few
 * nodes have finished when history is missing, there is no estimate.
 *
 * @module
 */
import { formatDuration } from "../duration.ts";
import { listManifests, readManifest } from "../cache/manifest.ts";
import type { Plan } from "./plan.ts";
import type { Store } from "../cache/store.ts";

/** One node a run may execute. */
export interface OutlineNode {
  /** Node id. */
  readonly id: string;
  /** Kind name. */
  readonly kind: string;
  /** Ids of the outline's nodes it waits for. */
  readonly deps: readonly string[];
  /** Its duration in earlier runs (ms), when the cache's history has one. */
  readonly estimateMs?: number;
  /**
   * Where `estimateMs` comes from: this node in earlier runs, the same node
   * of other variants or experiments, or only other nodes of its kind (a
   * guess: a kind's nodes can differ a hundredfold with their parameters).
   */
  readonly estimateFrom?: "node" | "variant" | "kind";
}

/** What a run will execute, given to a reporter before it starts. */
export interface RunOutline {
  /** The nodes to run (cached ones are not part of it). */
  readonly nodes: readonly OutlineNode[];
  /** Nodes run in parallel at most. */
  readonly jobs: number;
}

/** A snapshot of a run's progress. */
export interface RunSnapshot {
  /** Nodes the run executes. */
  readonly total: number;
  /** Finished (computed, or stored by another process meanwhile). */
  readonly done: number;
  /** Failed. */
  readonly failed: number;
  /** Blocked by a failed input. */
  readonly blocked: number;
  /** Running now, oldest first. */
  readonly running: readonly string[];
  /** Since the run started (ms). */
  readonly elapsedMs: number;
  /** Expected time to the end (ms); null while nothing can tell. */
  readonly etaMs: number | null;
  /** Why there is no estimate yet, when `etaMs` is null (`ETA after a first train node`). */
  readonly etaNote?: string;
  /**
   * Kinds whose part of the estimate is a guess: only other nodes of the
   * kind, from other runs, and none finished in this run yet.
   */
  readonly etaGuess?: readonly string[];
}

/** Finished nodes (with a history) whose pace sets the estimate: the most recent ones. */
export const PACE_WINDOW = 20;
/** Finished nodes per kind whose mean stands for the kind's nodes without a history. */
export const KIND_WINDOW = 10;
/** The history's weight in the pace, in nodes of mean estimated length: a few finished nodes cannot swing it. */
export const PACE_PRIOR_NODES = 3;

/** The history of node durations: per node id, per plain id and per kind (ms, newest first). */
export interface NodeTimes {
  /** Durations by exact node id, in this experiment's earlier runs. */
  readonly byId: ReadonlyMap<string, number>;
  /** Durations by plain id (the id without its variant), any experiment. */
  readonly byPlain: ReadonlyMap<string, readonly number[]>;
  /** Durations by kind, any experiment. */
  readonly byKind: ReadonlyMap<string, readonly number[]>;
}

/** The id without its variant: `curriculum.2.policy[seed=1]` -> `curriculum.2.policy`. */
function _plain(id: string): string {
  const i = id.indexOf("[");
  return i < 0 ? id : id.slice(0, i);
}

function _median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * Reads the durations of computed nodes from the newest `maxManifests` run
 * manifests of the cache (this experiment's first, so its own node ids win).
 */
export function nodeTimes(
  store: Store,
  experiment: string,
  maxManifests = 40,
): NodeTimes {
  const byId = new Map<string, number>();
  const byPlain = new Map<string, number[]>();
  const byKind = new Map<string, number[]>();
  const own = listManifests(store, experiment).reverse();
  const all = listManifests(store).reverse().filter((p) => !own.includes(p));
  for (const [i, path] of [...own, ...all].slice(0, maxManifests).entries()) {
    const m = readManifest(path);
    if (!m || !Array.isArray(m.nodes)) continue;
    const mine = i < own.length && m.experiment === experiment;
    for (const n of m.nodes) {
      if (n.status !== "done" || typeof n.ms !== "number") continue;
      if (mine && !byId.has(n.id)) byId.set(n.id, n.ms);
      const p = `${mine ? "" : "*"}${_plain(n.id)}`;
      byPlain.set(p, [...(byPlain.get(p) ?? []), n.ms]);
      byKind.set(n.kind, [...(byKind.get(n.kind) ?? []), n.ms]);
    }
  }
  // Other experiments' plain ids only where this one has none.
  const plain = new Map<string, number[]>();
  for (const [k, v] of byPlain) if (!k.startsWith("*")) plain.set(k, v);
  for (const [k, v] of byPlain) {
    if (k.startsWith("*") && !plain.has(k.slice(1))) plain.set(k.slice(1), v);
  }
  return { byId, byPlain: plain, byKind };
}

/** The expected duration of a node from the history, if any. */
export function estimateNode(
  times: NodeTimes,
  id: string,
  kind: string,
): number | undefined {
  return estimateNodeFrom(times, id, kind)?.ms;
}

/** {@linkcode estimateNode} with where the estimate comes from. */
export function estimateNodeFrom(
  times: NodeTimes,
  id: string,
  kind: string,
): { ms: number; from: "node" | "variant" | "kind" } | undefined {
  const exact = times.byId.get(id);
  if (exact !== undefined) return { ms: exact, from: "node" };
  const plain = times.byPlain.get(_plain(id));
  if (plain?.length) return { ms: _median(plain), from: "variant" };
  const k = times.byKind.get(kind);
  return k?.length ? { ms: _median(k), from: "kind" } : undefined;
}

/** The outline of a plan's run: its nodes to run, their inputs among them, and their expected durations. */
export function runOutline(
  plan: Plan,
  store: Store,
  jobs: number,
): RunOutline {
  const toRun = plan.items.filter((it) =>
    it.status === "run" || it.status === "blocked"
  );
  const inRun = new Set(toRun.map((it) => it.node.index));
  const times = toRun.length > 0
    ? nodeTimes(store, plan.exp.name)
    : { byId: new Map(), byPlain: new Map(), byKind: new Map() };
  return {
    jobs: Math.max(1, jobs),
    nodes: toRun.map((it) => {
      const est = estimateNodeFrom(times, it.node.id, it.node.kind.name);
      return {
        id: it.node.id,
        kind: it.node.kind.name,
        deps: it.node.deps.filter((d) => inRun.has(d)).map((d) =>
          plan.exp.nodes[d]!.id
        ),
        ...(est !== undefined
          ? { estimateMs: est.ms, estimateFrom: est.from }
          : {}),
      };
    }),
  };
}

type _State = "pending" | "running" | "done" | "failed" | "blocked";

/** Follows a run from the reporter's events and estimates its end. */
export class RunProgress {
  #outline: RunOutline;
  #byId = new Map<string, OutlineNode>();
  #users = new Map<string, string[]>();
  #state = new Map<string, _State>();
  #started = new Map<string, number>();
  #took = new Map<string, number>();
  /** Running nodes' own progress: first and latest (time, share done). */
  #reported = new Map<
    string,
    { t0: number; f0: number; t: number; f: number }
  >();
  #t0: number;
  #meanEstimate = 0;
  /** Per kind: the sum of its outline nodes' estimates and their count. */
  #kindEstimates = new Map<string, [number, number]>();

  /** Starts following `outline` at time `now` (ms). */
  constructor(outline: RunOutline, now: number) {
    this.#outline = outline;
    this.#t0 = now;
    let sum = 0, count = 0;
    for (const n of outline.nodes) {
      if (n.estimateMs !== undefined && n.estimateMs > 0) {
        sum += n.estimateMs;
        count++;
        const k = this.#kindEstimates.get(n.kind) ?? [0, 0];
        this.#kindEstimates.set(n.kind, [k[0] + n.estimateMs, k[1] + 1]);
      }
    }
    this.#meanEstimate = count > 0 ? sum / count : 0;
    for (const n of outline.nodes) {
      this.#byId.set(n.id, n);
      this.#state.set(n.id, "pending");
      for (const d of n.deps) {
        this.#users.set(d, [...(this.#users.get(d) ?? []), n.id]);
      }
    }
  }

  /** The number of nodes the run executes. */
  get total(): number {
    return this.#outline.nodes.length;
  }

  /** A node started. */
  start(id: string, now: number): void {
    if (!this.#state.has(id)) return;
    this.#state.set(id, "running");
    this.#started.set(id, now);
  }

  /** A running node reported `done` of `total` units of its work. */
  progress(id: string, done: number, total: number, now: number): void {
    if (this.#state.get(id) !== "running" || !(total > 0)) return;
    const f = Math.min(1, Math.max(0, done / total));
    const r = this.#reported.get(id);
    if (!r) this.#reported.set(id, { t0: now, f0: f, t: now, f });
    else if (f >= r.f) {
      r.t = now;
      r.f = f;
    }
  }

  /** A node ended (`cached`: another process stored it meanwhile). */
  end(id: string, status: "done" | "cached" | "failed", now: number): void {
    if (!this.#state.has(id)) return;
    const t = this.#started.get(id);
    this.#started.delete(id);
    this.#reported.delete(id);
    if (status === "failed") {
      this.#state.set(id, "failed");
      this.#block(id);
      return;
    }
    this.#state.set(id, "done");
    if (status === "done" && t !== undefined) {
      this.#took.delete(id); // insertion order is the order of ends
      this.#took.set(id, now - t);
    }
  }

  #block(id: string): void {
    for (const u of this.#users.get(id) ?? []) {
      const s = this.#state.get(u);
      if (s === "pending") {
        this.#state.set(u, "blocked");
        this.#block(u);
      }
    }
  }

  /** Nodes that must finish before an estimate without history is given. */
  #minFinished(): number {
    return Math.min(5, Math.max(1, Math.floor(this.total / 4)));
  }

  /**
   * How long each remaining node is expected to take (ms), or why that
   * cannot be told yet: its history scaled by this run's recent pace (actual
   * over expected for the last {@linkcode PACE_WINDOW} nodes finished here
   * that have a history, with the history itself counted as
   * {@linkcode PACE_PRIOR_NODES} nodes at pace 1), else the mean of the last
   * {@linkcode KIND_WINDOW} nodes of its kind finished here.
   */
  #expected(): Map<string, number> | string {
    const took = [...this.#took].reverse(); // newest first
    let actual = 0, expected = 0, inWindow = 0;
    const kindSum = new Map<string, [number, number]>();
    // per kind: [actual, expected, nodes] of its finished nodes with history
    const kindPace = new Map<string, [number, number, number]>();
    for (const [id, ms] of took) {
      const n = this.#byId.get(id)!;
      if (n.estimateMs !== undefined && n.estimateMs > 0) {
        if (inWindow < PACE_WINDOW) {
          actual += ms;
          expected += n.estimateMs;
          inWindow++;
        }
        const kp = kindPace.get(n.kind) ?? [0, 0, 0];
        if (kp[2] < PACE_WINDOW) {
          kindPace.set(n.kind, [kp[0] + ms, kp[1] + n.estimateMs, kp[2] + 1]);
        }
      }
      const k = kindSum.get(n.kind) ?? [0, 0];
      if (k[1] < KIND_WINDOW) kindSum.set(n.kind, [k[0] + ms, k[1] + 1]);
    }
    const prior = PACE_PRIOR_NODES * this.#meanEstimate;
    const pace = expected > 0
      ? Math.min(5, Math.max(0.2, (actual + prior) / (expected + prior)))
      : 1;
    // A kind whose nodes finished here has its own pace: language-model
    // nodes can run 30 times their history while generate nodes keep it.
    // Its history counts as PACE_PRIOR_NODES nodes, fewer for a kind with
    // few nodes in the run (one for under 20), so a handful of slow
    // language-model nodes is learnt from the first.
    const paceOf = (kind: string): number => {
      const kp = kindPace.get(kind);
      if (!kp) return pace;
      const c = this.#kindEstimates.get(kind) ?? [kp[1], kp[2]];
      const priorNodes = Math.min(
        PACE_PRIOR_NODES,
        Math.max(1, Math.floor(c[1] / 20)),
      );
      const p0 = priorNodes * (c[0] / c[1]);
      return Math.min(100, Math.max(0.01, (kp[0] + p0) / (kp[1] + p0)));
    };
    const out = new Map<string, number>();
    let withoutHistory = false;
    for (const n of this.#outline.nodes) {
      const s = this.#state.get(n.id);
      if (s !== "pending" && s !== "running") continue;
      if (n.estimateMs !== undefined) {
        out.set(n.id, n.estimateMs * paceOf(n.kind));
        continue;
      }
      withoutHistory = true;
      const k = kindSum.get(n.kind);
      if (!k) return `ETA after a first ${n.kind} node`;
      out.set(n.id, k[0] / k[1]);
    }
    const finished = this.#took.size;
    if (withoutHistory && finished < this.#minFinished()) {
      return `ETA after ${this.#minFinished()} nodes`;
    }
    return out;
  }

  /** The run's progress at time `now`. */
  snapshot(now: number): RunSnapshot {
    let done = 0, failed = 0, blocked = 0;
    for (const s of this.#state.values()) {
      if (s === "done") done++;
      else if (s === "failed") failed++;
      else if (s === "blocked") blocked++;
    }
    const running = [...this.#started.keys()];
    return {
      total: this.total,
      done,
      failed,
      blocked,
      running,
      elapsedMs: now - this.#t0,
      ...this.#eta(now),
    };
  }

  #eta(
    now: number,
  ): { etaMs: number | null; etaNote?: string; etaGuess?: string[] } {
    const expected = this.#expected();
    if (typeof expected === "string") return { etaMs: null, etaNote: expected };
    // What is left of each node: a running node has used part of its time;
    // one that reports its progress is extrapolated from its own rate; one
    // past its estimate without progress needs at least half its time again.
    const left = new Map<string, number>();
    let sum = 0;
    for (const [id, ms] of expected) {
      const t = this.#started.get(id);
      let rest = ms;
      if (t !== undefined) {
        const ran = now - t;
        const r = this.#reported.get(id);
        if (r && r.f > r.f0 && r.t > r.t0) {
          const rate = (r.f - r.f0) / (r.t - r.t0);
          rest = Math.max(0, (1 - r.f) / rate - (now - r.t));
        } else rest = ms > ran ? ms - ran : ran / 2;
      }
      left.set(id, rest);
      sum += rest;
    }
    // Kinds still estimated from other nodes of the kind only, none of
    // which finished here (nor reports its progress): say so.
    const finishedKinds = new Set(
      [...this.#took.keys()].map((id) => this.#byId.get(id)!.kind),
    );
    const guess = new Set<string>();
    for (const id of expected.keys()) {
      const n = this.#byId.get(id)!;
      const r = this.#reported.get(id);
      if (
        n.estimateFrom === "kind" && !finishedKinds.has(n.kind) &&
        !(r && r.f > r.f0)
      ) guess.add(n.kind);
    }
    // Longest chain of remaining nodes (memoised over the outline's deps).
    const memo = new Map<string, number>();
    const chain = (id: string): number => {
      const got = memo.get(id);
      if (got !== undefined) return got;
      memo.set(id, 0); // cycles cannot happen; this only guards recursion
      let best = 0;
      for (const d of this.#byId.get(id)!.deps) {
        if (left.has(d)) best = Math.max(best, chain(d));
      }
      const v = best + (left.get(id) ?? 0);
      memo.set(id, v);
      return v;
    };
    let critical = 0;
    for (const id of left.keys()) critical = Math.max(critical, chain(id));
    return {
      etaMs: Math.max(sum / this.#outline.jobs, critical),
      ...(guess.size ? { etaGuess: [...guess].sort() } : {}),
    };
  }
}

/** `12/346 nodes (3%)`, running, failures, elapsed and ETA: the line of a log and the text beside the bar. */
export function formatRunSnapshot(
  s: RunSnapshot,
  options: { readonly names?: number } = {},
): string {
  const finished = s.done + s.failed + s.blocked;
  const pct = s.total > 0 ? Math.floor((100 * finished) / s.total) : 100;
  const parts = [`${finished}/${s.total} nodes (${pct}%)`];
  if (s.running.length) {
    const names = options.names ?? 0;
    parts.push(
      `${s.running.length} running${
        names > 0
          ? `: ${s.running.slice(0, names).join(", ")}${
            s.running.length > names ? ", …" : ""
          }`
          : ""
      }`,
    );
  }
  if (s.failed) parts.push(`${s.failed} failed`);
  if (s.blocked) parts.push(`${s.blocked} blocked`);
  parts.push(`elapsed ${formatDuration(s.elapsedMs)}`);
  parts.push(
    s.etaMs === null
      ? s.etaNote ?? "ETA after the first node"
      : `ETA ${formatDuration(s.etaMs)}${
        s.etaGuess?.length
          ? ` (a guess for ${
            s.etaGuess.join(", ")
          }: other runs' nodes of the kind, until one finishes here)`
          : ""
      }`,
  );
  return parts.join(" · ");
}

/** A bar of `width` cells for the finished share of a run. */
export function progressBar(s: RunSnapshot, width: number): string {
  const finished = s.done + s.failed + s.blocked;
  const frac = s.total > 0 ? finished / s.total : 1;
  const full = Math.round(frac * width);
  return `[${"█".repeat(full)}${"░".repeat(Math.max(0, width - full))}]`;
}
