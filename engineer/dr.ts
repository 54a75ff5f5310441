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
import {
  BOX_DIMS,
  boxConfig,
  boxProblem,
  type DrBox,
  sampleBox,
} from "../mapf/box.ts";
import * as v from "valibot";
import { buildMixture } from "./config_ops.ts";
import type { Engineer, Proposal, ProposeInput } from "./engineer.ts";
import type { EngineerKind } from "./engineer_kind.ts";
import { hashString, Rng } from "../mapf/rng.ts";

export {
  BOX_DIMS,
  boxConfig,
  type BoxDim,
  boxProblem,
  type DrBox,
  INTEGER_BOX_DIMS,
  sampleBox,
} from "../mapf/box.ts";

/**
 * The default box: the ranges the benchmark suites span (8x8 to 24x24 maps,
 * 2 to 8 agents, holes up to 0.35 with clustering up to 0.6, light walls,
 * corridors 0..1, slip up to 0.2, interaction 0..1, horizon 1.3 to 3 times
 * the reference makespan). Declared from the suites' definitions, never tuned
 * on a split; `experiments/paper.yaml` writes it out.
 */
export const DEFAULT_BOX: DrBox = {
  size: [8, 24],
  agents: [2, 8],
  hole_density: [0, 0.35],
  hole_clustering: [0, 0.6],
  walls: [0, 0.05],
  corridors: [0, 1],
  slip: [0, 0.2],
  interaction: [0, 1],
  horizon: [1.3, 3],
};

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
  /** The box. @default {DEFAULT_BOX} */
  box?: DrBox;
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
 * assert.equal(drEngineer().name, "dr-stage");
 * ```
 */
export function drEngineer(options: DrOptions = {}): Engineer {
  const box = options.box ?? DEFAULT_BOX;
  const draws = options.draws ?? DEFAULT_DRAWS;
  const problem = boxProblem(box);
  if (problem !== null) throw new RangeError(problem);
  if (!Number.isInteger(draws) || draws < 1 || draws > 16) {
    throw new RangeError(`draws must be an integer in 1..16 (got ${draws})`);
  }
  return {
    name: "dr-stage",
    propose(input: ProposeInput): Promise<Proposal> {
      // The config of stage s+1 is drawn after stage s; a redesign without a
      // stage draws the start configuration (stream 0).
      const stage = input.context.json.stage;
      const stream = stage === null ? 0 : stage + 1;
      const rng = new Rng(input.seed, hashString("dr-engineer"), stream);
      const config = drawBoxMixture(box, draws, rng);
      const dims = BOX_DIMS.filter((d) => box[d] !== undefined);
      return Promise.resolve({
        config,
        rationale:
          `dr engineer: ${draws} configurations drawn uniformly from the box (${
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

/** Schema of a box parameter (`dimension: [lo, hi]`), checked by {@linkcode boxProblem}. */
export const BoxSchema = v.pipe(
  v.record(v.string(), v.unknown()),
  v.check((b) => boxProblem(b) === null, (i) => boxProblem(i.input)!),
);

/** The `dr-stage` engineer kind: `engineer: { name: dr-stage, box?, draws? }`. */
export const engineer: EngineerKind<
  { box?: DrBox | undefined; draws?: number | undefined }
> = {
  name: "dr-stage",
  description:
    "domain randomisation: each stage trains on configurations drawn uniformly from a declared box; reads nothing",
  params: v.strictObject({
    box: v.optional(v.pipe(
      BoxSchema,
      v.description(
        `dimension -> [lo, hi] (${
          BOX_DIMS.join(", ")
        }); default: the range the benchmark suites span`,
      ),
    )) as unknown as v.OptionalSchema<
      v.GenericSchema<unknown, DrBox>,
      undefined
    >,
    draws: v.optional(v.pipe(
      v.number("draws must be an integer in 1..16"),
      v.integer("draws must be an integer in 1..16"),
      v.minValue(1, "draws must be at least 1"),
      v.maxValue(16, "draws must be at most 16 (the mixture limit)"),
      v.description("configurations drawn per stage (a mixture); default 16"),
    )),
  }),
  module: import.meta.url,
  create: (params) =>
    drEngineer({
      ...(params.box === undefined ? {} : { box: params.box }),
      ...(params.draws === undefined ? {} : { draws: params.draws }),
    }),
};
