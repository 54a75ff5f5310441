import assert from "node:assert/strict";
import { compileExperiment, type GraphNode } from "../compile/experiment.ts";
import { buildTable, type Lookup, tableMarkdown } from "./tables.ts";
import { comparisonCsv } from "./table_compare.ts";
import { kinds } from "../testdata/kinds.ts";
import type { Json } from "../types.ts";
import { scoresExperiment } from "../_test_util.ts";

function experiment(
  seeds: number[],
  compare: string,
  aggregate = "mean",
) {
  return scoresExperiment(
    "c",
    ["base", "better", "worse"],
    seeds,
    `  - name: cmp
    node: score
    rows: method
    columns: value.suites.*.success
    over: seed
    aggregate: ${aggregate}
    compare: ${compare}
`,
  );
}

/**
 * Suite x: base 0.5; better 0.5 + seed/20; worse 0.45. Suite y: all 0.5.
 * Per instance (4 per suite): success rates whose mean is the suite value
 * (1, ..., 1, the fractional part, 0, ..., 0).
 */
function value(n: GraphNode): Json {
  const seed = Number(n.variant.seed);
  const x = { base: 0.5, better: 0.5 + seed / 20, worse: 0.45 }[
    n.variant.method!
  ]!;
  const flags = (mean: number, suite: string) =>
    Array.from({ length: 4 }, (_, i) => ({
      id: `${suite}-${i}`,
      suite,
      success_rate: i < Math.floor(mean * 4 + 1e-9)
        ? 1
        : i === Math.floor(mean * 4 + 1e-9)
        ? Math.round(((mean * 4) % 1) * 1e9) / 1e9
        : 0,
    }));
  return {
    suites: { x: { success: x }, y: { success: 0.5 } },
    per_instance: [...flags(x, "x"), ...flags(0.5, "y")],
  };
}

const lookup: Lookup = (n) => ({ status: "ok", value: value(n) });
const cmd = (ids: string[]) => `run ${ids.join(" ")}`;

const INSTANCES =
  "instances: { path: value.per_instance, column: suite, value: success_rate }";

Deno.test("compare: seeds only without instances, sign-flip p, Holm over every cell of the table, too few pairs flagged", () => {
  const exp = experiment([1, 2, 3], "{ against: base }");
  const t = buildTable(exp, exp.tables[0]!, lookup, cmd);
  const c = t.comparison!;
  assert.equal(c.against, "base");
  assert.deepEqual(c.rows, ["better", "worse"]);
  assert.equal(c.resamples, 10_000);
  const cell = (row: string, col: string) =>
    c.cells.find((x) => x.row === row && x.column === col)!;
  // better - base in x: 0.05, 0.1, 0.15 -> mean 0.1; all positive: p = 2/8
  const bx = cell("better", "x");
  assert.equal(bx.n, 3);
  assert.equal(bx.instanceLevel, false);
  assert.ok(Math.abs(bx.diff! - 0.1) < 1e-12);
  assert.equal(bx.pSignFlip, 0.25);
  // no resample at or below 0: 2 / (B + 1)
  assert.ok(Math.abs(bx.pBootstrap! - 2 / 10_001) < 1e-12);
  assert.equal(bx.p, 0.25); // the larger of the two
  // resampled means of {0.05, 0.1, 0.15}: the lowest has probability
  // 1/27 > 2.5 %, so the 2.5 % quantile is 0.05 and the 97.5 % one 0.15
  assert.ok(Math.abs(bx.lo! - 0.05) < 1e-12 && Math.abs(bx.hi! - 0.15) < 1e-12);
  assert.equal(bx.excludesZero, true);
  // family: table: 2 rows × 3 columns; four p of 0.25 and two of 1 (y
  // has no difference): Holm multiplies the smallest by 6, so all are 1
  assert.deepEqual(c.family, { kind: "table", tests: 6, exploratory: [] });
  assert.equal(bx.pHolm, 1);
  assert.equal(bx.significant, false);
  const by = cell("better", "y");
  assert.deepEqual([by.diff, by.lo, by.hi, by.p, by.excludesZero], [
    0,
    0,
    0,
    1,
    false,
  ]);
  // the aggregate column (mean over x and y): half the x difference
  assert.ok(Math.abs(cell("better", "mean").diff! - 0.05) < 1e-12);
  assert.match(
    c.tooFewPairs ?? "",
    /n = 3 pairs no sign-flip test can reach p < 0.05 \(the smallest possible p is 0.250\)/,
  );
  assert.match(c.seedsOnly ?? "", /compare\.instances is not set/);
  assert.equal(c.resampling, "seeds");
  const md = tableMarkdown(t);
  assert.match(md, /Holm over all 6 tests of the table \(family: table\)/);
  assert.match(
    md,
    /\| better − base \| 3 \| \+0\.100 \[\+0\.050, \+0\.150\] \|/,
  );
  assert.match(md, /\| worse − base \| 3 \| 0\.250 \/ 1\.000 \|/);
  assert.match(md, /_Note: with n = 3 pairs no sign-flip test/);
  const csv = comparisonCsv(c).split("\n");
  assert.equal(
    csv[0],
    "row,against,column,n,diff,lo,hi,p,p_holm,exact,instance_level,excludes_zero,p_sign_flip,p_bootstrap,significant,exploratory,family,family_tests,interval,resamples,tost_margin,tost_p,tost_p_holm,equivalent",
  );
  assert.match(
    csv[1]!,
    /^better,base,x,3,0\.1,0\.05,0\.15,0\.25,1,true,false,true,0\.25,0\.000199980002,false,false,table,6,percentile,10000,,,,$/,
  );
  // family: column: Holm over the 2 rows of each column; the per-suite
  // columns are exploratory (never significant), the mean is the claim
  const col = experiment(
    [1, 2, 3, 4, 5, 6, 7],
    "{ against: base, family: column }",
  );
  const cc = buildTable(col, col.tables[0]!, lookup, cmd).comparison!;
  assert.deepEqual(cc.family, {
    kind: "column",
    tests: 2,
    exploratory: ["x", "y"],
  });
  const ccx = cc.cells.find((x) => x.row === "better" && x.column === "x")!;
  const ccm = cc.cells.find((x) => x.row === "better" && x.column === "mean")!;
  // 7 differences of one sign: 2/128 each for better and worse: Holm 4/128
  assert.equal(ccx.pHolm, 4 / 128);
  assert.equal(ccx.exploratory, true);
  assert.equal(ccx.significant, false);
  assert.equal(ccm.pHolm, 4 / 128);
  assert.equal(ccm.significant, true);
  assert.match(
    tableMarkdown(buildTable(col, col.tables[0]!, lookup, cmd)),
    /\| method \| n \| x \(expl\.\) \| y \(expl\.\) \| mean \|/,
  );
});

