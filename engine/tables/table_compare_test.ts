import assert from "node:assert/strict";
import { compileExperiment, type GraphNode } from "../compile/experiment.ts";
import { buildTable, type Lookup, tableMarkdown } from "./tables.ts";
import { comparisonCsv } from "./table_compare.ts";
import { kinds } from "../testdata/kinds.ts";
import type { Json } from "../types.ts";

function experiment(seeds: number[], compare: string) {
  return compileExperiment(
    "c.yaml",
    `experiment: c
seed: 1
matrix:
  method: [base, better, worse]
  seed: [${seeds.join(", ")}]
nodes:
  score: { kind: test.sleep, with: { ms: 0, value: [$matrix.method, $seed] } }
tables:
  - name: cmp
    node: score
    rows: method
    columns: value.suites.*.success
    over: seed
    aggregate: mean
    compare: ${compare}
`,
    { kinds, env: () => undefined },
  );
}

/**
 * Suite x: base 0.5; better 0.5 + seed/10; worse 0.45. Suite y: all 0.5.
 * Per instance (4 per suite): success flags whose mean is the suite value.
 */
function value(n: GraphNode): Json {
  const seed = Number(n.variant.seed);
  const x = { base: 0.5, better: 0.5 + seed / 10, worse: 0.45 }[
    n.variant.method!
  ]!;
  const flags = (mean: number, suite: string) =>
    Array.from({ length: 4 }, (_, i) => ({
      id: `${suite}-${i}`,
      suite,
      success_rate: i < mean * 4 - 1e-9
        ? 1
        : (i === Math.floor(mean * 4) ? (mean * 4) % 1 : 0),
    }));
  return {
    suites: { x: { success: x }, y: { success: 0.5 } },
    per_instance: [...flags(x, "x"), ...flags(0.5, "y")],
  };
}

const lookup: Lookup = (n) => ({ status: "ok", value: value(n) });
const cmd = (ids: string[]) => `run ${ids.join(" ")}`;

Deno.test("compare: hand-computed differences, intervals, sign-flip and Holm p-values; too few pairs flagged", () => {
  const exp = experiment([1, 2, 3], "{ against: base }");
  const t = buildTable(exp, exp.tables[0]!, lookup, cmd);
  const c = t.comparison!;
  assert.equal(c.against, "base");
  assert.deepEqual(c.rows, ["better", "worse"]);
  const cell = (row: string, col: string) =>
    c.cells.find((x) => x.row === row && x.column === col)!;
  // better - base in x: 0.1, 0.2, 0.3 -> mean 0.2; all positive: p = 2/8
  const bx = cell("better", "x");
  assert.equal(bx.n, 3);
  assert.ok(Math.abs(bx.diff! - 0.2) < 1e-12);
  assert.equal(bx.p, 0.25);
  // resampled means of {0.1, 0.2, 0.3}: the lowest (0.1) has probability
  // 1/27 > 2.5 %, so the 2.5 % quantile is 0.1 and the 97.5 % one is 0.3
  assert.ok(Math.abs(bx.lo! - 0.1) < 1e-12 && Math.abs(bx.hi! - 0.3) < 1e-12);
  assert.equal(bx.excludesZero, true);
  // worse - base in x: -0.05 three times: p = 0.25; Holm over 2 rows: 0.5
  const wx = cell("worse", "x");
  assert.equal(wx.p, 0.25);
  assert.equal(wx.pHolm, 0.5);
  assert.equal(bx.pHolm, 0.5);
  // y: no difference at all: p = 1, interval [0, 0], not marked
  const by = cell("better", "y");
  assert.deepEqual([by.diff, by.lo, by.hi, by.p, by.excludesZero], [
    0,
    0,
    0,
    1,
    false,
  ]);
  // the aggregate column (mean over x and y): half the x difference
  assert.ok(Math.abs(cell("better", "mean").diff! - 0.1) < 1e-12);
  assert.match(
    c.tooFewPairs ?? "",
    /n = 3 pairs no sign-flip test can reach p < 0.05 \(the smallest possible p is 0.250\)/,
  );
  const md = tableMarkdown(t);
  assert.match(
    md,
    /\| better − base \| 3 \| \+0\.200 \[\+0\.100, \+0\.300\]\* \|/,
  );
  assert.match(md, /\| worse − base \| 3 \| 0\.250 \/ 0\.500 \|/);
  assert.match(md, /_Note: with n = 3 pairs no sign-flip test/);
  const csv = comparisonCsv(c).split("\n");
  assert.equal(
    csv[0],
    "row,against,column,n,diff,lo,hi,p,p_holm,exact,instance_level,excludes_zero",
  );
  assert.match(
    csv[1]!,
    /^better,base,x,3,0\.2,0\.1,0\.3,0\.25,0\.5,true,false,true$/,
  );
});

