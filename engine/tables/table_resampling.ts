/**
 * The statistics of one compared table, from one crossed bootstrap
 * ({@linkcode crossedResamples}): for every row and column the cell's value
 * with its interval, for every row against the baseline row the paired
 * difference with its interval, and on request the IQM, the probability of
 * improvement and the performance profiles of the rows. All of them read
 * the same resamples (seeds and the instances of every suite drawn once per
 * resample), so a seeded table gives the same numbers on every machine.
 *
 * Columns: the table's per-suite columns are the groups (each resampled
 * over its own instances); a `mean` aggregate is the mean over the groups
 * per seed; an `iqm` aggregate is the interquartile mean of the seed ×
 * group scores pooled (rliable). Each statistic resamples the seeds its
 * cell has (a paired difference: the seeds both rows have), from the same
 * uniform draws.
 *
 * @module
 */
import {
  type CrossedGroup,
  crossedResamples,
  type PreparedGroup,
  prepareGroup,
} from "./crossed_bootstrap.ts";
import {
  acceleration,
  bcaInterval,
  percentileInterval,
} from "./bootstrap_interval.ts";
import {
  interquartileMean,
  performanceProfile,
  probabilityOfImprovement,
} from "./rliable_aggregates.ts";

/** Interval methods. */
export type IntervalMethod = "percentile" | "bca";

/** What to resample and compute. */
export interface ResamplingInput {
  /** Every row of the table (the baseline included). */
  readonly rows: readonly string[];
  /** The values of the pairing axis (seeds). */
  readonly seeds: readonly string[];
  /** The per-suite columns (groups). */
  readonly groups: readonly string[];
  /** The value of a run: its instance values, its number, or null (absent). */
  readonly entry: (
    row: string,
    group: string,
    seed: string,
  ) => Float64Array | number | null;
  /** Label of a `mean` aggregate column, if any. */
  readonly meanLabel?: string | undefined;
  /** Label of an `iqm` aggregate column, if any. */
  readonly iqmLabel?: string | undefined;
  /** The baseline row. */
  readonly against: string;
  /** Resamples. */
  readonly resamples: number;
  /** Seed of the resampling. */
  readonly seed: number;
  /** Confidence level. */
  readonly level: number;
  /** Interval method for means and mean differences (IQM and P(improvement) are always percentile). */
  readonly interval: IntervalMethod;
  /** Compute P(row > baseline) over the groups. */
  readonly improvement?: boolean;
  /** Thresholds of performance profiles (none: no profiles). */
  readonly profileTaus?: readonly number[];
}

/** One statistic: its estimate, interval, and what tests need. */
export interface StatResult {
  /** Seeds used. */
  readonly n: number;
  /** The estimate on the data. */
  readonly estimate: number;
  /** Interval, low end. */
  readonly lo: number;
  /** Interval, high end. */
  readonly hi: number;
  /** The resampled values, sorted ascending. */
  readonly sorted: Float64Array;
  /** Per seed used, the statistic on that seed alone (for sign-flip tests). */
  readonly perSeed: readonly number[];
}

/** A performance profile with its band. */
export interface ProfileResult {
  readonly row: string;
  /** Share of seed × group scores above each τ. */
  readonly y: readonly number[];
  readonly lo: readonly number[];
  readonly hi: readonly number[];
}

/** What {@linkcode resampleTable} returns. */
export interface ResamplingResult {
  /** Cell values by `row\tcolumn`. */
  readonly cells: ReadonlyMap<string, StatResult>;
  /** Row − baseline by `row\tcolumn`. */
  readonly diffs: ReadonlyMap<string, StatResult>;
  /** P(row > baseline) by row. */
  readonly improvement: ReadonlyMap<string, StatResult>;
  /** Performance profiles (when asked). */
  readonly profiles?: {
    readonly taus: readonly number[];
    readonly rows: readonly ProfileResult[];
  };
  /** Per group, whether its instances were resampled. */
  readonly instanceLevel: readonly boolean[];
}

