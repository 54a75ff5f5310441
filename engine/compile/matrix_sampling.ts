/**
 * Sampled matrix axes: random and Latin-hypercube sweeps over declared
 * ranges, beside the grid. Values are drawn from a seeded generator
 * (mulberry32, seeded per axis by a hash of the seed and the axis name),
 * rounded to `digits` significant digits (default 4), so they are the same
 * on every machine and give stable keys: adding an axis or changing another
 * one's range never moves this one's values.
 *
 * @module
 */
import type * as v from "valibot";
import type { SampledAxisSchema } from "./experiment_schema.ts";

/** A sampled axis as written. */
export type SampledAxis = v.InferOutput<typeof SampledAxisSchema>;

/** A 32-bit state from a seed and a name (splitmix32 of both), never 0. */
function _state(seed: number, name: string): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  for (let i = 0; i < name.length; i++) {
    h = Math.imul(h ^ name.charCodeAt(i), 0x85ebca6b) >>> 0;
    h = (h ^ (h >>> 13)) >>> 0;
  }
  h = Math.imul(h ^ (h >>> 16), 0xc2b2ae35) >>> 0;
  h = (h ^ (h >>> 16)) >>> 0;
  return h === 0 ? 0x6d2b79f5 : h;
}

/** Uniform numbers in [0, 1) from a seeded mulberry32 stream (each output well mixed). */
function _stream(state: number): () => number {
  let a = state | 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The `samples` positions in [0, 1) of one axis: independent uniform draws
 * (`random`), or one draw inside each of `samples` equal strata, the
 * strata in a seeded random order (`lhs`: with several axes drawn jointly,
 * every axis covers each of its strata exactly once).
 */
export function unitSamples(
  samples: number,
  method: "random" | "lhs",
  seed: number,
  name: string,
): number[] {
  const u = _stream(_state(seed, name));
  if (method === "random") return Array.from({ length: samples }, () => u());
  const order = Array.from({ length: samples }, (_, i) => i);
  for (let i = samples - 1; i > 0; i--) {
    const j = Math.floor(u() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order.map((stratum) => (stratum + u()) / samples);
}

/**
 * The values of a sampled axis, in draw order, rounded to `digits`
 * significant digits (integers for `int_uniform`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sampleAxis } from "./matrix_sampling.ts";
 * const lr = sampleAxis("lr", { log_uniform: [1e-4, 1e-2], samples: 8 }, 7);
 * assert.equal(lr.length, 8);
 * assert.ok(lr.every((x) => x >= 1e-4 && x <= 1e-2));
 * ```
 */
export function sampleAxis(
  name: string,
  spec: SampledAxis,
  defaultSeed: number,
): number[] {
  const method = spec.method ?? "random";
  const us = unitSamples(spec.samples, method, spec.seed ?? defaultSeed, name);
  const digits = spec.digits ?? 4;
  const round = (x: number) => Number(x.toPrecision(digits));
  if (spec.int_uniform) {
    const lo = spec.int_uniform[0]!, hi = spec.int_uniform[1]!;
    return us.map((u) => Math.min(hi, lo + Math.floor(u * (hi - lo + 1))));
  }
  if (spec.log_uniform) {
    const lo = spec.log_uniform[0]!, hi = spec.log_uniform[1]!;
    const a = Math.log(lo), b = Math.log(hi);
    return us.map((u) =>
      Math.min(hi, Math.max(lo, round(Math.exp(a + u * (b - a)))))
    );
  }
  const lo = spec.uniform![0]!, hi = spec.uniform![1]!;
  return us.map((u) => Math.min(hi, Math.max(lo, round(lo + u * (hi - lo)))));
}

/** The group a sampled axis is drawn jointly with: same method, samples and seed. */
export function sampleGroup(spec: SampledAxis, defaultSeed: number): string {
  return `${spec.method ?? "random"}/${spec.samples}/${
    spec.seed ?? defaultSeed
  }`;
}
