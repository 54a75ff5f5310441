/**
 * The Adam optimiser and gradient-norm clipping on flat `Float32Array`s.
 *
 * @module
 */

/** Options of {@linkcode Adam}. */
export interface AdamOptions {
  /** Learning rate. @default 3e-4 */
  lr?: number;
  /** First-moment decay. @default 0.9 */
  beta1?: number;
  /** Second-moment decay. @default 0.999 */
  beta2?: number;
  /** Denominator epsilon. @default 1e-5 */
  eps?: number;
}

/** Serialisable state of an {@linkcode Adam} optimiser. */
export interface AdamState {
  /** Steps taken. */
  t: number;
  /** First moments. */
  m: Float32Array;
  /** Second moments. */
  v: Float32Array;
}

/**
 * Adam (Kingma and Ba, 2015) with bias correction.
 *
 * @example One step towards lower loss
 * ```ts
 * import { Adam } from "./adam.ts";
 * import assert from "node:assert/strict";
 * const params = new Float32Array([1]), grads = new Float32Array([2]);
 * new Adam(1, { lr: 0.1 }).step(params, grads);
 * assert.ok(params[0]! < 1);
 * ```
 */
export class Adam {
  /** Learning rate (may be changed between steps, e.g. for annealing). */
  lr: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  #t = 0;
  #m: Float32Array;
  #v: Float32Array;

  /** An optimiser for `size` parameters. */
  constructor(size: number, options: AdamOptions = {}) {
    this.lr = options.lr ?? 3e-4;
    this.beta1 = options.beta1 ?? 0.9;
    this.beta2 = options.beta2 ?? 0.999;
    this.eps = options.eps ?? 1e-5;
    this.#m = new Float32Array(size);
    this.#v = new Float32Array(size);
  }

  /** Number of steps taken. */
  get t(): number {
    return this.#t;
  }

  /** Apply one update `params -= lr * mhat / (sqrt(vhat) + eps)`. */
  step(params: Float32Array, grads: Float32Array): void {
    if (params.length !== this.#m.length || grads.length !== this.#m.length) {
      throw new RangeError(
        `Adam was built for ${this.#m.length} parameters, got params ${params.length} and grads ${grads.length}`,
      );
    }
    this.#t++;
    const b1 = this.beta1, b2 = this.beta2, eps = this.eps;
    const c1 = 1 - Math.pow(b1, this.#t), c2 = 1 - Math.pow(b2, this.#t);
    const stepSize = this.lr / c1, rc2 = 1 / Math.sqrt(c2);
    const m = this.#m, v = this.#v;
    for (let i = 0; i < params.length; i++) {
      const g = grads[i]!;
      const mi = b1 * m[i]! + (1 - b1) * g;
      const vi = b2 * v[i]! + (1 - b2) * g * g;
      m[i] = mi;
      v[i] = vi;
      params[i] = params[i]! - stepSize * mi / (Math.sqrt(vi) * rc2 + eps);
    }
  }

  /** A copy of the optimiser state (for checkpoints). */
  state(): AdamState {
    return {
      t: this.#t,
      m: new Float32Array(this.#m),
      v: new Float32Array(this.#v),
    };
  }

  /** Restore a state from {@linkcode state}. */
  load(state: AdamState): void {
    if (
      state.m.length !== this.#m.length || state.v.length !== this.#v.length
    ) {
      throw new RangeError(
        `Optimiser state has ${state.m.length} moments but the network has ${this.#m.length} parameters`,
      );
    }
    this.#t = state.t;
    this.#m.set(state.m);
    this.#v.set(state.v);
  }
}

/** Euclidean norm of a vector (accumulated in double precision). */
export function l2Norm(x: Float32Array): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]! * x[i]!;
  return Math.sqrt(s);
}

/**
 * Scale `grads` in place so that their global L2 norm is at most `maxNorm`.
 * Returns the norm before clipping.
 *
 * @example
 * ```ts
 * import { clipGradNorm, l2Norm } from "./adam.ts";
 * import assert from "node:assert/strict";
 * const g = new Float32Array([3, 4]);
 * assert.equal(clipGradNorm(g, 1), 5);
 * assert.ok(Math.abs(l2Norm(g) - 1) < 1e-6);
 * ```
 */
export function clipGradNorm(grads: Float32Array, maxNorm: number): number {
  const norm = l2Norm(grads);
  if (norm > maxNorm && norm > 0) {
    const s = maxNorm / norm;
    for (let i = 0; i < grads.length; i++) grads[i] = grads[i]! * s;
  }
  return norm;
}
