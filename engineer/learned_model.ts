/**
 * The `learned` engineer's model of the next stage's learning progress:
 * two model classes on typed arrays, chosen by measurement.
 *
 * - **ridge**: a linear model on standardised inputs, closed form, with the
 *   penalty chosen among {@linkcode RIDGE_LAMBDAS};
 * - **gbt**: gradient-boosted regression trees of depth 2 (two splits per
 *   tree, so a tree can express a context-by-change interaction), squared
 *   loss, shrinkage 0.1, thresholds at feature quantiles.
 *
 * {@linkcode fitModel} holds out a seeded quarter of the groups (one group
 * per curriculum, so no curriculum is on both sides), scores every
 * candidate model by its held-out mean squared error, keeps the best, and
 * refits it on all rows. Everything is deterministic given the seed; the
 * fitted model is plain JSON (a cached node's value).
 *
 * @module
 */
import { hashString, Rng } from "../mapf/rng.ts";

/** The ridge penalties tried. */
export const RIDGE_LAMBDAS = [0.1, 1, 10, 100] as const;

/** A fitted linear model (inputs standardised with `mean`/`scale`). */
export interface RidgeModel {
  /** Its class. */
  readonly type: "ridge";
  /** The penalty. */
  readonly lambda: number;
  /** Per input: mean subtracted. */
  readonly mean: number[];
  /** Per input: divisor (1 for a constant input). */
  readonly scale: number[];
  /** Weights on the standardised inputs. */
  readonly w: number[];
  /** Intercept. */
  readonly b: number;
}

/** One tree of depth at most 2: a split, and a split or a leaf on each side. */
export interface Tree {
  /** Input index split on. */
  readonly f: number;
  /** Threshold: `x[f] <= t` goes left. */
  readonly t: number;
  /** Left: a value or a split into two values. */
  readonly l: number | { f: number; t: number; l: number; r: number };
  /** Right: a value or a split into two values. */
  readonly r: number | { f: number; t: number; l: number; r: number };
}

/** Fitted gradient-boosted trees. */
export interface GbtModel {
  /** Its class. */
  readonly type: "gbt";
  /** Starting value (the mean target). */
  readonly base: number;
  /** Shrinkage. */
  readonly rate: number;
  /** The trees. */
  readonly trees: Tree[];
}

/** A fitted model. */
export type Model = RidgeModel | GbtModel;

/** The prediction of `model` for input `x`. */
export function predict(model: Model, x: readonly number[]): number {
  if (model.type === "ridge") {
    let s = model.b;
    for (let i = 0; i < model.w.length; i++) {
      s += model.w[i]! * ((x[i]! - model.mean[i]!) / model.scale[i]!);
    }
    return s;
  }
  let s = model.base;
  for (const t of model.trees) s += model.rate * _tree(t, x);
  return s;
}

function _tree(t: Tree, x: readonly number[]): number {
  const side = x[t.f]! <= t.t ? t.l : t.r;
  return typeof side === "number"
    ? side
    : x[side.f]! <= side.t
    ? side.l
    : side.r;
}

/**
 * A ridge model fitted on rows `xs` with targets `ys`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fitRidge, predict } from "./learned_model.ts";
 * const xs = [[0], [1], [2], [3]];
 * const m = fitRidge(xs, [1, 3, 5, 7], 1e-6);
 * assert.ok(Math.abs(predict(m, [4]) - 9) < 1e-3);
 * ```
 */
export function fitRidge(
  xs: readonly (readonly number[])[],
  ys: readonly number[],
  lambda: number,
): RidgeModel {
  const n = xs.length;
  const p = xs[0]?.length ?? 0;
  const mean = new Array<number>(p).fill(0);
  const scale = new Array<number>(p).fill(1);
  for (let j = 0; j < p; j++) {
    let m = 0;
    for (const x of xs) m += x[j]!;
    m /= Math.max(1, n);
    let v = 0;
    for (const x of xs) v += (x[j]! - m) ** 2;
    const sd = Math.sqrt(v / Math.max(1, n));
    mean[j] = m;
    scale[j] = sd > 1e-12 ? sd : 1;
  }
  const b = ys.reduce((a, y) => a + y, 0) / Math.max(1, n);
  // (Z'Z + lambda I) w = Z'(y - b), Z standardised
  const A = new Float64Array(p * p);
  const c = new Float64Array(p);
  const z = new Float64Array(p);
  for (let r = 0; r < n; r++) {
    const x = xs[r]!;
    for (let j = 0; j < p; j++) z[j] = (x[j]! - mean[j]!) / scale[j]!;
    const yr = ys[r]! - b;
    for (let i = 0; i < p; i++) {
      const zi = z[i]!;
      if (zi === 0) continue;
      c[i] = c[i]! + zi * yr;
      for (let j = 0; j < p; j++) A[i * p + j] = A[i * p + j]! + zi * z[j]!;
    }
  }
  for (let i = 0; i < p; i++) A[i * p + i] = A[i * p + i]! + lambda;
  const w = _solve(A, c, p);
  return { type: "ridge", lambda, mean, scale, w: Array.from(w), b };
}

