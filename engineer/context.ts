/**
 * Context types: what part of a diagnosis an environment engineer sees.
 *
 * | type | sections |
 * |---|---|
 * | `none` | the current config only |
 * | `stats` | success overall, per mixture component and per dimension; path efficiency |
 * | `failures` | failure-type shares and the sampled failure cases (features and renderings) |
 * | `behavior` | behaviour summaries: waiting, oscillation, detours, idle agents, deviations |
 * | `full` | all of the above, plus the history of earlier configs and their scores |
 *
 * {@linkcode buildContext} returns the same content as JSON (what the
 * non-LLM engineers read) and as text (what the LLM reads). Both are
 * deterministic and bounded by a character budget on the text: when it is
 * exceeded, the least informative failure cases go first (cases are kept
 * most informative first), then the oldest history entries, then the
 * per-dimension breakdowns from the last; the JSON records what was dropped.
 *
 * @module
 */
import {
  type AnyEnvConfig,
  configId,
  describeEnvConfig,
} from "../schemas/env_config.ts";
import type {
  Behavior,
  ComponentStats,
  DimensionBreakdown,
  Efficiency,
  FailureCase,
  Findings,
} from "../schemas/findings.ts";
import { FAILURE_TYPES } from "../schemas/findings.ts";

/** The context types, in the order of the ablation. */
export const CONTEXT_TYPES = [
  "none",
  "stats",
  "failures",
  "behavior",
  "full",
] as const;

/** A context type. */
export type ContextType = typeof CONTEXT_TYPES[number];

/** The `stats` section. */
export interface StatsSection {
  /** Episodes diagnosed. */
  episodes: number;
  /** Episode success rate. */
  success_rate: number;
  /** Fraction of agents on their goal at the end. */
  agent_success_rate: number;
  /** Path efficiency over successful episodes. */
  efficiency: Efficiency;
  /** Per mixture component. */
  components: ComponentStats[];
  /** Success per dimension (possibly truncated). */
  dimensions: DimensionBreakdown[];
  /** Dimension breakdowns dropped by the budget. */
  dropped_dimensions: number;
}

/** The `failures` section. */
export interface FailuresSection {
  /** Failures in the rollouts. */
  failure_count: number;
  /** Share of each failure type among failures (sums to 1 when there are failures). */
  failure_types: Record<string, number>;
  /** Sampled cases, most informative first (possibly truncated). */
  cases: FailureCase[];
  /** Cases dropped by the budget. */
  dropped_cases: number;
}

/** One earlier stage, as the `full` context shows it. */
export interface HistoryEntry {
  /** Stage index (0 = first). */
  stage: number;
  /** The config trained on in that stage (null when unknown). */
  config: AnyEnvConfig | null;
  /** `configId` of it ("" when unknown). */
  config_id: string;
  /** Success on that config. */
  success_rate: number;
  /** Agent success on that config. */
  agent_success_rate: number;
  /** Success per component of that config. */
  components: { config_id: string; weight: number; success_rate: number }[];
  /** The most frequent failure type, or null. */
  top_failure: string | null;
}

/** The `history` section. */
export interface HistorySection {
  /** Earlier stages, oldest first (possibly truncated from the oldest). */
  entries: HistoryEntry[];
  /** Entries dropped by the budget. */
  dropped_entries: number;
}

/** What an engineer sees. Sections absent from the context type are absent. */
export interface EngineerContext {
  /** The context type. */
  type: ContextType;
  /** Stage index of the redesign (null when unknown). */
  stage: number | null;
  /** The current config and its id. */
  current: { config: AnyEnvConfig; config_id: string };
  /** `stats`, `full`. */
  stats?: StatsSection;
  /** `failures`, `full`. */
  failures?: FailuresSection;
  /** `behavior`, `full`. */
  behavior?: Behavior;
  /** `full`. */
  history?: HistorySection;
  /** Whether the text hit the budget even after every drop (and was cut). */
  cut: boolean;
}

/** A context as JSON and text. */
export interface BuiltContext {
  /** Structured form. */
  json: EngineerContext;
  /** Text form (what an LLM reads). */
  text: string;
}

/** An earlier stage as given to {@linkcode buildContext}. */
export interface HistoryInput {
  /** That stage's findings. */
  findings: Findings;
  /** The config trained on (defaults to `findings.config`). */
  config?: AnyEnvConfig | null;
}

/** Options of {@linkcode buildContext}. */
export interface BuildContextOptions {
  /** Earlier stages, oldest first (read only by `full`). */
  history?: readonly HistoryInput[];
  /** Stage index. */
  stage?: number;
  /** Character budget of the text. @default {6000} */
  budget?: number;
}

