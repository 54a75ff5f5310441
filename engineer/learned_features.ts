/**
 * What the `learned` engineer chooses among and what it sees, as pure
 * functions: the candidate changes of a configuration (keep, or one step
 * of one stepped dimension of the family's space, up or down) and the
 * numeric feature set of each context type.
 *
 * | context    | features                                                                 |
 * | ---------- | ------------------------------------------------------------------------ |
 * | `none`     | stage, and the progress of each stepped dimension from `easy` to `hard`   |
 * | `stats`    | + training success, agent success, path efficiency, mean success spread  |
 * | `failures` | + failure-type shares, mean failure-case features                        |
 * | `behavior` | + waiting, oscillation, detours, idle agents, deviations, progress at failure |
 * | `full`     | all of the above + history: stages seen, success change since the last stage |
 *
 * Every context type's features begin with `none`'s, so one model class
 * (the same data, the same budget) is fitted per context type on nested
 * feature sets.
 *
 * @module
 */
import { canonicalJson } from "@envsmith/engine/hash";
import {
  type EnvironmentFamily,
  progress,
  stepConfig,
} from "../families/family.ts";
import type { ContextType, EngineerContext } from "./context.ts";
import { FAILURE_TYPES } from "../schemas/findings.ts";

/** One candidate change: keep, or one step of `dim` (`dir` +1 harder, -1 easier). */
export interface Change {
  /** The stepped dimension, or `null` for keep. */
  readonly dim: string | null;
  /** +1 harder, -1 easier, 0 keep. */
  readonly dir: 1 | -1 | 0;
}

/** A candidate with the configuration it leads to. */
export interface Candidate<Config = unknown> {
  /** The change. */
  readonly change: Change;
  /** Its label: `keep`, `agents+`, `slip-`. */
  readonly label: string;
  /** The next configuration. */
  readonly config: Config;
}

/** The label of a change: `keep`, `agents+`, `slip-`. */
export function changeLabel(change: Change): string {
  return change.dim === null
    ? "keep"
    : `${change.dim}${change.dir > 0 ? "+" : "-"}`;
}

/** The dimensions a curriculum steps on `family`, in order. */
export function steppedDims(
  family: Pick<EnvironmentFamily, "stepped" | "dimensions">,
): readonly string[] {
  return family.stepped ?? family.dimensions.map((d) => d.path);
}

/**
 * The candidate changes of `config` on `family`: keep first, then each
 * stepped dimension one step harder and one step easier, in the family's
 * order; a step that changes nothing (at a bound) is left out. A mixture
 * is reduced to its leading component first, as the `band` engineer does.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { candidateChanges } from "./learned_features.ts";
 * import { mapfFrozenLake } from "../families/mapf_frozenlake/family.ts";
 * const cs = candidateChanges(mapfFrozenLake, mapfFrozenLake.presets.easy);
 * assert.equal(cs[0]!.label, "keep");
 * assert.ok(cs.some((c) => c.label === "agents+"));
 * ```
 */
export function candidateChanges<Config>(
  family: EnvironmentFamily<Config>,
  config: Config,
): Candidate<Config>[] {
  const c = family.leading?.(config) ?? config;
  const base = canonicalJson(c);
  const out: Candidate<Config>[] = [{
    change: { dim: null, dir: 0 },
    label: "keep",
    config: c,
  }];
  for (const dim of steppedDims(family)) {
    for (const dir of [1, -1] as const) {
      const next = stepConfig(family, c, dim, dir);
      if (canonicalJson(next) === base) continue;
      const change = { dim, dir };
      out.push({ change, label: changeLabel(change), config: next });
    }
  }
  return out;
}

/**
 * The change slot index of a change among every possible change of
 * `family` (keep = 0, then dimension i up = 1 + 2i, down = 2 + 2i), the
 * model's one-hot position; -1 for a dimension the family does not step.
 */
export function changeSlot(
  family: Pick<EnvironmentFamily, "stepped" | "dimensions">,
  change: Change,
): number {
  if (change.dim === null) return 0;
  const i = steppedDims(family).indexOf(change.dim);
  return i < 0 ? -1 : 1 + 2 * i + (change.dir > 0 ? 0 : 1);
}

/** Number of change slots of `family` (keep and two per stepped dimension). */
export function changeSlots(
  family: Pick<EnvironmentFamily, "stepped" | "dimensions">,
): number {
  return 1 + 2 * steppedDims(family).length;
}

