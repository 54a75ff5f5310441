import assert from "node:assert/strict";
import { compileInstance } from "./instance.ts";
import { exactOptimum } from "./exact_optimum.ts";
import { solveMakespan } from "./solve_makespan.ts";
import { solveCBS } from "./solve_cbs.ts";
import { firstConflict } from "./solution.ts";
import { pathsToPlan, replayPlan } from "./replay.ts";
import { Rng } from "./rng.ts";
import { bruteForceOptima, randomTinyInstance } from "./_test_tiny.ts";

Deno.test("exact optima equal brute force on random tiny maps (sum of costs and makespan); makespan plans replay", () => {
  const rng = new Rng(77);
  let compared = 0, differ = 0, unsolvable = 0;
  for (let k = 0; k < 150; k++) {
    const w = 2 + rng.int(3), h = 2 + rng.int(2), n = 2 + rng.int(2);
    const inst = randomTinyInstance(rng, w, h, n, 0.15, "blocked");
    if (!inst) continue;
    const c = compileInstance(inst);
    const exact = bruteForceOptima(c);
    const got = exactOptimum(c, { maxNodes: exact === null ? 500 : 20000 });
    const where = `${inst.cells.join("/")} starts ${
      JSON.stringify(inst.starts)
    } goals ${JSON.stringify(inst.goals)}`;
    if (exact === null) {
      assert.equal(got, null, where);
      unsolvable++;
      continue;
    }
    assert.deepEqual(got, exact, where);
    const mk = solveMakespan(c)!;
    assert.equal(mk.makespan, exact.makespan, where);
    assert.equal(firstConflict(mk.paths), null);
    const ep = replayPlan(inst, pathsToPlan(mk.paths, inst.width), {
      noSlip: true,
    });
    assert.equal(ep.outcome, "success", where);
    assert.equal(ep.steps, exact.makespan, where);
    compared++;
    // the least-SoC plan's makespan is not always the least makespan
    if (solveCBS(c)!.makespan > exact.makespan) differ++;
  }
  assert.ok(compared >= 80, `only ${compared} solvable instances compared`);
  assert.ok(unsolvable >= 1, "no unsolvable instance was drawn");
  assert.ok(differ >= 1, "no instance where the least SoC plan is late");
});