/** Whether a string is a context type. */
export function isContextType(x: unknown): x is ContextType {
  return typeof x === "string" &&
    (CONTEXT_TYPES as readonly string[]).includes(x);
}

/**
 * Build the context of a type from findings.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildContext } from "./context.ts";
 * import { diagnose } from "./diagnose.ts";
 * import { PRESETS } from "../schemas/env_config.ts";
 * const ctx = buildContext("stats", diagnose([]), PRESETS.easy);
 * assert.equal(ctx.json.stats?.success_rate, 0);
 * assert.equal(ctx.json.failures, undefined);
 * ```
 */
export function buildContext(
  type: ContextType,
  findings: Findings | null,
  current: AnyEnvConfig,
  options: BuildContextOptions = {},
): BuiltContext {
  const budget = options.budget ?? 6000;
  const json: EngineerContext = {
    type,
    stage: options.stage ?? null,
    current: { config: current, config_id: configId(current) },
    cut: false,
  };
  const wants = (s: "stats" | "failures" | "behavior") =>
    type === s || type === "full";
  if (findings !== null && wants("stats")) {
    json.stats = {
      episodes: findings.episodes,
      success_rate: findings.success_rate,
      agent_success_rate: findings.agent_success_rate,
      efficiency: findings.efficiency,
      components: findings.components,
      dimensions: [...findings.dimensions],
      dropped_dimensions: 0,
    };
  }
  if (findings !== null && wants("failures")) {
    const types: Record<string, number> = {};
    for (const t of FAILURE_TYPES) {
      const n = findings.outcomes[t];
      if (n > 0) {
        types[t] = Math.round((n / Math.max(1, findings.failure_count)) * 1e4) /
          1e4;
      }
    }
    json.failures = {
      failure_count: findings.failure_count,
      failure_types: types,
      cases: [...findings.failures],
      dropped_cases: 0,
    };
  }
  if (findings !== null && wants("behavior")) json.behavior = findings.behavior;
  if (type === "full") {
    json.history = {
      entries: (options.history ?? []).map((h, i) => _historyEntry(h, i)),
      dropped_entries: 0,
    };
  }
  let text = renderContext(json);
  // Stable truncation: cases (least informative last), oldest history, dimensions.
  while (text.length > budget) {
    if (json.failures !== undefined && json.failures.cases.length > 0) {
      json.failures.cases.pop();
      json.failures.dropped_cases++;
    } else if (json.history !== undefined && json.history.entries.length > 0) {
      json.history.entries.shift();
      json.history.dropped_entries++;
    } else if (json.stats !== undefined && json.stats.dimensions.length > 0) {
      json.stats.dimensions.pop();
      json.stats.dropped_dimensions++;
    } else {
      json.cut = true;
      text = renderContext(json);
      text = text.slice(0, Math.max(0, budget - 24)) +
        "\n[context cut at budget]";
      return { json, text };
    }
    text = renderContext(json);
  }
  return { json, text };
}

function _historyEntry(h: HistoryInput, fallbackStage: number): HistoryEntry {
  const f = h.findings;
  const config = (h.config ?? f.config ?? null) as AnyEnvConfig | null;
  let top: string | null = null;
  let best = 0;
  for (const t of FAILURE_TYPES) {
    if (f.outcomes[t] > best) {
      best = f.outcomes[t];
      top = t;
    }
  }
  return {
    stage: fallbackStage,
    config,
    config_id: config === null ? "" : configId(config),
    success_rate: f.success_rate,
    agent_success_rate: f.agent_success_rate,
    components: f.components.map((c) => ({
      config_id: c.config_id,
      weight: c.weight,
      success_rate: c.success_rate,
    })),
    top_failure: top,
  };
}

function _pct(x: number | null): string {
  return x === null ? "n/a" : `${Math.round(x * 1000) / 10}%`;
}

/** Render a context as deterministic text (Markdown-like sections). */
export function renderContext(ctx: EngineerContext): string {
  const out: string[] = [];
  out.push(`# Current training configuration (id ${ctx.current.config_id})`);
  out.push(JSON.stringify(ctx.current.config));
  out.push(`Summary: ${describeEnvConfig(ctx.current.config)}`);
  if (ctx.stage !== null) out.push(`Stage: ${ctx.stage}`);
  if (ctx.type === "none") {
    out.push("", "(No diagnosis is provided for this redesign.)");
  }
  if (ctx.stats !== undefined) _statsText(out, ctx.stats);
  if (ctx.behavior !== undefined) _behaviorText(out, ctx.behavior);
  if (ctx.failures !== undefined) _failuresText(out, ctx.failures);
  if (ctx.history !== undefined) _historyText(out, ctx.history);
  return out.join("\n");
}

