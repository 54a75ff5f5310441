/**
 * Aggregates of run scores recommended by Agarwal et al. (2021, "Deep RL at
 * the edge of the statistical precipice", the rliable library), on typed
 * arrays:
 *
 * - the interquartile mean (IQM): the mean of the middle half of the
 *   scores of all runs and tasks pooled, as `scipy.stats.trim_mean(x,
 *   0.25)` (floor(n/4) scores cut at each end);
 * - the probability of improvement P(X > Y): per task, the share of
 *   (run of X, run of Y) pairs where X scores higher, ties counted half
 *   (the Mann-Whitney U statistic over n·m), averaged over tasks;
 * - the performance profile (run-score distribution): the share of runs
 *   scoring above τ, for each τ.
 *
 * Their intervals come from the table's crossed bootstrap.
 *
 * @module
 */

/**
 * The interquartile mean: sorts `scratch` (a copy of the scores; it is
 * overwritten) and averages the middle, cutting floor(n/4) at each end.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { interquartileMean } from "./rliable_aggregates.ts";
 * assert.equal(interquartileMean(Float64Array.of(8, 1, 7, 2, 6, 3, 5, 4)), 4.5);
 * ```
 */
export function interquartileMean(scratch: Float64Array): number {
  const n = scratch.length;
  if (n === 0) return NaN;
  scratch.sort();
  const cut = Math.floor(n * 0.25);
  let s = 0;
  for (let i = cut; i < n - cut; i++) s += scratch[i]!;
  return s / (n - 2 * cut);
}

/**
 * P(X > Y) averaged over tasks: `x` and `y` hold task-major scores
 * (`x[t * nx + i]`: run i of X on task t), `tasks` tasks.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { probabilityOfImprovement } from "./rliable_aggregates.ts";
 * // one task: X = {1, 3}, Y = {2, 3}: pairs 1>2 no, 1>3 no, 3>2 yes, 3=3 half
 * assert.equal(probabilityOfImprovement(Float64Array.of(1, 3), Float64Array.of(2, 3), 1), 0.375);
 * ```
 */
export function probabilityOfImprovement(
  x: Float64Array,
  y: Float64Array,
  tasks: number,
): number {
  const nx = x.length / tasks, ny = y.length / tasks;
  if (tasks === 0 || nx === 0 || ny === 0) return NaN;
  let total = 0;
  for (let t = 0; t < tasks; t++) {
    let wins = 0;
    for (let i = 0; i < nx; i++) {
      const a = x[t * nx + i]!;
      for (let j = 0; j < ny; j++) {
        const b = y[t * ny + j]!;
        wins += a > b ? 1 : a === b ? 0.5 : 0;
      }
    }
    total += wins / (nx * ny);
  }
  return total / tasks;
}

/**
 * The performance profile of pooled run scores: for each τ of `taus`, the
 * share of scores strictly above τ. Sorts `scratch` (overwritten); writes
 * into `out` (length of `taus`), which is returned.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { performanceProfile } from "./rliable_aggregates.ts";
 * const p = performanceProfile(Float64Array.of(0.2, 0.9, 0.5, 0.5), [0, 0.5, 0.95]);
 * assert.deepEqual([...p], [1, 0.25, 0]);
 * ```
 */
export function performanceProfile(
  scratch: Float64Array,
  taus: readonly number[],
  out: Float64Array = new Float64Array(taus.length),
): Float64Array {
  const n = scratch.length;
  scratch.sort();
  let i = 0;
  taus.forEach((tau, k) => {
    // taus ascending: advance past scores ≤ τ
    if (k > 0 && tau < taus[k - 1]!) i = 0;
    while (i < n && scratch[i]! <= tau) i++;
    out[k] = n > 0 ? (n - i) / n : NaN;
  });
  return out;
}
