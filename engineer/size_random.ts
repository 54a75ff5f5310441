/**
 * The `random` engineer of the per-size form: each stage a fresh form drawn
 * uniformly from the form's box (the paper's "GRPO on randomly drawn
 * configurations of the same space"): for every size a data ratio in 0..1,
 * a hole ratio in `0..max_hole_ratio` and a wait ratio in 0..1, rounded to
 * two decimals. Agents, hole mode and horizon are kept. Seeded by the
 * node's seed and the stage, so stages differ and runs repeat. It reads
 * nothing; on this form it is also what domain randomisation (`dr`) is:
 * the box is the form's, drawn once per stage, since a ratio is a property
 * of a stage's set and not of one instance.
 *
 * @module
 */
import * as v from "valibot";
import {
  SIZE_FORM_BOUNDS,
  SIZE_KEYS,
  type SizeKey,
  type SizeRatios,
} from "../schemas/size_form.ts";
import { hashString, Rng } from "../mapf/rng.ts";
import type { SizeEngineerKind } from "./size_engineer.ts";

/** Parameters of the random form engineer. */
export interface SizeRandomParams {
  /** Largest hole ratio drawn. @default 0.3 */
  max_hole_ratio?: number | undefined;
}

function _r2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** The `random` form engineer kind. */
export const sizeEngineer: SizeEngineerKind<SizeRandomParams> = {
  name: "random",
  description:
    "draws a fresh per-size form each stage, uniformly from the form's box; reads nothing",
  params: v.strictObject({
    max_hole_ratio: v.optional(v.pipe(
      v.number(),
      v.minValue(0),
      v.maxValue(SIZE_FORM_BOUNDS.hole_ratio.max),
      v.description("largest hole ratio drawn (0..0.6, default 0.3)"),
    )),
  }),
  module: import.meta.url,
  create: (params) => ({
    name: "random",
    propose(input) {
      const rng = new Rng(
        input.seed,
        hashString("size-random-engineer"),
        input.context.json.stage ?? 0,
      );
      const maxHole = params.max_hole_ratio ?? 0.3;
      const sizes = {} as Record<SizeKey, SizeRatios>;
      for (const k of SIZE_KEYS) {
        sizes[k] = {
          data_ratio: _r2(rng.float()),
          hole_ratio: _r2(rng.float() * maxHole),
          wait_ratio: _r2(rng.float()),
        };
      }
      // never all zero: the largest-drawn size keeps a share
      if (SIZE_KEYS.every((k) => sizes[k].data_ratio === 0)) {
        sizes["3x3"] = { ...sizes["3x3"], data_ratio: 0.01 };
      }
      return Promise.resolve({
        form: { ...input.form, sizes },
        rationale:
          `random engineer: a fresh form drawn from the box (hole ratios up to ${maxHole}).`,
        events: [],
        reads: [],
      });
    },
  }),
};
