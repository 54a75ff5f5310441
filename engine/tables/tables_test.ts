import assert from "node:assert/strict";
import { compileExperiment, type GraphNode } from "../compile/experiment.ts";
import {
  buildTable,
  formatCell,
  type Lookup,
  tableCsv,
  tableMarkdown,
} from "./tables.ts";
import { kinds } from "../testdata/kinds.ts";
import type { Json } from "../types.ts";

const YAML = `experiment: t
seed: 1
matrix:
  method:
    - fixed
    - rules
    - { name: llm, requires_env: [NO_SUCH_KEY_FOR_TEST] }
  seed: [1, 2, 3]
  size: [8, 16]
nodes:
  score: { kind: test.sleep, with: { ms: 0, value: [$matrix.method, $seed, $matrix.size] } }
tables:
  - name: by_size
    node: score
    rows: method
    columns: size
    value: value.value.success
    over: seed
  - name: suites
    title: Success per suite
    node: score
    rows: method
    columns: value.value.suites.*.success
    where: { size: 16 }
    over: seed
    aggregate: mean
    digits: 2
  - name: paths
    node: score
    rows: seed
    columns: [value.value.success, { label: first suite, path: value.value.suites.base.success }]
    where: { size: 8, method: rules }
`;

const exp = compileExperiment("t.yaml", YAML, { kinds, env: () => undefined });

/** success = method offset + seed/10 + size/100; suites base/crowded differ by 0.1. */
function synthetic(n: GraphNode): Json {
  const m = { fixed: 0, rules: 0.5, llm: 0.9 }[n.variant.method!]!;
  const s = Number(n.variant.seed) / 10;
  const z = Number(n.variant.size) / 100;
  return {
    value: {
      success: m + s + z,
      suites: { base: { success: m + s }, crowded: { success: m + s - 0.1 } },
    },
    seed: 0,
  };
}

const full: Lookup = (n) =>
  n.skipped
    ? { status: "skipped", why: n.skipped }
    : { status: "ok", value: synthetic(n) };
const cmd = (ids: string[]) => `deno task run t.yaml --only ${ids.join(" ")}`;

Deno.test("table: axis columns, mean ± std over seeds, skipped rows", () => {
  const t = buildTable(exp, exp.tables[0]!, full, cmd);
  assert.deepEqual(t.rows, ["fixed", "rules", "llm"]);
  assert.deepEqual(t.columns, ["8", "16"]);
  const c = t.cells.find((c) => c.row === "rules" && c.column === "16")!;
  assert.equal(c.n, 3);
  assert.ok(Math.abs(c.mean! - (0.5 + 0.2 + 0.16)) < 1e-12);
  assert.ok(Math.abs(c.std! - 0.1) < 1e-12);
  assert.equal(formatCell(t, c), "0.860 ± 0.100");
  const llm = t.cells.find((c) => c.row === "llm" && c.column === "8")!;
  assert.equal(formatCell(t, llm), "not run: NO_SUCH_KEY_FOR_TEST not set");
  assert.deepEqual(t.missing, []);
  const md = tableMarkdown(t);
  assert.match(
    md,
    /^### by_size\n\n\| method \| 8 \| 16 \|\n\|---\|---:\|---:\|\n\| fixed \| 0\.280 ± 0\.100 \| 0\.360 ± 0\.100 \|/,
  );
  assert.match(
    md,
    /\| llm \| not run: NO_SUCH_KEY_FOR_TEST not set \| {2}\|$/m,
  );
  assert.match(md, /_mean ± std over seed \(n=3: 1, 2, 3\)/);
});

