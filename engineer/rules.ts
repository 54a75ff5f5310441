/**
 * The `rules` engineer: a transparent, rule-based curriculum that reads the
 * same context an LLM would, and nothing else. It is the offline default.
 *
 * Two questions decide the next configuration:
 *
 * 1. **Which dimension?** Evidence rules vote for the curriculum dimension
 *    behind the observed weakness; the most-voted one is the *target*.
 * 2. **Which direction, and what to keep?** The success level (from `stats`)
 *    decides: mastered -> a harder component along the target, keeping what
 *    works at a retention weight; struggling -> an easier one; in between ->
 *    keep training, plus a component that isolates the target skill when
 *    there is evidence. Without `stats` (context `failures` or `behavior`),
 *    the current config is kept and a component aimed at the target is added.
 *
 * What each context type lets it read (sections absent from a context type
 * are never read, so the context ablation changes its decisions):
 *
 * | context | reads | rules that can fire |
 * |---|---|---|
 * | `none` | the current config only | `blind-schedule` |
 * | `stats` | `stats.success_rate`, `stats.components[].success_rate`, `stats.dimensions[].spread` | `harden-mastered`, `ease-struggling`, `keep-learning`, `reweight-components`, `weak-dimension` |
 * | `failures` | `failures.failure_count`, `failures.failure_types`, `failures.cases[].features` | `failure-type`, `slip-falls`, `bottleneck-collisions`, `crowded-collisions`, `stalled-timeouts`, `target-failure`, `no-failures` |
 * | `behavior` | `behavior.wait_fraction`, `.idle_agent_rate`, `.oscillation_rate`, `.detour_ratio`, `.deviation_rate` | `passive-agents`, `oscillation`, `detours`, `slippage`, `target-failure`, `calm-behavior` |
 * | `full` | all of the above, plus `history.entries[]` (config ids, success) | all of the above, plus `regression-restore`, `plateau` |
 *
 * Every threshold is in {@linkcode RULE_THRESHOLDS}; every rule is listed in
 * {@linkcode RULES}. The rationale names each rule that fired with the
 * numbers that made it fire.
 *
 * @module
 */
import {
  type AnyEnvConfig,
  components,
  configId,
  type EnvConfig,
  type MixtureComponent,
} from "../schemas/env_config.ts";
import type { EngineerContext } from "./context.ts";
import {
  buildMixture,
  CURRICULUM_DIMS,
  type CurriculumDim,
  FRONTIER,
  frontier,
  isolate,
  leastDeveloped,
  mostDeveloped,
  progress,
  step,
} from "./config_ops.ts";
import type {
  Engineer,
  EngineerEvent,
  Proposal,
  ProposeInput,
} from "./engineer.ts";
import type { EngineerKind } from "./engineer_kind.ts";
import * as v from "valibot";

/** Every threshold and weight the rules use. */
export const RULE_THRESHOLDS = {
  /** Success at or above which a config counts as mastered. */
  mastered: 0.8,
  /** Success at or above which hardening takes two steps along the target. */
  strong: 0.95,
  /** Success below which a config counts as too hard. */
  struggling: 0.3,
  /** Component success at or above which the component is kept (retention). */
  keepComponent: 0.6,
  /** Total weight of retained components when a new one is added. */
  retentionWeight: 0.3,
  /** Weight of the current config when a targeted component is added without stats. */
  keepWithoutStats: 0.6,
  /** Weight of an isolating component added in the learning zone. */
  isolateWeight: 0.3,
  /** Share of failures a type needs to vote. */
  typeShare: 0.4,
  /** Fraction of hole cases that slipped for `slip-falls`. */
  slipShare: 0.5,
  /** Fraction of collision cases in narrow cells for `bottleneck-collisions`. */
  narrowShare: 0.5,
  /** Mean crowd of collision cases for `crowded-collisions`. */
  crowd: 3,
  /** Fraction of timeout cases with waiting/oscillation for `stalled-timeouts`. */
  stalledShare: 0.5,
  /** `behavior.wait_fraction` for `passive-agents`. */
  waiting: 0.35,
  /** `behavior.idle_agent_rate` for `passive-agents`. */
  idle: 0.1,
  /** `behavior.oscillation_rate` for `oscillation`. */
  oscillation: 0.15,
  /** `behavior.detour_ratio` for `detours`. */
  detour: 1.5,
  /** `behavior.deviation_rate` for `slippage`. */
  deviation: 0.15,
  /** Success spread of a dimension for `weak-dimension`. */
  spread: 0.3,
  /** Success drop from the previous stage for `regression-restore`. */
  regression: 0.25,
  /** Success of the previous stage needed to restore it. */
  restoreFloor: 0.6,
  /** Largest success change over two stages counted as a plateau. */
  plateau: 0.05,
} as const;

