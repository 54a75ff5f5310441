/**
 * The shipped comparisons beside the shipped results bundles were computed
 * by the statistics code of this tree: otherwise `tables` on a fresh clone
 * resamples every compared table again (about a minute of CPU for the large
 * bundle) and the memo is dead weight.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import {
  memoFileOf,
  readMemoFile,
  statisticsCodeDigest,
} from "@envsmith/engine/tables";
import {
  SHIPPED_BUNDLES,
  SHIPPED_EXTRA_BUNDLE,
} from "./nodes/project_paths.ts";

const _path = (p: string) => new URL(`./${p}`, import.meta.url).pathname;

Deno.test("every memo beside a shipped bundle was computed by this tree's statistics code, and the extra bundle has one", () => {
  const present = SHIPPED_BUNDLES.map((b) => memoFileOf(_path(b)))
    .filter((f) => existsSync(f));
  assert.ok(
    present.includes(memoFileOf(_path(SHIPPED_EXTRA_BUNDLE))),
    `${memoFileOf(SHIPPED_EXTRA_BUNDLE)} is missing`,
  );
  for (const file of present) {
    const { code, comparisons } = readMemoFile(file);
    assert.equal(
      code,
      statisticsCodeDigest(),
      `the statistics code changed since ${file} was written: write it again with \`./envsmith tables FILES --memo-out ${file}\` (docs/results.md)`,
    );
    // paper-lm and trainee-to-trainer compare their rows; a comparison
    // whose rows the bundle no longer holds (keys moved since its export)
    // has no cells until the programme is rerun and re-exported.
    assert.ok(comparisons.size >= 2, `${comparisons.size} comparisons`);
    for (const c of comparisons.values()) assert.equal(c.resamples, 10_000);
  }
});
