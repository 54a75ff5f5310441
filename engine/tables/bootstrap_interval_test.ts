import assert from "node:assert/strict";
import {
  acceleration,
  bcaInterval,
  bootstrapP,
  percentileInterval,
  tostFromResamples,
} from "./bootstrap_interval.ts";
import { normalCdf, normalQuantile } from "./normal_distribution.ts";

/** Student's t with 2 degrees of freedom has closed forms. */
const t2Cdf = (t: number) => 0.5 + t / (2 * Math.sqrt(2 + t * t));
const t2Quantile = (p: number) => (2 * p - 1) / Math.sqrt(2 * p * (1 - p));

/** A bootstrap distribution shaped like `estimate + se · T` on an even grid of B quantiles. */
function grid(
  quantile: (p: number) => number,
  estimate: number,
  se: number,
  B = 100_000,
): Float64Array {
  return Float64Array.from(
    { length: B },
    (_, k) => estimate + se * quantile((k + 0.5) / B),
  );
}

Deno.test("normal distribution: known values of Φ and Φ⁻¹", () => {
  assert.ok(Math.abs(normalCdf(0) - 0.5) < 1e-7);
  assert.ok(Math.abs(normalCdf(1.959963985) - 0.975) < 1e-7);
  assert.ok(Math.abs(normalCdf(-1) - 0.158655254) < 1e-7);
  for (
    const [p, z] of [[0.975, 1.959963985], [0.5, 0], [0.05, -1.644853627], [
      1e-6,
      -4.753424309,
    ]]
  ) {
    assert.ok(
      Math.abs(normalQuantile(p!) - z!) < 1e-6,
      `${p}: ${normalQuantile(p!)}`,
    );
  }
  assert.equal(normalQuantile(0), -Infinity);
  assert.ok(Number.isNaN(normalQuantile(1.5)));
});

Deno.test("TOST: the answer follows from the t distribution with 2 degrees of freedom", () => {
  // Δ̂ = 0.01, se = 0.01: H0 Δ ≤ −0.04 has p = F(−5), H0 Δ ≥ +0.04 has
  // p = 1 − F(3) = 0.0477: both below 0.05, equivalent within ±0.04
  const r = grid(t2Quantile, 0.01, 0.01);
  const eq = tostFromResamples(r, 0.04);
  assert.ok(Math.abs(eq.lower - t2Cdf(-5)) < 1e-4, `${eq.lower}`);
  assert.ok(Math.abs(eq.upper - (1 - t2Cdf(3))) < 1e-4, `${eq.upper}`);
  assert.equal(eq.p, eq.upper);
  assert.ok(eq.p < 0.05);
  // margin 0.035: 1 − F(2.5) = 0.0648, not shown
  const no = tostFromResamples(r, 0.035);
  assert.ok(Math.abs(no.p - (1 - t2Cdf(2.5))) < 1e-4, `${no.p}`);
  assert.ok(no.p > 0.05);
  // the same verdict as the 90 % interval lying inside ±margin
  const [lo, hi] = percentileInterval(r, 0.9);
  assert.ok(lo > -0.04 && hi < 0.04 && hi > 0.035);
});

Deno.test("bootstrap p: the smallest α whose percentile interval excludes the null", () => {
  const r = grid(normalQuantile, 0.3, 0.1);
  // P*(θ* ≤ 0) = Φ(−3) = 0.00135: p = 2 · that
  assert.ok(Math.abs(bootstrapP(r, 0) - 2 * normalCdf(-3)) < 1e-4);
  assert.equal(bootstrapP(new Float64Array(5), 0), 1); // every resample at 0
  assert.equal(bootstrapP(Float64Array.of(1, 2, 3), 0), 2 / 4); // floor 2/(B+1)
});

Deno.test("BCa: with z0 = 0 the levels move by the acceleration, Φ(z/(1 − a z)), worked by hand", () => {
  const r = grid(normalQuantile, 0, 1);
  const [plo, phi] = percentileInterval(r, 0.95);
  const [lo0, hi0] = bcaInterval(r, 0, 0, 0.95);
  assert.ok(Math.abs(lo0 - plo) < 1e-5 && Math.abs(hi0 - phi) < 1e-5);
  // a = 0.1: lower level Φ(−1.96/1.196) = Φ(−1.6388), upper Φ(1.96/0.804) = Φ(2.4378)
  const [lo, hi] = bcaInterval(r, 0, 0.1, 0.95);
  assert.ok(Math.abs(lo - -1.959964 / (1 + 0.1959964)) < 2e-3, `${lo}`);
  assert.ok(Math.abs(hi - 1.959964 / (1 - 0.1959964)) < 2e-3, `${hi}`);
  // a bias: the estimate at the 60th percentile gives z0 = Φ⁻¹(0.6)
  const z0 = normalQuantile(0.6);
  const est = normalQuantile(0.6);
  const [blo] = bcaInterval(r, est, 0, 0.95);
  assert.ok(Math.abs(blo - (2 * z0 - 1.959964)) < 2e-3, `${blo}`);
});

Deno.test("acceleration: the one-sample jackknife formula, and samples combined as Efron and Tibshirani's eq. 14.15", () => {
  // x = (0, 0, 3): influence U = x − x̄ = (−1, −1, 2): a = 6 / (6 · 6^1.5)
  const u = Float64Array.of(-1, -1, 2);
  assert.ok(Math.abs(acceleration([u]) - 1 / 6 ** 1.5) < 1e-12);
  // two samples of sizes 3 and 2
  const v = Float64Array.of(0.5, -0.5);
  const num = 6 / 27 + 0 / 8, den = 6 / 9 + 0.5 / 4;
  assert.ok(Math.abs(acceleration([u, v]) - num / (6 * den ** 1.5)) < 1e-12);
  assert.equal(acceleration([new Float64Array(3)]), 0);
});
