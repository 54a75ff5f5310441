import assert from "node:assert/strict";
import { join } from "node:path";
import type { GraphNode } from "../compile/experiment.ts";
import { buildTable, type Lookup } from "./tables.ts";
import {
  type ComparisonMemo,
  DirComparisonMemo,
  memoJson,
  parseMemoJson,
  readMemoFile,
  writeMemoFile,
} from "./comparison_memo.ts";
import type { Comparison } from "./table_compare.ts";
import type { Json } from "../types.ts";
import { scoresExperiment } from "../_test_util.ts";

const exp = scoresExperiment(
  "c",
  ["base", "better"],
  [1, 2, 3, 4, 5, 6],
  `  - name: cmp
    node: score
    rows: method
    columns: value.suites.*.success
    over: seed
    aggregate: mean
    compare: { against: base, resamples: 1000, instances: { path: value.per_instance, column: suite, value: success_rate } }
`,
);

function value(n: GraphNode, bump = 0): Json {
  const seed = Number(n.variant.seed);
  const x = n.variant.method === "better" ? 0.5 + seed / 40 + bump : 0.5;
  const inst = Array.from({ length: 8 }, (_, i) => ({
    id: `x-${i}`,
    suite: "x",
    success_rate: i < Math.round(x * 8) ? 1 : 0,
  }));
  return { suites: { x: { success: x } }, per_instance: inst };
}

/** A memo that counts its hits, over a Map. */
function countingMemo(): ComparisonMemo & { hits: number; size: number } {
  const m = new Map<string, Comparison>();
  return {
    hits: 0,
    get size() {
      return m.size;
    },
    get(k) {
      const c = m.get(k);
      if (c) this.hits++;
      return c === undefined
        ? undefined
        : parseMemoJson(memoJson(c)) as Comparison;
    },
    set(k, c) {
      m.set(k, c);
    },
  };
}

const cmd = (ids: string[]) => `run ${ids.join(" ")}`;

Deno.test("a remembered comparison is the computed one, served while every input key is the same", () => {
  const keyed = (salt: string): Lookup => (n) => ({
    status: "ok",
    value: value(n),
    key: `${salt}-${n.id}`,
  });
  const spec = exp.tables[0]!;
  const plain = buildTable(exp, spec, keyed("a"), cmd);
  const memo = countingMemo();
  const first = buildTable(exp, spec, keyed("a"), cmd, { memo });
  assert.equal(memo.hits, 0);
  assert.equal(memo.size, 1);
  const second = buildTable(exp, spec, keyed("a"), cmd, { memo });
  assert.equal(memo.hits, 1);
  assert.deepEqual(second, plain);
  assert.deepEqual(first, plain);
  // Another key of any input (a node recomputed) is another comparison.
  const bumped: Lookup = (n) => ({
    status: "ok",
    value: value(n, n.id.includes("seed=3") ? 0.3 : 0),
    key: `b-${n.id}`,
  });
  const third = buildTable(exp, spec, bumped, cmd, { memo });
  assert.equal(memo.hits, 1);
  assert.notDeepEqual(third.comparison, plain.comparison);
  // Values without keys are never remembered.
  const unkeyed: Lookup = (n) => ({ status: "ok", value: value(n) });
  buildTable(exp, spec, unkeyed, cmd, { memo });
  buildTable(exp, spec, unkeyed, cmd, { memo });
  assert.equal(memo.hits, 1);
  assert.equal(memo.size, 2);
  // The imported mark is the table's own, not the remembered one's.
  const imported: Lookup = (n) => ({
    status: "ok",
    value: value(n),
    key: `a-${n.id}`,
    imported: true,
  });
  const fromBundle = buildTable(exp, spec, imported, cmd, { memo });
  assert.equal(memo.hits, 2);
  assert.equal(fromBundle.comparison!.imported, true);
  assert.equal(second.comparison!.imported, undefined);
});

Deno.test("memo JSON keeps NaN, infinities and -0; a memo file round-trips; a directory memo stores and serves", () => {
  const x = { a: NaN, b: -0, c: Infinity, d: -Infinity, e: [1.5, null] };
  const back = parseMemoJson(memoJson(x)) as typeof x;
  assert.ok(Number.isNaN(back.a));
  assert.ok(Object.is(back.b, -0));
  assert.equal(back.c, Infinity);
  assert.equal(back.d, -Infinity);
  assert.deepEqual(back.e, [1.5, null]);

  const dir = Deno.makeTempDirSync();
  try {
    const keyed: Lookup = (n) => ({
      status: "ok",
      value: value(n),
      key: `k-${n.id}`,
    });
    const memo = new DirComparisonMemo(
      join(dir, "memo"),
      (p) => join(dir, `${p}.tmp`),
    );
    const t = buildTable(exp, exp.tables[0]!, keyed, cmd, { memo });
    assert.equal(memo.used.size, 1);
    const file = join(dir, "m.memo.json.gz");
    assert.equal(writeMemoFile(file, memo.used), 1);
    const read = readMemoFile(file);
    assert.deepEqual([...read.comparisons.values()][0], t.comparison);
    const again = new DirComparisonMemo(
      join(dir, "memo"),
      (p) => join(dir, `${p}.tmp`),
    );
    assert.deepEqual(
      buildTable(exp, exp.tables[0]!, keyed, cmd, { memo: again }),
      t,
    );
    assert.equal(again.used.size, 1, "served from the directory");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
