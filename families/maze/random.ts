/**
 * The maze family's seeded random numbers: a small counter-based generator
 * (SplitMix32 steps); its uniform draws are the shared ones of
 * {@linkcode U32Draws}.
 *
 * @module
 */
import { U32Draws } from "../../mapf/rng.ts";

/** A seeded generator with the `float`/`int` surface families' `mutate` receives. */
export class MazeRng extends U32Draws {
  #state: number;

  /** A generator for `seed` (any number; only its low 32 bits matter) and an optional stream. */
  constructor(seed: number, stream = 0) {
    super();
    this.#state =
      (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(stream >>> 0, 0x85ebca77) ^
        0x6a09e667) >>> 0;
  }

  /** Next uint32. */
  override nextU32(): number {
    this.#state = (this.#state + 0x9e3779b9) >>> 0;
    let z = this.#state;
    z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
    z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
    return (z ^ (z >>> 15)) >>> 0;
  }
}
