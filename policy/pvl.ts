/**
 * Positive value loss (PVL, Jiang et al. 2021): the score robust PLR and
 * ACCEL rank levels by. A level's PVL is the mean over its agent-steps of
 * `max(A_t, 0)`, with `A_t` the GAE advantage before normalisation.
 *
 * This is the one place it is computed: the trainer accumulates it per
 * instance while it trains (`Trainer.levelScores`, and so the level
 * sampler), and `scoreLevels` while it rolls a policy out with no learning;
 * both call {@linkcode accumulatePositiveAdvantages} and
 * {@linkcode positiveValueLoss}, so a level's score means the same wherever
 * it was measured.
 *
 * @module
 */

/**
 * Add every valid sample's positive advantage to its level's sum and count
 * the sample as one agent-step of that level: for `i < n` with `valid[i]`
 * (every `i` when `valid` is null), `steps[level(i)] += 1` and, when
 * `advantages[i] > 0`, `positive[level(i)] += advantages[i]`. `level` is
 * one index per sample or one index for all.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { accumulatePositiveAdvantages, positiveValueLoss } from "./pvl.ts";
 * const pos = new Float64Array(2), steps = new Float64Array(2);
 * accumulatePositiveAdvantages(
 *   Float32Array.of(0.5, -1, 0.25, 2),
 *   null,
 *   Int32Array.of(0, 0, 1, 1),
 *   4,
 *   pos,
 *   steps,
 * );
 * assert.deepEqual(Array.from(positiveValueLoss(pos, steps)), [0.25, 1.125]);
 * ```
 */
export function accumulatePositiveAdvantages(
  advantages: ArrayLike<number>,
  valid: ArrayLike<number> | null,
  level: ArrayLike<number> | number,
  n: number,
  positive: Float64Array,
  steps: Float64Array,
): void {
  const one = typeof level === "number";
  for (let i = 0; i < n; i++) {
    if (valid !== null && !valid[i]) continue;
    const l = one ? level : level[i]!;
    steps[l] = steps[l]! + 1;
    const a = advantages[i]!;
    if (a > 0) positive[l] = positive[l]! + a;
  }
}

/** Per level, `positive / steps` (0 for a level with no step). */
export function positiveValueLoss(
  positive: Float64Array,
  steps: Float64Array,
): Float64Array {
  const out = new Float64Array(positive.length);
  for (let i = 0; i < out.length; i++) {
    const n = steps[i]!;
    out[i] = n > 0 ? positive[i]! / n : 0;
  }
  return out;
}
