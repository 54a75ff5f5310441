import assert from "node:assert/strict";
import { MAZE_ACTIONS, mazeFromRows } from "../families/maze/maze.ts";
import {
  MAZE_OBS_SIZE,
  mazeTrainingSource,
} from "../families/maze/batch_env.ts";
import {
  initCheckpoint,
  loadCheckpoint,
  saveCheckpoint,
} from "./checkpoint.ts";
import { Trainer } from "./trainer.ts";

// a corridor: start at the west end facing east, goal at the east end
const corridor = mazeFromRows(
  "corridor",
  ["000000", "111111"],
  [0, 0],
  [5, 0],
  0,
  30,
);
const mazeNet = (seed: number) =>
  initCheckpoint({
    hidden: [32],
    seed,
    inputSize: MAZE_OBS_SIZE,
    actions: MAZE_ACTIONS,
  });

Deno.test("trainer on another family's batched environment: deterministic for a seed", () => {
  const run = (seed: number) => {
    const tr = new Trainer(mazeNet(1), mazeTrainingSource([corridor]), {
      envs: 8,
      steps: 16,
      minibatch: 64,
      epochs: 2,
      seed,
    });
    for (let i = 0; i < 3; i++) tr.update();
    return saveCheckpoint(tr.checkpoint());
  };
  assert.deepEqual(run(3), run(3));
  assert.notDeepEqual(run(3), run(4));
});

Deno.test("ppo learns the maze corridor through the seam (success, reward 1 - 0.9 t/T)", () => {
  const tr = new Trainer(mazeNet(2), mazeTrainingSource([corridor]), {
    envs: 16,
    steps: 32,
    minibatch: 128,
    epochs: 4,
    lr: 3e-3,
    seed: 5,
  });
  let last = tr.update();
  for (let i = 0; i < 40; i++) last = tr.update();
  assert.ok(last.success > 0.9, `success ${last.success}`);
  // five forward steps: each episode's reward is 1 - 0.9 * 5 / 30 = 0.85 spread over its steps
  assert.ok(last.reward > 0.1, `reward per step ${last.reward}`);
  assert.equal(last.outcomes["timeout"] ?? 0, 0);
});

Deno.test("trainer refuses a network of the wrong width or action count for the environment", () => {
  const wrongIn = initCheckpoint({
    hidden: [8],
    inputSize: 10,
    actions: MAZE_ACTIONS,
  });
  assert.throws(
    () => new Trainer(wrongIn, mazeTrainingSource([corridor])),
    /reads 10 values per agent but the environment's observation has 54/,
  );
  const wrongAct = initCheckpoint({ hidden: [8], inputSize: MAZE_OBS_SIZE });
  assert.throws(
    () => new Trainer(wrongAct, mazeTrainingSource([corridor])),
    /chooses among 5 actions but the environment has 3/,
  );
});

Deno.test("a checkpoint of another family's network saves and loads with its family and width; MAPF bytes carry no env entry", () => {
  const ck = initCheckpoint({
    hidden: [8],
    seed: 1,
    inputSize: MAZE_OBS_SIZE,
    actions: MAZE_ACTIONS,
    family: "maze",
  });
  const back = loadCheckpoint(saveCheckpoint(ck));
  assert.deepEqual(back.env, { family: "maze", observationSize: 54 });
  assert.equal(back.net.spec.actions, 3);
  assert.deepEqual(back.net.params, ck.net.params);
  const mapf = saveCheckpoint(initCheckpoint({ hidden: [8], seed: 1 }));
  assert.equal(new TextDecoder().decode(mapf).includes("envsmith.env"), false);
  assert.equal(loadCheckpoint(mapf).env, undefined);
});
