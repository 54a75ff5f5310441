// mulberry32: a small seeded PRNG (32-bit state), private to engineer/.
// Same seed -> same sequence; never Math.random.

/** A seeded generator of floats in [0, 1). */
export class Prng {
  #s: number;
  /** Seed with any integer (mixed with splitmix32 so nearby seeds diverge). */
  constructor(seed: number) {
    let z = (seed >>> 0) + 0x9e3779b9;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    this.#s = (z ^ (z >>> 16)) >>> 0;
  }
  /** Next float in [0, 1). */
  next(): number {
    let t = (this.#s = (this.#s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  /** Uniform in [lo, hi). */
  range(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }
}

/** Derive a uint32 seed from a seed and a label (FNV-1a over the label). */
export function subSeed(seed: number, label: string): number {
  let h = (0x811c9dc5 ^ (seed >>> 0)) >>> 0;
  for (let i = 0; i < label.length; i++) {
    h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
  }
  return h >>> 0;
}
