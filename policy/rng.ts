/**
 * A small seeded pseudo-random number generator for the policy code.
 *
 * The generator is xoshiro128** (Blackman and Vigna, 2018) seeded through
 * splitmix32, so any uint32 seed gives a well-mixed state. It is fast, has a
 * period of 2^128 - 1 and, unlike `Math.random`, the same seed always gives
 * the same sequence, which is what makes training runs reproducible.
 *
 * @module
 */

/** splitmix32 step: returns the next state and a mixed output. */
function _splitmix32(state: number): [number, number] {
  const next = (state + 0x9e3779b9) | 0;
  let z = next;
  z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
  z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
  z = z ^ (z >>> 15);
  return [next, z >>> 0];
}

/**
 * Seeded xoshiro128** generator.
 *
 * @example Reproducible draws
 * ```ts
 * import { Rng } from "./rng.ts";
 * import assert from "node:assert/strict";
 * const a = new Rng(42), b = new Rng(42);
 * assert.equal(a.uint32(), b.uint32());
 * assert.ok(a.float() < 1);
 * ```
 */
export class Rng {
  #s0: number;
  #s1: number;
  #s2: number;
  #s3: number;
  #spare = NaN;

  /** Create a generator from a uint32 seed (other numbers are truncated to 32 bits). */
  constructor(seed: number) {
    let st = seed >>> 0;
    let o: number;
    [st, o] = _splitmix32(st);
    this.#s0 = o;
    [st, o] = _splitmix32(st);
    this.#s1 = o;
    [st, o] = _splitmix32(st);
    this.#s2 = o;
    [st, o] = _splitmix32(st);
    this.#s3 = o;
    if ((this.#s0 | this.#s1 | this.#s2 | this.#s3) === 0) this.#s0 = 1;
  }

  /** Next uint32 in [0, 2^32). */
  uint32(): number {
    const s0 = this.#s0, s1 = this.#s1, s2 = this.#s2, s3 = this.#s3;
    const r = Math.imul(_rotl(Math.imul(s1, 5), 7), 9);
    const t = s1 << 9;
    let n2 = s2 ^ s0;
    let n3 = s3 ^ s1;
    const n1 = s1 ^ n2;
    const n0 = s0 ^ n3;
    n2 ^= t;
    n3 = _rotl(n3, 11);
    this.#s0 = n0;
    this.#s1 = n1;
    this.#s2 = n2;
    this.#s3 = n3;
    return r >>> 0;
  }

  /** Uniform float in [0, 1) with 32 bits of randomness. */
  float(): number {
    return this.uint32() / 4294967296;
  }

  /** Uniform integer in [0, n). `n` must be a positive integer below 2^32. */
  int(n: number): number {
    return Math.floor(this.float() * n);
  }

  /** Standard normal draw (Box-Muller, caching the second value). */
  normal(): number {
    if (!Number.isNaN(this.#spare)) {
      const s = this.#spare;
      this.#spare = NaN;
      return s;
    }
    let u = this.float();
    while (u <= 0) u = this.float();
    const v = this.float();
    const r = Math.sqrt(-2 * Math.log(u));
    this.#spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  /** Shuffle `a[0..n)` in place (Fisher-Yates). */
  shuffle(a: Int32Array | Uint32Array | number[], n: number = a.length): void {
    for (let i = n - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const t = a[i]!;
      a[i] = a[j]!;
      a[j] = t;
    }
  }

  /** A new uint32 seed drawn from this generator (for child generators). */
  fork(): Rng {
    return new Rng(this.uint32());
  }
}

function _rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