/** The differences better − base in x per seed and instance (3 seeds × 4 instances). */
const DX = [[0, 0, 0.2, 0], [0, 0, 0.4, 0], [0, 0, 0.6, 0]];

Deno.test("compare: crossed interval against every resample enumerated (3 seeds × 4 instances)", () => {
  const exp = experiment([1, 2, 3], `{ against: base, ${INSTANCES} }`);
  const c = buildTable(exp, exp.tables[0]!, lookup, cmd).comparison!;
  const bx = c.cells.find((x) => x.row === "better" && x.column === "x")!;
  assert.equal(bx.instanceLevel, true);
  assert.equal(c.resampling, "seeds and instances, crossed");
  assert.equal(c.seedsOnly, undefined);
  // the exact bootstrap distribution: 27 seed draws × 256 instance draws
  const dist = new Map<number, number>();
  for (let sk = 0; sk < 27; sk++) {
    const seeds = [sk % 3, Math.floor(sk / 3) % 3, Math.floor(sk / 9)];
    for (let ik = 0; ik < 256; ik++) {
      const inst = [ik & 3, (ik >> 2) & 3, (ik >> 4) & 3, (ik >> 6) & 3];
      let s = 0;
      for (const a of seeds) for (const i of inst) s += DX[a]![i]!;
      const x = Math.round((s / 12) * 1e9) / 1e9;
      dist.set(x, (dist.get(x) ?? 0) + 1 / 6912);
    }
  }
  const cdf = (x: number) =>
    [...dist].filter(([v]) => v <= x + 1e-12).reduce((a, [, p]) => a + p, 0);
  const below = (x: number) =>
    [...dist].filter(([v]) => v < x - 1e-12).reduce((a, [, p]) => a + p, 0);
  // the 10,000-resample ends sit at the exact 2.5 % and 97.5 % points
  assert.ok(
    below(bx.lo!) <= 0.025 + 0.005 && cdf(bx.lo!) >= 0.025 - 0.005,
    `${bx.lo}`,
  );
  assert.ok(
    below(bx.hi!) <= 0.975 + 0.005 && cdf(bx.hi!) >= 0.975 - 0.005,
    `${bx.hi}`,
  );
  // wider than the seeds-only interval [0.05, 0.15]: instance noise counts
  assert.ok(bx.lo! < 0.05 - 1e-9 && bx.hi! > 0.15 + 1e-9);
  // exactly 0 in 81/256 of instance draws (instance 2 never drawn): p_boot is large
  assert.ok(bx.pBootstrap! > 0.5, `${bx.pBootstrap}`);
  assert.equal(bx.p, bx.pBootstrap);
  // the cell intervals: the base row's x is 0.5 in every seed and instance draw? no:
  // base x per instance is (1, 1, 0, 0), so its resampled mean varies
  const base = c.cellIntervals!.find((x) =>
    x.row === "base" && x.column === "x"
  )!;
  assert.equal(base.estimate, 0.5);
  assert.ok(base.lo < 0.5 && base.hi > 0.5);
});

