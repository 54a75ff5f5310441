/**
 * The `band` engineer: keep the learner inside a target-success band, the
 * rule of GenEnv's alpha-curriculum and of "zone of proximal development"
 * curricula: one difficulty step up when training success is above `hi`,
 * one step down (easier) when it is below `lo`, otherwise keep.
 *
 * - **Success** is the stage's training-rollout success
 *   (`stats.success_rate`, read from contexts `stats` and `full`); with no
 *   statistics (`none`, `failures`, `behavior`) the band keeps the config and
 *   says so.
 * - **Direction of a step** follows a declared `order` of the family's
 *   dimensions (default: the family's curriculum order;
 *   {@linkcode DEFAULT_BAND_ORDER} on MAPF-FrozenLake): up hardens the least
 *   developed dimension of the order (progress from the `easy` preset, ties in
 *   order), so the steps go round the order; down eases the most developed
 *   dimension (ties: the later in order), undoing the last kind of step.
 *   Down never goes below the `easy` preset on any dimension, and a dimension
 *   at its ceiling is skipped.
 * - One component: a mixture is reduced to its leading edge (the most
 *   developed component), which is what the band moves.
 *
 * Departures: the alpha-curriculum moves a continuous difficulty parameter
 * after every batch; here difficulty is a path of discrete one-step edits
 * (the family's curriculum step) and it moves once per stage, the engineer's granularity.
 * `lo = 0.9`, `hi = 0.95` are the band that moved in both directions on a
 * validation check at a small budget (`bench/band_check.yaml`; 0.5/0.8,
 * the earlier default, only ever stepped up: training success sits between
 * 0.77 and 1 after the first stage, and from `easy` a step down is
 * impossible); the order was not tuned (docs/engineers.md).
 *
 * @module
 */
import { canonicalJson } from "@envsmith/engine/hash";
import type { CurriculumDim } from "./config_ops.ts";
import {
  curriculumOrder,
  dimension,
  type EnvironmentFamily,
  progress,
  stepConfig,
} from "../families/family.ts";
import * as v from "valibot";
import type { Engineer, Proposal, ProposeInput } from "./engineer.ts";
import { EngineerConfigError, type EngineerKind } from "./engineer_kind.ts";

/** The default order of dimensions a band steps along. */
export const DEFAULT_BAND_ORDER: readonly CurriculumDim[] = [
  "agents",
  "interaction",
  "hole_density",
  "corridors",
  "size",
  "slip",
  "horizon",
];

/** Default band. */
export const DEFAULT_BAND = { lo: 0.9, hi: 0.95 } as const;

/** What the band decided. */
export interface BandMove<Config = unknown> {
  /** `up`, `down` or `keep`. */
  direction: "up" | "down" | "keep";
  /** The dimension stepped (null when kept or nothing could move). */
  dim: string | null;
  /** The next configuration (the leading component of the current one). */
  config: Config;
  /** Why, in one line. */
  why: string;
}

/**
 * The band's move for a success rate on `family` (exported for tests):
 * pure and deterministic.
 */
export function bandMove<Config>(
  current: Config,
  success: number | null,
  options: {
    lo: number;
    hi: number;
    order: readonly string[];
    family: EnvironmentFamily<Config>;
  },
): BandMove<Config> {
  const { lo, hi, order, family } = options;
  const c = family.leading?.(current) ?? current;
  const keep = (why: string): BandMove<Config> => ({
    direction: "keep",
    dim: null,
    config: c,
    why,
  });
  if (success === null) return keep("no training success in the context; kept");
  const s = success.toFixed(3);
  if (success >= lo && success <= hi) {
    return keep(`success ${s} inside the band [${lo}, ${hi}]; kept`);
  }
  const up = success > hi;
  const ranked = order.map((d, i) => ({ d, i, p: progress(family, c, d) }));
  ranked.sort((a, b) => up ? a.p - b.p || a.i - b.i : b.p - a.p || b.i - a.i);
  for (const { d, p } of ranked) {
    if (!up && p <= 1e-9) continue; // never easier than the easy preset
    const next = stepConfig(family, c, d, up ? 1 : -1);
    if (canonicalJson(next) === canonicalJson(c)) continue; // at a bound
    return {
      direction: up ? "up" : "down",
      dim: d,
      config: next,
      why: `success ${s} ${up ? "above hi" : "below lo"} ${
        up ? hi : lo
      }: ${d} one step ${up ? "harder" : "easier"} (progress ${
        p.toFixed(2)
      }, the ${up ? "least" : "most"} developed of the order)`,
    };
  }
  return keep(
    `success ${s} ${
      up ? "above hi" : "below lo"
    } but no dimension of the order can move ${up ? "up" : "down"}; kept`,
  );
}

/**
 * What is wrong with band parameters, in one line naming the parameter, or
 * null; `family` checks the order's dimensions.
 */
