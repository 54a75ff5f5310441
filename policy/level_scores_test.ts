import assert from "node:assert/strict";
import { InstancePool } from "../mapf/pool.ts";
import { initCheckpoint } from "./checkpoint.ts";
import { scoreLevels } from "./level_scores.ts";
import { Trainer } from "./trainer.ts";
import { mapfTrainingSource } from "./mapf_training_env.ts";
import { GOAL_ONLY_REWARD, randomInstances } from "./_test_instances.ts";

const instances = randomInstances(12, 3, { size: 6, agents: 2, holes: 0.1 });

Deno.test("scoreLevels: every instance played `episodes` times, seeded, with its cost counted", () => {
  const ck = initCheckpoint({ seed: 1, hidden: [8, 8] });
  const a = scoreLevels(ck, instances, { episodes: 3, seed: 5 });
  const b = scoreLevels(ck, instances, { episodes: 3, seed: 5 });
  assert.deepEqual(a, b);
  const c = scoreLevels(ck, instances, { episodes: 3, seed: 6 });
  assert.notDeepEqual(a, c);
  for (const s of a) {
    assert.equal(s.episodes, 3);
    assert.ok(s.successes >= 0 && s.successes <= 3);
    assert.ok(s.agentSteps >= 3, "every episode takes at least one step");
    assert.ok(s.pvl >= 0 && Number.isFinite(s.pvl));
  }
  assert.ok(
    a.some((s) => s.pvl > 0),
    "a random policy leaves positive advantages",
  );
});

Deno.test("scoreLevels: a zero-value critic gives PVL = the mean of positive discounted reward sums", () => {
  // With every weight zero the value head says 0 and the policy is uniform;
  // with only a goal reward (+1 on arrival), each agent's advantage at step t
  // is (gamma lambda)^(T - t) when it arrives at step T, else 0: all >= 0,
  // so PVL = sum over agents that arrived of sum_t (gl)^(T-t) / agent-steps.
  const ck = initCheckpoint({ seed: 1, hidden: [8, 8] });
  ck.net.params.fill(0);
  const reward = GOAL_ONLY_REWARD;
  const s = scoreLevels(ck, instances.slice(0, 4), {
    episodes: 4,
    seed: 2,
    reward,
    gamma: 1,
    lambda: 1,
  });
  // gamma = lambda = 1: an arrived agent's advantages are all 1, the others 0,
  // so PVL is the share of agent-steps taken by agents that arrived: in [0, 1]
  for (const x of s) assert.ok(x.pvl >= 0 && x.pvl <= 1 + 1e-9, String(x.pvl));
  // success implies every agent arrived: PVL is then 1 when all episodes succeed
  for (const x of s) {
    if (x.successes === x.episodes) assert.ok(Math.abs(x.pvl - 1) < 1e-9);
    if (x.pvl === 0) assert.equal(x.successes, 0);
  }
});

Deno.test("trainer: per-instance scores count every ended training episode and agent-step", () => {
  const ck = initCheckpoint({ seed: 2, hidden: [8, 8] });
  const t = new Trainer(ck, mapfTrainingSource(InstancePool.from(instances)), {
    seed: 1,
    envs: 8,
    steps: 16,
  });
  let episodes = 0, samples = 0;
  for (let i = 0; i < 3; i++) {
    const p = t.update();
    episodes += p.episodes;
    samples = p.samples;
  }
  const lv = t.levelScores();
  assert.equal(lv.episodes.length, instances.length);
  assert.equal(lv.episodes.reduce((a, b) => a + b, 0), episodes);
  assert.equal(lv.steps.reduce((a, b) => a + b, 0), samples);
  for (let i = 0; i < instances.length; i++) {
    assert.ok(lv.successes[i]! <= lv.episodes[i]!);
    assert.ok(lv.pvl[i]! >= 0);
    if (lv.steps[i] === 0) assert.equal(lv.pvl[i], 0);
  }
});
