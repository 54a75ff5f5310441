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
 * - **Direction of a step** follows a declared `order` of curriculum
 *   dimensions ({@linkcode DEFAULT_BAND_ORDER}): up hardens the least
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
 * ({@linkcode step}) and it moves once per stage, the engineer's granularity.
 * `lo = 0.9`, `hi = 0.95` are the band that moved in both directions on a
 * validation check at a small budget (`bench/band_check.yaml`; 0.5/0.8,
 * the earlier default, only ever stepped up: training success sits between
 * 0.77 and 1 after the first stage, and from `easy` a step down is
 * impossible); the order was not tuned (docs/engineers.md).
 *
 * @module
 */
import type { AnyEnvConfig, EnvConfig } from "../schemas/env_config.ts";
import { configId } from "../schemas/env_config.ts";
import {
  CURRICULUM_DIMS,
  type CurriculumDim,
  frontier,
  progress,
  step,
} from "./config_ops.ts";
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
export interface BandMove {
  /** `up`, `down` or `keep`. */
  direction: "up" | "down" | "keep";
  /** The dimension stepped (null when kept or nothing could move). */
  dim: CurriculumDim | null;
  /** The next component. */
  config: EnvConfig;
  /** Why, in one line. */
  why: string;
}

/**
 * The band's move for a success rate (exported for tests): pure and
 * deterministic.
 */
export function bandMove(
  current: AnyEnvConfig,
  success: number | null,
  options: { lo: number; hi: number; order: readonly CurriculumDim[] },
): BandMove {
  const { lo, hi, order } = options;
  const c = frontier(current);
  if (success === null) {
    return {
      direction: "keep",
      dim: null,
      config: c,
      why: "no training success in the context; kept",
    };
  }
  const s = success.toFixed(3);
  if (success >= lo && success <= hi) {
    return {
      direction: "keep",
      dim: null,
      config: c,
      why: `success ${s} inside the band [${lo}, ${hi}]; kept`,
    };
  }
  const up = success > hi;
  const ranked = order.map((d, i) => ({ d, i, p: progress(c, d) }));
  ranked.sort((a, b) => up ? a.p - b.p || a.i - b.i : b.p - a.p || b.i - a.i);
  for (const { d, p } of ranked) {
    if (!up && p <= 1e-9) continue; // never easier than the easy preset
    const next = step(c, d, up ? 1 : -1);
    if (configId(next) === configId(c)) continue; // at a bound
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
  return {
    direction: "keep",
    dim: null,
    config: c,
    why: `success ${s} ${
      up ? "above hi" : "below lo"
    } but no dimension of the order can move ${up ? "up" : "down"}; kept`,
  };
}

/** What is wrong with band parameters, in one line naming the parameter, or null. */
export function bandProblem(
  lo: number,
  hi: number,
  order: readonly string[],
): string | null {
  if (!(lo >= 0 && hi <= 1)) {
    return `lo and hi must lie in 0..1 (got lo ${lo}, hi ${hi})`;
  }
  if (lo > hi) {
    return `lo ${lo} > hi ${hi}: the band is empty; give lo <= hi`;
  }
  if (order.length === 0) return "order must name at least one dimension";
  for (const d of order) {
    if (!(CURRICULUM_DIMS as readonly string[]).includes(d)) {
      return `order: "${d}" is not a curriculum dimension (${
        CURRICULUM_DIMS.join(", ")
      })`;
    }
  }
  return null;
}

/** Options of {@linkcode bandEngineer}. */
export interface BandOptions {
  /** Lower edge of the band. @default {0.9} */
  lo?: number;
  /** Upper edge of the band. @default {0.95} */
  hi?: number;
  /** Dimensions stepped, in order. @default {DEFAULT_BAND_ORDER} */
  order?: readonly CurriculumDim[];
}

/**
 * The `band` engineer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bandEngineer } from "./band.ts";
 * assert.equal(bandEngineer().name, "band");
 * ```
 */
export function bandEngineer(options: BandOptions = {}): Engineer {
  const lo = options.lo ?? DEFAULT_BAND.lo;
  const hi = options.hi ?? DEFAULT_BAND.hi;
  const order = options.order ?? DEFAULT_BAND_ORDER;
  const problem = bandProblem(lo, hi, order);
  if (problem !== null) throw new RangeError(problem);
  return {
    name: "band",
    propose(input: ProposeInput): Promise<Proposal> {
      const stats = input.context.json.stats;
      const success = stats === undefined ? null : stats.success_rate;
      const move = bandMove(input.config, success, { lo, hi, order });
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
      v.array(v.picklist(
        CURRICULUM_DIMS,
        `order must list curriculum dimensions: ${CURRICULUM_DIMS.join(", ")}`,
      )),
      v.minLength(1, "order must name at least one dimension"),
      v.description(
        `dimensions stepped, in order; default ${
          DEFAULT_BAND_ORDER.join(", ")
        }`,
      ),
    )),
  }),
  module: import.meta.url,
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
  create: (params) =>
    bandEngineer({
      ...(params.lo === undefined ? {} : { lo: params.lo }),
      ...(params.hi === undefined ? {} : { hi: params.hi }),
      ...(params.order === undefined ? {} : { order: params.order }),
    }),
};
