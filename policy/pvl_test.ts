import assert from "node:assert/strict";
import { InstancePool } from "../mapf/pool.ts";
import { initCheckpoint } from "./checkpoint.ts";
import { scoreLevels } from "./level_scores.ts";
import { accumulatePositiveAdvantages, positiveValueLoss } from "./pvl.ts";
import { Trainer } from "./trainer.ts";
import { mapfTrainingSource } from "./mapf_training_env.ts";
import { GOAL_ONLY_REWARD, randomInstances } from "./_test_instances.ts";

Deno.test("pvl: the mean positive advantage per agent-step, per level, valid samples only", () => {
  const pos = new Float64Array(3), steps = new Float64Array(3);
  accumulatePositiveAdvantages(
    Float32Array.of(1, -2, 0.5, 3, 0.25, 7),
    Uint8Array.of(1, 1, 1, 1, 1, 0),
    Int32Array.of(0, 0, 1, 1, 1, 2),
    6,
    pos,
    steps,
  );
  assert.deepEqual(Array.from(steps), [2, 3, 0]);
  assert.deepEqual(Array.from(positiveValueLoss(pos, steps)), [
    0.5,
    3.75 / 3,
    0,
  ]);
  // one level for every sample
  accumulatePositiveAdvantages(Float32Array.of(-1, 2), null, 2, 2, pos, steps);
  assert.equal(positiveValueLoss(pos, steps)[2], 1);
});

// The positive part of an advantage written inline: what a second copy of
// the computation would look like.
const INLINE = [
  /if\s*\(\s*[\w.#]*adv\w*(\[[^\]]*\])?!?\s*>\s*0\s*\)/i,
  /Math\.max\(\s*[\w.#]*adv\w*(\[[^\]]*\])?!?\s*,\s*0\s*\)/i,
];

Deno.test("pvl: the trainer and scoreLevels compute it with the one shared function, and nothing else does", async () => {
  for (const file of ["trainer.ts", "level_scores.ts"]) {
    const src = await Deno.readTextFile(new URL(`./${file}`, import.meta.url));
    assert.match(
      src,
      /import \{ accumulatePositiveAdvantages, positiveValueLoss \} from "\.\/pvl\.ts";/,
      `${file} imports the shared PVL`,
    );
    assert.match(src, /accumulatePositiveAdvantages\(/, file);
    assert.match(src, /positiveValueLoss\(/, file);
  }
  const dir = new URL("./", import.meta.url);
  for await (const e of Deno.readDir(dir)) {
    if (!e.name.endsWith(".ts") || e.name.endsWith("_test.ts")) continue;
    if (e.name === "pvl.ts") continue;
    const src = await Deno.readTextFile(new URL(e.name, dir));
    for (const re of INLINE) {
      assert.doesNotMatch(src, re, `${e.name} computes a positive part itself`);
    }
  }
  // the check itself recognises the copies it forbids
  assert.match("if (this.#adv[idx]! > 0) pos += 1", INLINE[0]!);
  assert.match("if (adv > 0) pos[inst] += adv;", INLINE[0]!);
  assert.match("s += Math.max(adv[i], 0)", INLINE[1]!);
});

Deno.test("pvl: training and scoring rollouts give the same closed form on a zero critic", () => {
  // zero weights: value 0, uniform policy; goal reward only, gamma = lambda
  // = 1: an arrived agent's advantages are all 1, the others' 0, so a level
  // whose one episode succeeded has PVL 1, and PVL 0 means nobody arrived
  const instances = randomInstances(16, 3, { size: 5, agents: 2, holes: 0 });
  const reward = GOAL_ONLY_REWARD;
  const ck = initCheckpoint({ seed: 1, hidden: [8, 8] });
  ck.net.params.fill(0);
  const t = new Trainer(ck, mapfTrainingSource(InstancePool.from(instances)), {
    seed: 4,
    episodes: "once",
    gamma: 1,
    lambda: 1,
    reward,
  });
  t.update({ learn: false });
  const tr = t.levelScores();
  const sc = scoreLevels(ck, instances, {
    episodes: 1,
    seed: 4,
    gamma: 1,
    lambda: 1,
    reward,
  });
  let successes = 0;
  for (let i = 0; i < instances.length; i++) {
    assert.equal(tr.episodes[i], 1);
    for (
      const [pvl, ok] of [
        [tr.pvl[i]!, tr.successes[i]! === 1],
        [sc[i]!.pvl, sc[i]!.successes === 1],
      ] as const
    ) {
      assert.ok(pvl >= 0 && pvl <= 1 + 1e-9);
      if (ok) {
        successes++;
        assert.ok(Math.abs(pvl - 1) < 1e-6, `level ${i}: ${pvl}`);
      }
    }
  }
  assert.ok(successes > 0, "some episode of a random policy succeeds");
  assert.equal(ck.counters.updates, 0, "no learning");
});