type _Kind = "mean" | "agg" | "iqm" | "poi";

interface _Stat {
  readonly key: string;
  readonly kind: _Kind;
  readonly a: number;
  /** The baseline row for differences (-1 for a cell). */
  readonly b: number;
  /** The group for `mean` (-1 otherwise). */
  readonly g: number;
  /** Seeds used. */
  readonly seeds: Int32Array;
  readonly out: Float64Array;
  readonly target: "cells" | "diffs" | "improvement";
}

/**
 * Runs the crossed bootstrap of a table and computes its statistics. The
 * steps: prepare each group, plan the statistics ({@linkcode _planStats}),
 * resample once for all of them, then the estimates with their intervals
 * ({@linkcode _estimate}) and the profiles' bands ({@linkcode _profileBands}).
 */
export function resampleTable(input: ResamplingInput): ResamplingResult {
  const R = input.rows.length, S = input.seeds.length;
  const G = input.groups.length, B = input.resamples;
  const prepared: PreparedGroup[] = input.groups.map((g) => {
    const entries: (Float64Array | number | null)[] = [];
    for (const r of input.rows) {
      for (const s of input.seeds) entries.push(input.entry(r, g, s));
    }
    return prepareGroup({ entries } as CrossedGroup, R, S);
  });
  const seedsOf = _seedsOf(prepared, S);
  const allGroups = input.groups.map((_, g) => g);
  const stats = _planStats(input, seedsOf, B);
  const taus = input.profileTaus ?? [];
  const profileRows = taus.length > 0
    ? input.rows.map((_, r) => ({ r, seeds: seedsOf([r], allGroups) }))
      .filter((x) => x.seeds.length > 0 && G > 0)
    : [];
  const profileOut = profileRows.map(() => new Float64Array(B * taus.length));
  const ev = _evaluator(R, S, G);
  const { picked } = ev;
  const prof = new Float64Array(taus.length);
  crossedResamples(prepared, R, S, B, input.seed, (b, M, draws) => {
    for (const st of stats) {
      const n = st.seeds.length;
      for (let k = 0; k < n; k++) {
        picked[k] = st.seeds[Math.floor(draws[k]! * n)]!;
      }
      st.out[b] = ev.value(st, M, n);
    }
    profileRows.forEach((pr, i) => {
      const n = pr.seeds.length;
      for (let k = 0; k < n; k++) {
        picked[k] = pr.seeds[Math.floor(draws[k]! * n)]!;
      }
      const x = ev.pool.subarray(0, n * G);
      ev.gather(M, pr.r, n, x);
      performanceProfile(x, taus, prof);
      profileOut[i]!.set(prof, b * taus.length);
    });
  });
  // estimates on the data: the means without resampling, every seed once
  const M0 = new Float64Array(G * R * S);
  prepared.forEach((g, gi) => M0.set(g.means, gi * R * S));
  const cells = new Map<string, StatResult>();
  const diffs = new Map<string, StatResult>();
  const improvement = new Map<string, StatResult>();
  for (const st of stats) {
    const res = _estimate(st, ev, M0, input, prepared, R, S, G);
    ({ cells, diffs, improvement })[st.target].set(st.key, res);
  }
  return {
    cells,
    diffs,
    improvement,
    ...(taus.length > 0
      ? {
        profiles: {
          taus,
          rows: profileRows.map((pr, i) =>
            _profileBands(pr, profileOut[i]!, ev, M0, input, taus, B, G)
          ),
        },
      }
      : {}),
    instanceLevel: prepared.map((g) => g.instanceLevel),
  };
}

/** The seeds (indices) at which every row needed has every group given. */
type _SeedsOf = (rowsNeeded: number[], groups: number[]) => Int32Array;