Deno.test("table: wildcard columns with a mean column aggregated per seed", () => {
  const t = buildTable(exp, exp.tables[1]!, full, cmd);
  assert.equal(t.title, "Success per suite");
  assert.deepEqual(t.columns, ["base", "crowded", "mean"]);
  const base = t.cells.find((c) => c.row === "fixed" && c.column === "base")!;
  assert.ok(Math.abs(base.mean! - 0.2) < 1e-12);
  const mean = t.cells.find((c) => c.row === "fixed" && c.column === "mean")!;
  assert.equal(mean.n, 3);
  assert.ok(Math.abs(mean.mean! - 0.15) < 1e-12);
  assert.ok(Math.abs(mean.std! - 0.1) < 1e-12);
  assert.equal(formatCell(t, mean), "0.15 ± 0.10");
  assert.equal(
    t.cells.find((c) => c.row === "llm" && c.column === "mean")!.skipped,
    "NO_SUCH_KEY_FOR_TEST not set",
  );
});

Deno.test("table: field-path columns with labels, rows = seed, no over", () => {
  const t = buildTable(exp, exp.tables[2]!, full, cmd);
  assert.deepEqual(t.rows, ["1", "2", "3"]);
  assert.deepEqual(t.columns, ["value.success", "first suite"]);
  assert.equal(
    formatCell(
      t,
      t.cells.find((c) => c.row === "2" && c.column === "first suite")!,
    ),
    "0.700",
  );
  const x = 0.5 + 0.1 + 0.08;
  assert.equal(
    tableCsv(t).split("\n")[1],
    `1,value.success,${x},0,1,,,=${x},,,`,
  );
});

