/**
 * Intervals and tests read off a bootstrap distribution (the resampled
 * values of a statistic, sorted): the percentile interval, the BCa interval
 * (bias-corrected and accelerated, Efron and Tibshirani 1993, ch. 14; the
 * acceleration of a statistic resampled over several independent samples,
 * e.g. seeds and the instances of each suite, from its empirical influence
 * values, their eq. 14.15 for several samples), the two-sided bootstrap
 * p-value of a null value (the smallest α whose (1 − α) percentile interval
 * excludes it), and the two one-sided p-values of an equivalence test
 * (TOST) with margin ±M.
 *
 * @module
 */
import { normalCdf, normalQuantile } from "./normal_distribution.ts";

/**
 * The q-quantile of sorted values, linear between order statistics (the
 * usual definition: position q·(B − 1)).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { quantileOfSorted } from "./bootstrap_interval.ts";
 * assert.equal(quantileOfSorted(Float64Array.of(0, 1, 2, 3, 4), 0.25), 1);
 * ```
 */
export function quantileOfSorted(sorted: Float64Array, q: number): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  const pos = Math.min(1, Math.max(0, q)) * (n - 1);
  const i = Math.floor(pos), f = pos - i;
  return f === 0 ? sorted[i]! : sorted[i]! + f * (sorted[i + 1]! - sorted[i]!);
}

/** The two-sided percentile interval at `level`. */
export function percentileInterval(
  sorted: Float64Array,
  level: number,
): [number, number] {
  const a = (1 - level) / 2;
  return [quantileOfSorted(sorted, a), quantileOfSorted(sorted, 1 - a)];
}

/**
 * The acceleration of a statistic resampled over independent samples, each
 * given as its empirical influence values U (for a mean over n units, the
 * units' deviations from the mean, scaled by the statistic's weight):
 * a = Σ_k Σ_i U³/n_k³ / (6 (Σ_k Σ_i U²/n_k²)^{3/2}); 0 when the
 * influence is 0.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { acceleration } from "./bootstrap_interval.ts";
 * // one sample: Σ U³ / (6 (Σ U²)^{3/2})
 * assert.equal(acceleration([Float64Array.of(-1, -1, 2)]).toFixed(6),
 *   (6 / (6 * 6 ** 1.5)).toFixed(6));
 * ```
 */
export function acceleration(samples: readonly Float64Array[]): number {
  let num = 0, den = 0;
  for (const u of samples) {
    const n = u.length;
    if (n === 0) continue;
    let s2 = 0, s3 = 0;
    for (let i = 0; i < n; i++) {
      const x = u[i]!;
      s2 += x * x;
      s3 += x * x * x;
    }
    num += s3 / n ** 3;
    den += s2 / n ** 2;
  }
  return den > 0 ? num / (6 * den ** 1.5) : 0;
}

/**
 * The BCa interval: the percentile interval at the levels
 * Φ(z0 + (z0 + z_α) / (1 − a (z0 + z_α))), with the bias correction z0 =
 * Φ⁻¹(share of resamples below the estimate, ties counted half) and the
 * acceleration `a`. Falls back to the percentile interval when z0 is not
 * finite (every resample on one side).
 */
export function bcaInterval(
  sorted: Float64Array,
  estimate: number,
  a: number,
  level: number,
): [number, number] {
  const B = sorted.length;
  let below = 0, equal = 0;
  for (let i = 0; i < B; i++) {
    if (sorted[i]! < estimate) below++;
    else if (sorted[i]! === estimate) equal++;
  }
  const z0 = normalQuantile((below + equal / 2) / B);
  if (!Number.isFinite(z0)) return percentileInterval(sorted, level);
  const adj = (alpha: number) => {
    const z = z0 + normalQuantile(alpha);
    return normalCdf(z0 + z / (1 - a * z));
  };
  const alpha = (1 - level) / 2;
  return [
    quantileOfSorted(sorted, adj(alpha)),
    quantileOfSorted(sorted, adj(1 - alpha)),
  ];
}

/** Resamples at or below `x` and at or above `x` (binary search on sorted values). */
function _tails(sorted: Float64Array, x: number): [number, number] {
  const B = sorted.length;
  let lo = 0, hi = B;
  while (lo < hi) { // first index with sorted[i] > x
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  const atOrBelow = lo;
  lo = 0;
  hi = B;
  while (lo < hi) { // first index with sorted[i] >= x
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return [atOrBelow, B - lo];
}

/**
 * The two-sided bootstrap p-value of `nullValue`: min(1, 2 min(1 + #{θ* ≤
 * null}, 1 + #{θ* ≥ null}) / (B + 1)). It is below α exactly when (up to
 * the +1) the (1 − α) percentile interval excludes the null value; its
 * smallest value is 2 / (B + 1).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrapP } from "./bootstrap_interval.ts";
 * // 1 of 9 resamples at or below 0: 2 · 2 / 10
 * assert.equal(bootstrapP(Float64Array.of(-1, 1, 2, 3, 4, 5, 6, 7, 8), 0), 0.4);
 * ```
 */
export function bootstrapP(sorted: Float64Array, nullValue: number): number {
  const B = sorted.length;
  if (B === 0) return 1;
  const [below, above] = _tails(sorted, nullValue);
  return Math.min(1, (2 * (1 + Math.min(below, above))) / (B + 1));
}

/**
 * The two one-sided tests of equivalence within ±margin, from the
 * bootstrap distribution of a difference: `lower` tests H0 Δ ≤ −margin
 * (share of resamples at or below −margin), `upper` tests H0 Δ ≥ +margin;
 * `p` is the larger. Equivalence is shown at level α when p < α, which is
 * the (1 − 2α) percentile interval lying inside (−margin, +margin).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tostFromResamples } from "./bootstrap_interval.ts";
 * const r = tostFromResamples(Float64Array.of(-0.5, -0.2, 0, 0.1, 0.3, 0.6), 0.55);
 * assert.deepEqual([r.lower, r.upper], [1 / 7, 2 / 7]);
 * ```
 */
export function tostFromResamples(
  sorted: Float64Array,
  margin: number,
): { lower: number; upper: number; p: number } {
  const B = sorted.length;
  const lower = (1 + _tails(sorted, -margin)[0]) / (B + 1);
  const upper = (1 + _tails(sorted, margin)[1]) / (B + 1);
  return { lower, upper, p: Math.max(lower, upper) };
}