/** The "Statistics" section of {@linkcode renderContext}. */
function _statsText(
  out: string[],
  s: NonNullable<EngineerContext["stats"]>,
): void {
  out.push("", "# Statistics");
  out.push(
    `Episodes: ${s.episodes}; success: ${
      _pct(s.success_rate)
    }; agents on goal: ${
      _pct(s.agent_success_rate)
    }; path efficiency (reference/achieved sum-of-costs): ${
      _pct(s.efficiency.mean)
    }`,
  );
  if (s.components.length > 1 || (s.components[0]?.weight ?? 1) !== 1) {
    out.push("Per component:");
    for (const c of s.components) {
      out.push(
        `- component ${c.index} (id ${c.config_id}, weight ${c.weight}): ${c.episodes} episodes, success ${
          _pct(c.success_rate)
        }, agents on goal ${_pct(c.agent_success_rate)}`,
      );
    }
  }
  if (s.dimensions.length > 0) {
    out.push("Success by dimension:");
    for (const d of s.dimensions) {
      out.push(
        `- ${d.dimension}${d.unit === "agent" ? " (per agent)" : ""}: ${
          d.buckets.map((b) => `${b.label}: ${_pct(b.success_rate)} (n=${b.n})`)
            .join(", ")
        }`,
      );
    }
  }
  if (s.dropped_dimensions > 0) {
    out.push(`(${s.dropped_dimensions} more dimensions omitted)`);
  }
}

/** The "Behaviour" section of {@linkcode renderContext}. */
function _behaviorText(
  out: string[],
  b: NonNullable<EngineerContext["behavior"]>,
): void {
  out.push("", "# Behaviour (agent-steps before reaching the goal)");
  out.push(
    `Waiting: ${_pct(b.wait_fraction)} of steps; oscillation (A-B-A moves): ${
      _pct(b.oscillation_rate)
    } of moves; detour ratio (moves / shortest distance): ${
      b.detour_ratio ?? "n/a"
    }`,
  );
  out.push(
    `Agents that never moved: ${_pct(b.idle_agent_rate)} (in ${
      _pct(b.episodes_with_idle_agent)
    } of episodes); moves that went elsewhere than intended (slip/blocked): ${
      _pct(b.deviation_rate)
    }; agents on goal when an episode failed: ${_pct(b.progress_at_failure)}`,
  );
}

/** The "Failures" section of {@linkcode renderContext}. */
function _failuresText(
  out: string[],
  f: NonNullable<EngineerContext["failures"]>,
): void {
  out.push("", "# Failures");
  const types = Object.entries(f.failure_types).map(([t, x]) =>
    `${t} ${_pct(x)}`
  );
  out.push(
    `${f.failure_count} failed episodes; failure types: ${
      types.join(", ") || "none"
    }`,
  );
  f.cases.forEach((c, i) => {
    const feats = [
      c.features.slipped ? "the failing move slipped" : "",
      c.features.narrow ? "in a narrow passage" : "",
      `${c.features.crowd} agents within 2 cells`,
      c.features.recent_oscillation ? "oscillation just before" : "",
      `recent waiting ${_pct(c.features.recent_wait)}`,
      c.features.remaining_distance === null
        ? ""
        : `mean remaining distance ${c.features.remaining_distance}`,
    ].filter((x) => x !== "");
    out.push(
      "",
      `## Case ${i + 1}: ${c.outcome} (${feats.join("; ")})`,
      c.text,
    );
  });
  if (f.dropped_cases > 0) {
    out.push(`(${f.dropped_cases} more cases omitted)`);
  }
}

/** The "History" section of {@linkcode renderContext}. */
function _historyText(
  out: string[],
  h: NonNullable<EngineerContext["history"]>,
): void {
  out.push("", "# History of earlier stages (oldest first)");
  if (h.dropped_entries > 0) {
    out.push(`(${h.dropped_entries} older stages omitted)`);
  }
  if (h.entries.length === 0) out.push("(none: this is the first redesign)");
  for (const e of h.entries) {
    out.push(
      `- stage ${e.stage}: config ${e.config_id || "?"}: success ${
        _pct(e.success_rate)
      }, agents on goal ${_pct(e.agent_success_rate)}, top failure ${
        e.top_failure ?? "none"
      }${e.config === null ? "" : `; ${describeEnvConfig(e.config)}`}`,
    );
  }
}
