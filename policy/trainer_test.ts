import assert from "node:assert/strict";
import { InstancePool, parseInstanceLines } from "../mapf/mod.ts";
import {
  initCheckpoint,
  loadCheckpoint,
  saveCheckpoint,
} from "./checkpoint.ts";
import { Trainer } from "./trainer.ts";
import { mapfTrainingSource } from "./mapf_training_env.ts";
import { randomInstances } from "./_test_instances.ts";

const pool = InstancePool.from(
  randomInstances(40, 5, { size: 6, agents: 2, holes: 0.1 }),
);
const small = { envs: 16, steps: 16, minibatch: 128, epochs: 2 };

for (const algo of ["ppo", "grpo"] as const) {
  Deno.test(`${algo}: two runs with one seed give identical weights; another seed differs`, () => {
    const run = (seed: number) => {
      const ck = initCheckpoint({ hidden: [32, 32], seed: 1 });
      const tr = new Trainer(ck, mapfTrainingSource(pool), {
        ...small,
        algo,
        group: 4,
        seed,
      });
      for (let i = 0; i < 3; i++) tr.update();
      return saveCheckpoint(tr.checkpoint());
    };
    const a = run(7), b = run(7), c = run(8);
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
    const ck = loadCheckpoint(a);
    assert.equal(ck.counters.updates, 3);
    assert.ok(ck.counters.samples > 0);
    assert.ok(
      ck.adam!.t >= 3,
      "one Adam step per minibatch, at least one per update",
    );
  });
}

Deno.test("training resumes from a checkpoint: counters, optimiser and normaliser carry over", () => {
  const ck = initCheckpoint({ hidden: [16], seed: 2 });
  const tr = new Trainer(ck, mapfTrainingSource(pool), { ...small, seed: 3 });
  tr.update();
  tr.update();
  const bytes = saveCheckpoint(tr.checkpoint());
  const back = loadCheckpoint(bytes);
  assert.deepEqual(back.net.params, tr.checkpoint().net.params);
  assert.deepEqual(back.adam!.m, tr.checkpoint().adam!.m);
  assert.equal(back.valueNorm.mean, tr.checkpoint().valueNorm.mean);
  const stepsBefore = back.adam!.t, samplesBefore = back.counters.samples;
  const tr2 = new Trainer(back, mapfTrainingSource(pool), {
    ...small,
    seed: 4,
  });
  const p = tr2.update();
  assert.equal(p.update, 3);
  assert.equal(p.samples, samplesBefore + p.stats.samples);
  assert.equal(tr2.checkpoint().adam!.t, stepsBefore + p.stats.steps);
});

Deno.test("ppo learns a one-agent corridor within a few updates", () => {
  // 1x6 corridor, agent at the left end, goal at the right end: the optimal policy always moves right.
  const [inst] = parseInstanceLines(JSON.stringify({
    width: 6,
    height: 2,
    cells: ["......", "HHHHHH"],
    starts: [[0, 0]],
    goals: [[0, 5]],
    horizon: 10,
  }));
  const p1 = InstancePool.from([inst!]);
  const ck = initCheckpoint({ hidden: [32], seed: 5 });
  const tr = new Trainer(ck, mapfTrainingSource(p1), {
    envs: 32,
    steps: 16,
    minibatch: 128,
    lr: 1e-3,
    seed: 5,
  });
  const first = tr.update().success;
  let last = 0;
  for (let i = 0; i < 14; i++) last = tr.update().success;
  assert.ok(first < 0.5, `untrained success ${first}`);
  assert.ok(last > 0.9, `success after 15 updates ${last}`);
});

Deno.test("trainer rejects a policy whose width does not match its observation", () => {
  const ck = initCheckpoint({ obs: { version: 1, radius: 1 } });
  const bad = { ...ck, obs: { version: 1, radius: 2 } };
  assert.throws(
    () => new Trainer(bad, mapfTrainingSource(pool)),
    /reads 66 values per agent but observation/,
  );
  assert.throws(
    () => new Trainer(ck, mapfTrainingSource(pool), { algo: "grpo", group: 1 }),
    /group size must be an integer >= 2/,
  );
});

Deno.test("both kernels are deterministic; simd and ts agree on the first update to rounding", () => {
  const run = (kernel: "simd" | "ts") => {
    const ck = initCheckpoint({ hidden: [24, 13], seed: 1 });
    const tr = new Trainer(ck, mapfTrainingSource(pool), {
      ...small,
      seed: 9,
      kernel,
    });
    const p = tr.update();
    return { bytes: saveCheckpoint(tr.checkpoint()), p, params: ck.net.params };
  };
  const s1 = run("simd"), s2 = run("simd"), t1 = run("ts"), t2 = run("ts");
  assert.deepEqual(s1.bytes, s2.bytes);
  assert.deepEqual(t1.bytes, t2.bytes);
  assert.notDeepEqual(s1.bytes, t1.bytes, "rounding differs between kernels");
  // same rollout (the same actions were sampled), nearly the same update
  assert.equal(s1.p.samples, t1.p.samples);
  assert.equal(s1.p.episodes, t1.p.episodes);
  assert.ok(Math.abs(s1.p.stats.loss - t1.p.stats.loss) < 1e-4);
  let d = 0;
  for (let i = 0; i < s1.params.length; i++) {
    d = Math.max(d, Math.abs(s1.params[i]! - t1.params[i]!));
  }
  assert.ok(d < 1e-4, `weights after one update differ by ${d}`);
  assert.throws(
    () =>
      new Trainer(initCheckpoint(), mapfTrainingSource(pool), {
        kernel: "gpu" as "ts",
      }),
    /Unknown kernel "gpu"/,
  );
});

Deno.test("ppo: a budget in agent-steps stops the last rollout early, whatever the agent count", () => {
  const budgets: number[] = [];
  for (const agents of [1, 4]) {
    const pool4 = InstancePool.from(
      randomInstances(40, 5, { size: 6, agents, holes: 0.1 }),
    );
    const ck = initCheckpoint({ hidden: [16], seed: 2 });
    const tr = new Trainer(ck, mapfTrainingSource(pool4), {
      ...small,
      seed: 3,
    });
    const budget = 3000;
    const full = tr.update().samples; // one whole update
    assert.ok(full < budget);
    let spent = full;
    while (spent < budget) {
      spent = tr.update({ maxSamples: budget - spent }).samples;
    }
    // overshoot: less than one step of every agent of every environment
    const over = spent - budget;
    assert.ok(
      over >= 0 && over < small.envs * agents,
      `${agents} agents: ${over}`,
    );
    budgets.push(spent);
  }
  // same experience within a step for 1 and 4 agents (whole updates would
  // differ by up to a 16x16x4-sample update)
  assert.ok(Math.abs(budgets[0]! - budgets[1]!) < small.envs * 4);
});
