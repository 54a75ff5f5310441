/**
 * The crossed bootstrap of a table: every row's runs (one per seed) are
 * scored on the same benchmark instances, so seeds and instances are
 * crossed factors. One resample draws the seeds and, independently, the
 * instances of every group (suite), and uses the same instance indices for
 * every row and every seed of that resample. Drawing instances inside each
 * seed instead (a nested bootstrap) counts the seed × instance noise once
 * per seed and misses the effect the shared instances have on every seed
 * at once.
 *
 * The data of one table is laid out per group as a matrix over (row, seed)
 * × instance in a Float64Array. Identical instance columns (an instance
 * every run solves, or none does) are merged and carry a count, so a
 * resample costs (rows × seeds × distinct columns) multiply-adds per group.
 * A resample hands its per-(group, row, seed) instance means and its seed
 * draws to a visitor, which computes whatever statistics it needs (cell
 * means, paired differences, IQM, probability of improvement) from the same
 * draws: common random numbers across the cells of a table.
 *
 * A group whose entries lack per-instance values falls back to seeds only
 * (its instance means are the given numbers, the same in every resample).
 *
 * Deterministic: integer arithmetic (xorshift32 seeded by splitmix32), so a
 * seeded resampling gives the same numbers on every machine.
 *
 * @module
 */

/** One group (e.g. one suite): an entry per (row, seed), at `row * seeds + seed`. */
export interface CrossedGroup {
  /**
   * The instance values of the run (equal lengths and the same instance
   * order across the group), a number (the run's value without instances),
   * or null (no run).
   */
  readonly entries: readonly (Float64Array | number | null)[];
}

/** The data of a table for the crossed bootstrap. */
export interface CrossedData {
  /** Number of rows. */
  readonly rows: number;
  /** Number of seeds (values of the pairing axis). */
  readonly seeds: number;
  /** Groups (suites), each resampled over its own instances. */
  readonly groups: readonly CrossedGroup[];
}

/** A group prepared for resampling. */
export interface PreparedGroup {
  /** Whether its instances are resampled (every entry has instance values of one length). */
  readonly instanceLevel: boolean;
  /** Instances (0 when seed-level). */
  readonly instances: number;
  /** Distinct instance columns. */
  readonly distinct: number;
  /** Per instance, its distinct column. */
  readonly column: Int32Array;
  /** Distinct columns, column-major: `values[u * rows * seeds + r * seeds + s]`. */
  readonly values: Float64Array;
  /**
   * The same values as a sparse matrix over (row, seed) × distinct column,
   * relative to each run's most frequent value `base[r * seeds + s]`: the
   * run's entries that differ from it, `deltas[j]` at distinct column
   * `cols[j]` for j in `start[k] .. start[k + 1]`. A resampled sum is
   * base · m + Σ count · delta, so a run costs its non-base instances only.
   */
  readonly sparse: {
    readonly base: Float64Array;
    readonly start: Int32Array;
    readonly cols: Int32Array;
    readonly deltas: Float64Array;
  };
  /** Whether the entry at `r * seeds + s` exists. */
  readonly present: Uint8Array;
  /** Per (row, seed), the mean over the instances (or the given value). */
  readonly means: Float64Array;
}

/** Prepares one group: checks the instance layout and merges identical instance columns. */
export function prepareGroup(
  group: CrossedGroup,
  rows: number,
  seeds: number,
): PreparedGroup {
  const rs = rows * seeds;
  const present = new Uint8Array(rs);
  const means = new Float64Array(rs);
  let m = -1, instanceLevel = true;
  for (let k = 0; k < rs; k++) {
    const e = group.entries[k] ?? null;
    if (e === null) continue;
    present[k] = 1;
    if (typeof e === "number") {
      means[k] = e;
      instanceLevel = false;
      continue;
    }
    let sum = 0;
    for (let i = 0; i < e.length; i++) sum += e[i]!;
    means[k] = e.length > 0 ? sum / e.length : NaN;
    if (e.length === 0 || (m >= 0 && e.length !== m)) instanceLevel = false;
    m = e.length;
  }
  if (!instanceLevel || m <= 0) {
    return {
      instanceLevel: false,
      instances: 0,
      distinct: 0,
      column: new Int32Array(0),
      values: new Float64Array(0),
      sparse: {
        base: new Float64Array(0),
        start: new Int32Array(1),
        cols: new Int32Array(0),
        deltas: new Float64Array(0),
      },
      present,
      means,
    };
  }
  // merge identical instance columns (bit patterns of the values over runs)
  const column = new Int32Array(m);
  const seen = new Map<string, number>();
  const cols: Float64Array[] = [];
  const col = new Float64Array(rs);
  for (let i = 0; i < m; i++) {
    for (let k = 0; k < rs; k++) {
      const e = group.entries[k];
      col[k] = e instanceof Float64Array ? e[i]! : 0;
    }
    const key = String(Array.from(col));
    let u = seen.get(key);
    if (u === undefined) {
      u = cols.length;
      seen.set(key, u);
      cols.push(col.slice());
    }
    column[i] = u;
  }
  const values = new Float64Array(cols.length * rs);
  cols.forEach((c, u) => values.set(c, u * rs));
  return {
    instanceLevel: true,
    instances: m,
    distinct: cols.length,
    column,
    values,
    sparse: _sparse(values, column, cols.length, rs, present),
    present,
    means,
  };
}