Deno.test("compare: instance records widen the interval; 6 pairs can reach p < 0.05; seeded", () => {
  const spec =
    "{ against: base, paired_by: seed, instances: { path: value.per_instance, column: suite, value: success_rate } }";
  const exp = experiment([1, 2, 3, 4, 5, 6], spec);
  const t = buildTable(exp, exp.tables[0]!, lookup, cmd);
  const c = t.comparison!;
  assert.equal(c.tooFewPairs, undefined);
  const bx = c.cells.find((x) => x.row === "better" && x.column === "x")!;
  assert.equal(bx.instanceLevel, true);
  assert.equal(bx.p, 2 / 64);
  // Holm over 2 rows: worse's p is 2/64 too (constant -0.05): both doubled
  assert.equal(bx.pHolm, 4 / 64);
  // the pair-level interval of better - base in x is within [0.1, 0.6];
  // instance resampling spreads it beyond the pair values
  const flatExp = experiment([1, 2, 3, 4, 5, 6], "{ against: base }");
  const flat = buildTable(flatExp, flatExp.tables[0]!, lookup, cmd)
    .comparison!.cells.find((x) => x.row === "better" && x.column === "x")!;
  assert.equal(flat.instanceLevel, false);
  assert.ok(
    bx.hi! - bx.lo! > flat.hi! - flat.lo!,
    `${bx.lo}..${bx.hi} vs ${flat.lo}..${flat.hi}`,
  );
  // a row with no pairs is named once, not shown as a row of dashes
  const noWorse: Lookup = (n) =>
    n.variant.method === "worse"
      ? { status: "skipped", why: "X not set" }
      : { status: "ok", value: value(n) };
  const md = tableMarkdown(buildTable(exp, exp.tables[0]!, noWorse, cmd));
  assert.match(md, /_No pairs \(not run or not computed\): worse\._/);
  assert.ok(!/\| worse − base/.test(md));
  assert.match(md, /\| worse \| not run: X not set \| {2}\|/);
  // values imported from a bundle are said to be
  const imported: Lookup = (n) => ({
    status: "ok",
    value: value(n),
    imported: true,
  });
  const im = buildTable(exp, exp.tables[0]!, imported, cmd);
  assert.equal(im.comparison!.imported, true);
  assert.match(tableMarkdown(im), /Compared values include results imported/);
  assert.equal(c.imported, undefined);
  // deterministic
  const again = buildTable(exp, exp.tables[0]!, lookup, cmd).comparison!;
  assert.deepEqual(again, c);
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
  const exp = compileExperiment(
    "w.yaml",
    `experiment: w
seed: 1
matrix:
  method: [base, better, worse]
  seed: [1, 2]
nodes:
  score: { kind: test.sleep, with: { ms: 0, value: [$matrix.method, $seed] } }
tables:
  - { name: two, node: score, rows: method, columns: value.suites.*.success, over: seed, where: { method: [worse, base] } }
`,
    { kinds, env: () => undefined },
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