Deno.test("compare: equivalence (TOST), P(improvement), IQM; seeded and deterministic", () => {
  const exp = experiment(
    [1, 2, 3, 4, 5, 6],
    `{ against: base, family: column, equivalence: 0.2, probability_of_improvement: true, ${INSTANCES} }`,
    "[mean, iqm]",
  );
  const t = buildTable(exp, exp.tables[0]!, lookup, cmd);
  const c = t.comparison!;
  const cell = (row: string, col: string) =>
    c.cells.find((x) => x.row === row && x.column === col)!;
  // worse − base in mean: −0.025 at every seed; TOST within ±0.2: the
  // sign-flip one-sided p-values are 1/64 (all 6 shifted values positive),
  // the bootstrap ones smaller (the mean never reaches −0.2: x alone is at
  // least −0.2, and y adds 0); Holm over the 2 rows of the column: 2/64
  const wm = cell("worse", "mean");
  assert.ok(Math.abs(wm.diff! + 0.025) < 1e-12);
  assert.equal(wm.equivalence!.p, 1 / 64);
  assert.equal(wm.equivalence!.pHolm, 2 / 64);
  assert.equal(wm.equivalence!.equivalent, true);
  // better − base in mean: 0.025 .. 0.15, which does not stay below 0.2
  // with certainty: not shown
  assert.equal(cell("better", "mean").equivalence!.equivalent, false);
  // a per-suite cell is exploratory: never "equivalent"
  assert.equal(cell("worse", "x").equivalence!.equivalent, false);
  assert.match(tableMarkdown(t), /equivalent within ±0\.2 \(0\.031\)/);
  // IQM: base 0.5; better pools x = 0.55 .. 0.8 and six 0.5 in y: cutting
  // 3 at each end leaves 0.5, 0.5, 0.5, 0.55, 0.6, 0.65: 0.55
  const iqm = t.cells.find((x) => x.row === "better" && x.column === "iqm")!;
  assert.ok(Math.abs(iqm.mean! - 0.55) < 1e-12);
  assert.ok(iqm.interval && iqm.interval.lo <= 0.55 && iqm.interval.hi >= 0.55);
  assert.ok(Math.abs(cell("better", "iqm").diff! - 0.05) < 1e-12);
  // P(better > base): every seed pair in x, ties in y: (1 + 0.5) / 2
  const poi = c.improvement!.find((x) => x.row === "better")!;
  assert.equal(poi.estimate, 0.75);
  assert.ok(poi.lo >= 0.5 && poi.hi <= 0.75);
  // profiles: one per row, share above τ from 1 at τ = 0 down to 0 at τ = 1
  assert.equal(c.profiles!.rows.length, 3);
  const bp = c.profiles!.rows.find((r) => r.row === "better")!;
  assert.equal(bp.y[0], 1);
  assert.equal(bp.y[25], 6 / 12); // above 0.5: the six x scores
  assert.equal(bp.y[50], 0);
  // seeded: the same again
  assert.deepEqual(buildTable(exp, exp.tables[0]!, lookup, cmd).comparison, c);
  // BCa: another interval around the same estimate
  const bca = experiment(
    [1, 2, 3, 4, 5, 6],
    `{ against: base, interval: bca, ${INSTANCES} }`,
  );
  const bb = buildTable(bca, bca.tables[0]!, lookup, cmd).comparison!;
  assert.equal(bb.interval, "bca");
  const bbx = bb.cells.find((x) => x.row === "better" && x.column === "x")!;
  assert.ok(bbx.lo! < bbx.diff! && bbx.diff! < bbx.hi!);
});

Deno.test("compare: bad input is one line at load naming the table", () => {
  const bad = (compare: string, where = "") => () =>
    scoresExperiment(
      "b",
      ["base", "better", "worse"],
      [1, 2],
      `  - { name: tb, node: score, rows: method, columns: value.suites.*.success, over: seed, ${where} compare: ${compare} }
`,
    );
  const one = (f: () => unknown, re: RegExp) => {
    try {
      f();
    } catch (e) {
      const msg = (e as Error).message;
      // the count, then one line for the one problem
      const lines = msg.trim().split("\n");
      assert.equal(lines.length, 2, msg);
      assert.match(lines[0]!, /^1 error in b\.yaml:$/);
      assert.match(lines[1]!, re);
      return;
    }
    assert.fail("no error");
  };
  one(
    bad("{ against: base }", "where: { method: [better, worse] },"),
    /table tb: compare\.against "base" is not a row of this table/,
  );
  one(
    bad("{ against: base, equivalence: 0 }"),
    /table tb: compare\.equivalence .* must be above 0/,
  );
  one(
    bad("{ against: base, equivalence: -0.1 }"),
    /table tb: compare\.equivalence/,
  );
  one(
    bad("{ against: base, resamples: 999 }"),
    /table tb: compare\.resamples is 999; use at least 1,000/,
  );
  one(
    bad("{ against: base, family: table }", "where: { method: [base] },"),
    /table tb: compare\.family table is a family of paired tests, but this table has no pairs \(its only row is base\)/,
  );
});

