/**
 * The reward coefficients a node accepts (`train`, and `redesign` for the
 * engineers that score levels with the trainer's reward): each optional, see
 * `policy/reward.ts` for their meaning and defaults.
 *
 * @module
 */
import * as v from "valibot";

const num = (min: number, max: number) =>
  v.pipe(v.number(), v.minValue(min), v.maxValue(max));

/** Reward coefficients (each optional). */
export const RewardParamsSchema = v.strictObject({
  goal: v.optional(num(-100, 100)),
  progress: v.optional(num(-100, 100)),
  hole: v.optional(num(-100, 100)),
  collision: v.optional(num(-100, 100)),
  blocked: v.optional(num(-100, 100)),
  step: v.optional(num(-100, 100)),
  success: v.optional(num(-100, 100)),
  failure: v.optional(num(-100, 100)),
});
