import assert from "node:assert/strict";
import { BatchEnv, InstancePool } from "../mapf/mod.ts";
import { type Cell, gridInstance } from "../mapf/_test_grid.ts";
import { agentRewards, DEFAULT_REWARD, rewardSpec } from "./reward.ts";

function env1(
  cells: string[],
  starts: Cell[],
  goals: Cell[],
  collision: "fail" | "block" = "fail",
) {
  const inst = gridInstance(cells, starts, goals, { collision });
  const env = new BatchEnv(InstancePool.from([inst]), { envs: 1 });
  env.reset(0, 0, 1);
  return env;
}

// every coefficient distinct, so a term read from the wrong one shows
const spec = rewardSpec({
  success: 0.5,
  failure: -0.25,
  hole: -0.75,
  collision: -0.6,
});
const near = (a: number, b: number) => Math.abs(a - b) < 1e-6;

Deno.test("reward: progress, arrival and the team success bonus", () => {
  // 2x4 grid: agent 0 (0,0) -> (0,2); agent 1 (1,3) -> (1,2)
  const env = env1(["....", "...."], [[0, 0], [1, 3]], [[0, 2], [1, 2]]);
  const slots = new Int32Array([0, 1]);
  const r = new Float32Array(2), d = new Uint8Array(2);
  env.step(new Uint8Array([4, 3])); // agent 0 right (progress), agent 1 left: arrives
  agentRewards(env, slots, 2, spec, r, d);
  assert.ok(near(r[0]!, spec.step + spec.progress));
  assert.ok(near(r[1]!, spec.step + spec.progress + spec.goal));
  assert.deepEqual(Array.from(d), [0, 1]);
  env.step(new Uint8Array([4, 0])); // agent 0 arrives: success
  agentRewards(env, slots, 1, spec, r, d);
  assert.ok(near(r[0]!, spec.step + spec.progress + spec.goal + spec.success));
  assert.equal(d[0], 1);
});

Deno.test("reward: hole, collision and moving away", () => {
  const hole = env1(["..H", "..."], [[0, 1], [1, 0]], [[1, 2], [0, 0]]);
  const r = new Float32Array(2), d = new Uint8Array(2);
  hole.step(new Uint8Array([4, 4])); // agent 0 into the hole, agent 1 right (away from its goal)
  agentRewards(hole, new Int32Array([0, 1]), 2, spec, r, d);
  assert.ok(near(r[0]!, spec.step + spec.hole + spec.failure));
  assert.ok(near(r[1]!, spec.step - spec.progress + spec.failure));
  assert.deepEqual(Array.from(d), [1, 1]);

  const col = env1(["...", "..."], [[0, 0], [0, 2]], [[1, 2], [1, 0]]);
  col.step(new Uint8Array([4, 3])); // both into (0,1): vertex collision
  agentRewards(col, new Int32Array([0, 1]), 2, spec, r, d);
  // each moved one cell: (0,0)->(0,1) is progress towards (1,2) for agent 0
  assert.ok(
    near(r[0]!, spec.step + spec.progress + spec.collision + spec.failure),
  );
  assert.ok(
    near(r[1]!, spec.step + spec.progress + spec.collision + spec.failure),
  );
});

Deno.test("reward: a blocked move in block mode costs the blocked penalty", () => {
  const env = env1(["...", "..."], [[0, 0], [0, 2]], [[1, 2], [1, 0]], "block");
  const r = new Float32Array(2), d = new Uint8Array(2);
  env.step(new Uint8Array([4, 3]));
  agentRewards(env, new Int32Array([0, 1]), 2, spec, r, d);
  assert.ok(near(r[0]!, spec.step + spec.blocked));
  assert.deepEqual(Array.from(d), [0, 0]);
});

Deno.test("reward spec validates coefficients", () => {
  assert.deepEqual(rewardSpec(), DEFAULT_REWARD);
  assert.throws(
    () => rewardSpec({ goal: Number.NaN }),
    /"goal" must be a finite number/,
  );
});
