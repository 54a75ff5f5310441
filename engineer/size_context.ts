/**
 * The engineer's context on the per-size form: the diagnosis broken down
 * per map size, in the paper's failure categories.
 *
 * A stage trained on a per-size form draws its instances from the form's
 * components (one per size and wait class, `schemas/size_form.ts`), and
 * `diagnose` reports results per component; this module folds those back
 * into sizes. Per size it gives the current ratios, the episodes, the
 * success rate (overall, on instances that need a wait, on instances that
 * need none) and the failures by category:
 *
 * | ours | the paper's |
 * |---|---|
 * | `parse_errors` (outcome `invalid_plan`) | parse errors |
 * | `illegal_moves` | illegal moves (null: envsmith's outcomes have no such category; a stepping policy cannot make one) |
 * | `conflicts` (`vertex_collision` + `edge_collision`) | conflicts |
 * | `hole_collisions` (`hole`) | hole collisions |
 * | `timeouts` (`timeout`) | (none: the paper's plans have no horizon) |
 *
 * What each context type shows: `none` the current form only; `stats` the
 * per-size table; `failures` the failure counts per size and the sampled
 * failure cases, each with its size; `behavior` the behaviour summaries;
 * `full` all of these plus earlier stages (their forms and per-size
 * success).
 *
 * @module
 */
import type { Behavior, Findings } from "../schemas/findings.ts";
import {
  SIZE_KEYS,
  type SizeForm,
  type SizeKey,
  type SizeRatios,
} from "../schemas/size_form.ts";
import type { ContextType } from "./context.ts";

/** Failures of one size, in the paper's categories. */
export interface SizeFailures {
  /** Plans that did not parse (`invalid_plan`). */
  parse_errors: number;
  /** Illegal moves: null, no envsmith outcome counts them. */
  illegal_moves: number | null;
  /** Vertex and edge collisions. */
  conflicts: number;
  /** Falls into holes. */
  hole_collisions: number;
  /** Episodes that reached the horizon. */
  timeouts: number;
}

/** One size's line of the context. */
export interface SizeLine extends SizeRatios {
  /** The size. */
  size: SizeKey;
  /** Episodes played at this size (0: not drawn, or no findings). */
  episodes: number;
  /** Episode success rate (null without episodes). */
  success_rate: number | null;
  /** Success on instances that need a wait (null: none played). */
  success_wait: number | null;
  /** Episodes on instances that need a wait. */
  episodes_wait: number;
  /** Success on instances that need none (null: none played). */
  success_free: number | null;
  /** Failures by category (episode counts). */
  failures: SizeFailures;
}

/** An earlier stage, as `full` shows it. */
export interface SizeHistoryEntry {
  /** Per drawn size: its ratios and success. */
  sizes: { size: SizeKey; data_ratio: number; success_rate: number | null }[];
  /** Overall success. */
  success_rate: number;
}

/** The engineer's context on the per-size form. */
export interface SizeContext {
  /** Context type. */
  type: ContextType;
  /** Stage index, null when unknown. */
  stage: number | null;
  /** The current form. */
  current: SizeForm;
  /** Overall success (stats, full). */
  success_rate?: number;
  /** Per size (stats, failures, full; `failures` shows the counts only). */
  sizes?: SizeLine[];
  /** Sampled failure cases (failures, full). */
  cases?: { size: SizeKey | null; outcome: string; text: string }[];
  /** Behaviour summaries (behavior, full). */
  behavior?: Behavior;
  /** Earlier stages, oldest first (full). */
  history?: SizeHistoryEntry[];
}

/** A context as JSON and as text. */
export interface BuiltSizeContext {
  /** Structured. */
  json: SizeContext;
  /** What a language model reads. */
  text: string;
}

interface _Tally {
  episodes: number;
  success: number;
  wait: [number, number];
  free: [number, number];
  failures: SizeFailures;
}

