/**
 * The shipped comparisons beside the shipped results bundles were computed
 * by the statistics code of this tree: otherwise `tables` on a fresh clone
 * resamples every compared table again (about a minute of CPU for the large
 * bundle) and the memo is dead weight.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { parse } from "yaml";
import {
  memoFileOf,
  readMemoFile,
  statisticsCodeDigest,
} from "@envsmith/engine/tables";
import {
  SHIPPED_BUNDLE,
  SHIPPED_BUNDLES,
  SHIPPED_EXTRA_BUNDLE,
} from "./nodes/project_paths.ts";

const _path = (p: string) => new URL(`./${p}`, import.meta.url).pathname;

/** The experiments each shipped bundle holds (docs/results.md), by its memo file. */
const SHIPPED_EXPERIMENTS: Record<string, string[]> = {
  [memoFileOf(_path(SHIPPED_BUNDLE))]: [
    "ablate-context",
    "paper",
    "shaping",
    "robustness",
    "tuning",
    "quick",
    "smoke",
    "template",
  ],
  [memoFileOf(_path(SHIPPED_EXTRA_BUNDLE))]: [
    "paper-lm",
    "trainee-to-trainer",
    "sizes",
    "ablate-learned",
    "maze",
  ],
};

/** How many tables of these experiment files compare their rows. */
function comparedTables(names: string[]): number {
  let n = 0;
  for (const name of names) {
    const doc = parse(Deno.readTextFileSync(_path(`experiments/${name}.yaml`)));
    for (const t of doc.tables ?? []) if (t.compare) n++;
  }
  return n;
}

Deno.test("every shipped bundle has its memo, computed by this tree's statistics code, with every compared table of its experiments", () => {
  for (const file of SHIPPED_BUNDLES.map((b) => memoFileOf(_path(b)))) {
    assert.ok(existsSync(file), `${file} is missing (docs/results.md)`);
    const shipped = SHIPPED_EXPERIMENTS[file];
    assert.ok(shipped, `${file}: list the experiments its bundle ships above`);
    const { code, comparisons } = readMemoFile(file);
    assert.equal(
      code,
      statisticsCodeDigest(),
      `the statistics code changed since ${file} was written: write it again with \`./envsmith tables FILES --memo-out ${file}\` (docs/results.md)`,
    );
    // every compared table of the experiments in the bundle has its comparison
    // (more when the same memo holds the other bundle's)
    const wanted = comparedTables(shipped);
    assert.ok(
      comparisons.size >= wanted,
      `${file} holds ${comparisons.size} comparisons, the experiments it ships declare ${wanted} compared tables: write it again (docs/results.md)`,
    );
    for (const c of comparisons.values()) assert.equal(c.resamples, 10_000);
  }
});