/** A rule, for documentation and reports. */
export interface RuleSpec {
  /** Rule id, as the rationale names it. */
  id: string;
  /** The context section it reads. */
  reads: "none" | "stats" | "failures" | "behavior" | "history";
  /** What it does. */
  summary: string;
}

/** All rules. */
export const RULES: readonly RuleSpec[] = [
  {
    id: "blind-schedule",
    reads: "none",
    summary:
      "no diagnosis: develop the least developed dimension by one step (frontier order)",
  },
  {
    id: "harden-mastered",
    reads: "stats",
    summary:
      "success >= mastered: add a component one step harder (two steps at >= strong) along the target (else the least developed dimension), from the most developed component that works; keep working components at the retention weight",
  },
  {
    id: "ease-struggling",
    reads: "stats",
    summary:
      "success < struggling: add an easier component along the target (else the most developed dimension); keep working components",
  },
  {
    id: "keep-learning",
    reads: "stats",
    summary: "success in between and no evidence: keep the config",
  },
  {
    id: "reweight-components",
    reads: "stats",
    summary: "mixture: weight kept components by learning potential s(1-s)",
  },
  {
    id: "weak-dimension",
    reads: "stats",
    summary:
      "the dimension whose success drops most across its buckets (spread >= threshold) gets a vote",
  },
  {
    id: "failure-type",
    reads: "failures",
    summary:
      "a failure type with share >= threshold votes for its dimension: hole -> hole_density, collisions -> interaction, timeout -> distance",
  },
  {
    id: "slip-falls",
    reads: "failures",
    summary:
      "most hole cases slipped: the vote goes to slip instead of hole_density",
  },
  {
    id: "bottleneck-collisions",
    reads: "failures",
    summary: "most collision cases are in narrow cells: vote corridors",
  },
  {
    id: "crowded-collisions",
    reads: "failures",
    summary: "collision cases are crowded: vote agents",
  },
  {
    id: "stalled-timeouts",
    reads: "failures",
    summary:
      "timeout cases show waiting/oscillation: vote interaction (deadlock) instead of distance",
  },
  {
    id: "target-failure",
    reads: "failures",
    summary:
      "without stats: keep the current config and add a component aimed at the target (other dimensions eased, target one step up)",
  },
  {
    id: "no-failures",
    reads: "failures",
    summary: "without stats and no failures: treat as mastered",
  },
  {
    id: "calm-behavior",
    reads: "behavior",
    summary:
      "without stats or failures and no behaviour rule fired: no weakness seen, new component one step harder along the least developed dimension",
  },
  {
    id: "passive-agents",
    reads: "behavior",
    summary: "high waiting or idle agents: vote interaction",
  },
  {
    id: "oscillation",
    reads: "behavior",
    summary: "high oscillation: vote corridors",
  },
  {
    id: "detours",
    reads: "behavior",
    summary: "long detours: vote horizon (tighter)",
  },
  {
    id: "slippage",
    reads: "behavior",
    summary: "many moves deviate from the intended one: vote slip",
  },
  {
    id: "regression-restore",
    reads: "history",
    summary:
      "success fell well below a previous stage that worked: restore that config as a component",
  },
  {
    id: "plateau",
    reads: "history",
    summary:
      "same config and flat success for two stages: force a move (harden if success >= 0.5, else ease)",
  },
];

