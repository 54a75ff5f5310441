import assert from "node:assert/strict";
import {
  comparePaired,
  holm,
  minSignFlipP,
  type Pair,
  signFlipP,
} from "./paired_stats.ts";

Deno.test("signFlipP: exact two-sided p-values computed by hand", () => {
  // 3 positive differences: only all-plus and all-minus are as extreme: 2/8
  assert.deepEqual(signFlipP([0.1, 0.2, 0.3]), { p: 0.25, exact: true });
  // |±1 ±2 ±3 ±4| >= |1 - 2 + 3 + 4| = 6: flipped-magnitude sets summing
  // to <= 2 or >= 8 ({}, {1}, {2} and their complements): 6 of 16
  assert.deepEqual(signFlipP([1, -2, 3, 4]), { p: 0.375, exact: true });
  // ties count as extreme: [1, -1] has sum 0, every assignment is as extreme
  assert.equal(signFlipP([1, -1]).p, 1);
  assert.equal(signFlipP([]).p, 1);
  // 10 positive differences: 2 / 1024
  assert.equal(signFlipP(Array(10).fill(0.05)).p, 2 / 1024);
  // floating-point ties: 0.1 + 0.2 vs 0.3 still counts as extreme
  assert.equal(signFlipP([0.1, 0.2, -0.3]).p, 1);
});

Deno.test("signFlipP: Monte Carlo beyond exactUpTo is seeded and close to exact", () => {
  const d = [0.3, -0.1, 0.2, 0.25, 0.05, -0.02, 0.15, 0.1, 0.12, -0.04];
  const exact = signFlipP(d);
  const mc = signFlipP(d, { exactUpTo: 5, draws: 50_000, seed: 3 });
  assert.equal(mc.exact, false);
  assert.deepEqual(signFlipP(d, { exactUpTo: 5, draws: 50_000, seed: 3 }), mc);
  assert.ok(Math.abs(mc.p - exact.p) < 0.01, `${mc.p} vs ${exact.p}`);
});

Deno.test("minSignFlipP: 5 pairs or fewer cannot reach 0.05", () => {
  assert.equal(minSignFlipP(3), 0.25);
  assert.equal(minSignFlipP(5), 0.0625);
  assert.equal(minSignFlipP(6), 0.03125);
  assert.equal(minSignFlipP(0), 1);
});

Deno.test("holm: step-down adjustment computed by hand; nulls are not tests", () => {
  // sorted 0.01, 0.03, 0.04 -> 3*0.01, 2*0.03, max(0.06, 1*0.04)
  assert.deepEqual(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06]);
  assert.deepEqual(holm([null, 0.02, 0.5]), [null, 0.04, 0.5]);
  assert.deepEqual(holm([0.6, 0.9]), [1, 1]);
  assert.deepEqual(holm([]), []);
});

Deno.test("comparePaired: pair-level bootstrap interval computed by hand", () => {
  // differences 0 and 1: resampled means are 0, 0.5, 1 with 1/4, 1/2, 1/4,
  // so the 2.5 % and 97.5 % quantiles are 0 and 1
  const c = comparePaired([{ a: 1, b: 1 }, { a: 2, b: 1 }], { seed: 5 });
  assert.equal(c.diff, 0.5);
  assert.equal(c.lo, 0);
  assert.equal(c.hi, 1);
  assert.equal(c.p, 1);
  assert.equal(c.instanceLevel, false);
  // constant differences: a zero-width interval
  const k = comparePaired([{ a: 0.7, b: 0.5 }, { a: 0.6, b: 0.4 }]);
  assert.ok(Math.abs(k.lo - 0.2) < 1e-12 && Math.abs(k.hi - 0.2) < 1e-12);
  // seeded
  const pairs = [0.1, 0.05, -0.02, 0.08, 0.12].map((d) => ({
    a: 0.5 + d,
    b: 0.5,
  }));
  assert.deepEqual(
    comparePaired(pairs, { seed: 9 }),
    comparePaired(pairs, { seed: 9 }),
  );
  assert.equal(comparePaired([]).n, 0);
});

Deno.test("comparePaired: instance resampling widens the interval by the evaluation noise", () => {
  // 10 pairs, each a paired difference of exactly +0.1 on 2 groups of 100
  // binary instances: a pair-level bootstrap sees no noise at all
  const group = (offset: number) =>
    Array.from({ length: 100 }, (_, i) => (i + offset) % 10 < 5 ? 1 : 0);
  const pairs: Pair[] = Array.from({ length: 10 }, (_, s) => {
    const b = [group(s), group(s + 3)];
    // a: 10 more successes per group, on instances where b failed
    const a = b.map((g) => {
      let extra = 10;
      return g.map((x) => (x === 0 && extra-- > 0 ? 1 : x));
    });
    return { a: 0.6, b: 0.5, instances: { a, b } };
  });
  const flat = comparePaired(pairs.map(({ a, b }) => ({ a, b })));
  assert.equal(flat.hi - flat.lo, 0);
  const c = comparePaired(pairs, { seed: 2 });
  assert.equal(c.instanceLevel, true);
  assert.ok(Math.abs(c.diff - 0.1) < 1e-12);
  // normal theory: paired differences are 1 on 10 % of instances, else 0;
  // 2000 instances in all -> SE = sqrt(0.1 * 0.9 / 2000) = 0.0067
  const width = c.hi - c.lo, expected = 2 * 1.96 * Math.sqrt(0.09 / 2000);
  assert.ok(
    Math.abs(width / expected - 1) < 0.15,
    `width ${width} vs ${expected}`,
  );
  assert.ok(c.lo < 0.1 && c.hi > 0.1);
});