/**
 * The size and wait class of each of the findings' components, read from
 * the configuration the episodes were drawn from (a board's side, and
 * `interaction` 1 for the wait class); null for a component that is not a
 * per-size one.
 */
function _componentSizes(
  findings: Findings,
): ({ size: SizeKey; wait: boolean } | null)[] {
  const cfg = findings.config as
    | {
      mixture?: {
        config: { width: number; height: number; interaction: number };
      }[];
    }
    | { width: number; height: number; interaction: number }
    | null;
  const list = cfg === null || cfg === undefined
    ? []
    : "mixture" in cfg && Array.isArray(cfg.mixture)
    ? cfg.mixture.map((m) => m.config)
    : [cfg as { width: number; height: number; interaction: number }];
  return list.map((c) => {
    const key = `${c.width}x${c.height}` as SizeKey;
    return c.width === c.height && SIZE_KEYS.includes(key)
      ? { size: key, wait: c.interaction === 1 }
      : null;
  });
}

/** Each size's share of a stage's instances, from the weights of the findings' mixture (rounded to 3 decimals). */
export function dataShares(findings: Findings): Map<SizeKey, number> {
  const sizes = _componentSizes(findings);
  const cfg = findings.config as { mixture?: { weight: number }[] } | null;
  const weights = cfg && Array.isArray(cfg.mixture)
    ? cfg.mixture.map((m) => m.weight)
    : sizes.map(() => 1);
  let total = 0;
  sizes.forEach((s, i) => {
    if (s) total += weights[i] ?? 0;
  });
  const out = new Map<SizeKey, number>();
  sizes.forEach((s, i) => {
    if (!s || total <= 0) return;
    out.set(
      s.size,
      Math.round(((out.get(s.size) ?? 0) + (weights[i] ?? 0) / total) * 1000) /
        1000,
    );
  });
  return out;
}