Deno.test("compare: a baseline that is not a row, or a table without over, is an error at load", () => {
  assert.throws(
    () => experiment([1, 2], "{ against: bsae }"),
    /compare\.against must be a row \(a value of axis method\): "bsae"; did you mean "base"/,
  );
  assert.throws(
    () => experiment([1, 2], "{ against: base, paired_by: method }"),
    /compare\.paired_by must be the table's over axis \(seed\)/,
  );
});

Deno.test("tables: a list in where on the rows axis keeps those rows; on another axis it is an error", () => {
  const exp = scoresExperiment(
    "w",
    ["base", "better", "worse"],
    [1, 2],
    `  - { name: two, node: score, rows: method, columns: value.suites.*.success, over: seed, where: { method: [worse, base] } }
`,
  );
  const t = buildTable(exp, exp.tables[0]!, lookup, cmd);
  assert.deepEqual(t.rows, ["base", "worse"]);
  assert.throws(
    () =>
      compileExperiment(
        "w.yaml",
        `experiment: w\nseed: 1\nmatrix:\n  method: [a, b]\n  seed: [1, 2]\nnodes:\n  s: { kind: test.sleep, with: { ms: 0, value: [$matrix.method, $seed] } }\ntables:\n  - { name: x, node: s, rows: method, columns: value.v, where: { seed: [1, 3] } }\n`,
        { kinds, env: () => undefined },
      ),
    /a list in where selects rows, so it is for the rows axis \(method\) only/,
  );
});

Deno.test("terminal tables: a compact summary per comparison within 120 columns, per-suite numbers with --wide; (imported) once", () => {
  const exp = experiment(
    [1, 2, 3, 4, 5, 6, 7],
    `{ against: base, equivalence: 0.2, probability_of_improvement: true, ${INSTANCES} }`,
    "[mean, iqm]",
  );
  const imported: Lookup = (n) => ({
    status: "ok",
    value: value(n),
    imported: true,
  });
  const t = buildTable(exp, exp.tables[0]!, imported, cmd);
  const compact = tableMarkdown(t, { wide: false, csvDir: "out" });
  for (const line of compact.split("\n")) {
    assert.ok(line.length <= 120, `${line.length}: ${line}`);
  }
  // the aggregates only, then one summary per aggregate column
  assert.match(compact, /^\| method \| mean \| iqm \|$/m);
  assert.match(
    compact,
    /^\| method \| mean \[CI\] \| Δ vs base \[CI\] \| p \/ Holm \| ±0\.2 \| P\(>\) \|$/m,
  );
  // P(improvement) is per row (over the suites): shown with the first summary only
  assert.match(
    compact,
    /^\| method \| iqm \[CI\] \| Δ vs base \[CI\] \| p \/ Holm \| ±0\.2 \|$/m,
  );
  // better − base in mean: 7 positive pairs; a row: value [CI], Δ [CI], p / Holm, TOST, P(>)
  assert.match(
    compact,
    /^\| better \| 0\.\d{3} \[0\.\d{3}, 0\.\d{3}\] \| \+0\.100 \[\+0\.\d{3}, \+0\.\d{3}\]\*? \| \d\.\d{3} \/ \d\.\d{3} \| no \(\d\.\d{3}\) \| 0\.75 \[0\.\d\d, 0\.75\] \|$/m,
  );
  assert.match(
    compact,
    /`tables --wide`, or out\/cmp\.csv and cmp\.compare\.csv/,
  );
  assert.ok(!/\| x \|/.test(compact));
  assert.equal(compact.match(/\(imported\)/g)?.length, 1);
  // wide: every column and the grids
  const wide = tableMarkdown(t);
  assert.match(wide, /^\| method \| x \| y \| mean \| iqm \|$/m);
  assert.match(wide, /^\| method \| n \| x \| y \| mean \| iqm \|$/m);
  assert.equal(wide.match(/\(imported\)/g)?.length, 1);
  assert.match(
    wide,
    /\(imported\): every value of this table comes from a bundle/,
  );
});