/** Solves A w = c for a symmetric positive definite A (Cholesky). */
function _solve(A: Float64Array, c: Float64Array, p: number): Float64Array {
  const L = new Float64Array(p * p);
  for (let i = 0; i < p; i++) {
    for (let j = 0; j <= i; j++) {
      let s = A[i * p + j]!;
      for (let k = 0; k < j; k++) s -= L[i * p + k]! * L[j * p + k]!;
      L[i * p + j] = i === j
        ? Math.sqrt(Math.max(s, 1e-12))
        : s / L[j * p + j]!;
    }
  }
  const y = new Float64Array(p);
  for (let i = 0; i < p; i++) {
    let s = c[i]!;
    for (let k = 0; k < i; k++) s -= L[i * p + k]! * y[k]!;
    y[i] = s / L[i * p + i]!;
  }
  const w = new Float64Array(p);
  for (let i = p - 1; i >= 0; i--) {
    let s = y[i]!;
    for (let k = i + 1; k < p; k++) s -= L[k * p + i]! * w[k]!;
    w[i] = s / L[i * p + i]!;
  }
  return w;
}

/** Options of {@linkcode fitGbt}. */
export interface GbtOptions {
  /** Trees. @default {60} */
  rounds?: number;
  /** Shrinkage. @default {0.1} */
  rate?: number;
  /** Fewest rows in a leaf. @default {3} */
  minLeaf?: number;
  /** Candidate thresholds per input (quantiles). @default {8} */
  bins?: number;
}

/**
 * Gradient-boosted depth-2 trees fitted on `xs`, `ys` (squared loss).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fitGbt, predict } from "./learned_model.ts";
 * const xs = Array.from({ length: 40 }, (_, i) => [i % 2, Math.floor(i / 2) % 2]);
 * const ys = xs.map(([a, b]) => (a === 1 && b === 1 ? 1 : 0)); // an interaction
 * const m = fitGbt(xs, ys, { rounds: 80, minLeaf: 2 });
 * assert.ok(predict(m, [1, 1]) > 0.8 && predict(m, [0, 1]) < 0.2);
 * ```
 */
export function fitGbt(
  xs: readonly (readonly number[])[],
  ys: readonly number[],
  options: GbtOptions = {},
): GbtModel {
  const rounds = options.rounds ?? 60;
  const rate = options.rate ?? 0.1;
  const minLeaf = options.minLeaf ?? 3;
  const bins = options.bins ?? 8;
  const n = xs.length;
  const p = xs[0]?.length ?? 0;
  const base = ys.reduce((a, y) => a + y, 0) / Math.max(1, n);
  const thresholds: number[][] = [];
  for (let j = 0; j < p; j++) {
    const vals = [...new Set(xs.map((x) => x[j]!))].sort((a, b) => a - b);
    const ts: number[] = [];
    for (let q = 1; q <= bins && vals.length > 1; q++) {
      const k = Math.min(
        vals.length - 2,
        Math.floor((q * (vals.length - 1)) / (bins + 1)),
      );
      const t = (vals[k]! + vals[k + 1]!) / 2;
      if (ts[ts.length - 1] !== t) ts.push(t);
    }
    thresholds.push(ts);
  }
  const res = Float64Array.from(ys, (y) => y - base);
  const trees: Tree[] = [];
  const all = Array.from({ length: n }, (_, i) => i);
  for (let r = 0; r < rounds; r++) {
    const root = _bestSplit(xs, res, all, thresholds, minLeaf);
    if (root === null) break;
    const left = all.filter((i) => xs[i]![root.f]! <= root.t);
    const right = all.filter((i) => xs[i]![root.f]! > root.t);
    const side = (rows: number[]) => {
      const s = _bestSplit(xs, res, rows, thresholds, minLeaf);
      if (s === null) return _meanOf(res, rows);
      return {
        f: s.f,
        t: s.t,
        l: _meanOf(res, rows.filter((i) => xs[i]![s.f]! <= s.t)),
        r: _meanOf(res, rows.filter((i) => xs[i]![s.f]! > s.t)),
      };
    };
    const tree: Tree = { f: root.f, t: root.t, l: side(left), r: side(right) };
    trees.push(tree);
    for (let i = 0; i < n; i++) res[i] = res[i]! - rate * _tree(tree, xs[i]!);
  }
  return { type: "gbt", base, rate, trees };
}

