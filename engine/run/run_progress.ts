/**
 * Run-wide progress: how many of a run's nodes are done, which are running,
 * and when the run will end. The ETA comes from the cache's own history of
 * node times (earlier runs' manifests: the same node, else the same node of
 * another variant, else the same kind), scaled by how this run's finished
 * nodes compare with their history, and bounded below by the longest chain
 * of remaining nodes (a run cannot finish before its critical path does).
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
}

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
  const exact = times.byId.get(id);
  if (exact !== undefined) return exact;
  const plain = times.byPlain.get(_plain(id));
  if (plain?.length) return _median(plain);
  const k = times.byKind.get(kind);
  return k?.length ? _median(k) : undefined;
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
      const est = estimateNode(times, it.node.id, it.node.kind.name);
      return {
        id: it.node.id,
        kind: it.node.kind.name,
        deps: it.node.deps.filter((d) => inRun.has(d)).map((d) =>
          plan.exp.nodes[d]!.id
        ),
        ...(est !== undefined ? { estimateMs: est } : {}),
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
  #t0: number;

  /** Starts following `outline` at time `now` (ms). */
  constructor(outline: RunOutline, now: number) {
    this.#outline = outline;
    this.#t0 = now;
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

  /** A node ended (`cached`: another process stored it meanwhile). */
  end(id: string, status: "done" | "cached" | "failed", now: number): void {
    if (!this.#state.has(id)) return;
    const t = this.#started.get(id);
    this.#started.delete(id);
    if (status === "failed") {
      this.#state.set(id, "failed");
      this.#block(id);
      return;
    }
    this.#state.set(id, "done");
    if (status === "done" && t !== undefined) this.#took.set(id, now - t);
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

  /**
   * How long each remaining node is expected to take (ms), or null when
   * some cannot be told: its history scaled by this run's pace (actual over
   * expected for the nodes finished here), else this run's mean for its
   * kind, else this run's mean over all nodes.
   */
  #expected(): Map<string, number> | null {
    let actual = 0, expected = 0;
    const kindSum = new Map<string, [number, number]>();
    let allSum = 0, allN = 0;
    for (const [id, ms] of this.#took) {
      const n = this.#byId.get(id)!;
      if (n.estimateMs !== undefined && n.estimateMs > 0) {
        actual += ms;
        expected += n.estimateMs;
      }
      const k = kindSum.get(n.kind) ?? [0, 0];
      kindSum.set(n.kind, [k[0] + ms, k[1] + 1]);
      allSum += ms;
      allN++;
    }
    const pace = expected > 0
      ? Math.min(5, Math.max(0.2, actual / expected))
      : 1;
    const out = new Map<string, number>();
    for (const n of this.#outline.nodes) {
      const s = this.#state.get(n.id);
      if (s !== "pending" && s !== "running") continue;
      const k = kindSum.get(n.kind);
      const ms = n.estimateMs !== undefined
        ? n.estimateMs * pace
        : k
        ? k[0] / k[1]
        : allN > 0
        ? allSum / allN
        : undefined;
      if (ms === undefined) return null;
      out.set(n.id, ms);
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
      etaMs: this.#eta(now),
    };
  }

  #eta(now: number): number | null {
    const expected = this.#expected();
    if (expected === null) return null;
    // What is left of each node: a running node has used part of its time.
    const left = new Map<string, number>();
    let sum = 0;
    for (const [id, ms] of expected) {
      const t = this.#started.get(id);
      const rest = t === undefined ? ms : Math.max(0, ms - (now - t));
      left.set(id, rest);
      sum += rest;
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
    return Math.max(sum / this.#outline.jobs, critical);
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
      ? "ETA after the first node"
      : `ETA ${formatDuration(s.etaMs)}`,
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
