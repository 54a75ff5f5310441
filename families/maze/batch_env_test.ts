import assert from "node:assert/strict";
import {
  MAZE_OBS_SIZE,
  MAZE_SUCCESS,
  MAZE_TIMEOUT,
  MazeBatchEnv,
  VIEW,
} from "./batch_env.ts";
import { evaluateMazes } from "./evaluate.ts";
import { FORWARD, mazeFromRows, TURN_LEFT, TURN_RIGHT } from "./maze.ts";

// 4x3: start (0,1) facing east, wall at (2,1), goal at (3,1)
const m = mazeFromRows("m", ["0000", "0010", "0000"], [0, 1], [3, 1], 0, 20);

Deno.test("step: turns, blocked moves, the goal's reward 1 - 0.9 t / maxSteps", () => {
  const env = new MazeBatchEnv([m], { envs: 1 });
  env.resetAll();
  const a = (x: number) => env.step(new Uint8Array([x]));
  a(FORWARD); // to (1,1)
  assert.equal(env.pos[0], 5);
  a(FORWARD); // wall at (2,1): stays
  assert.equal(env.pos[0], 5);
  assert.equal(env.reward[0], 0);
  a(TURN_LEFT); // north
  assert.equal(env.dir[0], 3);
  a(FORWARD); // (1,0)
  a(TURN_RIGHT); // east
  a(FORWARD); // (2,0)
  a(FORWARD); // (3,0)
  a(TURN_RIGHT); // south
  assert.equal(env.done[0], 0);
  a(FORWARD); // into the goal at step 9
  assert.equal(env.outcome[0], MAZE_SUCCESS);
  assert.equal(env.ended[0], 1);
  assert.ok(Math.abs(env.reward[0]! - (1 - 0.9 * 9 / 20)) < 1e-6);
  assert.equal(env.pos[0], 3); // the agent never stands on the goal
  a(FORWARD); // ended environments are skipped
  assert.equal(env.ended[0], 0);
  assert.equal(env.t[0], 9);
});

Deno.test("step: timeout at maxSteps with reward 0; resetDone restarts only ended environments", () => {
  const env = new MazeBatchEnv([m, { ...m, maxSteps: 3 }], { envs: 2 });
  env.resetAll();
  for (let t = 0; t < 3; t++) env.step(new Uint8Array([TURN_LEFT, TURN_LEFT]));
  assert.equal(env.outcome[1], MAZE_TIMEOUT);
  assert.equal(env.done[0], 0);
  assert.equal(env.reward[1], 0);
  assert.equal(env.resetDone(), 1);
  assert.equal(env.t[1], 0);
  assert.equal(env.t[0], 3);
});

Deno.test("observe: the 5x5 view ahead in the agent's frame, off-grid as wall, direction one-hot", () => {
  const env = new MazeBatchEnv([m], { envs: 1 });
  env.resetAll();
  const out = new Float32Array(MAZE_OBS_SIZE);
  env.observeInto(new Int32Array([0]), 1, out);
  const wall = (f: number, l: number) => out[(VIEW - 1 - f) * VIEW + l + 2];
  const goal = (f: number, l: number) =>
    out[VIEW * VIEW + (VIEW - 1 - f) * VIEW + l + 2];
  // facing east from (0,1): forward 2 is the wall (2,1), forward 3 the goal, forward 4 off-grid
  assert.equal(wall(0, 0), 0);
  assert.equal(wall(2, 0), 1);
  assert.equal(goal(3, 0), 1);
  assert.equal(wall(4, 0), 1);
  // lateral 2 to the right (south) is row 3: off-grid; lateral -1 (north) at forward 0 is (0,0): free
  assert.equal(wall(0, 2), 1);
  assert.equal(wall(0, -1), 0);
  assert.equal(wall(0, -2), 1); // row -1
  assert.deepEqual([...out.slice(2 * VIEW * VIEW)], [1, 0, 0, 0]);
  let ones = 0;
  for (const x of out) ones += x;
  // walls: the wall (2,1); off-grid: lateral -2 (5 cells), lateral +2 (5), forward 4 at l=-1..1 (3); goal 1; dir 1
  assert.equal(ones, 1 + 13 + 1 + 1);
});

Deno.test("evaluateMazes: a scripted policy's successes, steps and returns", () => {
  const line = mazeFromRows("line", ["0000"], [0, 0], [3, 0], 0, 10);
  const eps = evaluateMazes(
    [line, { ...line, name: "back", dir: 2 }],
    (_o, n, act) => act.fill(FORWARD, 0, n),
  );
  assert.equal(eps[0]!.success, true);
  assert.equal(eps[0]!.steps, 3);
  assert.ok(Math.abs(eps[0]!.return - (1 - 0.9 * 3 / 10)) < 1e-6);
  assert.equal(eps[0]!.optimal, 3);
  assert.equal(eps[1]!.success, false);
  assert.equal(eps[1]!.steps, 10);
  assert.equal(eps[1]!.failure, "timeout");
});