function _seedsOf(prepared: readonly PreparedGroup[], S: number): _SeedsOf {
  const present = (r: number, g: number, s: number) =>
    prepared[g]!.present[r * S + s] === 1;
  return (rowsNeeded, groups) => {
    const out: number[] = [];
    for (let s = 0; s < S; s++) {
      if (rowsNeeded.every((r) => groups.every((g) => present(r, g, s)))) {
        out.push(s);
      }
    }
    return Int32Array.from(out);
  };
}

/** Every statistic the table asks for: cells, differences from the baseline, P(improvement). */
function _planStats(
  input: ResamplingInput,
  seedsOf: _SeedsOf,
  B: number,
): _Stat[] {
  const G = input.groups.length;
  const allGroups = input.groups.map((_, g) => g);
  const bi = input.rows.indexOf(input.against);
  const stats: _Stat[] = [];
  const add = (
    key: string,
    kind: _Kind,
    a: number,
    b: number,
    g: number,
    target: _Stat["target"],
  ) => {
    const rowsNeeded = b >= 0 ? [a, b] : [a];
    const seeds = seedsOf(rowsNeeded, g >= 0 ? [g] : allGroups);
    if (seeds.length === 0 || (g < 0 && G === 0)) return;
    stats.push({
      key,
      kind,
      a,
      b,
      g,
      seeds,
      out: new Float64Array(B),
      target,
    });
  };
  input.rows.forEach((row, r) => {
    const diff = bi >= 0 && r !== bi;
    input.groups.forEach((col, g) => {
      add(`${row}\t${col}`, "mean", r, -1, g, "cells");
      if (diff) add(`${row}\t${col}`, "mean", r, bi, g, "diffs");
    });
    for (
      const [label, kind] of [[input.meanLabel, "agg"], [
        input.iqmLabel,
        "iqm",
      ]] as const
    ) {
      if (label === undefined) continue;
      add(`${row}\t${label}`, kind, r, -1, -1, "cells");
      if (diff) add(`${row}\t${label}`, kind, r, bi, -1, "diffs");
    }
    if (diff && input.improvement) {
      add(row, "poi", r, bi, -1, "improvement");
    }
  });
  return stats;
}

/** A statistic's value on one matrix of means, over the seeds in `picked[0..n)`. */
interface _Evaluator {
  /** The seeds drawn (indices), filled by the caller. */
  readonly picked: Int32Array;
  /** Scratch of S × G values. */
  readonly pool: Float64Array;
  readonly value: (st: _Stat, M: Float64Array, n: number) => number;
  /** Pooled scores of row r over the picked seeds and every group. */
  readonly gather: (
    M: Float64Array,
    r: number,
    n: number,
    into: Float64Array,
  ) => void;
}

function _evaluator(R: number, S: number, G: number): _Evaluator {
  const RS = R * S;
  const picked = new Int32Array(S);
  const pool = new Float64Array(S * Math.max(G, 1));
  const pool2 = new Float64Array(S * Math.max(G, 1));
  const gather = (
    M: Float64Array,
    r: number,
    n: number,
    into: Float64Array,
  ) => {
    let i = 0;
    for (let g = 0; g < G; g++) {
      const off = g * RS + r * S;
      for (let k = 0; k < n; k++) into[i++] = M[off + picked[k]!]!;
    }
  };
  const value = (st: _Stat, M: Float64Array, n: number): number => {
    switch (st.kind) {
      case "mean": {
        const off = st.g * RS;
        let s = 0;
        for (let k = 0; k < n; k++) {
          const j = picked[k]!;
          s += M[off + st.a * S + j]! -
            (st.b >= 0 ? M[off + st.b * S + j]! : 0);
        }
        return s / n;
      }
      case "agg": {
        let s = 0;
        for (let g = 0; g < G; g++) {
          const off = g * RS;
          for (let k = 0; k < n; k++) {
            const j = picked[k]!;
            s += M[off + st.a * S + j]! -
              (st.b >= 0 ? M[off + st.b * S + j]! : 0);
          }
        }
        return s / (n * G);
      }
      case "iqm": {
        const x = pool.subarray(0, n * G);
        gather(M, st.a, n, x);
        const ia = interquartileMean(x);
        if (st.b < 0) return ia;
        const y = pool2.subarray(0, n * G);
        gather(M, st.b, n, y);
        return ia - interquartileMean(y);
      }
      case "poi": {
        const x = pool.subarray(0, n * G), y = pool2.subarray(0, n * G);
        gather(M, st.a, n, x); // group-major = task-major
        gather(M, st.b, n, y);
        return probabilityOfImprovement(x, y, G);
      }
    }
  };
  return { picked, pool, value, gather };
}

