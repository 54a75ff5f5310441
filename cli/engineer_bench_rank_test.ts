import assert from "node:assert/strict";
import { rankAgreement, rankAgreementText } from "./engineer_bench_rank.ts";
import { spearman } from "../engineer/learned_bench.ts";

const table = (col: string, xs: Record<string, number | null>) => ({
  rows: Object.keys(xs),
  cells: Object.entries(xs).map(([row, mean]) => ({ row, column: col, mean })),
});

Deno.test("spearman: perfect, reversed, ties averaged, too short", () => {
  assert.equal(spearman([1, 2, 3, 4], [10, 20, 30, 40]), 1);
  assert.equal(spearman([1, 2, 3, 4], [4, 3, 2, 1]), -1);
  // ranks [1.5, 1.5, 3, 4] vs [1, 2, 3, 4]
  assert.ok(Math.abs(spearman([1, 1, 2, 3], [1, 2, 3, 4])! - 0.9486833) < 1e-6);
  assert.equal(spearman([1, 2], [1, 2]), null);
  assert.equal(spearman([1, 1, 1], [1, 2, 3]), null);
});

Deno.test("rank agreement: low regret and high success agree; rows missing in either are left out", () => {
  const r = rankAgreement(
    table("regret", { a: 0.3, b: 0.1, c: 0.2, d: 0.05, e: 0.2 }),
    table("mean", { a: 0.2, b: 0.6, c: 0.4, d: null }),
  );
  assert.deepEqual(r.rows, ["a", "b", "c"]);
  assert.equal(r.rho, 1);
  assert.match(rankAgreementText(r), /3 rows: a, b, c\): 1\.000/);
  const none = rankAgreement(table("regret", { a: 0.1 }), table("mean", {}));
  assert.match(rankAgreementText(none), /not available \(0 rows/);
});
