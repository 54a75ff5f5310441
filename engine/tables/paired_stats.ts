/**
 * Paired comparisons for tables: the difference between a variant and a
 * baseline measured on the same pairing units (usually seeds), with a 95 %
 * bootstrap confidence interval, an exact sign-flip (permutation) p-value,
 * and Holm's step-down adjustment over a family of comparisons.
 *
 * - **Interval**: a percentile bootstrap over pairs; when the pairs carry
 *   per-instance values (evaluation outcomes on the same instances for both
 *   sides), each resampled pair also resamples its instances (the same
 *   instance indices for both sides, so the instance pairing is kept), so
 *   evaluation noise is part of the interval. Seeded: the same inputs give
 *   the same interval.
 * - **p-value**: under the null hypothesis each pair's difference is as
 *   likely to have either sign; the p-value is the share of the 2^n sign
 *   assignments whose mean difference is at least as far from 0 as the one
 *   observed (two-sided). Exact up to 20 pairs (about a million
 *   assignments), a seeded Monte Carlo estimate beyond. With n pairs it
 *   cannot go below 2 / 2^n: 5 pairs or fewer can never reach p < 0.05
 *   ({@linkcode minSignFlipP}).
 * - **Holm**: adjusted p-values that control the family-wise error rate.
 *
 * Means and quantiles come from `simple-statistics`.
 *
 * @module
 */
import { mean, quantileSorted } from "simple-statistics";

/** One pair: the variant's and the baseline's value for one pairing unit. */
export interface Pair {
  /** The variant's value. */
  readonly a: number;
  /** The baseline's value. */
  readonly b: number;
  /**
   * Per-instance values behind `a` and `b`, in groups (e.g. one group per
   * benchmark suite): the pair's value is the mean over groups of the mean
   * over the group's instances. Groups of equal length are resampled with
   * the same indices on both sides.
   */
  readonly instances?: {
    readonly a: readonly (readonly number[])[];
    readonly b: readonly (readonly number[])[];
  };
}

/** Options of {@linkcode comparePaired}. */
export interface CompareOptions {
  /** Seed of the bootstrap and of Monte Carlo p-values. @default {1} */
  seed?: number;
  /** Bootstrap resamples. @default {2000} */
  resamples?: number;
  /** Confidence level. @default {0.95} */
  level?: number;
  /** Largest n for which the sign-flip test is exact. @default {20} */
  exactUpTo?: number;
  /** Monte Carlo sign assignments beyond `exactUpTo`. @default {200000} */
  draws?: number;
}

/** A paired comparison. */
export interface PairedComparison {
  /** Number of pairs. */
  readonly n: number;
  /** Mean of the paired differences (variant - baseline). */
  readonly diff: number;
  /** Lower end of the confidence interval. */
  readonly lo: number;
  /** Upper end of the confidence interval. */
  readonly hi: number;
  /** Two-sided sign-flip p-value. */
  readonly p: number;
  /** Whether `p` was computed exactly (all 2^n sign assignments). */
  readonly exact: boolean;
  /** Whether the bootstrap also resampled instances within pairs. */
  readonly instanceLevel: boolean;
}

/**
 * A small seeded generator (splitmix32) for the bootstrap: uniform floats in
 * [0, 1). Deterministic across machines.
 */
export function seededUniform(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    z = (z ^ (z >>> 16)) >>> 0;
    return z / 4294967296;
  };
}

/** The smallest two-sided sign-flip p-value n pairs can give: 2 / 2^n (1 when n = 0). */
export function minSignFlipP(n: number): number {
  return n <= 0 ? 1 : Math.min(1, 2 / 2 ** n);
}

/**
 * Two-sided sign-flip p-value of paired differences: the share of sign
 * assignments whose |sum| is at least the observed |sum|. Exact up to
 * `exactUpTo` differences, Monte Carlo (seeded, counting the observed
 * assignment) beyond.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signFlipP } from "./paired_stats.ts";
 * // all 3 differences positive: 2 of the 8 assignments are as extreme
 * assert.equal(signFlipP([0.1, 0.2, 0.3]).p, 0.25);
 * ```
 */
export function signFlipP(
  diffs: readonly number[],
  options: Pick<CompareOptions, "seed" | "exactUpTo" | "draws"> = {},
): { p: number; exact: boolean } {
  const n = diffs.length;
  if (n === 0) return { p: 1, exact: true };
  const d = Float64Array.from(diffs);
  let observed = 0;
  for (let i = 0; i < n; i++) observed += d[i]!;
  // a tolerance so that ties (equal |sums| up to rounding) count as extreme
  const scale = d.reduce((s, x) => s + Math.abs(x), 0);
  const bar = Math.abs(observed) - 1e-9 * Math.max(1, scale);
  if (n <= (options.exactUpTo ?? 20)) {
    let extreme = 0;
    const total = 2 ** n;
    for (let mask = 0; mask < total; mask++) {
      let s = 0;
      for (let i = 0; i < n; i++) s += mask & (1 << i) ? -d[i]! : d[i]!;
      if (Math.abs(s) >= bar) extreme++;
    }
    return { p: extreme / total, exact: true };
  }
  const draws = options.draws ?? 200_000;
  const u = seededUniform((options.seed ?? 1) ^ 0x5f3759df);
  let extreme = 1; // the observed assignment
  for (let k = 0; k < draws; k++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += u() < 0.5 ? -d[i]! : d[i]!;
    if (Math.abs(s) >= bar) extreme++;
  }
  return { p: extreme / (draws + 1), exact: false };
}