function _round(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

/** Per-size results of a diagnosis (sizes with no episodes get zeros). */
export function sizeLines(
  findings: Findings | null,
  form: SizeForm,
): SizeLine[] {
  const tallies = new Map<SizeKey, _Tally>();
  for (const k of SIZE_KEYS) {
    tallies.set(k, {
      episodes: 0,
      success: 0,
      wait: [0, 0],
      free: [0, 0],
      failures: {
        parse_errors: 0,
        illegal_moves: null,
        conflicts: 0,
        hole_collisions: 0,
        timeouts: 0,
      },
    });
  }
  if (findings) {
    const sizes = _componentSizes(findings);
    for (const c of findings.components) {
      const s = sizes[c.index];
      if (!s) continue;
      const t = tallies.get(s.size)!;
      t.episodes += c.episodes;
      t.success += c.outcomes.success;
      const cls = s.wait ? t.wait : t.free;
      cls[0] += c.outcomes.success;
      cls[1] += c.episodes;
      t.failures.parse_errors += c.outcomes.invalid_plan;
      t.failures.conflicts += c.outcomes.vertex_collision +
        c.outcomes.edge_collision;
      t.failures.hole_collisions += c.outcomes.hole;
      t.failures.timeouts += c.outcomes.timeout;
    }
  }
  return SIZE_KEYS.map((k) => {
    const t = tallies.get(k)!;
    return {
      size: k,
      ...form.sizes[k],
      episodes: t.episodes,
      success_rate: t.episodes === 0 ? null : _round(t.success / t.episodes),
      success_wait: t.wait[1] === 0 ? null : _round(t.wait[0] / t.wait[1]),
      episodes_wait: t.wait[1],
      success_free: t.free[1] === 0 ? null : _round(t.free[0] / t.free[1]),
      failures: t.failures,
    };
  });
}

/** Build the context of a type. */
export function buildSizeContext(
  type: ContextType,
  findings: Findings | null,
  current: SizeForm,
  options: {
    stage?: number;
    /** Earlier stages; without `form`, each size's data share is read from the findings' mixture. */
    history?: readonly { findings: Findings; form?: SizeForm | null }[];
  } = {},
): BuiltSizeContext {
  const json: SizeContext = { type, stage: options.stage ?? null, current };
  const lines = sizeLines(findings, current);
  const played = lines.filter((l) => l.data_ratio > 0 || l.episodes > 0);
  if (findings && (type === "stats" || type === "full")) {
    json.success_rate = findings.success_rate;
    json.sizes = played;
  }
  if (findings && type === "failures") {
    json.sizes = played.map((l) => ({
      ...l,
      success_rate: null,
      success_wait: null,
      success_free: null,
    }));
  }
  if (findings && (type === "failures" || type === "full")) {
    const sizes = _componentSizes(findings);
    json.cases = findings.failures.map((f) => ({
      size: sizes[f.component]?.size ?? null,
      outcome: f.outcome,
      text: f.text,
    }));
  }
  if (findings && (type === "behavior" || type === "full")) {
    json.behavior = findings.behavior;
  }
  if (type === "full" && options.history && options.history.length > 0) {
    json.history = options.history.map((h) => {
      const shares = h.form ? null : dataShares(h.findings);
      return {
        success_rate: h.findings.success_rate,
        sizes: sizeLines(h.findings, h.form ?? current)
          .map((l) => ({
            size: l.size,
            data_ratio: shares ? shares.get(l.size) ?? 0 : l.data_ratio,
            success_rate: l.success_rate,
          }))
          .filter((l) => l.data_ratio > 0),
      };
    });
  }
  return { json, text: renderSizeContext(json) };
}

function _n(x: number | null): string {
  return x === null ? "n/a" : String(x);
}

/** The context as text (what a language model reads). */
export function renderSizeContext(ctx: SizeContext): string {
  const out: string[] = [];
  out.push(
    `Current configuration (agents ${ctx.current.agents}, holes ${ctx.current.holes}):`,
  );
  for (const k of SIZE_KEYS) {
    const r = ctx.current.sizes[k];
    out.push(
      `  ${k}: data_ratio ${r.data_ratio}, hole_ratio ${r.hole_ratio}, wait_ratio ${r.wait_ratio}`,
    );
  }
  if (ctx.success_rate !== undefined) {
    out.push("", `Overall success rate: ${ctx.success_rate}`);
  }
  if (ctx.sizes) {
    out.push("", "Per map size (episodes of the last stage):");
    for (const l of ctx.sizes) {
      const f = l.failures;
      out.push(
        `  ${l.size}: episodes ${l.episodes}` +
          (l.success_rate === null && l.episodes > 0
            ? ""
            : `, success ${_n(l.success_rate)} (needs a wait: ${
              _n(l.success_wait)
            }, needs none: ${_n(l.success_free)})`) +
          `; failures: parse errors ${f.parse_errors}, illegal moves ${
            _n(f.illegal_moves)
          }, conflicts ${f.conflicts}, hole collisions ${f.hole_collisions}, timeouts ${f.timeouts}`,
      );
    }
  }
  if (ctx.behavior) {
    const b = ctx.behavior;
    out.push(
      "",
      `Behaviour: wait fraction ${b.wait_fraction}, oscillation rate ${b.oscillation_rate}, detour ratio ${
        _n(b.detour_ratio)
      }, idle agents ${b.idle_agent_rate}`,
    );
  }
  if (ctx.cases && ctx.cases.length > 0) {
    out.push("", "Failure cases:");
    for (const c of ctx.cases) {
      out.push(`- ${c.outcome} at ${c.size ?? "?"}:`, c.text);
    }
  }
  if (ctx.history && ctx.history.length > 0) {
    out.push("", "Earlier stages (oldest first):");
    ctx.history.forEach((h, i) => {
      out.push(
        `  ${i}: success ${h.success_rate}; ` +
          h.sizes.map((s) =>
            `${s.size} data ${s.data_ratio} success ${_n(s.success_rate)}`
          ).join(", "),
      );
    });
  }
  return out.join("\n");
}