export function bandProblem(
  lo: number,
  hi: number,
  order: readonly string[],
  family?: Pick<EnvironmentFamily, "dimensions">,
): string | null {
  if (!(lo >= 0 && hi <= 1)) {
    return `lo and hi must lie in 0..1 (got lo ${lo}, hi ${hi})`;
  }
  if (lo > hi) {
    return `lo ${lo} > hi ${hi}: the band is empty; give lo <= hi`;
  }
  if (order.length === 0) return "order must name at least one dimension";
  for (const d of family === undefined ? [] : order) {
    if (dimension(family!, d) === undefined) {
      return `order: "${d}" is not a dimension of the family (${
        family!.dimensions.map((x) => x.path).join(", ")
      })`;
    }
  }
  return null;
}

/** Options of {@linkcode bandEngineer}. */
export interface BandOptions {
  /** The family whose dimensions the band steps. */
  family: EnvironmentFamily;
  /** Lower edge of the band. @default {0.9} */
  lo?: number;
  /** Upper edge of the band. @default {0.95} */
  hi?: number;
  /** Dimensions stepped, in order. @default the family's curriculum order */
  order?: readonly string[];
}

/**
 * The `band` engineer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bandEngineer } from "./band.ts";
 * import { mapfFrozenLake } from "../families/mapf_frozenlake/family.ts";
 * assert.equal(bandEngineer({ family: mapfFrozenLake }).name, "band");
 * ```
 */
export function bandEngineer(options: BandOptions): Engineer {
  const lo = options.lo ?? DEFAULT_BAND.lo;
  const hi = options.hi ?? DEFAULT_BAND.hi;
  const family = options.family;
  const order = options.order ?? curriculumOrder(family);
  const problem = bandProblem(lo, hi, order, family);
  if (problem !== null) throw new RangeError(problem);
  return {
    name: "band",
    propose(input: ProposeInput): Promise<Proposal> {
      const stats = input.context.json.stats;
      const success = stats === undefined ? null : stats.success_rate;
      const move = bandMove(input.config, success, { lo, hi, order, family });
      return Promise.resolve({
        config: move.config,
        rationale: `band engineer: ${move.why}.`,
        events: [{ type: "choice", detail: move.why }],
        reads: stats === undefined ? [] : ["stats.success_rate"],
        // per redesign, so a table's mean over stages is the share of moves
        report: {
          band: {
            direction: move.direction,
            dim: move.dim,
            success,
            up: move.direction === "up" ? 1 : 0,
            down: move.direction === "down" ? 1 : 0,
          },
        },
      });
    },
  };
}

const _unit = (name: string, what: string) =>
  v.optional(v.pipe(
    v.number(`${name} must be a number in 0..1`),
    v.minValue(0, `${name} must be at least 0`),
    v.maxValue(1, `${name} must be at most 1`),
    v.description(what),
  ));

/** The `band` engineer kind: `engineer: { name: band, lo?, hi?, order? }`. */
export const engineer: EngineerKind<
  { [K in keyof BandOptions]?: BandOptions[K] | undefined }
> = {
  name: "band",
  description:
    "target-success band: one step harder above hi, one step easier below lo, else keep; reads stats.success_rate",
  families: "any",
  params: v.strictObject({
    lo: _unit(
      "lo",
      `training success below which the band steps one step easier; default ${DEFAULT_BAND.lo}`,
    ),
    hi: _unit(
      "hi",
      `training success above which the band steps one step harder; default ${DEFAULT_BAND.hi}`,
    ),
    order: v.optional(v.pipe(
      v.array(v.string("order must list the family's dimensions")),
      v.minLength(1, "order must name at least one dimension"),
      v.description(
        `dimensions stepped, in order; default the family's curriculum order (mapf-frozenlake: ${
          DEFAULT_BAND_ORDER.join(", ")
        })`,
      ),
    )),
  }),
  module: import.meta.url,
  checkFamily(params, family) {
    const order = (params as { order?: unknown } | null)?.order;
    if (!Array.isArray(order)) return null;
    return bandProblem(0, 1, order.map(String), family);
  },
  fingerprint(params) {
    // lo <= hi is checked at plan: the parameter schema checks each field
    const p = (params ?? {}) as { lo?: unknown; hi?: unknown };
    const lo = typeof p.lo === "number" ? p.lo : DEFAULT_BAND.lo;
    const hi = typeof p.hi === "number" ? p.hi : DEFAULT_BAND.hi;
    if (lo > hi) {
      throw new EngineerConfigError(
        `engineer band: lo ${lo} > hi ${hi}: the band is empty; give lo <= hi`,
      );
    }
    return null;
  },
  create: (params, env) => {
    if (env.family === undefined) {
      throw new EngineerConfigError(
        "engineer band: no environment family given (a redesign node gives its family)",
      );
    }
    return bandEngineer({
      family: env.family,
      ...(params.lo === undefined ? {} : { lo: params.lo }),
      ...(params.hi === undefined ? {} : { hi: params.hi }),
      ...(params.order === undefined ? {} : { order: params.order }),
    });
  },
};
