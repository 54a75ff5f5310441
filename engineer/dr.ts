/**
 * The `dr` engineer: domain randomisation (Tobin et al. 2017; the
 * "unexpectedly competitive" baseline of JaxUED and minimax on mazes).
 *
 * Every stage trains on configurations drawn independently and uniformly
 * from a declared box of the configuration space ({@linkcode DrBox}): each
 * box dimension is an inclusive range, integer dimensions (`size`,
 * `agents`) uniform over their integers, the others uniform over the real
 * interval. Dimensions the box leaves out keep the `easy` preset's value.
 * It reads nothing from the context and never looks at the policy.
 *
 * Departure from the source, and why: DR draws a fresh configuration for
 * every episode. Here a stage's environment set is generated from one
 * configuration value, a mixture of at most 16 components (the schema's
 * limit), so each stage draws `draws` (default 16) independent points of the
 * box, at equal weight, and the `generate` node draws each training instance
 * from one of them: 16 fresh points a stage, 96 over a 6-stage run, instead of
 * one point per instance. The start stage is drawn the same way (redesign
 * without a stage), so no stage trains on a configuration outside the box.
 *
 * `size` sets width and height together (square maps) and the start-goal
 * distance range `{ min: 2, max: round(1.5 size) }`; `horizon` is the factor
 * of the reference makespan.
 *
 * @module
 */
import type { AnyEnvConfig } from "../schemas/env_config.ts";
import { BOX_DIMS, boxConfig, type DrBox, sampleBox } from "../mapf/box.ts";
import * as v from "valibot";
import { buildMixture } from "./config_ops.ts";
import type { Engineer, Proposal, ProposeInput } from "./engineer.ts";
import { EngineerConfigError, type EngineerKind } from "./engineer_kind.ts";
import { hashString, Rng } from "../mapf/rng.ts";
import type { EnvironmentFamily } from "../families/family.ts";

export {
  BOX_DIMS,
  boxConfig,
  type BoxDim,
  boxProblem,
  DEFAULT_BOX,
  type DrBox,
  INTEGER_BOX_DIMS,
  sampleBox,
} from "../mapf/box.ts";

/** A box of a family: dimension -> inclusive `[lo, hi]`. */
export type FamilyBox = Readonly<Record<string, readonly [number, number]>>;

/** The box `family` randomises over by default: its own, or every dimension over its bounds. */
export function defaultBox(family: EnvironmentFamily): FamilyBox {
  return family.box ??
    Object.fromEntries(family.dimensions.map((d) => [d.path, [d.min, d.max]]));
}

/**
 * What is wrong with a box on `family`, in one line naming the dimension,
 * or null: the family's own check first (MAPF-FrozenLake's names its
 * dimensions and corners), then every range `[lo, hi]` a declared
 * dimension's, with `lo <= hi`, integer ends on integer dimensions and both
 * ends inside the dimension's bounds.
 */
export function familyBoxProblem(
  family: EnvironmentFamily,
  box: unknown,
  where = "box",
): string | null {
  const dims = family.dimensions.map((d) => d.path).join(", ");
  if (typeof box !== "object" || box === null || Array.isArray(box)) {
    return `${where} must be a mapping of dimension -> [lo, hi] (dimensions: ${dims})`;
  }
  const own = family.boxProblem?.(box as Record<string, unknown>) ?? null;
  if (own !== null) return own;
  const entries = Object.entries(box);
  if (entries.length === 0) {
    return `${where} is empty: give at least one dimension -> [lo, hi] (dimensions: ${dims})`;
  }
  for (const [k, r] of entries) {
    const d = family.dimensions.find((x) => x.path === k);
    if (d === undefined) {
      return `${where}.${k} is not a dimension of ${family.name} (dimensions: ${dims})`;
    }
    if (
      !Array.isArray(r) || r.length !== 2 ||
      !r.every((x) => typeof x === "number" && Number.isFinite(x))
    ) {
      return `${where}.${k} must be [lo, hi], two numbers (got ${
        JSON.stringify(r)
      })`;
    }
    const [a, b] = r as [number, number];
    if (a > b) {
      return `${where}.${k} is inverted: [${a}, ${b}] has lo > hi; write [${b}, ${a}]`;
    }
    if (d.integer && (!Number.isInteger(a) || !Number.isInteger(b))) {
      return `${where}.${k} must have integer ends (got [${a}, ${b}])`;
    }
    if (a < d.min || b > d.max) {
      return `${where}.${k} = [${a}, ${b}] leaves the dimension's bounds ${d.min}..${d.max}`;
    }
  }
  return null;
}

// 6 decimals: coarser rounding would bias narrow ranges
function _round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

/**
 * One uniform point of a box as a configuration of `family`: dimensions
 * drawn in the family's declared order (integers uniform over their
 * integers, reals uniform over the interval, rounded to 6 decimals) and set
 * on the `easy` preset.
 */
export function sampleFamilyBox<Config>(
  family: EnvironmentFamily<Config>,
  box: FamilyBox,
  rng: Rng,
): Config {
  let c: Config = family.presets.easy as Config;
  for (const d of family.dimensions) {
    const r = box[d.path];
    if (r === undefined) continue;
    const [lo, hi] = r;
    const x = d.integer
      ? lo + rng.int(hi - lo + 1)
      : _round(lo + (hi - lo) * rng.float());
    c = family.set(c, d.path, x);
  }
  return c;
}

