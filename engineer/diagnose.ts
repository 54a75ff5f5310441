/**
 * Diagnose rollouts: turn episodes into a {@linkcode Findings} object.
 *
 * Everything is computed in one pass per episode over typed arrays, plus one
 * breadth-first search per agent (shortest distances to its goal). The sample
 * of failure cases is drawn with a seeded generator, stratified by failure
 * type (the most frequent types first), then ordered by an informativeness
 * score; same episodes and seed give byte-identical findings.
 *
 * @module
 */
import {
  type AnyEnvConfig,
  components as configComponents,
  configId,
} from "../schemas/env_config.ts";
import {
  type Behavior,
  type ComponentStats,
  type DimensionBreakdown,
  FAILURE_TYPES,
  type FailureCase,
  type FailureFeatures,
  type Findings,
  FINDINGS_VERSION,
  type Outcome,
  type OutcomeCounts,
  zeroOutcomeCounts,
} from "../schemas/findings.ts";
import { ACTION_DELTAS, CELL, type EpisodeView } from "./episode.ts";
import { hashString, Rng } from "../mapf/rng.ts";
import { renderFailureCase } from "./render_case.ts";

/** Options of {@linkcode diagnose}. */
export interface DiagnoseOptions {
  /** Seed of the failure-case sample. @default {0} */
  seed?: number;
  /** How many failure cases to sample. @default {6} */
  maxCases?: number;
  /** Steps of moves shown before a failure. @default {4} */
  window?: number;
  /** The configuration the episodes were generated from (for component weights and ids). */
  config?: AnyEnvConfig;
}

/** Per-agent and per-episode facts computed once. */
interface _EpisodeFacts {
  success: boolean;
  agentsOnGoal: number;
  failStep: number;
  /** Shortest distance to own goal per cell, per agent (lazily shared). */
  dist: Int32Array[];
  waits: number;
  activeSteps: number;
  moves: number;
  oscillations: number;
  deviations: number;
  intendedMoves: number;
  idle: number;
  detourSum: number;
  detourN: number;
  achievedSoc: number;
}

/**
 * Diagnose episodes.
 *
 * Long by design: the per-episode facts summed into the findings, one block per field of the findings.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { diagnose } from "./diagnose.ts";
 * const findings = diagnose([], { seed: 1 });
 * assert.equal(findings.episodes, 0);
 * assert.equal(findings.success_rate, 0);
 * ```
 */
export function diagnose(
  episodes: readonly EpisodeView[],
  options: DiagnoseOptions = {},
): Findings {
  const seed = options.seed ?? 0;
  const maxCases = options.maxCases ?? 6;
  const window = options.window ?? 4;
  const outcomes = zeroOutcomeCounts();
  let agentEpisodes = 0;
  let agentsOnGoal = 0;
  const facts: _EpisodeFacts[] = [];
  const beh = {
    waits: 0,
    active: 0,
    moves: 0,
    osc: 0,
    dev: 0,
    intended: 0,
    idle: 0,
    idleEpisodes: 0,
    detourSum: 0,
    detourN: 0,
    failOnGoal: 0,
    failAgents: 0,
  };
  const eff: number[] = [];
  for (const ep of episodes) {
    const f = _analyse(ep);
    facts.push(f);
    outcomes[ep.outcome]++;
    agentEpisodes += ep.agents;
    agentsOnGoal += f.agentsOnGoal;
    beh.waits += f.waits;
    beh.active += f.activeSteps;
    beh.moves += f.moves;
    beh.osc += f.oscillations;
    beh.dev += f.deviations;
    beh.intended += f.intendedMoves;
    beh.idle += f.idle;
    if (f.idle > 0) beh.idleEpisodes++;
    beh.detourSum += f.detourSum;
    beh.detourN += f.detourN;
    if (!f.success) {
      beh.failOnGoal += f.agentsOnGoal;
      beh.failAgents += ep.agents;
    }
    if (f.success && f.achievedSoc > 0 && ep.referenceSoc > 0) {
      eff.push(Math.min(1, ep.referenceSoc / f.achievedSoc));
    }
  }
  const n = episodes.length;
  const behavior: Behavior = {
    wait_fraction: _ratio(beh.waits, beh.active),
    oscillation_rate: _ratio(beh.osc, beh.moves),
    detour_ratio: beh.detourN === 0
      ? null
      : _round(beh.detourSum / beh.detourN),
    idle_agent_rate: _ratio(beh.idle, agentEpisodes),
    episodes_with_idle_agent: _ratio(beh.idleEpisodes, n),
    deviation_rate: _ratio(beh.dev, beh.intended),
    progress_at_failure: beh.failAgents === 0
      ? null
      : _ratio(beh.failOnGoal, beh.failAgents),
  };
  const failureIdx: number[] = [];
  for (let e = 0; e < n; e++) if (!facts[e]!.success) failureIdx.push(e);
  const cases = _sampleCases(
    episodes,
    facts,
    failureIdx,
    outcomes,
    seed,
    maxCases,
    window,
  );
  return {
    version: FINDINGS_VERSION,
    seed,
    episodes: n,
    agent_episodes: agentEpisodes,
    success_rate: _ratio(outcomes.success, n),
    agent_success_rate: _ratio(agentsOnGoal, agentEpisodes),
    outcomes,
    efficiency: {
      mean: eff.length === 0
        ? null
        : _round(eff.reduce((a, b) => a + b, 0) / eff.length),
      min: eff.length === 0 ? null : _round(Math.min(...eff)),
      episodes: eff.length,
    },
    components: _componentStats(episodes, facts, options.config),
    dimensions: _dimensions(episodes, facts),
    behavior,
    failure_count: failureIdx.length,
    failures: cases,
    config: (options.config ?? null) as Findings["config"],
  };
}

