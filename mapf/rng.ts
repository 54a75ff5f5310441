/**
 * Small seeded pseudo-random number generators.
 *
 * - {@linkcode Rng}: xoshiro128** (Blackman and Vigna, 2018) with 128 bits of
 *   state, for the generator and solvers. Its state is set from
 *   {@linkcode mix32} of the seed words, and `mix32` is a bijection on 32-bit
 *   integers, so different `(seed, index)` pairs give different states and
 *   therefore different streams.
 * - {@linkcode mulberry32}: one 32-bit word of state, used per environment in
 *   the batched dynamics, where the state lives in a `Uint32Array`.
 *
 * Never `Math.random`: same seeds, same numbers, on every machine.
 *
 * @module
 */

/**
 * The murmur3 32-bit finaliser: a bijection on uint32 with good avalanche.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mix32 } from "./rng.ts";
 * assert.notEqual(mix32(1), mix32(2));
 * ```
 */
export function mix32(x: number): number {
  x = x >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/** FNV-1a hash of a string to uint32 (for domain tags such as suite names). */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * One step of mulberry32 on a state held in `state[i]`: advances the state and
 * returns a uint32. Allocation-free, for per-environment streams.
 */
export function mulberry32(state: Uint32Array, i: number): number {
  const s = (state[i]! + 0x6d2b79f5) >>> 0;
  state[i] = s;
  let t = Math.imul(s ^ (s >>> 15), s | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return (t ^ (t >>> 14)) >>> 0;
}

/** A seeded stream of uniform floats in [0, 1): {@linkcode mulberry32} on its own state. */
export function mulberry32Floats(seed: number): () => number {
  const state = Uint32Array.of(seed >>> 0);
  return () => mulberry32(state, 0) / 4294967296;
}

/**
 * Uniform draws from a stream of uint32s: what every seeded generator here
 * derives from its `nextU32`.
 */
export abstract class U32Draws {
  /** Next uint32. */
  abstract nextU32(): number;

  /** Uniform float in [0, 1) with 32 bits of resolution. */
  float(): number {
    return this.nextU32() / 4294967296;
  }

  /** Uniform integer in [0, n) (0 when n <= 1), without modulo bias. */
  int(n: number): number {
    if (n <= 1) return 0;
    const limit = 4294967296 - (4294967296 % n);
    let x = this.nextU32();
    while (x >= limit) x = this.nextU32();
    return x % n;
  }
}

/** xoshiro128**: a fast, small-state generator with good statistical quality. */
export class Rng extends U32Draws {
  #a: number;
  #b: number;
  #c: number;
  #d: number;
  #spare = NaN;

  /**
   * Seed from up to four uint32 words. Each word goes through
   * {@linkcode mix32} (a bijection), so distinct word tuples give distinct
   * states.
   */
  constructor(w0: number, w1 = 0, w2 = 0, w3 = 0) {
    super();
    this.#a = mix32(w0 ^ 0x9e3779b9);
    this.#b = mix32(w1 ^ 0x243f6a88);
    this.#c = mix32(w2 ^ 0xb7e15162);
    this.#d = mix32(w3 ^ 0x3c6ef372);
    if ((this.#a | this.#b | this.#c | this.#d) === 0) this.#d = 1;
    for (let i = 0; i < 4; i++) this.nextU32();
  }

  /** Next uint32. */
  override nextU32(): number {
    const result = Math.imul(_rotl(Math.imul(this.#b, 5), 7), 9) >>> 0;
    const t = this.#b << 9;
    this.#c ^= this.#a;
    this.#d ^= this.#b;
    this.#b ^= this.#c;
    this.#a ^= this.#d;
    this.#c ^= t;
    this.#d = _rotl(this.#d, 11);
    return result;
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return p > 0 && this.float() < p;
  }

  /** Standard normal draw (Box-Muller; the second value is kept for the next call). */
  normal(): number {
    if (!Number.isNaN(this.#spare)) {
      const s = this.#spare;
      this.#spare = NaN;
      return s;
    }
    let u = this.float();
    while (u <= 0) u = this.float();
    const r = Math.sqrt(-2 * Math.log(u));
    const t = 2 * Math.PI * this.float();
    this.#spare = r * Math.sin(t);
    return r * Math.cos(t);
  }

  /** Shuffle `a[0..n)` of an array (or typed array) in place (Fisher-Yates). */
  shuffle<T extends { length: number; [i: number]: unknown }>(
    a: T,
    n: number = a.length,
  ): T {
    for (let i = n - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
    return a;
  }

  /** Index drawn with probability proportional to `weights[i]`. */
  weighted(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += w;
    let u = this.float() * total;
    for (let i = 0; i < weights.length; i++) {
      u -= weights[i]!;
      if (u < 0) return i;
    }
    return weights.length - 1;
  }
}

function _rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
