import assert from "node:assert/strict";
import { compileInstance, validateInstance } from "./instance.ts";
import { readPlan } from "./plan_reading.ts";
import { pathsToPlan, replayPlan } from "./replay.ts";
import { solveCBS } from "./solve_cbs.ts";
import { gridInstance } from "./_test_grid.ts";

Deno.test("plan reading in collision mode block: a cancelled move is a conflict, even when every goal is reached", () => {
  const inst = gridInstance(
    ["...", "..."],
    [[0, 0], [0, 1]],
    [[0, 2], [1, 1]],
    { id: "block", horizon: 9, collision: "block", holes: "blocked" },
  );
  // agent 0 walks into agent 1, which stays one step before stepping down
  const r = readPlan(inst, replayPlan(inst, [[4, 4, 4], [0, 2]]));
  assert.equal(r.goals_reached, true);
  assert.equal(r.conflicts, 1);
  assert.equal(r.valid, false);
  assert.equal(readPlan(inst, replayPlan(inst, [[4, 4], [2]])).valid, true);
});

Deno.test("plan reading with lethal holes: walking into a hole is an illegal move", () => {
  const inst = gridInstance(
    ["...", ".H."],
    [[0, 0]],
    [[0, 2]],
    { id: "lethal", horizon: 9, holes: "lethal" },
  );
  const r = readPlan(inst, replayPlan(inst, [[4, 2]]));
  assert.equal(r.illegal_moves, 1);
  assert.equal(r.valid, false);
  assert.equal(r.agents_on_goal, 0);
});

Deno.test("plan reading searches the optimum when no bound settles it, and says unknown when the search gives up", () => {
  // two agents swap the ends of a corridor: one steps into the side pocket
  const base = {
    id: "swap",
    width: 3,
    height: 2,
    cells: ["...", "#.#"],
    starts: [[0, 0], [0, 2]],
    goals: [[0, 2], [0, 0]],
    horizon: 20,
    holes: "blocked",
    // a prioritized-planning reference that is not optimal
    reference: { soc: 9, makespan: 6, solver: "pp" },
  };
  const inst = validateInstance(base);
  const best = solveCBS(compileInstance(inst))!;
  assert.equal(best.soc, 7);
  const plan = pathsToPlan(best.paths, inst.width);
  const r = readPlan(inst, replayPlan(inst, plan));
  assert.equal(r.valid, true);
  assert.equal(r.soc, 7);
  assert.equal(r.optimal_soc, true);
  assert.equal(r.optimal_makespan, r.makespan === 4);
  // one more wait at the start: valid, but above both optima
  const late = readPlan(
    inst,
    replayPlan(inst, plan.map((p) => [0, ...p])),
  );
  assert.equal(late.valid, true);
  assert.equal(late.optimal_soc, false);
  assert.equal(late.optimal_makespan, false);
  const unknown = readPlan(inst, replayPlan(inst, plan), { maxNodes: 0 });
  assert.equal(unknown.optimal_soc, null);
});

Deno.test("plan reading does not search the optima of instances beyond 5 agents: bounds decide, the rest is unknown", () => {
  // six agents in a row, each one step from its goal, one of them late
  const inst = gridInstance(
    ["......", "......"],
    [[0, 0], [0, 1], [0, 2], [0, 3], [0, 4], [0, 5]],
    [[1, 0], [1, 1], [1, 2], [1, 3], [1, 4], [1, 5]],
    {
      id: "six",
      horizon: 9,
      holes: "blocked",
      reference: { soc: 6, makespan: 1, solver: "pp" },
    },
  );
  const down = [[2], [2], [2], [2], [2], [2]];
  const r = readPlan(inst, replayPlan(inst, down));
  assert.equal(r.optimal_soc, true); // at the lower bound
  const late = readPlan(inst, replayPlan(inst, [[0, 2], ...down.slice(1)]));
  assert.equal(late.optimal_soc, false); // above the reference
  assert.equal(late.optimal_makespan, false);
  const noRef = validateInstance({ ...inst, reference: null });
  const unknown = readPlan(
    noRef,
    replayPlan(noRef, [[0, 2], ...down.slice(1)]),
  );
  assert.equal(unknown.valid, true);
  assert.equal(unknown.optimal_soc, null);
  assert.equal(unknown.optimal_makespan, null);
  assert.equal(
    readPlan(noRef, replayPlan(noRef, [[0, 2], ...down.slice(1)]), {
      maxAgents: 6,
    }).optimal_soc,
    false,
  );
});