function _ratio(a: number, b: number): number {
  return b === 0 ? 0 : _round(a / b);
}

/** Round to 4 decimals so findings are short and stable. */
function _round(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

/** Shortest distances (4-neighbourhood, free cells only) from `goal` to every cell; -1 unreachable. */
export function distancesTo(ep: EpisodeView, goal: number): Int32Array {
  const size = ep.width * ep.height;
  const dist = new Int32Array(size).fill(-1);
  const queue = new Int32Array(size);
  let head = 0;
  let tail = 0;
  dist[goal] = 0;
  queue[tail++] = goal;
  while (head < tail) {
    const c = queue[head++]!;
    const r = Math.floor(c / ep.width);
    const col = c - r * ep.width;
    const d = dist[c]! + 1;
    for (let a = 1; a <= 4; a++) {
      const [dr, dc] = ACTION_DELTAS[a]!;
      const nr = r + dr;
      const nc = col + dc;
      if (nr < 0 || nr >= ep.height || nc < 0 || nc >= ep.width) continue;
      const nb = nr * ep.width + nc;
      if (dist[nb] !== -1 || ep.cells[nb] !== CELL.free) continue;
      dist[nb] = d;
      queue[tail++] = nb;
    }
  }
  return dist;
}

// Long by design: one pass over an episode's trajectory computes every fact from the same arrays.
function _analyse(ep: EpisodeView): _EpisodeFacts {
  const N = ep.agents;
  const T = ep.steps;
  const pos = ep.positions;
  const W = ep.width;
  const dist: Int32Array[] = [];
  for (let i = 0; i < N; i++) dist.push(distancesTo(ep, ep.goals[i]!));
  let agentsOnGoal = 0;
  let waits = 0;
  let active = 0;
  let moves = 0;
  let osc = 0;
  let dev = 0;
  let intended = 0;
  let idle = 0;
  let detourSum = 0;
  let detourN = 0;
  let soc = 0;
  for (let i = 0; i < N; i++) {
    const goal = ep.goals[i]!;
    const final = pos[T * N + i]!;
    if (final === goal) agentsOnGoal++;
    // Time of last arrival (sum-of-costs convention).
    let arrival = 0;
    for (let t = T; t >= 1; t--) {
      if (pos[t * N + i] !== goal || pos[(t - 1) * N + i] !== goal) {
        arrival = pos[t * N + i] === goal ? t : T;
        break;
      }
    }
    soc += arrival;
    let first = T;
    for (let t = 0; t <= T; t++) {
      if (pos[t * N + i] === goal) {
        first = t;
        break;
      }
    }
    let agentMoves = 0;
    let everMoved = false;
    for (let t = 0; t < T; t++) {
      const a = pos[t * N + i]!;
      const b = pos[(t + 1) * N + i]!;
      if (b !== a) everMoved = true;
      if (t < first) {
        active++;
        if (b === a) waits++;
        else {
          moves++;
          agentMoves++;
          if (t >= 1 && b === pos[(t - 1) * N + i]) osc++;
        }
      }
      if (ep.actions !== undefined) {
        const act = ep.actions[t * N + i]!;
        if (act >= 1 && act <= 4) {
          const r = Math.floor(a / W);
          const c = a - r * W;
          const [dr, dc] = ACTION_DELTAS[act]!;
          const nr = r + dr;
          const nc = c + dc;
          let want = a;
          if (nr >= 0 && nr < ep.height && nc >= 0 && nc < W) {
            const cell = nr * W + nc;
            if (ep.cells[cell] !== CELL.wall) want = cell;
          }
          if (want !== a) {
            intended++;
            if (b !== want) dev++;
          }
        }
      }
    }
    if (!everMoved && ep.starts[i] !== goal) idle++;
    if (first < T + 1 && first <= T && pos[first * N + i] === goal) {
      const shortest = dist[i]![ep.starts[i]!]!;
      if (shortest > 0) {
        detourSum += agentMoves / shortest;
        detourN++;
      }
    }
  }
  return {
    success: ep.outcome === "success",
    agentsOnGoal,
    failStep: T,
    dist,
    waits,
    activeSteps: active,
    moves,
    oscillations: osc,
    deviations: dev,
    intendedMoves: intended,
    idle,
    detourSum,
    detourN,
    achievedSoc: soc,
  };
}

function _componentStats(
  episodes: readonly EpisodeView[],
  facts: readonly _EpisodeFacts[],
  config: AnyEnvConfig | undefined,
): ComponentStats[] {
  const comps = config === undefined ? [] : configComponents(config);
  let count = comps.length;
  for (const ep of episodes) count = Math.max(count, ep.component + 1);
  const out: ComponentStats[] = [];
  for (let c = 0; c < count; c++) {
    const outcomes = zeroOutcomeCounts();
    let agents = 0;
    let onGoal = 0;
    let n = 0;
    let fromEpisode: EpisodeView | undefined;
    for (let e = 0; e < episodes.length; e++) {
      const ep = episodes[e]!;
      if (ep.component !== c) continue;
      fromEpisode ??= ep;
      n++;
      outcomes[ep.outcome]++;
      agents += ep.agents;
      onGoal += facts[e]!.agentsOnGoal;
    }
    const comp = comps[c];
    const cfg = comp?.config ?? fromEpisode?.config;
    out.push({
      index: c,
      weight: comp?.weight ?? 1,
      config_id: cfg === undefined ? "" : configId(cfg),
      episodes: n,
      success_rate: _ratio(outcomes.success, n),
      agent_success_rate: _ratio(onGoal, agents),
      outcomes,
    });
  }
  return out;
}

interface _DimSpec {
  name: string;
  unit: "episode" | "agent";
  values(ep: EpisodeView, f: _EpisodeFacts): { value: number; ok: boolean }[];
}

const _DIMS: readonly _DimSpec[] = [
  {
    name: "agents",
    unit: "episode",
    values: (ep, f) => [{ value: ep.agents, ok: f.success }],
  },
  {
    name: "grid_side",
    unit: "episode",
    values: (
      ep,
      f,
    ) => [{ value: Math.max(ep.width, ep.height), ok: f.success }],
  },
  {
    name: "hole_density",
    unit: "episode",
    values: (ep, f) => {
      let holes = 0;
      let walls = 0;
      for (const c of ep.cells) {
        if (c === CELL.hole) holes++;
        else if (c === CELL.wall) walls++;
      }
      const open = ep.cells.length - walls;
      return [{ value: _round(open === 0 ? 0 : holes / open), ok: f.success }];
    },
  },
  {
    name: "slip",
    unit: "episode",
    values: (ep, f) =>
      ep.config === undefined ? [] : [{ value: ep.config.slip, ok: f.success }],
  },
  {
    name: "corridors",
    unit: "episode",
    values: (ep, f) =>
      ep.config === undefined
        ? []
        : [{ value: ep.config.corridors, ok: f.success }],
  },
  {
    name: "interaction",
    unit: "episode",
    values: (ep, f) =>
      ep.config === undefined
        ? []
        : [{ value: ep.config.interaction, ok: f.success }],
  },
  {
    name: "path_interaction",
    unit: "episode",
    values: (ep, f) =>
      ep.measuredInteraction === undefined
        ? []
        : [{ value: _round(ep.measuredInteraction), ok: f.success }],
  },
  {
    name: "reference_makespan",
    unit: "episode",
    values: (ep, f) => [{ value: ep.referenceMakespan, ok: f.success }],
  },
  {
    name: "horizon_slack",
    unit: "episode",
    values: (ep, f) => [{
      value: _round(ep.horizon / Math.max(1, ep.referenceMakespan)),
      ok: f.success,
    }],
  },
  {
    name: "agent_distance",
    unit: "agent",
    values: (ep, f) => {
      const out: { value: number; ok: boolean }[] = [];
      const T = ep.steps;
      for (let i = 0; i < ep.agents; i++) {
        const d = f.dist[i]![ep.starts[i]!]!;
        out.push({
          value: d < 0 ? 0 : d,
          ok: ep.positions[T * ep.agents + i] === ep.goals[i],
        });
      }
      return out;
    },
  },
];

function _dimensions(
  episodes: readonly EpisodeView[],
  facts: readonly _EpisodeFacts[],
): DimensionBreakdown[] {
  const out: DimensionBreakdown[] = [];
  for (const spec of _DIMS) {
    const pairs: { value: number; ok: boolean }[] = [];
    for (let e = 0; e < episodes.length; e++) {
      for (const p of spec.values(episodes[e]!, facts[e]!)) pairs.push(p);
    }
    const buckets = bucketize(pairs);
    if (buckets.length < 2) continue;
    out.push({
      dimension: spec.name,
      unit: spec.unit,
      buckets,
      spread: _round(
        buckets[0]!.success_rate - buckets[buckets.length - 1]!.success_rate,
      ),
    });
  }
  return out;
}

/**
 * Bucket (value, success) pairs: one bucket per distinct value when there are
 * at most `maxBuckets`, otherwise about equal-count buckets whose boundaries
 * fall between distinct values.
 */
export function bucketize(
  pairs: readonly { value: number; ok: boolean }[],
  maxBuckets = 4,
): DimensionBreakdown["buckets"] {
  if (pairs.length === 0) return [];
  const sorted = [...pairs].sort((a, b) => a.value - b.value);
  const distinct: number[] = [];
  for (const p of sorted) {
    if (distinct.at(-1) !== p.value) distinct.push(p.value);
  }
  const groups: { value: number; ok: boolean }[][] = [];
  if (distinct.length <= maxBuckets + 1) {
    for (const p of sorted) {
      const last = groups.at(-1);
      if (last !== undefined && last[0]!.value === p.value) last.push(p);
      else groups.push([p]);
    }
  } else {
    const target = sorted.length / maxBuckets;
    let cur: { value: number; ok: boolean }[] = [];
    for (let i = 0; i < sorted.length; i++) {
      const p = sorted[i]!;
      cur.push(p);
      const next = sorted[i + 1];
      const full = cur.length >= target && groups.length < maxBuckets - 1;
      if (next === undefined || (full && next.value !== p.value)) {
        groups.push(cur);
        cur = [];
      }
    }
  }
  return groups.map((g) => {
    const lo = g[0]!.value;
    const hi = g[g.length - 1]!.value;
    const ok = g.reduce((n, p) => n + (p.ok ? 1 : 0), 0);
    return {
      label: lo === hi ? _fmt(lo) : `${_fmt(lo)}-${_fmt(hi)}`,
      lo,
      hi,
      n: g.length,
      success_rate: _ratio(ok, g.length),
    };
  });
}

function _fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : String(Number(x.toPrecision(3)));
}