/** The thresholds of {@linkcode RULE_THRESHOLDS}, as the rules read them. */
export type RuleThresholds = {
  -readonly [K in keyof typeof RULE_THRESHOLDS]: number;
};

/** The weights among {@linkcode RULE_THRESHOLDS}: mixture weights, not thresholds, never scaled. */
const _WEIGHTS = new Set([
  "retentionWeight",
  "keepWithoutStats",
  "isolateWeight",
]);

/** Thresholds that are not shares or success rates (a count, a ratio): not capped at 1. */
const _UNBOUNDED = new Set(["crowd", "detour"]);

/**
 * The rules engineer's own settings, for sensitivity checks: every threshold
 * and every step along a dimension scaled by a factor (1 is the shipped rules).
 */
export interface RulesSettings {
  /**
   * Factor on every threshold of {@linkcode RULE_THRESHOLDS} (not on the
   * mixture weights); shares and success rates are capped at 1. @default 1
   */
  readonly thresholds?: number;
  /** Factor on every step along a curriculum dimension. @default 1 */
  readonly steps?: number;
}

/** The thresholds scaled by `factor` (shares and success rates capped at 1). */
export function scaledThresholds(factor = 1): RuleThresholds {
  const out = { ...RULE_THRESHOLDS } as RuleThresholds;
  if (factor === 1) return out;
  for (const k of Object.keys(out) as (keyof RuleThresholds)[]) {
    if (_WEIGHTS.has(k)) continue;
    const x = RULE_THRESHOLDS[k] * factor;
    out[k] = _UNBOUNDED.has(k) ? x : Math.min(1, x);
  }
  return out;
}

/** Dimension of each failure type. */
const TYPE_DIM: Readonly<Record<string, CurriculumDim>> = {
  hole: "hole_density",
  vertex_collision: "interaction",
  edge_collision: "interaction",
  timeout: "distance",
};

/** Curriculum dimension of each findings dimension. */
const FINDINGS_DIM: Readonly<Record<string, CurriculumDim>> = {
  agents: "agents",
  grid_side: "size",
  hole_density: "hole_density",
  slip: "slip",
  corridors: "corridors",
  interaction: "interaction",
  path_interaction: "interaction",
  reference_makespan: "distance",
  agent_distance: "distance",
  horizon_slack: "horizon",
};

class _Trace {
  votes = new Map<CurriculumDim, number>();
  lines: string[] = [];
  reads = new Set<string>();
  fired: string[] = [];
  vote(dim: CurriculumDim, w: number) {
    this.votes.set(dim, (this.votes.get(dim) ?? 0) + w);
  }
  fire(id: string, text: string) {
    this.fired.push(id);
    this.lines.push(`${id}: ${text}`);
  }
  target(): CurriculumDim | undefined {
    let best: CurriculumDim | undefined;
    let bestW = 0;
    const order = [
      ...FRONTIER,
      ...CURRICULUM_DIMS.filter((d) => !FRONTIER.includes(d)),
    ];
    for (const d of order) {
      const w = this.votes.get(d) ?? 0;
      if (w > bestW + 1e-9) {
        bestW = w;
        best = d;
      }
    }
    return best;
  }
}

function _pct(x: number): string {
  return `${Math.round(x * 1000) / 10}%`;
}