/** Draws per stage by default (the mixture limit). */
export const DEFAULT_DRAWS = 16;

/**
 * `draws` independent uniform points of a box as an equal-weight mixture
 * (equal points merge, their weights add).
 */
export function drawBoxMixture(
  box: DrBox,
  draws: number,
  rng: Rng,
): AnyEnvConfig {
  const parts = [];
  for (let i = 0; i < draws; i++) {
    parts.push({ weight: 1, config: boxConfig(sampleBox(box, rng)) });
  }
  return buildMixture(parts, { maxComponents: 16 });
}

/** Options of {@linkcode drEngineer}. */
export interface DrOptions {
  /** The family whose space the box is in. */
  family: EnvironmentFamily;
  /** The box. @default the family's default box */
  box?: FamilyBox;
  /** Points drawn per stage (1..16). @default {16} */
  draws?: number;
}

/**
 * The `dr` engineer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { drEngineer } from "./dr.ts";
 * import { mapfFrozenLake } from "../families/mapf_frozenlake/family.ts";
 * assert.equal(drEngineer({ family: mapfFrozenLake }).name, "dr-stage");
 * ```
 */
export function drEngineer(options: DrOptions): Engineer {
  const family = options.family;
  const box = options.box ?? defaultBox(family);
  const draws = options.draws ?? DEFAULT_DRAWS;
  const problem = familyBoxProblem(family, box);
  if (problem !== null) throw new RangeError(problem);
  if (!Number.isInteger(draws) || draws < 1 || draws > 16) {
    throw new RangeError(`draws must be an integer in 1..16 (got ${draws})`);
  }
  const dims = family.dimensions.map((d) => d.path).filter((d) =>
    box[d] !== undefined
  );
  return {
    name: "dr-stage",
    propose(input: ProposeInput): Promise<Proposal> {
      // The config of stage s+1 is drawn after stage s; a redesign without a
      // stage draws the start configuration (stream 0).
      const stage = input.context.json.stage;
      const stream = stage === null ? 0 : stage + 1;
      const rng = new Rng(input.seed, hashString("dr-engineer"), stream);
      const parts = [];
      for (let i = 0; i < draws; i++) {
        parts.push({ weight: 1, config: sampleFamilyBox(family, box, rng) });
      }
      // a family without mixtures trains on the first draw
      const config = family.mix?.(parts) ?? parts[0]!.config;
      return Promise.resolve({
        config: config as AnyEnvConfig,
        rationale: `dr engineer: ${
          family.mix === undefined ? 1 : draws
        } configurations drawn uniformly from the box (${
          dims.map((d) => `${d} ${box[d]![0]}..${box[d]![1]}`).join(", ")
        }), stream ${stream}; the context is not read.`,
        events: [{
          type: "choice",
          detail:
            `drew ${draws} independent uniform points of a ${dims.length}-dimensional box (stream ${stream})`,
        }],
        reads: [],
      });
    },
  };
}

/** Schema of a box parameter (`dimension: [lo, hi]`); the family checks it at plan. */
export const BoxSchema = v.record(
  v.string(),
  v.tuple([v.number(), v.number()], "a box range is [lo, hi], two numbers"),
);

/** The `dr-stage` engineer kind: `engineer: { name: dr-stage, box?, draws? }`. */
export const engineer: EngineerKind<
  { box?: FamilyBox | undefined; draws?: number | undefined }
> = {
  name: "dr-stage",
  description:
    "domain randomisation: each stage trains on configurations drawn uniformly from a declared box; reads nothing",
  families: "any",
  params: v.strictObject({
    box: v.optional(v.pipe(
      BoxSchema,
      v.description(
        `dimension -> [lo, hi] of the family's dimensions (mapf-frozenlake: ${
          BOX_DIMS.join(", ")
        }); default: the family's box (mapf-frozenlake: the range the benchmark suites span; others: every dimension over its bounds)`,
      ),
    )),
    draws: v.optional(v.pipe(
      v.number("draws must be an integer in 1..16"),
      v.integer("draws must be an integer in 1..16"),
      v.minValue(1, "draws must be at least 1"),
      v.maxValue(16, "draws must be at most 16 (the mixture limit)"),
      v.description("configurations drawn per stage (a mixture); default 16"),
    )),
  }),
  module: import.meta.url,
  checkFamily(params, family) {
    const box = (params as { box?: unknown } | null)?.box;
    return box === undefined ? null : familyBoxProblem(family, box);
  },
  create: (params, env) => {
    if (env.family === undefined) {
      throw new EngineerConfigError(
        "engineer dr-stage: no environment family given (a redesign node gives its family)",
      );
    }
    const problem = params.box === undefined
      ? null
      : familyBoxProblem(env.family, params.box);
    if (problem !== null) {
      throw new EngineerConfigError(`engineer dr-stage: ${problem}`);
    }
    return drEngineer({
      family: env.family,
      ...(params.box === undefined ? {} : { box: params.box }),
      ...(params.draws === undefined ? {} : { draws: params.draws }),
    });
  },
};