function _sampleCases(
  episodes: readonly EpisodeView[],
  facts: readonly _EpisodeFacts[],
  failureIdx: readonly number[],
  outcomes: OutcomeCounts,
  seed: number,
  maxCases: number,
  window: number,
): FailureCase[] {
  if (failureIdx.length === 0 || maxCases <= 0) return [];
  const byType = new Map<Outcome, number[]>();
  for (const e of failureIdx) {
    const o = episodes[e]!.outcome;
    const list = byType.get(o) ?? [];
    list.push(e);
    byType.set(o, list);
  }
  const types = FAILURE_TYPES.filter((t) => byType.has(t)).sort((a, b) =>
    outcomes[b] - outcomes[a] ||
    FAILURE_TYPES.indexOf(a) - FAILURE_TYPES.indexOf(b)
  );
  const rng = new Rng(seed, hashString("failure-cases"));
  const pools = new Map(types.map((t) => [t, [...byType.get(t)!]]));
  const chosen: number[] = [];
  while (chosen.length < maxCases) {
    let took = false;
    for (const t of types) {
      const pool = pools.get(t)!;
      if (pool.length === 0 || chosen.length >= maxCases) continue;
      const k = rng.int(pool.length);
      chosen.push(pool[k]!);
      pool.splice(k, 1);
      took = true;
    }
    if (!took) break;
  }
  const failures = failureIdx.length;
  const cases = chosen.map((e) => {
    const ep = episodes[e]!;
    const f = facts[e]!;
    const features = failureFeatures(ep, f.dist);
    const share = outcomes[ep.outcome] / failures;
    const score = _round(
      share + (features.slipped ? 0.25 : 0) + (features.narrow ? 0.25 : 0) +
        (features.recent_oscillation ? 0.2 : 0) +
        Math.min(features.crowd, 4) * 0.05,
    );
    return {
      episode: e,
      outcome: ep.outcome as FailureCase["outcome"],
      step: ep.steps,
      agents: _involved(ep, f.dist),
      component: ep.component,
      features,
      score,
      text: renderFailureCase(ep, { window, episode: e }),
    };
  });
  cases.sort((a, b) => b.score - a.score || a.episode - b.episode);
  return cases;
}