function _meanOf(res: Float64Array, rows: readonly number[]): number {
  let s = 0;
  for (const i of rows) s += res[i]!;
  return rows.length === 0 ? 0 : s / rows.length;
}

/** The split of `rows` that most reduces the squared error, or null. */
function _bestSplit(
  xs: readonly (readonly number[])[],
  res: Float64Array,
  rows: readonly number[],
  thresholds: readonly number[][],
  minLeaf: number,
): { f: number; t: number } | null {
  if (rows.length < 2 * minLeaf) return null;
  let total = 0;
  for (const i of rows) total += res[i]!;
  let best: { f: number; t: number; gain: number } | null = null;
  for (let f = 0; f < thresholds.length; f++) {
    for (const t of thresholds[f]!) {
      let sl = 0;
      let nl = 0;
      for (const i of rows) {
        if (xs[i]![f]! <= t) {
          sl += res[i]!;
          nl++;
        }
      }
      const nr = rows.length - nl;
      if (nl < minLeaf || nr < minLeaf) continue;
      const sr = total - sl;
      // reduction of the sum of squares, up to a constant
      const gain = (sl * sl) / nl + (sr * sr) / nr -
        (total * total) / rows.length;
      if (best === null || gain > best.gain + 1e-12) best = { f, t, gain };
    }
  }
  return best === null || best.gain <= 1e-12 ? null : best;
}

/** One model class's held-out error. */
export interface Trial {
  /** `ridge(lambda=1)`, `gbt`. */
  readonly name: string;
  /** Held-out mean squared error. */
  readonly mse: number;
  /** Held-out rows. */
  readonly n: number;
}

/** What {@linkcode fitModel} returns. */
export interface FitResult {
  /** The chosen model, refitted on every row. */
  readonly model: Model;
  /** The chosen class's name. */
  readonly chosen: string;
  /** Every class's held-out error (and a constant predictor's, for reference). */
  readonly trials: Trial[];
  /** Rows fitted on. */
  readonly rows: number;
}

/**
 * Fits every model class on a seeded three quarters of the groups, scores
 * each on the rest, and refits the best on all rows. With fewer than two
 * groups the split is by row.
 *
 * @throws {RangeError} with fewer than 4 rows.
 */
export function fitModel(
  xs: readonly (readonly number[])[],
  ys: readonly number[],
  groups: readonly string[],
  seed: number,
  gbt: GbtOptions = {},
): FitResult {
  if (xs.length < 4) {
    throw new RangeError(
      `too few transitions to fit a model (${xs.length}; at least 4): run more exploratory curricula`,
    );
  }
  const names = [...new Set(groups)].sort();
  const rng = new Rng(seed, hashString("learned-holdout"));
  const byRow = names.length < 2;
  const keys = byRow ? xs.map((_, i) => String(i)) : names;
  const order = [...keys];
  rng.shuffle(order);
  const held = new Set(
    order.slice(0, Math.max(1, Math.round(order.length / 4))),
  );
  const isHeld = (i: number) => held.has(byRow ? String(i) : groups[i]!);
  const tr = xs.map((_, i) => i).filter((i) => !isHeld(i));
  const te = xs.map((_, i) => i).filter(isHeld);
  const fitters: { name: string; fit: (a: number[]) => Model }[] = [
    ...RIDGE_LAMBDAS.map((l) => ({
      name: `ridge(lambda=${l})`,
      fit: (rows: number[]) =>
        fitRidge(rows.map((i) => xs[i]!), rows.map((i) => ys[i]!), l),
    })),
    {
      name: "gbt",
      fit: (rows: number[]) =>
        fitGbt(rows.map((i) => xs[i]!), rows.map((i) => ys[i]!), gbt),
    },
  ];
  const trials: Trial[] = [];
  const mean = tr.reduce((a, i) => a + ys[i]!, 0) / Math.max(1, tr.length);
  trials.push({
    name: "constant",
    mse: te.reduce((a, i) => a + (ys[i]! - mean) ** 2, 0) / te.length,
    n: te.length,
  });
  let best: { name: string; mse: number; fit: (a: number[]) => Model } | null =
    null;
  for (const f of fitters) {
    const m = f.fit(tr);
    const mse = te.reduce((a, i) => a + (ys[i]! - predict(m, xs[i]!)) ** 2, 0) /
      te.length;
    trials.push({ name: f.name, mse, n: te.length });
    if (best === null || mse < best.mse - 1e-15) best = { ...f, mse };
  }
  const all = xs.map((_, i) => i);
  return {
    model: best!.fit(all),
    chosen: best!.name,
    trials,
    rows: xs.length,
  };
}
