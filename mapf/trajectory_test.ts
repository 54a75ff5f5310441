import assert from "node:assert/strict";
import { BatchEnv } from "./batch_env.ts";
import { InstancePool } from "./pool.ts";
import {
  decodeTrajectories,
  encodeTrajectories,
  type Episode,
  TRAJECTORY_VERSION,
  TrajectoryFormatError,
  TrajectoryRecorder,
} from "./trajectory.ts";
import { pathsToPlan, replayPlan } from "./replay.ts";
import { Rng } from "./rng.ts";
import { DOWN, RIGHT, UP } from "./grid.ts";
import { gridInstance } from "./_test_grid.ts";

const instA = gridInstance(
  [".....", ".H...", ".....", "..#.."],
  [[0, 0], [3, 4], [2, 2]],
  [[3, 0], [0, 4], [0, 2]],
  { id: "a", horizon: 12, slip: 0.3 },
);
const instB = gridInstance(
  ["...", "...", "..."],
  [[0, 0], [2, 2]],
  [[2, 0], [0, 2]],
  { id: "b-long-id-é", horizon: 6, collision: "block" },
);

Deno.test("recorder captures exactly what the env did; encode/decode round-trips", () => {
  const pool = InstancePool.from([instA, instB]);
  const env = new BatchEnv(pool, { envs: 6, seed: 3 });
  env.resetAll((e) => e % 2);
  const rec = new TrajectoryRecorder(env, ["a", "b-long-id-é"]);
  const rng = new Rng(9);
  // ground truth, captured directly
  const truth = new Map<string, number[][]>();
  const key = (e: number) => `${e}:${env.episode[e]}`;
  for (let e = 0; e < env.envs; e++) {
    truth.set(key(e), [
      Array.from(env.pos.subarray(e * 3, e * 3 + env.agentCount[e]!)),
    ]);
  }
  const actions = new Uint8Array(env.envs * env.maxAgents);
  for (let k = 0; k < 40; k++) {
    for (let i = 0; i < actions.length; i++) actions[i] = rng.int(5);
    env.step(actions);
    rec.record(actions);
    for (let e = 0; e < env.envs; e++) {
      if (env.done[e] && !env.ended[e]) continue;
      truth.get(key(e))!.push(
        Array.from(env.pos.subarray(e * 3, e * 3 + env.agentCount[e]!)),
      );
    }
    env.resetDone();
    for (let e = 0; e < env.envs; e++) {
      if (!truth.has(key(e))) {
        truth.set(key(e), [
          Array.from(env.pos.subarray(e * 3, e * 3 + env.agentCount[e]!)),
        ]);
      }
    }
  }
  const done = rec.take();
  const partial = rec.partial();
  assert.ok(done.length > 10, `finished ${done.length}`);
  assert.equal(rec.finished, 0);
  for (const ep of [...done, ...partial]) {
    assert.equal(ep.positions.length, (ep.steps + 1) * ep.agents);
    assert.equal(ep.actions.length, ep.steps * ep.agents);
  }
  assert.ok(partial.every((ep) => ep.outcome === "running"));
  const outcomes = new Set(done.map((d) => d.outcome));
  assert.ok(outcomes.size >= 2, [...outcomes].join());
  for (const ep of done) {
    if (ep.outcome === "hole" || ep.outcome.endsWith("collision")) {
      assert.ok(ep.failAgents.length >= 1);
      assert.equal(ep.failStep, ep.steps);
    } else assert.equal(ep.failStep, -1);
  }
  // every recorded position sequence matches some captured ground truth
  const truths = new Set(
    [...truth.values()].map((rows) => rows.flat().join(",")),
  );
  for (const ep of done) {
    assert.ok(truths.has(Array.from(ep.positions).join(",")), ep.instance);
  }

  const all = [...done, ...partial];
  const bytes = encodeTrajectories(all);
  const back = decodeTrajectories(bytes);
  assert.equal(back.length, all.length);
  for (let i = 0; i < all.length; i++) {
    const x = all[i]!, y = back[i]!;
    assert.deepEqual({
      ...y,
      positions: Array.from(y.positions),
      actions: Array.from(y.actions),
    }, {
      ...x,
      positions: Array.from(x.positions),
      actions: Array.from(x.actions),
    });
  }
  // one byte per agent-step plus small headers
  const agentSteps = all.reduce((s, e) => s + e.steps * e.agents, 0);
  assert.ok(
    bytes.length < agentSteps + 40 * all.length + 64,
    `${bytes.length} bytes`,
  );
  assert.equal(bytes[4], TRAJECTORY_VERSION);
});

Deno.test("decode rejects corrupt, truncated and future-version data", () => {
  const ep = replayPlan(instB, [[DOWN, DOWN], [UP, UP]]);
  const bytes = encodeTrajectories([ep]);
  assert.throws(
    () => decodeTrajectories(bytes.subarray(0, bytes.length - 1)),
    TrajectoryFormatError,
  );
  const bad = bytes.slice();
  bad[0] = 0;
  assert.throws(() => decodeTrajectories(bad), /magic/);
  const v2 = bytes.slice();
  v2[4] = 2;
  assert.throws(() => decodeTrajectories(v2), /unsupported version 2/);
  assert.throws(
    () => decodeTrajectories(new Uint8Array([...bytes, 0])),
    /trailing/,
  );
  assert.deepEqual(decodeTrajectories(encodeTrajectories([])), []);
  const jump: Episode = {
    ...ep,
    positions: Int32Array.from([0, 8, 5, 8, 5, 8]),
  };
  assert.throws(() => encodeTrajectories([jump]), /jumps/);
});

Deno.test("replayPlan executes a plan; pathsToPlan converts paths", () => {
  const plan = pathsToPlan([[0, 3, 6], [8, 5, 2]], 3);
  assert.deepEqual(plan, [[DOWN, DOWN], [UP, UP]]);
  const ep = replayPlan(instB, plan);
  assert.equal(ep.outcome, "success");
  assert.equal(ep.steps, 2);
  assert.deepEqual(Array.from(ep.positions), [0, 8, 3, 5, 6, 2]);
  assert.equal(ep.instance, "b-long-id-é");
  // an exhausted plan waits until the horizon
  const short = replayPlan(instB, [[DOWN], [UP]]);
  assert.equal(short.outcome, "timeout");
  assert.equal(short.steps, instB.horizon);
  assert.throws(() => replayPlan(instB, [[RIGHT]]), /plan has 1 agents/);
  assert.throws(() => pathsToPlan([[0, 2]], 3), /jumps/);
});