/** A statistic's estimate on the data, its per-seed values and its interval. */
function _estimate(
  st: _Stat,
  ev: _Evaluator,
  M0: Float64Array,
  input: ResamplingInput,
  prepared: readonly PreparedGroup[],
  R: number,
  S: number,
  G: number,
): StatResult {
  const n = st.seeds.length;
  ev.picked.set(st.seeds);
  const estimate = ev.value(st, M0, n);
  const perSeed: number[] = [];
  for (let k = 0; k < n; k++) {
    ev.picked[0] = st.seeds[k]!;
    perSeed.push(ev.value(st, M0, 1));
  }
  const sorted = st.out.slice().sort();
  const useBca = input.interval === "bca" &&
    (st.kind === "mean" || st.kind === "agg");
  const [lo, hi] = useBca
    ? bcaInterval(
      sorted,
      estimate,
      acceleration(_influence(st, prepared, R, S, G, perSeed, estimate)),
      input.level,
    )
    : percentileInterval(sorted, input.level);
  return { n, estimate, lo, hi, sorted, perSeed };
}

/** A row's performance profile on the data with its percentile band over the resamples. */
function _profileBands(
  pr: { r: number; seeds: Int32Array },
  out: Float64Array,
  ev: _Evaluator,
  M0: Float64Array,
  input: ResamplingInput,
  taus: readonly number[],
  B: number,
  G: number,
): ProfileResult {
  const n = pr.seeds.length;
  ev.picked.set(pr.seeds);
  const x = new Float64Array(n * G);
  ev.gather(M0, pr.r, n, x);
  const y = performanceProfile(x, taus);
  const lo: number[] = [], hi: number[] = [];
  const col = new Float64Array(B);
  taus.forEach((_, t) => {
    for (let b = 0; b < B; b++) col[b] = out[b * taus.length + t]!;
    col.sort();
    const [l, h] = percentileInterval(col, input.level);
    lo.push(l);
    hi.push(h);
  });
  return { row: input.rows[pr.r]!, y: [...y], lo, hi };
}

/**
 * Empirical influence values of a mean-type statistic: one sample for the
 * seeds (their per-seed values' deviations) and one per instance-level
 * group (the instances' mean over the seeds used, as deviations, weighted
 * by the group's share of the statistic).
 */
function _influence(
  st: _Stat,
  prepared: readonly PreparedGroup[],
  R: number,
  S: number,
  G: number,
  perSeed: readonly number[],
  estimate: number,
): Float64Array[] {
  const out = [Float64Array.from(perSeed, (v) => v - estimate)];
  const groups = st.kind === "mean" ? [st.g] : prepared.map((_, g) => g);
  const weight = st.kind === "mean" ? 1 : 1 / G;
  const RS = R * S;
  for (const g of groups) {
    const pg = prepared[g]!;
    if (!pg.instanceLevel) continue;
    const m = pg.instances;
    const u = new Float64Array(m);
    let total = 0;
    for (let i = 0; i < m; i++) {
      const base = pg.column[i]! * RS;
      let s = 0;
      for (const j of st.seeds) {
        s += pg.values[base + st.a * S + j]! -
          (st.b >= 0 ? pg.values[base + st.b * S + j]! : 0);
      }
      u[i] = s / st.seeds.length;
      total += u[i]!;
    }
    const mean = total / m;
    for (let i = 0; i < m; i++) u[i] = weight * (u[i]! - mean);
    out.push(u);
  }
  return out;
}
