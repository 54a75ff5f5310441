import assert from "node:assert/strict";
import { compileInstance, type Instance } from "./instance.ts";
import { needsWait, planWaits, waitFreePlan } from "./needs_wait.ts";

function inst(
  cells: string[],
  starts: [number, number][],
  goals: [number, number][],
): Instance {
  return {
    id: "t",
    config: "t",
    seed: 0,
    index: 0,
    width: cells[0]!.length,
    height: cells.length,
    cells,
    starts,
    goals,
    slip: 0,
    horizon: 20,
    collision: "fail",
    holes: "lethal",
    reference: null,
  };
}

Deno.test("needsWait: a plus-shaped crossing (no room to detour) needs a wait; the optimum is one step over the distances", () => {
  const v = needsWait(compileInstance(inst(
    ["H.H", "...", "H.H"],
    [[1, 0], [0, 1]],
    [[1, 2], [2, 1]],
  )))!;
  assert.equal(v.needs_wait, true);
  assert.equal(v.shortest, 4);
  assert.equal(v.solution.soc, 5);
  assert.equal(planWaits(v.solution.paths), true);
});

Deno.test("needsWait: the same crossing on an open 3x3 still needs a wait (a detour costs 2 moves, the wait 1)", () => {
  const i = compileInstance(inst(
    ["...", "...", "..."],
    [[1, 0], [0, 1]],
    [[1, 2], [2, 1]],
  ));
  const v = needsWait(i)!;
  assert.equal(v.needs_wait, true);
  assert.equal(v.solution.soc, 5);
  // the cheapest plan that never waits costs 6
  assert.equal(waitFreePlan(i, 5), null);
  const free = waitFreePlan(i, 6);
  assert.ok(Array.isArray(free));
  assert.equal(planWaits(free), false);
  assert.equal(free.reduce((s, p) => s + p.length - 1, 0), 6);
});

Deno.test("needsWait: a head-on swap on a 2x3 board costs 2 over the distances, but a detour resolves it without a wait", () => {
  const v = needsWait(compileInstance(inst(
    ["...", "..."],
    [[0, 0], [0, 2]],
    [[0, 2], [0, 0]],
  )))!;
  assert.equal(v.shortest, 4);
  assert.equal(v.solution.soc, 6);
  assert.equal(v.needs_wait, false);
});

Deno.test("needsWait: agents whose shortest paths never meet, and a single agent, need no wait", () => {
  const apart = needsWait(compileInstance(inst(
    ["....", "....", "...."],
    [[0, 0], [2, 0]],
    [[0, 3], [2, 3]],
  )))!;
  assert.equal(apart.needs_wait, false);
  assert.equal(apart.solution.soc, apart.shortest);
  const one = needsWait(compileInstance(inst(
    ["...", "..."],
    [[0, 0]],
    [[1, 2]],
  )))!;
  assert.equal(one.needs_wait, false);
});

Deno.test("needsWait: an unsolvable instance (a one-row corridor swap) is undecided (null)", () => {
  assert.equal(
    needsWait(compileInstance(inst(["..."], [[0, 0], [0, 2]], [[0, 2], [
      0,
      0,
    ]]))),
    null,
  );
});

Deno.test("planWaits: a stay before arrival is a wait; the stay on the goal after arrival is not part of the path", () => {
  assert.equal(planWaits([Int32Array.of(0, 1, 2)]), false);
  assert.equal(
    planWaits([Int32Array.of(0, 1, 2), Int32Array.of(5, 5, 4)]),
    true,
  );
  assert.equal(planWaits([Int32Array.of(3)]), false);
});
