/**
 * The Python family example end to end, tiny: two engineers, two seeds,
 * two stages, a few instances; `run` computes it, `plan` then finds all
 * of it cached, and `tables` prints the comparison with intervals crossed
 * over seeds and instances. Needs `python3` (standard library only).
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../../_test_util.ts";

const FILE = new URL("./lake.yaml", import.meta.url).pathname;
const TINY = [
  "--set",
  "matrix.method=[{ name: fixed, engineer: fixed }, { name: exec, engineer: { name: exec, command: [python3, engineer.py] } }]",
  "--set",
  "matrix.seed=[1, 2]",
  "--set",
  "curriculum.count=2",
  "--set",
  "easy.with.count=6",
  "--set",
  "medium.with.count=6",
  "--set",
  "curriculum.each.envs.with.count=8",
  "--set",
  "curriculum.each.policy.with.budget=500",
];

const cli = runCli;

Deno.test("python family example: a tiny curriculum runs, is then all cached, and its table has crossed intervals", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-python-family-" });
  const cache = ["--cache", join(dir, "cache")];
  try {
    const run = await cli([...cache, "run", FILE, ...TINY]);
    assert.equal(run.code, 0, run.err);
    // 2 suites; per seed, stage 0 (envs, policy, score) is shared by the
    // engineers; then per engineer and seed 2 redesigns, stage 1, a test
    const plan = await cli([...cache, "plan", FILE, ...TINY]);
    assert.equal(plan.code, 0, plan.err);
    assert.match(plan.out, /: 32 nodes: 32 cached, 0 to run/);
    const tables = await cli([
      ...cache,
      "tables",
      FILE,
      ...TINY,
      "--out",
      join(dir, "tables"),
    ]);
    assert.equal(tables.code, 0, tables.err);
    assert.match(tables.out, /\| method \| easy \| medium \| mean \|/);
    assert.match(tables.out, /over seeds and instances,\s+crossed/);
    assert.match(tables.out, /\| exec − fixed \| 2 \| [+−]\d\.\d{3} \[/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