/** A named feature vector. */
export interface Features {
  /** Feature names, in order. */
  readonly names: string[];
  /** Values (finite numbers), in the same order. */
  readonly values: number[];
}

const _finite = (x: number | null | undefined, fallback = 0) =>
  x === null || x === undefined || !Number.isFinite(x) ? fallback : x;

const _mean = (xs: readonly number[]) =>
  xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * The features a context of type `type` gives: nested, so `none`'s come
 * first in every type and `full` holds every other type's. Sections the
 * context lacks count as zeros (a context built without findings).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { contextFeatures } from "./learned_features.ts";
 * import { buildContext } from "./context.ts";
 * import { diagnose } from "./diagnose.ts";
 * import { mapfFrozenLake } from "../families/mapf_frozenlake/family.ts";
 * import { PRESETS } from "../schemas/env_config.ts";
 * const f = (t: "none" | "full") =>
 *   contextFeatures(t, buildContext(t, diagnose([]), PRESETS.easy, { stage: 1 }).json, mapfFrozenLake);
 * assert.ok(f("full").names.length > f("none").names.length);
 * assert.deepEqual(f("full").names.slice(0, f("none").names.length), f("none").names);
 * ```
 */
export function contextFeatures(
  type: ContextType,
  ctx: EngineerContext,
  family: EnvironmentFamily,
): Features {
  const names: string[] = [];
  const values: number[] = [];
  const add = (name: string, x: number | null | undefined) => {
    names.push(name);
    values.push(_finite(x));
  };
  const has = (s: ContextType) => type === s || type === "full";
  // none: configuration and stage
  add("stage", (ctx.stage ?? 0) / 10);
  const config = ctx.current.config as unknown;
  const lead = family.leading?.(config) ?? config;
  for (const d of steppedDims(family)) {
    add(`progress.${d}`, progress(family, lead, d));
  }
  if (has("stats")) {
    const s = ctx.stats;
    add("stats.success_rate", s?.success_rate);
    add("stats.agent_success_rate", s?.agent_success_rate);
    add("stats.efficiency", s?.efficiency.mean);
    add(
      "stats.spread",
      _mean((s?.dimensions ?? []).map((d) => _finite(d.spread))),
    );
  }
  if (has("failures")) {
    const f = ctx.failures;
    for (const t of FAILURE_TYPES) {
      add(`failures.share.${t}`, f?.failure_types[t] ?? 0);
    }
    const cases = f?.cases ?? [];
    add(
      "failures.cases.slipped",
      _mean(cases.map((c) => c.features.slipped ? 1 : 0)),
    );
    add(
      "failures.cases.narrow",
      _mean(cases.map((c) => c.features.narrow ? 1 : 0)),
    );
    add("failures.cases.crowd", _mean(cases.map((c) => c.features.crowd)) / 4);
    add(
      "failures.cases.recent_wait",
      _mean(cases.map((c) => c.features.recent_wait)),
    );
    add(
      "failures.cases.recent_oscillation",
      _mean(cases.map((c) => c.features.recent_oscillation ? 1 : 0)),
    );
  }
  if (has("behavior")) {
    const b = ctx.behavior;
    add("behavior.wait_fraction", b?.wait_fraction);
    add("behavior.oscillation_rate", b?.oscillation_rate);
    add("behavior.detour_ratio", _finite(b?.detour_ratio, 1) - 1);
    add("behavior.idle_agent_rate", b?.idle_agent_rate);
    add("behavior.deviation_rate", b?.deviation_rate);
    add("behavior.progress_at_failure", b?.progress_at_failure);
  }
  if (type === "full") {
    const h = ctx.history?.entries ?? [];
    add("history.stages", h.length / 10);
    const last = h[h.length - 1];
    add(
      "history.success_change",
      last === undefined ? 0 : _finite(ctx.stats?.success_rate) -
        last.success_rate,
    );
  }
  return { names, values };
}

/**
 * The model's input for one (context features, change) pair: the context
 * features, the one-hot change slot, and the context features times the
 * change's direction (so a linear model can prefer harder steps in some
 * contexts and easier ones in others).
 */
export function modelInput(
  context: readonly number[],
  slot: number,
  slots: number,
  dir: number,
): number[] {
  const onehot = Array.from({ length: slots }, (_, i) => i === slot ? 1 : 0);
  return [...context, ...onehot, ...context.map((x) => x * dir)];
}