function _evidenceFromFailures(
  ctx: EngineerContext,
  tr: _Trace,
  T: RuleThresholds,
): void {
  const f = ctx.failures;
  if (f === undefined) return;
  tr.reads.add("failures.failure_count");
  if (f.failure_count === 0) return;
  tr.reads.add("failures.failure_types");
  const cases = f.cases;
  if (cases.length > 0) tr.reads.add("failures.cases[].features");
  for (const [type, share] of Object.entries(f.failure_types)) {
    const dim = TYPE_DIM[type];
    if (dim === undefined || share < T.typeShare) continue;
    if (type === "hole") {
      const holes = cases.filter((c) => c.outcome === "hole");
      const slipped = holes.filter((c) => c.features.slipped).length;
      if (holes.length > 0 && slipped / holes.length >= T.slipShare) {
        tr.vote("slip", share + 0.5);
        tr.fire(
          "slip-falls",
          `${slipped}/${holes.length} hole cases slipped (hole share ${
            _pct(share)
          }): vote slip`,
        );
        continue;
      }
    }
    if (type === "vertex_collision" || type === "edge_collision") {
      const col = cases.filter((c) =>
        c.outcome === "vertex_collision" || c.outcome === "edge_collision"
      );
      const narrow = col.filter((c) => c.features.narrow).length;
      if (col.length > 0 && narrow / col.length >= T.narrowShare) {
        tr.vote("corridors", share + 0.5);
        tr.fire(
          "bottleneck-collisions",
          `${narrow}/${col.length} collision cases in narrow cells: vote corridors`,
        );
        continue;
      }
      const crowd = col.length === 0
        ? 0
        : col.reduce((s, c) => s + c.features.crowd, 0) / col.length;
      if (crowd >= T.crowd) {
        tr.vote("agents", share + 0.5);
        tr.fire(
          "crowded-collisions",
          `collision cases have ${
            crowd.toFixed(1)
          } agents within 2 cells: vote agents`,
        );
        continue;
      }
    }
    if (type === "timeout") {
      const to = cases.filter((c) => c.outcome === "timeout");
      const stalled = to.filter((c) =>
        c.features.recent_oscillation || c.features.recent_wait >= 0.5
      ).length;
      if (to.length > 0 && stalled / to.length >= T.stalledShare) {
        tr.vote("interaction", share + 0.5);
        tr.fire(
          "stalled-timeouts",
          `${stalled}/${to.length} timeout cases stalled (waiting/oscillating): vote interaction`,
        );
        continue;
      }
    }
    tr.vote(dim, share);
    tr.fire(
      "failure-type",
      `${type} is ${_pct(share)} of failures: vote ${dim}`,
    );
  }
}

function _evidenceFromBehavior(
  ctx: EngineerContext,
  tr: _Trace,
  T: RuleThresholds,
): void {
  const b = ctx.behavior;
  if (b === undefined) return;
  tr.reads.add("behavior");
  if (b.wait_fraction >= T.waiting || b.idle_agent_rate >= T.idle) {
    tr.vote("interaction", 0.5);
    tr.fire(
      "passive-agents",
      `waiting ${_pct(b.wait_fraction)}, idle agents ${
        _pct(b.idle_agent_rate)
      }: vote interaction`,
    );
  }
  if (b.oscillation_rate >= T.oscillation) {
    tr.vote("corridors", 0.5);
    tr.fire(
      "oscillation",
      `oscillation ${_pct(b.oscillation_rate)} of moves: vote corridors`,
    );
  }
  if (b.detour_ratio !== null && b.detour_ratio >= T.detour) {
    tr.vote("horizon", 0.5);
    tr.fire(
      "detours",
      `detour ratio ${b.detour_ratio}: vote horizon (tighter)`,
    );
  }
  if (b.deviation_rate >= T.deviation) {
    tr.vote("slip", 0.5);
    tr.fire(
      "slippage",
      `${_pct(b.deviation_rate)} of moves deviated: vote slip`,
    );
  }
}

function _evidenceFromStats(
  ctx: EngineerContext,
  tr: _Trace,
  T: RuleThresholds,
): void {
  const s = ctx.stats;
  if (s === undefined) return;
  let best: { dim: CurriculumDim; spread: number; name: string } | undefined;
  for (const d of s.dimensions) {
    tr.reads.add("stats.dimensions");
    const dim = FINDINGS_DIM[d.dimension];
    if (dim === undefined || d.spread < T.spread) continue;
    if (best === undefined || d.spread > best.spread) {
      best = { dim, spread: d.spread, name: d.dimension };
    }
  }
  if (best !== undefined) {
    tr.vote(best.dim, 0.5);
    tr.fire(
      "weak-dimension",
      `success falls by ${
        _pct(best.spread)
      } across ${best.name}: vote ${best.dim}`,
    );
  }
}