Deno.test("table: missing nodes are listed with the command that computes them; n shown", () => {
  const partial: Lookup = (n) =>
    n.id === "score[method=rules,seed=2,size=8]" ||
      n.id === "score[method=fixed,seed=3,size=8]"
      ? { status: "missing" }
      : full(n);
  const t = buildTable(exp, exp.tables[0]!, partial, cmd);
  assert.deepEqual(t.missing, [
    "score[method=fixed,seed=3,size=8]",
    "score[method=rules,seed=2,size=8]",
  ]);
  assert.equal(
    t.command,
    "deno task run t.yaml --only score[method=fixed,seed=3,size=8] score[method=rules,seed=2,size=8]",
  );
  const c = t.cells.find((c) => c.row === "rules" && c.column === "8")!;
  assert.equal(c.n, 2);
  assert.equal(formatCell(t, c), "0.780 ± 0.141 (n=2)");
  assert.deepEqual(c.missing, ["score[method=rules,seed=2,size=8]"]);
  const md = tableMarkdown(t);
  assert.match(
    md,
    /\*\*Incomplete: 2 nodes are not in the cache:\*\* score\[method=fixed,seed=3,size=8\], score\[method=rules,seed=2,size=8\]/,
  );
  assert.match(md, /Compute them with: `deno task run t\.yaml --only /);
});

Deno.test("table: a field that is not a number is reported, not averaged", () => {
  const odd: Lookup = (n) =>
    n.skipped
      ? { status: "skipped", why: n.skipped }
      : { status: "ok", value: { value: { success: "high" } } };
  const t = buildTable(exp, exp.tables[0]!, odd, cmd);
  const c = t.cells.find((c) => c.row === "fixed" && c.column === "8")!;
  assert.equal(c.mean, null);
  assert.match(
    c.notes[0]!,
    /score\[method=fixed,seed=1,size=8\]: value\.value\.success is not a number/,
  );
  assert.match(tableMarkdown(t), /Problems: /);
});

Deno.test("tables without files: every experiments/*.yaml that has tables", async () => {
  const { experimentsWithTables } = await import("../cli/tables_command.ts");
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/a.yaml`,
      "experiment: a\nseed: 1\nnodes: {}\ntables:\n  - { name: x, node: n, rows: r, columns: c }\n",
    );
    await Deno.writeTextFile(
      `${dir}/b.yaml`,
      "experiment: b\nseed: 1\nnodes: {}\n",
    );
    await Deno.writeTextFile(
      `${dir}/c.yml`,
      "# yaml-language-server: $schema=x\nexperiment: c\nseed: 1\nnodes: {}\ntables: []\n",
    );
    await Deno.writeTextFile(`${dir}/notes.txt`, "tables:\n");
    assert.deepEqual(experimentsWithTables(dir), [
      `${dir}/a.yaml`,
      `${dir}/c.yml`,
    ]);
    assert.deepEqual(experimentsWithTables(`${dir}/missing`), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const STAGED = `experiment: s
seed: 1
matrix:
  method: [fixed, llm]
  seed: [1, 2]
nodes:
  loop:
    kind: stages
    count: 3
    from: { x: 0 }
    each:
      x: { kind: test.add, with: { a: $stage, note: [$matrix.method, $prev.x, $seed] } }
  score: { kind: test.add, with: { a: 1, note: $loop.x } }
  early: { kind: test.add, with: { a: 1, note: $loop.1.x } }
tables:
  - name: early
    node: early
    rows: method
    columns: [{ label: fallback, node: "loop.*.x", path: report.llm.fallback }]
    over: seed
  - name: rates
    node: score
    rows: method
    columns:
      - value.sum
      - { label: fallback, node: "loop.*.x", path: report.llm.fallback }
      - { label: last, node: loop.x, path: report.llm.fallback }
    over: seed
    aggregate: mean
`;

Deno.test("table: columns from other nodes of the same variant, a stage wildcard takes the mean over stages", () => {
  const sx = compileExperiment("s.yaml", STAGED, {
    kinds,
    env: () => undefined,
  });
  // fallback of stage k of method m, seed s: llm falls back at stage 1 always
  // and at stage 2 with seed 2; fixed has no llm tally (null).
  const lookup: Lookup = (n) => {
    if (n.plain === "score" || n.plain === "early") {
      return { status: "ok", value: { sum: 0.5 } };
    }
    const stage = Number(n.plain.split(".")[1]);
    const llm = n.variant.method === "llm"
      ? {
        fallback: stage === 1 || (stage === 2 && n.variant.seed === "2")
          ? 1
          : 0,
      }
      : null;
    return { status: "ok", value: {}, report: { llm } };
  };
  const t = buildTable(sx, sx.tables[1]!, lookup, cmd);
  assert.deepEqual(t.columns, ["sum", "fallback", "last", "mean"]);
  const cell = (row: string, col: string) =>
    t.cells.find((c) => c.row === row && c.column === col)!;
  // seed 1: 1/3, seed 2: 2/3 -> mean 0.5
  assert.ok(Math.abs(cell("llm", "fallback").mean! - 0.5) < 1e-12);
  assert.ok(Math.abs(cell("llm", "fallback").std! - Math.SQRT2 / 6) < 1e-12);
  assert.equal(cell("llm", "fallback").n, 2);
  // A node that depends on stages 0 and 1 only averages over those two:
  // seed 1: 1/2, seed 2: 1/2.
  const e = buildTable(sx, sx.tables[0]!, lookup, cmd);
  const ec = e.cells.find((c) => c.row === "llm")!;
  assert.deepEqual([ec.mean, ec.std], [0.5, 0]);
  assert.deepEqual(
    cell("llm", "last").samples.map((s) => s.value),
    [0, 1],
  );
  // null = not applicable: no value, no problem note.
  assert.equal(cell("fixed", "fallback").mean, null);
  assert.deepEqual(cell("fixed", "fallback").notes, []);
  // The aggregate is over the table node's own columns only.
  assert.equal(cell("llm", "mean").mean, 0.5);
  const md = tableMarkdown(t);
  assert.match(
    md,
    /fallback: from loop\.\*\.x, mean over the stages the row depends on/,
  );
  assert.match(md, /last: from loop\.x/);
  // A missing stage node is listed.
  const partial: Lookup = (n) =>
    n.id === "loop.1.x[method=llm,seed=2]" ? { status: "missing" } : lookup(n);
  const p = buildTable(sx, sx.tables[1]!, partial, cmd);
  assert.deepEqual(p.missing, ["loop.1.x[method=llm,seed=2]"]);
  assert.equal(
    p.cells.find((c) => c.row === "llm" && c.column === "fallback")!.n,
    1,
  );
});

Deno.test("table: a column node that does not exist, or varies with more axes, is a validation error", () => {
  const bad = STAGED.replace('node: "loop.*.x"', 'node: "lop.*.x"').replace(
    "node: loop.x,",
    "node: score2,",
  );
  let err: unknown;
  try {
    compileExperiment("s.yaml", bad, { kinds, env: () => undefined });
  } catch (e) {
    err = e;
  }
  const msg = String((err as Error).message);
  assert.match(
    msg,
    /column fallback reads node "lop\.\*\.x", which does not exist/,
  );
  assert.match(msg, /column last reads node "score2", which does not exist/);
});

Deno.test("table: a `*` column whose nodes are all missing still lists them and the command", () => {
  const none: Lookup = (n) =>
    n.skipped ? { status: "skipped", why: n.skipped } : { status: "missing" };
  const t = buildTable(exp, exp.tables[1]!, none, cmd);
  assert.deepEqual(t.columns, ["mean"]); // no keys to lay out yet
  assert.equal(t.missing.length, 6); // fixed and rules x 3 seeds (llm skipped)
  assert.match(
    tableMarkdown(t),
    /\*\*Incomplete: 6 nodes are not in the cache:\*\*/,
  );
  assert.match(
    t.command!,
    /^deno task run t\.yaml --only score\[method=fixed,seed=1,size=16\]/,
  );
  // The aggregate cell says what the row lacks, as the cells of tables with
  // columns do: missing, or not run (never a bare dash).
  const agg = (row: string) =>
    formatCell(t, t.cells.find((c) => c.row === row && c.column === "mean")!);
  assert.equal(agg("fixed"), "missing");
  assert.equal(agg("rules"), "missing");
  assert.equal(agg("llm"), "not run: NO_SUCH_KEY_FOR_TEST not set");
  assert.deepEqual(
    t.cells.find((c) => c.row === "fixed")!.missing,
    [1, 2, 3].map((s) => `score[method=fixed,seed=${s},size=16]`),
  );
});

Deno.test("table: a `*` column path with a typo names the path that matched nothing, with a suggestion", () => {
  const typo = compileExperiment(
    "t.yaml",
    YAML.replace("value.value.suites.*.success", "value.value.suits.*.success"),
    { kinds, env: () => undefined },
  );
  const t = buildTable(typo, typo.tables[1]!, full, cmd);
  assert.deepEqual(t.columns, ["mean"]);
  assert.deepEqual(t.unmatched, [
    'column path value.value.suits.*.success matched nothing: value.value has no object "suits"; did you mean "suites"?',
  ]);
  assert.match(
    tableMarkdown(t),
    /_column path value\.value\.suits\.\*\.success matched nothing: .*did you mean "suites"\?/,
  );
  // With nothing computed yet there is nothing to match: no note.
  const none = buildTable(typo, typo.tables[1]!, () => ({
    status: "missing",
  }), cmd);
  assert.equal(none.unmatched, undefined);
});

const GRID = `experiment: g
seed: 1
matrix:
  model: [base, tuned]
  seed: [1, 2]
nodes:
  score: { kind: test.sleep, with: { ms: 0, value: [$matrix.model, $seed] } }
tables:
  - name: grid
    node: score
    rows: model
    columns:
      - { label: "* valid", path: value.value.cells.*.valid }
      - { label: "* optimal", path: value.value.cells.*.optimal }
    groups: { by: "^(\\\\d+ag)_", mean: "$1 mean" }
    over: seed
    compare: { against: base }
`;

Deno.test("table: groups lay the * columns out by a pattern over their keys, side by side, with a mean per group", () => {
  const gx = compileExperiment("g.yaml", GRID, { kinds, env: () => undefined });
  // valid = size/10 + seed/100 (+0.2 tuned); optimal = valid / 2
  const lookup: Lookup = (n) => {
    const cells: Record<string, Json> = {};
    for (const k of ["3ag_3x3", "3ag_4x4", "4ag_4x4"]) {
      const v = Number(k.split("x")[1]) / 10 + Number(n.variant.seed) / 100 +
        (n.variant.model === "tuned" ? 0.2 : 0);
      cells[k] = { valid: v, optimal: v / 2 };
    }
    return { status: "ok", value: { value: { cells } } };
  };
  const t = buildTable(gx, gx.tables[0]!, lookup, cmd);
  assert.deepEqual(t.columns, [
    "3ag_3x3 valid",
    "3ag_3x3 optimal",
    "3ag_4x4 valid",
    "3ag_4x4 optimal",
    "3ag mean valid",
    "3ag mean optimal",
    "4ag_4x4 valid",
    "4ag_4x4 optimal",
    "4ag mean valid",
    "4ag mean optimal",
  ]);
  const cell = (row: string, col: string) =>
    t.cells.find((c) => c.row === row && c.column === col)!;
  // 3ag mean valid of tuned: seed 1 (0.51 + 0.61) / 2, seed 2 (0.52 + 0.62) / 2
  const m = cell("tuned", "3ag mean valid");
  assert.equal(m.n, 2);
  assert.ok(Math.abs(m.mean! - 0.565) < 1e-12);
  assert.ok(Math.abs(m.std! - Math.SQRT2 * 0.005) < 1e-12);
  assert.ok(Math.abs(cell("base", "4ag mean optimal").mean! - 0.2075) < 1e-12);
  // the group means are compared like any column (seeds resampled)
  const d = t.comparison!.cells.find((c) =>
    c.row === "tuned" && c.column === "3ag mean valid"
  )!;
  assert.ok(Math.abs(d.diff! - 0.2) < 1e-9);
  const md = tableMarkdown(t);
  assert.match(md, /\| model \| 3ag_3x3 valid \| 3ag_3x3 optimal \|/);
  assert.match(
    md,
    /3ag mean valid, 3ag mean optimal, 4ag mean valid, 4ag mean optimal: mean over each group's columns per seed/,
  );
  // bad groups are refused before anything runs, naming the table
  assert.throws(
    () =>
      compileExperiment("g.yaml", GRID.replace("^(\\\\d+ag)_", "(["), {
        kinds,
        env: () => undefined,
      }),
    /table grid: groups.by is not a regular expression/,
  );
  assert.throws(
    () =>
      compileExperiment(
        "g.yaml",
        GRID.replace("value.value.cells.*.valid", "value.value.valid")
          .replace("value.value.cells.*.optimal", "value.value.optimal"),
        { kinds, env: () => undefined },
      ),
    /table grid: groups group the columns a \* path expands to/,
  );
});

Deno.test("table: compare.instances with label templates resamples the instances of templated * columns", () => {
  const yaml = GRID.replace(
    "    compare: { against: base }",
    `    compare:
      against: base
      resamples: 1000
      instances:
        - { path: value.value.per_instance, column: cell, value: valid, label: "* valid" }
        - { path: value.value.per_instance, column: cell, value: optimal, label: "* optimal" }`,
  );
  const gx = compileExperiment("g.yaml", yaml, { kinds, env: () => undefined });
  const lookup: Lookup = (n) => {
    const cells: Record<string, Json> = {};
    const per: Json[] = [];
    for (const k of ["3ag_3x3", "3ag_4x4", "4ag_4x4"]) {
      const xs = [0, 1, 1, 0].map((x, i) =>
        (i + Number(n.variant.seed)) % 2 === 0 ? x : 1 - x
      );
      const v = xs.reduce((a, b) => a + b, 0) / xs.length;
      cells[k] = { valid: v, optimal: v / 2 };
      xs.forEach((x, i) =>
        per.push({ id: `${k}_${i}`, cell: k, valid: x, optimal: x / 2 })
      );
    }
    return { status: "ok", value: { value: { cells, per_instance: per } } };
  };
  const t = buildTable(gx, gx.tables[0]!, lookup, cmd);
  const note = t.comparison!.seedsOnly!;
  // only the group means (no per-instance records) fall back to seeds
  assert.match(
    note,
    /3ag mean valid, 3ag mean optimal, 4ag mean valid, 4ag mean optimal: their intervals resample seeds only/,
  );
  assert.doesNotMatch(note, /3ag_3x3/);
  assert.match(
    note,
    /no per-instance outcomes \(value\.value\.per_instance\) for 3ag mean valid/,
  );
});
