/**
 * The shipped comparisons beside the shipped results bundle were computed
 * by the statistics code of this tree: otherwise `tables` on a fresh clone
 * resamples every compared table again (about a minute of CPU) and the
 * memo is dead weight.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import {
  memoFileOf,
  readMemoFile,
  statisticsCodeDigest,
} from "@envsmith/engine/tables";

const BUNDLE = new URL("./results/tables.esb.gz", import.meta.url).pathname;

Deno.test("results/tables.memo.json.gz holds the shipped tables' comparisons, computed by this tree's statistics code", () => {
  const file = memoFileOf(BUNDLE);
  assert.ok(existsSync(file), `${file} is missing`);
  const { code, comparisons } = readMemoFile(file);
  assert.equal(
    code,
    statisticsCodeDigest(),
    "the statistics code changed since the memo was written: write it again with `./envsmith tables --memo-out results/tables.memo.json.gz` (bench/RESULTS.md, tables in seconds)",
  );
  // 11 compared tables of the shipped experiments with the bundle's keys.
  assert.ok(comparisons.size >= 11, `${comparisons.size} comparisons`);
  for (const c of comparisons.values()) {
    assert.equal(c.resamples, 10_000);
    assert.ok(c.cells.length > 0);
  }
});