interface _Comp {
  weight: number;
  config: EnvConfig;
  success: number | undefined;
}

function _components(
  ctx: EngineerContext,
  config: AnyEnvConfig,
  tr: _Trace,
): _Comp[] {
  const comps = components(config);
  const stats = ctx.stats?.components;
  if (stats !== undefined) tr.reads.add("stats.components");
  return comps.map((c, i) => {
    const id = configId(c.config);
    const st = stats?.find((x) =>
      x.index === i && x.config_id === id && x.episodes > 0
    ) ??
      stats?.find((x) =>
        x.config_id === id && x.episodes > 0
      );
    return { weight: c.weight, config: c.config, success: st?.success_rate };
  });
}

function _retained(
  comps: _Comp[],
  total: number,
  potential: boolean,
  tr: _Trace,
  T: RuleThresholds,
): MixtureComponent[] {
  const keep = comps.filter((c) =>
    c.success === undefined || c.success >= T.keepComponent
  );
  if (keep.length === 0) return [];
  const w = keep.map((c) =>
    potential && c.success !== undefined
      ? Math.max(0.05, c.success * (1 - c.success)) * c.weight
      : c.weight
  );
  if (potential && keep.length > 1) {
    tr.fire(
      "reweight-components",
      `kept ${keep.length} components weighted by learning potential`,
    );
  }
  const sum = w.reduce((a, b) => a + b, 0);
  return keep.map((c, i) => ({
    weight: (total * w[i]!) / sum,
    config: c.config,
  }));
}

/**
 * One step along `dim`; when that changes nothing (the dimension is at its
 * bound), the next frontier dimension that does change (least developed
 * first when hardening, most developed first when easing).
 */
function _effectiveStep(
  src: EnvConfig,
  dim: CurriculumDim,
  dir: number,
): { dim: CurriculumDim; next: EnvConfig } {
  const id = configId(src);
  const first = step(src, dim, dir);
  if (configId(first) !== id) return { dim, next: first };
  const order = [...FRONTIER].sort((a, b) =>
    dir > 0
      ? progress(src, a) - progress(src, b)
      : progress(src, b) - progress(src, a)
  );
  for (const d of order) {
    const next = step(src, d, dir);
    if (configId(next) !== id) return { dim: d, next };
  }
  return { dim, next: first };
}

/** The decision of the rules engineer (exported for tests and reports). */
export interface RulesDecision {
  /** The next configuration. */
  config: AnyEnvConfig;
  /** Ids of the rules that fired, in order. */
  fired: string[];
  /** The target dimension, if any. */
  target: CurriculumDim | null;
  /** Rationale lines. */
  lines: string[];
  /** Context fields read. */
  reads: string[];
}

/**
 * Decide the next configuration from a context (pure and deterministic).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decideRules } from "./rules.ts";
 * import { PRESETS, configId } from "../schemas/env_config.ts";
 * const d = decideRules({
 *   type: "none", stage: 0, cut: false,
 *   current: { config: PRESETS.easy, config_id: configId(PRESETS.easy) },
 * }, PRESETS.easy);
 * assert.deepEqual(d.fired, ["blind-schedule"]);
 * assert.equal("agents" in d.config && d.config.agents, 4);
 * ```
 */
