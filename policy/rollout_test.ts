import assert from "node:assert/strict";
import { decodeTrajectories, type Instance } from "../mapf/mod.ts";
import { initCheckpoint, saveCheckpoint } from "./checkpoint.ts";
import { DEFAULT_OBS, obsSize } from "./observation.ts";
import { OnnxPolicy } from "./onnx_policy.ts";
import {
  mlpRunner,
  onnxRunner,
  type PolicyRunner,
  rollout,
  summarize,
} from "./rollout.ts";
import { randomInstances } from "./_test_instances.ts";

const D = obsSize(DEFAULT_OBS), SC = 6 * 25;

/** Follows the shortest-path feature (k = 3..6 of the scalars): never wrong for one agent. */
const oracle: PolicyRunner = {
  inputSize: D,
  logits(obs, n) {
    const out = new Float32Array(n * 5);
    for (let r = 0; r < n; r++) {
      for (let k = 1; k <= 4; k++) {
        out[r * 5 + k] = 10 * obs[r * D + SC + 2 + k]!;
      }
    }
    return Promise.resolve({ logits: out, stride: 5 });
  },
};
const stayer: PolicyRunner = {
  inputSize: D,
  logits(_obs, n) {
    const out = new Float32Array(n * 5);
    for (let r = 0; r < n; r++) out[r * 5] = 100;
    return Promise.resolve({ logits: out, stride: 5 });
  },
};

function oneAgent(count: number): Instance[] {
  // single-agent instances with the reference = shortest distance (computed by the oracle run itself below)
  return randomInstances(count, 9, { size: 6, agents: 1, holes: 0.15 }).map((
    inst,
    i,
  ) => ({
    ...inst,
    suite: i % 2 === 0 ? "even" : "odd",
  }));
}

Deno.test("rollout of a shortest-path oracle: all succeed, per-suite aggregates, trajectories decode", async () => {
  const insts = oneAgent(10);
  const res = await rollout(oracle, insts, {
    obs: DEFAULT_OBS,
    episodes: 3,
    envs: 7,
    greedy: true,
  });
  assert.equal(res.episodes.length, 30);
  assert.equal(res.summary.success_rate, 1);
  assert.equal(res.summary.outcome_rates.hole, 0);
  assert.deepEqual(Object.keys(res.suites), ["even", "odd"]);
  assert.equal(res.suites.even!.episodes, 15);
  for (const r of res.episodes) {
    assert.equal(r.soc, r.steps, "one agent: SoC = arrival time = steps");
  }
  const eps = decodeTrajectories(res.trajectories!);
  assert.equal(eps.length, 30);
  eps.forEach((ep, i) => {
    assert.equal(ep.instance, res.episodes[i]!.instance);
    assert.equal(ep.outcome, "success");
    assert.equal(ep.steps, res.episodes[i]!.steps);
    const inst = insts.find((x) => x.id === ep.instance)!;
    const goal = inst.goals[0]![0] * inst.width + inst.goals[0]![1];
    assert.equal(ep.positions[ep.steps], goal);
  });
});

Deno.test("rollout metrics: SoC ratio against the reference, timeouts of a policy that stays", async () => {
  const insts = oneAgent(6);
  const first = await rollout(oracle, insts, {
    obs: DEFAULT_OBS,
    greedy: true,
    record: false,
  });
  assert.equal(first.trajectories, undefined);
  // give each instance a reference half its optimal cost -> ratio 2, efficiency 0.5
  const withRef = insts.map((inst) => {
    const r = first.episodes.find((e) => e.instance === inst.id)!;
    return {
      ...inst,
      reference: {
        soc: r.soc! / 2,
        makespan: r.makespan!,
        solver: "cbs" as const,
      },
    };
  });
  const res = await rollout(oracle, withRef, {
    obs: DEFAULT_OBS,
    greedy: true,
  });
  assert.ok(Math.abs(res.summary.soc_ratio! - 2) < 1e-9);
  assert.ok(Math.abs(res.summary.efficiency! - 0.5) < 1e-9);
  const stay = await rollout(stayer, insts, { obs: DEFAULT_OBS, greedy: true });
  assert.equal(stay.summary.outcome_rates.timeout, 1);
  assert.equal(stay.summary.success_rate, 0);
  assert.equal(stay.summary.soc_ratio, null);
  assert.equal(
    stay.summary.steps,
    insts.reduce((s, i) => s + i.horizon, 0) / insts.length,
  );
});

Deno.test("rollout is deterministic for a seed, and the ONNX and TS runners agree", async () => {
  const insts = randomInstances(12, 3, { size: 6, agents: 2, holes: 0.1 });
  const ck = initCheckpoint({ hidden: [32], seed: 11 });
  const a = await rollout(mlpRunner(ck.net), insts, {
    obs: DEFAULT_OBS,
    episodes: 2,
    seed: 5,
  });
  const b = await rollout(mlpRunner(ck.net), insts, {
    obs: DEFAULT_OBS,
    episodes: 2,
    seed: 5,
  });
  assert.deepEqual(a, b);
  const policy = await OnnxPolicy.load(saveCheckpoint(ck), { inputSize: D });
  try {
    for (const greedy of [true, false]) {
      const ts = await rollout(mlpRunner(ck.net), insts, {
        obs: DEFAULT_OBS,
        episodes: 2,
        seed: 5,
        greedy,
      });
      const ort = await rollout(onnxRunner(policy), insts, {
        obs: DEFAULT_OBS,
        episodes: 2,
        seed: 5,
        greedy,
      });
      assert.deepEqual(ort.episodes, ts.episodes);
      assert.deepEqual(ort.trajectories, ts.trajectories);
    }
  } finally {
    await policy.release();
  }
});

Deno.test("rollout rejects a policy of the wrong width; summarize of nothing is zeros", async () => {
  const insts = randomInstances(1, 1);
  await assert.rejects(
    () => rollout(oracle, insts, { obs: { version: 1, radius: 1 } }),
    /reads 162 values per agent but observation \{"version":1,"radius":1\} has 66/,
  );
  assert.deepEqual(summarize([]).success_rate, 0);
  assert.deepEqual(
    (await rollout(oracle, [], { obs: DEFAULT_OBS })).episodes,
    [],
  );
});
