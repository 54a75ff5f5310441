/**
 * The reward coefficients of MAPF-FrozenLake training and their defaults
 * (what each term means: `reward.ts`, which computes the rewards). Apart
 * from the dynamics, so the trainer can fill in its options without
 * importing any family's code.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rewardSpec } from "./reward_spec.ts";
 * assert.equal(rewardSpec({ goal: 2 }).goal, 2);
 * assert.equal(rewardSpec().progress, 0.1);
 * ```
 *
 * @module
 */

/** Reward coefficients; see `reward.ts` for what each term means. */
export interface RewardSpec {
  /** Arriving on the goal. @default 1 */
  readonly goal: number;
  /** Per move of shortest-path progress. @default 0.1 */
  readonly progress: number;
  /** Falling into a hole. @default -1 */
  readonly hole: number;
  /** Taking part in a collision (mode `fail`). @default -1 */
  readonly collision: number;
  /** Having a move cancelled (mode `block`). @default -0.05 */
  readonly blocked: number;
  /** Each step before arriving. @default -0.01 */
  readonly step: number;
  /** Team bonus on success. @default 0 */
  readonly success: number;
  /** Team penalty on failure (hole, collision, timeout). @default 0 */
  readonly failure: number;
}

/** The default reward coefficients. */
export const DEFAULT_REWARD: RewardSpec = {
  goal: 1,
  progress: 0.1,
  hole: -1,
  collision: -1,
  blocked: -0.05,
  step: -0.01,
  success: 0,
  failure: 0,
};

/** Fill in defaults for a partial reward spec. */
export function rewardSpec(partial: Partial<RewardSpec> = {}): RewardSpec {
  const out = { ...DEFAULT_REWARD, ...partial };
  for (const [k, v] of Object.entries(out)) {
    if (typeof v !== "number" || !Number.isFinite(v) || Math.abs(v) > 100) {
      throw new RangeError(
        `Reward coefficient "${k}" must be a finite number in -100..100 (got ${v})`,
      );
    }
  }
  return out;
}