export function decideRules(
  ctx: EngineerContext,
  config: AnyEnvConfig,
  settings: RulesSettings = {},
): RulesDecision {
  const T = scaledThresholds(settings.thresholds ?? 1);
  const unit = settings.steps ?? 1;
  const tr = new _Trace();
  // Where the curriculum stands: its most developed component (older, easier
  // components are kept for retention and are not where it moves on from).
  const base = frontier(config);
  if (ctx.type === "none") return _blindSchedule(base, tr, unit);
  _evidenceFromFailures(ctx, tr, T);
  _evidenceFromBehavior(ctx, tr, T);
  _evidenceFromStats(ctx, tr, T);
  const d: _Deciding = {
    ctx,
    config,
    base,
    comps: _components(ctx, config, tr),
    tr,
    target: tr.target(),
    extra: [],
    T,
    unit,
  };
  const { level, s } = _historyRules(d, _level(d));
  const plan = level === "mastered"
    ? _harden(d, s!)
    : level === "struggling"
    ? _ease(d, s!)
    : level === "zone"
    ? _inZone(d, s!)
    : _withoutStats(d);
  if (plan === "keep") {
    return {
      config,
      fired: tr.fired,
      target: null,
      lines: tr.lines,
      reads: [...tr.reads].sort(),
    };
  }
  return {
    config: buildMixture(plan.parts, { maxComponents: 4 }),
    fired: tr.fired,
    target: plan.target ?? null,
    lines: tr.lines,
    reads: [...tr.reads].sort(),
  };
}

/** What the steps of {@linkcode decideRules} share. */
interface _Deciding {
  readonly ctx: EngineerContext;
  readonly config: AnyEnvConfig;
  /** The most developed component. */
  readonly base: EnvConfig;
  readonly comps: ReturnType<typeof _components>;
  readonly tr: _Trace;
  /** The dimension the evidence points at, if any. */
  readonly target: CurriculumDim | undefined;
  /** Components restored from the history (regression). */
  readonly extra: MixtureComponent[];
  /** The thresholds in force. */
  readonly T: RuleThresholds;
  /** The size of one step along a dimension (1: the shipped step). */
  readonly unit: number;
}

/** The next mixture's parts and target dimension, or "keep" (the config stays). */
type _Plan =
  | { parts: MixtureComponent[]; target: CurriculumDim | undefined }
  | "keep";

type _Level = "mastered" | "struggling" | "zone" | "unknown";

/** Context `none`: develop the least developed dimension by one step. */
function _blindSchedule(
  base: EnvConfig,
  tr: _Trace,
  unit: number,
): RulesDecision {
  const dim = leastDeveloped(base);
  const next = step(base, dim, +unit);
  tr.fire(
    "blind-schedule",
    `no diagnosis: develop ${dim} (progress ${
      progress(base, dim).toFixed(2)
    }) by one step`,
  );
  return {
    config: next,
    fired: tr.fired,
    target: null,
    lines: tr.lines,
    reads: [],
  };
}

/** The level of the success rate, when the context has stats. */
function _level(d: _Deciding): { level: _Level; s: number | undefined } {
  const { T } = d;
  const stats = d.ctx.stats;
  if (stats === undefined) return { level: "unknown", s: undefined };
  d.tr.reads.add("stats.success_rate");
  const s = stats.success_rate;
  const level = s >= T.mastered
    ? "mastered"
    : s < T.struggling
    ? "struggling"
    : "zone";
  return { level, s };
}

/** Regression (restore the last good config as a component) and plateau rules, from the history. */
function _historyRules(
  d: _Deciding,
  { level, s }: { level: _Level; s: number | undefined },
): { level: _Level; s: number | undefined } {
  const { T } = d;
  const hist = d.ctx.history?.entries;
  if (hist === undefined || hist.length === 0 || s === undefined) {
    return { level, s };
  }
  d.tr.reads.add("history.entries");
  const last = hist[hist.length - 1]!;
  const cur = d.ctx.current.config_id;
  if (
    last.success_rate >= T.restoreFloor &&
    s <= last.success_rate - T.regression &&
    last.config !== null && last.config_id !== cur
  ) {
    d.tr.fire(
      "regression-restore",
      `success ${_pct(s)} fell from ${
        _pct(last.success_rate)
      } at stage ${last.stage}: restore config ${last.config_id} as a component`,
    );
    for (const c of components(last.config)) {
      d.extra.push({
        weight: 0.4 * c.weight /
          components(last.config).reduce((a, b) => a + b.weight, 0),
        config: c.config,
      });
    }
    level = "struggling";
  }
  const prev = hist.length >= 2 ? hist[hist.length - 2]! : undefined;
  if (
    level === "zone" && prev !== undefined && last.config_id === cur &&
    prev.config_id === cur &&
    Math.abs(s - last.success_rate) < T.plateau &&
    Math.abs(last.success_rate - prev.success_rate) < T.plateau
  ) {
    level = s >= 0.5 ? "mastered" : "struggling";
    d.tr.fire(
      "plateau",
      `success flat at ${
        _pct(s)
      } on config ${cur} for two stages: treat as ${level}`,
    );
  }
  return { level, s };
}

