/**
 * The maze family's seeded random numbers: a small counter-based generator
 * (SplitMix32 steps), so the family's code does not depend on another
 * family's modules.
 *
 * @module
 */

/** A seeded generator with the `float`/`int` surface families' `mutate` receives. */
export class MazeRng {
  #state: number;

  /** A generator for `seed` (any number; only its low 32 bits matter) and an optional stream. */
  constructor(seed: number, stream = 0) {
    this.#state =
      (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(stream >>> 0, 0x85ebca77) ^
        0x6a09e667) >>> 0;
  }

  /** Next uint32. */
  nextU32(): number {
    this.#state = (this.#state + 0x9e3779b9) >>> 0;
    let z = this.#state;
    z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
    z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
    return (z ^ (z >>> 15)) >>> 0;
  }

  /** Uniform float in [0, 1). */
  float(): number {
    return this.nextU32() / 4294967296;
  }

  /** Uniform integer in [0, n) (0 when n <= 1). */
  int(n: number): number {
    if (n <= 1) return 0;
    const limit = 4294967296 - (4294967296 % n);
    let x = this.nextU32();
    while (x >= limit) x = this.nextU32();
    return x % n;
  }
}