/** The sparse layout of {@linkcode PreparedGroup.sparse}. */
function _sparse(
  values: Float64Array,
  column: Int32Array,
  distinct: number,
  rs: number,
  present: Uint8Array,
): PreparedGroup["sparse"] {
  const multiplicity = new Int32Array(distinct);
  for (let i = 0; i < column.length; i++) multiplicity[column[i]!]!++;
  const base = new Float64Array(rs);
  const start = new Int32Array(rs + 1);
  const cols: number[] = [], deltas: number[] = [];
  for (let k = 0; k < rs; k++) {
    start[k] = cols.length;
    if (!present[k]) continue;
    // the most frequent value of this run over its instances
    const freq = new Map<number, number>();
    for (let u = 0; u < distinct; u++) {
      const x = values[u * rs + k]!;
      freq.set(x, (freq.get(x) ?? 0) + multiplicity[u]!);
    }
    let b = 0, best = -1;
    for (const [x, f] of freq) if (f > best) [b, best] = [x, f];
    base[k] = b;
    for (let u = 0; u < distinct; u++) {
      const x = values[u * rs + k]!;
      if (x !== b) {
        cols.push(u);
        deltas.push(x - b);
      }
    }
  }
  start[rs] = cols.length;
  return {
    base,
    start,
    cols: Int32Array.from(cols),
    deltas: Float64Array.from(deltas),
  };
}

/** A 32-bit state from a seed (splitmix32), never 0. */
export function seedState(seed: number): number {
  let z = (seed + 0x9e3779b9) >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  z = (z ^ (z >>> 16)) >>> 0;
  return z === 0 ? 0x6d2b79f5 : z;
}

/**
 * What a visitor receives for one resample.
 *
 * - `means[(g * rows + r) * seeds + s]`: the mean of row r, seed s over the
 *   resampled instances of group g (the plain value for a seed-level group);
 * - `draws[k]`: uniform numbers in [0, 1), one per seed slot: a statistic
 *   over a set P of seeds takes `P[floor(draws[k] * |P|)]` for
 *   k < |P|, so every cell resamples its own seeds from the same draws.
 */
export type ResampleVisitor = (
  b: number,
  means: Float64Array,
  draws: Float64Array,
) => void;

/**
 * Runs `resamples` crossed resamples of `data` (prepared groups), calling
 * `visit` for each. Seeds are drawn first, then each instance-level group's
 * instances, from one xorshift32 stream seeded by `seed`.
 */
export function crossedResamples(
  groups: readonly PreparedGroup[],
  rows: number,
  seeds: number,
  resamples: number,
  seed: number,
  visit: ResampleVisitor,
): void {
  const rs = rows * seeds;
  const G = groups.length;
  const means = new Float64Array(G * rs);
  groups.forEach((g, gi) => {
    if (!g.instanceLevel) means.set(g.means, gi * rs);
  });
  const draws = new Float64Array(seeds);
  const counts = groups.map((g) => new Float64Array(g.distinct));
  let s = seedState(seed);
  for (let b = 0; b < resamples; b++) {
    for (let k = 0; k < seeds; k++) {
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      s >>>= 0;
      draws[k] = s / 4294967296;
    }
    for (let gi = 0; gi < G; gi++) {
      const g = groups[gi]!;
      if (!g.instanceLevel) continue;
      const c = counts[gi]!, m = g.instances, col = g.column;
      c.fill(0);
      for (let i = 0; i < m; i++) {
        s ^= s << 13;
        s ^= s >>> 17;
        s ^= s << 5;
        s >>>= 0;
        c[col[Math.floor((s / 4294967296) * m)]!]!++;
      }
      const off = gi * rs, sp = g.sparse, present = g.present;
      const base = sp.base, start = sp.start, cols = sp.cols, d = sp.deltas;
      for (let k = 0; k < rs; k++) {
        if (!present[k]) continue;
        let sum = base[k]! * m;
        for (let j = start[k]!, end = start[k + 1]!; j < end; j++) {
          sum += c[cols[j]!]! * d[j]!;
        }
        means[off + k] = sum / m;
      }
    }
    visit(b, means, draws);
  }
}

/**
 * The exact variance of the crossed bootstrap of the grand mean of an
 * n × m matrix `d` (row-major: n seeds, m instances), seeds and instances
 * drawn independently with replacement: with T the sum of all entries, A
 * the sum over seeds of squared seed sums, B the sum over instances of
 * squared instance sums, C the sum of squares, α = 1 − 1/n, β = 1 − 1/m,
 * Var* = ((αβ − 1)T² + αB + βA + C) / (nm)².
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { crossedBootstrapVariance } from "./crossed_bootstrap.ts";
 * // one seed: the ordinary bootstrap variance of a mean, Σ(x − x̄)² / m²
 * assert.equal(crossedBootstrapVariance(Float64Array.of(0, 1), 1, 2), 0.125);
 * ```
 */
export function crossedBootstrapVariance(
  d: Float64Array,
  n: number,
  m: number,
): number {
  let T = 0, A = 0, B = 0, C = 0;
  const colSums = new Float64Array(m);
  for (let s = 0; s < n; s++) {
    let row = 0;
    for (let i = 0; i < m; i++) {
      const x = d[s * m + i]!;
      row += x;
      colSums[i] = colSums[i]! + x;
      C += x * x;
    }
    T += row;
    A += row * row;
  }
  for (let i = 0; i < m; i++) B += colSums[i]! * colSums[i]!;
  const a = 1 - 1 / n, b = 1 - 1 / m;
  return ((a * b - 1) * T * T + a * B + b * A + C) / (n * m) ** 2;
}