/** Mastered: harden from the most developed component that works. */
function _harden(d: _Deciding, s: number): _Plan {
  const { comps, tr, T } = d;
  const working = comps.filter((c) =>
    c.success !== undefined && c.success >= T.keepComponent
  );
  const src = working.length > 0
    ? frontier(
      buildMixture(working.map((c) => ({ weight: 1, config: c.config }))),
    )
    : d.base;
  const steps = s >= T.strong ? 2 : 1;
  let { dim, next } = _effectiveStep(
    src,
    d.target ?? leastDeveloped(src),
    +d.unit,
  );
  if (steps === 2) next = _effectiveStep(next, dim, +d.unit).next;
  tr.fire(
    "harden-mastered",
    `success ${_pct(s)} >= ${_pct(T.mastered)}: new component with ${dim} ${
      steps === 2
        ? `two steps harder (>= ${_pct(T.strong)})`
        : "one step harder"
    }`,
  );
  return {
    parts: [..._retained(comps, T.retentionWeight, true, tr, T), {
      weight: 1 - T.retentionWeight,
      config: next,
    }],
    target: dim,
  };
}

/** Struggling: ease the weakest component by one step. */
function _ease(d: _Deciding, s: number): _Plan {
  const { comps, tr, extra, T } = d;
  const src = comps.filter((c) => c.success !== undefined)
    .sort((a, b) => a.success! - b.success!)[0]?.config ?? d.base;
  const { dim, next } = _effectiveStep(
    src,
    d.target ?? mostDeveloped(src),
    -d.unit,
  );
  tr.fire(
    "ease-struggling",
    `success ${_pct(s)} < ${
      _pct(T.struggling)
    }: new component with ${dim} one step easier`,
  );
  const keep = _retained(
    comps.filter((c) => c.success !== undefined),
    T.retentionWeight,
    true,
    tr,
    T,
  );
  return {
    parts: [...keep, ...extra, {
      weight: keep.length > 0 || extra.length > 0 ? 1 - T.retentionWeight : 1,
      config: next,
    }],
    target: dim,
  };
}

/** In the learning zone: isolate the failing dimension, or keep the config (reweighted by learning potential). */
function _inZone(d: _Deciding, s: number): _Plan {
  const { comps, tr, target, T } = d;
  if (target !== undefined) {
    tr.fire(
      "target-failure",
      `success ${
        _pct(s)
      } in the learning zone: keep training, add a component isolating ${target} (weight ${T.isolateWeight})`,
    );
    return {
      parts: [
        ..._retained(
          comps.map((c) => ({ ...c, success: undefined })),
          1 - T.isolateWeight,
          false,
          tr,
          T,
        ),
        { weight: T.isolateWeight, config: isolate(d.base, target) },
      ],
      target,
    };
  }
  tr.fire(
    "keep-learning",
    `success ${_pct(s)} in the learning zone and no evidence: keep the config`,
  );
  const parts = comps.map((c) => ({
    weight: c.success === undefined || comps.length === 1
      ? c.weight
      : Math.max(0.05, c.success * (1 - c.success)) * c.weight,
    config: c.config,
  }));
  if (comps.length > 1 && comps.some((c) => c.success !== undefined)) {
    tr.fire(
      "reweight-components",
      `${comps.length} components weighted by learning potential s(1-s)`,
    );
  }
  return { parts, target };
}