/**
 * Holm's step-down adjustment: the i-th smallest p-value (1-based) is
 * multiplied by (m - i + 1), made monotone, and capped at 1. `null` entries
 * (no test) stay `null` and do not count toward m.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { holm } from "./paired_stats.ts";
 * assert.deepEqual(
 *   holm([0.01, 0.04, 0.03]).map((p) => p?.toFixed(2)),
 *   ["0.03", "0.06", "0.06"],
 * );
 * ```
 */
export function holm(ps: readonly (number | null)[]): (number | null)[] {
  const idx = ps.map((p, i) => [p, i] as const).filter((x) => x[0] !== null)
    .sort((x, y) => x[0]! - y[0]! || x[1] - y[1]);
  const m = idx.length;
  const out: (number | null)[] = ps.map(() => null);
  let running = 0;
  idx.forEach(([p, i], k) => {
    running = Math.max(running, Math.min(1, (m - k) * p!));
    out[i] = _round(running);
  });
  return out;
}

function _round(x: number): number {
  return Math.round(x * 1e12) / 1e12;
}

/**
 * A pair prepared for resampling: per group, the paired instance
 * differences (equal lengths), or both sides (unequal lengths).
 */
interface _Prepared {
  readonly diff: number;
  readonly paired: Float64Array[];
  readonly unpaired: { a: Float64Array; b: Float64Array }[];
  readonly groups: number;
}

function _prepare(pair: Pair): _Prepared {
  const inst = pair.instances;
  const paired: Float64Array[] = [], unpaired: _Prepared["unpaired"] = [];
  if (inst) {
    inst.a.forEach((xa, g) => {
      const xb = inst.b[g] ?? [];
      if (xa.length === xb.length) {
        paired.push(Float64Array.from(xa, (x, i) => x - xb[i]!));
      } else {unpaired.push({
          a: Float64Array.from(xa),
          b: Float64Array.from(xb),
        });}
    });
  }
  return {
    diff: pair.a - pair.b,
    paired,
    unpaired,
    groups: inst ? inst.a.length : 0,
  };
}

/** xorshift32 step (state must be non-zero). */
function _next(s: number): number {
  s ^= s << 13;
  s ^= s >>> 17;
  s ^= s << 5;
  return s >>> 0;
}

/** Mean of `len` draws with replacement from `xs`, advancing `state[0]`. */
function _resampleMean(xs: Float64Array, state: Uint32Array): number {
  const n = xs.length;
  if (n === 0) return 0;
  let s = state[0]!, sum = 0;
  for (let k = 0; k < n; k++) {
    s = _next(s);
    sum += xs[Math.floor((s / 4294967296) * n)]!;
  }
  state[0] = s;
  return sum / n;
}

/** A pair's difference with its instances resampled. */
function _resampledDiff(p: _Prepared, state: Uint32Array): number {
  let sum = 0;
  for (const d of p.paired) sum += _resampleMean(d, state);
  for (const { a, b } of p.unpaired) {
    sum += _resampleMean(a, state) - _resampleMean(b, state);
  }
  return p.groups > 0 ? sum / p.groups : 0;
}

/**
 * Compare a variant with a baseline over pairs: mean difference, bootstrap
 * interval (two levels when pairs carry instances), sign-flip p-value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { comparePaired } from "./paired_stats.ts";
 * const c = comparePaired([{ a: 0.6, b: 0.5 }, { a: 0.7, b: 0.5 }, { a: 0.5, b: 0.55 }]);
 * assert.equal(c.n, 3);
 * assert.equal(c.diff.toFixed(3), "0.083");
 * assert.equal(c.p, 0.5);
 * ```
 */
export function comparePaired(
  pairs: readonly Pair[],
  options: CompareOptions = {},
): PairedComparison {
  const n = pairs.length;
  const instanceLevel = n > 0 && pairs.every((p) => p.instances !== undefined);
  if (n === 0) {
    return {
      n,
      diff: NaN,
      lo: NaN,
      hi: NaN,
      p: 1,
      exact: true,
      instanceLevel: false,
    };
  }
  const diffs = pairs.map((p) => p.a - p.b);
  const diff = mean(diffs);
  const resamples = options.resamples ?? 2000;
  const level = options.level ?? 0.95;
  const prepared = pairs.map(_prepare);
  const state = Uint32Array.of(
    Math.floor(seededUniform(options.seed ?? 1)() * 4294967295) + 1,
  );
  const stats = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let s = 0;
    for (let k = 0; k < n; k++) {
      state[0] = _next(state[0]!);
      const p = prepared[Math.floor((state[0]! / 4294967296) * n)]!;
      s += instanceLevel ? _resampledDiff(p, state) : p.diff;
    }
    stats[r] = s / n;
  }
  stats.sort();
  const sorted = Array.from(stats);
  const alpha = (1 - level) / 2;
  const { p, exact } = signFlipP(diffs, options);
  return {
    n,
    diff,
    lo: quantileSorted(sorted, alpha),
    hi: quantileSorted(sorted, 1 - alpha),
    p,
    exact,
    instanceLevel,
  };
}