/** Agents a failure involves: the failing agents, or (timeout) those not on their goal. */
function _involved(ep: EpisodeView, _dist: Int32Array[]): number[] {
  if (ep.outcome !== "timeout" && ep.failAgents.length > 0) {
    return [...ep.failAgents];
  }
  const T = ep.steps;
  const out: number[] = [];
  for (let i = 0; i < ep.agents; i++) {
    if (ep.positions[T * ep.agents + i] !== ep.goals[i]) out.push(i);
  }
  return out;
}

/** The cell a failure is located at. */
export function failureCell(ep: EpisodeView, dist: Int32Array[]): number {
  const T = ep.steps;
  const N = ep.agents;
  if (ep.outcome !== "timeout" && ep.failAgents.length > 0) {
    return ep.positions[T * N + ep.failAgents[0]!]!;
  }
  // Timeout: the agent farthest from its goal.
  let best = 0;
  let bestD = -1;
  for (let i = 0; i < N; i++) {
    const c = ep.positions[T * N + i]!;
    const d = dist[i]![c]!;
    if (d > bestD) {
      bestD = d;
      best = c;
    }
  }
  return best;
}

/** Compute the features of a failure case from its trajectory. */
// Long by design: one block per feature (hole, narrow, slipped, ...) read from the same trajectory.
export function failureFeatures(
  ep: EpisodeView,
  dist: Int32Array[],
): FailureFeatures {
  const T = ep.steps;
  const N = ep.agents;
  const W = ep.width;
  const pos = ep.positions;
  let cell = failureCell(ep, dist);
  if (ep.cells[cell] !== CELL.free && ep.failAgents.length > 0 && T >= 1) {
    // Fell into a hole: judge the cell it came from.
    cell = pos[(T - 1) * N + ep.failAgents[0]!]!;
  }
  const r0 = Math.floor(cell / W);
  const c0 = cell - r0 * W;
  // Narrow: at most two passable neighbours.
  let open = 0;
  for (let a = 1; a <= 4; a++) {
    const [dr, dc] = ACTION_DELTAS[a]!;
    const nr = r0 + dr;
    const nc = c0 + dc;
    if (nr < 0 || nr >= ep.height || nc < 0 || nc >= W) continue;
    if (ep.cells[nr * W + nc] === CELL.free) open++;
  }
  let crowd = 0;
  let remSum = 0;
  let remN = 0;
  for (let i = 0; i < N; i++) {
    const p = pos[T * N + i]!;
    const r = Math.floor(p / W);
    const c = p - r * W;
    if (Math.abs(r - r0) + Math.abs(c - c0) <= 2) crowd++;
    if (p !== ep.goals[i]) {
      const d = dist[i]![p]!;
      if (d >= 0) {
        remSum += d;
        remN++;
      }
    }
  }
  // Slipped: a failing agent's last move went elsewhere than intended.
  let slipped = false;
  if (ep.actions !== undefined && T >= 1 && ep.outcome !== "timeout") {
    for (const i of ep.failAgents) {
      const a = pos[(T - 1) * N + i]!;
      const b = pos[T * N + i]!;
      const act = ep.actions[(T - 1) * N + i]!;
      const [dr, dc] = ACTION_DELTAS[act] ?? [0, 0];
      const r = Math.floor(a / W);
      const c = a - r * W;
      const nr = r + dr;
      const nc = c + dc;
      let want = a;
      if (
        nr >= 0 && nr < ep.height && nc >= 0 && nc < W &&
        ep.cells[nr * W + nc] !== CELL.wall
      ) {
        want = nr * W + nc;
      }
      if (b !== want) slipped = true;
    }
  }
  let waits = 0;
  let active = 0;
  let oscillation = false;
  const from = Math.max(0, T - 8);
  for (let t = from; t < T; t++) {
    for (let i = 0; i < N; i++) {
      const a = pos[t * N + i]!;
      const b = pos[(t + 1) * N + i]!;
      if (a === ep.goals[i]) continue;
      active++;
      if (a === b) waits++;
      else if (t >= 1 && b === pos[(t - 1) * N + i]) oscillation = true;
    }
  }
  return {
    slipped,
    narrow: open <= 2,
    crowd,
    remaining_distance: remN === 0 ? null : _round(remSum / remN),
    recent_wait: _ratio(waits, active),
    recent_oscillation: oscillation,
  };
}
