import assert from "node:assert/strict";
import { generate } from "../mapf/generator.ts";
import { instanceToJson, validateInstance } from "../mapf/instance.ts";
import { Rng } from "../mapf/rng.ts";
import { solve } from "../mapf/solve.ts";
import { PRESETS } from "../schemas/env_config.ts";
import {
  accelEngineer,
  accelProblem,
  applyEdit,
  EDIT_KINDS,
  editLevel,
} from "./accel.ts";
import { buildContext } from "./context.ts";
import type { MeasuredLevel } from "./levels.ts";

const parents = [
  ...generate({ preset: "easy" }, { count: 12, seed: 3 }).instances,
  ...generate({ preset: "medium" }, { count: 8, seed: 4 }).instances,
];
const opts = { steps: 2, maxAgents: 6, tries: 20 };

Deno.test("accel: every edited level is valid, solvable within its horizon, and carries its reference cost", () => {
  let made = 0;
  for (const [i, parent] of parents.entries()) {
    for (let s = 0; s < 5; s++) {
      const r = editLevel(parent, `e-${i}-${s}`, new Rng(s, i), opts);
      if (r === null) continue;
      made++;
      const e = r.instance;
      validateInstance(JSON.parse(instanceToJson(e)));
      assert.ok(
        e.starts.length <= Math.max(parent.starts.length, opts.maxAgents),
      );
      const sol = solve(e, { cbsMaxAgents: 4 });
      assert.ok(sol !== null, `${e.id} unsolvable`);
      assert.ok(e.reference!.makespan <= e.horizon, `${e.id} horizon`);
      assert.equal(e.reference!.soc, sol!.soc);
      assert.equal(r.edits.length, opts.steps);
      assert.notEqual(
        instanceToJson(e),
        instanceToJson({ ...parent, id: e.id }),
      );
    }
  }
  assert.ok(made >= 90, `only ${made} of 100 edits succeeded`);
});

Deno.test("accel: edits are deterministic for a seed and differ across seeds", () => {
  const p = parents[0]!;
  const a = editLevel(p, "x", new Rng(7, 1), opts)!;
  const b = editLevel(p, "x", new Rng(7, 1), opts)!;
  assert.equal(instanceToJson(a.instance), instanceToJson(b.instance));
  assert.deepEqual(a.edits, b.edits);
  const others = new Set<string>();
  for (let s = 0; s < 10; s++) {
    const r = editLevel(p, "x", new Rng(s, 1), opts);
    if (r) others.add(instanceToJson(r.instance));
  }
  assert.ok(others.size >= 8, `${others.size} distinct edits from 10 seeds`);
});

Deno.test("accel: each edit kind does what it says", () => {
  const p = parents[0]!;
  const count = (rows: readonly string[], ch: string) =>
    rows.join("").split(ch).length - 1;
  const rng = new Rng(1);
  const add = applyEdit(p, "add_hole", rng, 8)!;
  assert.equal(count(add.cells, "H"), count(p.cells, "H") + 1);
  const rm = applyEdit(add, "remove_hole", rng, 8)!;
  assert.equal(count(rm.cells, "H"), count(p.cells, "H"));
  const agent = applyEdit(p, "add_agent", rng, 8)!;
  assert.equal(agent.starts.length, p.starts.length + 1);
  assert.equal(applyEdit(agent, "add_agent", rng, agent.starts.length), null);
  const ms = applyEdit(p, "move_start", rng, 8)!;
  assert.deepEqual(ms.goals, p.goals);
  assert.equal(
    ms.starts.filter((s, a) =>
      s[0] !== p.starts[a]![0] || s[1] !== p.starts[a]![1]
    ).length,
    1,
  );
  const fewer = applyEdit(agent, "remove_agent", rng, 8)!;
  assert.equal(fewer.starts.length, agent.starts.length - 1);
  assert.equal(fewer.goals.length, fewer.starts.length);
  // every remaining agent keeps its own start and goal pair
  for (const [a, s] of fewer.starts.entries()) {
    const k = agent.starts.findIndex((x) => x[0] === s[0] && x[1] === s[1]);
    assert.ok(k >= 0);
    assert.deepEqual(agent.goals[k], fewer.goals[a]);
  }
  const one = {
    ...p,
    starts: p.starts.slice(0, 1),
    goals: p.goals.slice(0, 1),
  };
  assert.equal(applyEdit(one, "remove_agent", rng, 8), null, "one agent stays");
  assert.deepEqual([...EDIT_KINDS].sort(), [
    "add_agent",
    "add_hole",
    "move_goal",
    "move_start",
    "remove_agent",
    "remove_hole",
  ]);
});

Deno.test("accel: agents above the cells can never keep a level solvable: refused in one line", () => {
  assert.match(
    accelProblem(8, 2, 40, 64)!,
    /max_agents 40 can never keep a level solvable/,
  );
  assert.equal(accelProblem(8, 2, 32, 64), null);
  assert.match(accelProblem(8, 0, 4, 64)!, /edit_steps must be at least 1/);
});

Deno.test("accel: the highest-PVL replayed levels are the ones edited", async () => {
  // six trained levels with PVL 0.1 .. 0.6 (in a shuffled order); two edits
  const pvl = [0.3, 0.6, 0.1, 0.5, 0.2, 0.4];
  const trained = parents.slice(0, 6).map((instance, i) => ({
    instance,
    measured: { pvl: pvl[i]!, agentSteps: 10, episodes: 1, successes: 0 },
  }));
  const measured: MeasuredLevel = {
    pvl: 0.05,
    agentSteps: 4,
    episodes: 1,
    successes: 1,
  };
  const e = accelEngineer({
    io: {
      buffer: null,
      trained,
      source: PRESETS.easy,
      fresh: () => Promise.resolve([]),
      score: (instances) => Promise.resolve(instances.map(() => measured)),
    },
    replayProb: 1,
    edits: 2,
    editSteps: 1,
  });
  const p = await e.propose({
    context: buildContext("none", null, PRESETS.easy, { stage: 1 }),
    config: PRESETS.easy,
    seed: 5,
  });
  const edits = p.levels!.levels.filter((l) => l.origin === "edit");
  assert.ok(edits.length > 0, "some edit made a solvable child");
  const top = new Set([parents[1]!.id, parents[3]!.id]); // PVL 0.6 and 0.5
  for (const l of edits) assert.ok(top.has(l.parent!), `parent ${l.parent}`);
});