/** No stats: evidence only. */
function _withoutStats(d: _Deciding): _Plan {
  const { ctx, comps, tr, target, base, T } = d;
  const total = comps.reduce((a, b) => a + b.weight, 0);
  if (target !== undefined) {
    tr.fire(
      "target-failure",
      `keep the current config (weight ${T.keepWithoutStats}) and add a component aimed at ${target}`,
    );
    return {
      parts: [
        ...comps.map((c) => ({
          weight: T.keepWithoutStats * c.weight / total,
          config: c.config,
        })),
        {
          weight: 1 - T.keepWithoutStats,
          config: step(isolate(base, target), target, +d.unit),
        },
      ],
      target,
    };
  }
  const dim = leastDeveloped(base);
  if (ctx.failures !== undefined && ctx.failures.failure_count === 0) {
    tr.fire(
      "no-failures",
      `no failures observed: new component with ${dim} one step harder`,
    );
  } else if (ctx.failures === undefined && ctx.behavior !== undefined) {
    tr.fire(
      "calm-behavior",
      `behaviour shows no weakness: new component with ${dim} one step harder`,
    );
  } else {
    tr.fire(
      "keep-learning",
      "no rule found a weakness in this context: keep the config",
    );
    return "keep";
  }
  return {
    parts: [
      ...comps.map((c) => ({
        weight: T.retentionWeight * c.weight / total,
        config: c.config,
      })),
      { weight: 1 - T.retentionWeight, config: step(base, dim, +d.unit) },
    ],
    target: dim,
  };
}

/**
 * The rules engineer, with its shipped settings unless `settings` scales them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rulesEngineer } from "./rules.ts";
 * assert.equal(rulesEngineer().name, "rules");
 * ```
 */
export function rulesEngineer(settings: RulesSettings = {}): Engineer {
  return {
    name: "rules",
    propose(input: ProposeInput): Promise<Proposal> {
      const d = decideRules(input.context.json, input.config, settings);
      const events: EngineerEvent[] = d.fired.map((id) => ({
        type: "rule",
        detail: id,
      }));
      return Promise.resolve({
        config: d.config,
        rationale: `rules engineer (context ${input.context.json.type}): ${
          d.lines.join("; ")
        }.`,
        events,
        reads: d.reads,
      });
    },
  };
}

function _factor(name: string, lo: number, hi: number, what: string) {
  return v.optional(v.pipe(
    v.number(`${name} must be a number`),
    v.minValue(lo, `${name} must be >= ${lo}`),
    v.maxValue(hi, `${name} must be <= ${hi}`),
    v.description(what),
  ));
}

/**
 * The `rules` engineer kind. Its parameters only scale the shipped settings
 * ({@linkcode RULE_THRESHOLDS} and the step sizes) for sensitivity checks.
 */
export const engineer: EngineerKind<
  { [K in keyof RulesSettings]?: RulesSettings[K] | undefined }
> = {
  name: "rules",
  description:
    "a transparent rule-based curriculum: named rules read the context's statistics, failures and behaviour",
  params: v.strictObject({
    thresholds: _factor(
      "thresholds",
      0.5,
      1.5,
      "factor on every threshold of the rules (success levels, failure shares, behaviour rates; not the mixture weights), shares capped at 1; default 1, e.g. 0.75 or 1.25 for a sensitivity check",
    ),
    steps: _factor(
      "steps",
      0.5,
      2,
      "factor on every step along a curriculum dimension (agents, holes, size, ...); default 1",
    ),
  }),
  families: ["mapf-frozenlake"],
  module: import.meta.url,
  create: (params) =>
    rulesEngineer({
      ...(params.thresholds === undefined
        ? {}
        : { thresholds: params.thresholds }),
      ...(params.steps === undefined ? {} : { steps: params.steps }),
    }),
};
