import assert from "node:assert/strict";
import { BatchEnv } from "./batch_env.ts";
import { InstancePool } from "./pool.ts";
import type { Instance } from "./instance.ts";
import {
  EDGE_COLLISION,
  EV_BLOCKED,
  EV_BUMPED,
  EV_EDGE,
  EV_FELL,
  EV_MOVED,
  EV_REACHED,
  EV_SLIPPED,
  EV_VERTEX,
  HOLE_FALL,
  RUNNING,
  SUCCESS,
  TIMEOUT,
  VERTEX_COLLISION,
} from "./outcome.ts";
import { DOWN, LEFT, RIGHT, STAY, UP } from "./grid.ts";
import { type Cell, gridInstance } from "./_test_grid.ts";

type P = Cell;
const mk = gridInstance;

/** One env on one instance; step with a list of actions, return the env. */
function run(inst: Instance, steps: number[][], seed = 1): BatchEnv {
  const env = new BatchEnv(InstancePool.from([inst]), { envs: 1 });
  env.reset(0, 0, seed);
  for (const acts of steps) env.step(Uint8Array.from(acts));
  return env;
}

const W = (inst: Instance) => inst.width;
const cell = (inst: Instance, r: number, c: number) => r * W(inst) + c;

Deno.test("moves, stay, grid edge and walls", () => {
  const inst = mk(["..#", "...", "..."], [[1, 1]], [[2, 2]]);
  let env = run(inst, [[UP]]);
  assert.equal(env.pos[0], cell(inst, 0, 1));
  assert.equal(env.events[0], EV_MOVED);
  env = run(inst, [[UP], [UP]]); // off the top edge: stays
  assert.equal(env.pos[0], cell(inst, 0, 1));
  assert.equal(env.events[0], EV_BUMPED);
  env = run(inst, [[UP], [RIGHT]]); // into the wall at (0,2): stays
  assert.equal(env.pos[0], cell(inst, 0, 1));
  assert.equal(env.events[0], EV_BUMPED);
  env = run(inst, [[STAY], [LEFT], [LEFT]]);
  assert.equal(env.pos[0], cell(inst, 1, 0));
  assert.equal(env.t[0], 3);
  assert.equal(env.done[0], 0);
  env = run(inst, [[9]]); // out-of-range action = stay
  assert.equal(env.pos[0], cell(inst, 1, 1));
  assert.equal(env.events[0], 0);
});

Deno.test("goal: agents stay once there; success when all arrive", () => {
  const inst = mk(["....", "...."], [[0, 0], [1, 0]], [[0, 1], [1, 3]]);
  const env = run(inst, [[RIGHT, RIGHT]]);
  assert.equal(env.arrived[0], 1);
  assert.equal(env.events[0], EV_MOVED | EV_REACHED);
  assert.equal(env.arrivedCount[0], 1);
  env.step(Uint8Array.from([RIGHT, RIGHT])); // agent 0 ignores its action
  assert.equal(env.pos[0], cell(inst, 0, 1));
  assert.equal(env.events[0], 0);
  assert.equal(env.outcome[0], RUNNING);
  env.step(Uint8Array.from([DOWN, RIGHT]));
  assert.equal(env.done[0], 1);
  assert.equal(env.ended[0], 1);
  assert.equal(env.outcome[0], SUCCESS);
  assert.equal(env.t[0], 3);
  // an ended env is skipped and its `ended` flag clears
  assert.equal(env.step(Uint8Array.from([LEFT, LEFT])), 0);
  assert.equal(env.t[0], 3);
  assert.equal(env.ended[0], 0);
});

Deno.test("timeout at the horizon", () => {
  const inst = mk(["...."], [[0, 0]], [[0, 3]], { horizon: 2 });
  const env = run(inst, [[RIGHT]]);
  assert.equal(env.done[0], 0);
  env.step(Uint8Array.from([STAY]));
  assert.equal(env.outcome[0], TIMEOUT);
  assert.equal(env.failAgents[0], -1);
  // reaching the goal exactly at the horizon is a success
  const env2 = run(mk(["..."], [[0, 0]], [[0, 2]], { horizon: 2 }), [[RIGHT], [
    RIGHT,
  ]]);
  assert.equal(env2.outcome[0], SUCCESS);
});

Deno.test("holes: lethal ends the episode, blocked is a wall", () => {
  const cells = ["..H", "..."];
  let env = run(mk(cells, [[0, 0], [0, 1]], [[1, 0], [1, 2]]), [[STAY, RIGHT]]);
  assert.equal(env.outcome[0], HOLE_FALL);
  assert.equal(env.pos[1], 2);
  assert.equal(env.events[1], EV_MOVED | EV_FELL);
  assert.deepEqual([env.failAgents[0], env.failAgents[1]], [1, -1]);
  env = run(
    mk(cells, [[0, 0], [0, 1]], [[1, 0], [1, 2]], { holes: "blocked" }),
    [[STAY, RIGHT]],
  );
  assert.equal(env.outcome[0], RUNNING);
  assert.equal(env.pos[1], 1);
  assert.equal(env.events[1], EV_BUMPED);
});

Deno.test("fail mode: vertex collisions (same target, or into a staying agent)", () => {
  const inst = mk(["...", "..."], [[0, 0], [0, 2]], [[1, 0], [1, 2]]);
  let env = run(inst, [[RIGHT, LEFT]]);
  assert.equal(env.outcome[0], VERTEX_COLLISION);
  assert.deepEqual([env.failAgents[0], env.failAgents[1]], [0, 1]);
  assert.equal(env.events[0]! & EV_VERTEX, EV_VERTEX);
  assert.equal(env.events[1]! & EV_VERTEX, EV_VERTEX);
  env = run(inst, [[RIGHT, STAY], [RIGHT, STAY]]);
  assert.equal(env.outcome[0], VERTEX_COLLISION);
});

Deno.test("fail mode: a follower collides with an agent that bumped", () => {
  const inst = mk(["..#", "..."], [[0, 0], [0, 1]], [[1, 0], [1, 1]]);
  const env = run(inst, [[RIGHT, RIGHT]]); // agent 1 bumps the wall and stays
  assert.equal(env.outcome[0], VERTEX_COLLISION);
  assert.equal(env.events[1]! & EV_BUMPED, EV_BUMPED);
});

Deno.test("fail mode: edge collision on swap", () => {
  const inst = mk(["...."], [[0, 1], [0, 2]], [[0, 3], [0, 0]]);
  const env = run(inst, [[RIGHT, LEFT]]);
  assert.equal(env.outcome[0], EDGE_COLLISION);
  assert.deepEqual([env.failAgents[0], env.failAgents[1]], [0, 1]);
  assert.equal(env.events[0]! & EV_EDGE, EV_EDGE);
  assert.equal(env.events[1]! & EV_EDGE, EV_EDGE);
});

Deno.test("following and rotations are legal", () => {
  // a train of three agents moving right
  const line = mk(["....."], [[0, 0], [0, 1], [0, 2]], [[0, 1], [0, 2], [
    0,
    3,
  ]]);
  const env = run(line, [[RIGHT, RIGHT, RIGHT]]);
  assert.equal(env.outcome[0], SUCCESS);
  // a rotation of four agents on a 2x2 block
  const rot = mk(["..", ".."], [[0, 0], [0, 1], [1, 1], [1, 0]], [
    [0, 1],
    [1, 1],
    [1, 0],
    [0, 0],
  ]);
  const env2 = run(rot, [[RIGHT, DOWN, LEFT, UP]]);
  assert.equal(env2.outcome[0], SUCCESS);
  for (let a = 0; a < 4; a++) {
    assert.equal(env2.events[a]! & (EV_VERTEX | EV_EDGE), 0);
  }
});

Deno.test("block mode: swaps and vertex conflicts are cancelled, to a fixed point", () => {
  const swap = mk(["...."], [[0, 1], [0, 2]], [[0, 3], [0, 0]], {
    collision: "block",
  });
  let env = run(swap, [[RIGHT, LEFT]]);
  assert.equal(env.outcome[0], RUNNING);
  assert.deepEqual([env.pos[0], env.pos[1]], [1, 2]);
  assert.equal(env.events[0], EV_EDGE | EV_BLOCKED);
  assert.equal(env.events[1], EV_EDGE | EV_BLOCKED);
  const meet = mk(["...", "..."], [[0, 0], [0, 2]], [[1, 0], [1, 2]], {
    collision: "block",
  });
  env = run(meet, [[RIGHT, LEFT]]);
  assert.deepEqual([env.pos[0], env.pos[1]], [0, 2]);
  assert.equal(env.events[0], EV_VERTEX | EV_BLOCKED);
  // chain: 2 bumps a wall and stays, so 1 is cancelled, so 0 is cancelled
  const chain = mk(["...#", "...."], [[0, 0], [0, 1], [0, 2]], [
    [1, 0],
    [1, 1],
    [1, 2],
  ], {
    collision: "block",
  });
  env = run(chain, [[RIGHT, RIGHT, RIGHT]]);
  assert.deepEqual([env.pos[0], env.pos[1], env.pos[2]], [0, 1, 2]);
  assert.equal(env.events[2], EV_BUMPED);
  assert.equal(env.events[1], EV_VERTEX | EV_BLOCKED);
  assert.equal(env.events[0], EV_VERTEX | EV_BLOCKED);
  // a train still moves in block mode
  const line = mk(["....."], [[0, 0], [0, 1]], [[0, 4], [0, 3]], {
    collision: "block",
  });
  env = run(line, [[RIGHT, RIGHT]]);
  assert.deepEqual([env.pos[0], env.pos[1]], [1, 2]);
});

Deno.test("block mode: two agents entering the same hole are both cancelled", () => {
  const inst = mk(["...", ".H.", "..."], [[1, 0], [1, 2]], [[0, 0], [0, 2]], {
    collision: "block",
  });
  const env = run(inst, [[RIGHT, LEFT]]);
  assert.equal(env.outcome[0], RUNNING);
  assert.equal(env.events[0]! & EV_FELL, 0);
  const inst2 = mk(["...", ".H.", "..."], [[1, 0], [1, 2]], [[0, 0], [0, 2]], {
    collision: "fail",
  });
  const env2 = run(inst2, [[RIGHT, LEFT]]);
  assert.equal(
    env2.outcome[0],
    HOLE_FALL,
    "hole takes priority over the collision",
  );
});

Deno.test("slip: perpendicular moves with probability slip/2 each", () => {
  const slip = 0.3;
  const inst = mk([".....", ".....", "....."], [[1, 2]], [[0, 0]], {
    slip,
    horizon: 5,
  });
  const envs = 20000;
  const env = new BatchEnv(InstancePool.from([inst]), { envs, seed: 11 });
  env.resetAll(() => 0);
  const actions = new Uint8Array(envs).fill(UP);
  env.step(actions);
  let up = 0, left = 0, right = 0, slipped = 0;
  for (let e = 0; e < envs; e++) {
    const p = env.pos[e]!;
    if (p === 2) up++;
    else if (p === 6) left++;
    else if (p === 8) right++;
    if (env.events[e]! & EV_SLIPPED) slipped++;
  }
  assert.equal(up + left + right, envs);
  // 4-sigma tolerances for binomial counts
  const tol = (p: number) => 4 * Math.sqrt(envs * p * (1 - p));
  assert.ok(Math.abs(up - envs * 0.7) < tol(0.7), `up ${up}`);
  assert.ok(Math.abs(left - envs * 0.15) < tol(0.15), `left ${left}`);
  assert.ok(Math.abs(right - envs * 0.15) < tol(0.15), `right ${right}`);
  assert.equal(slipped, left + right);
  // left/right moves slip to up/down
  env.resetAll(() => 0);
  env.step(actions.fill(RIGHT));
  let vertical = 0;
  for (let e = 0; e < envs; e++) {
    if (env.pos[e] === 2 || env.pos[e] === 12) vertical++;
  }
  assert.ok(
    Math.abs(vertical - envs * slip) < tol(slip),
    `vertical ${vertical}`,
  );
  // stay never slips
  env.resetAll(() => 0);
  env.step(actions.fill(STAY));
  for (let e = 0; e < envs; e++) assert.equal(env.pos[e], 7);
  // noSlip ignores the instance's slip
  const exact = new BatchEnv(InstancePool.from([inst]), {
    envs: 1000,
    noSlip: true,
  });
  exact.resetAll(() => 0);
  exact.step(new Uint8Array(1000).fill(UP));
  for (let e = 0; e < 1000; e++) assert.equal(exact.pos[e], 2);
});

Deno.test("episode seeds make slip reproducible; batching does not change results", () => {
  const inst = mk(["......", "......", "......", "......"], [[0, 0], [3, 5]], [[
    3,
    3,
  ], [0, 2]], {
    slip: 0.5,
    horizon: 30,
  });
  const pool = InstancePool.from([inst]);
  const script = Array.from(
    { length: 25 },
    (_, t) => [1 + (t % 4), 1 + ((t * 3) % 4)],
  );
  const trace = (env: BatchEnv, e: number) => {
    const out: number[] = [];
    for (const acts of script) {
      const a = new Uint8Array(env.envs * env.maxAgents);
      a[e * 2] = acts[0]!;
      a[e * 2 + 1] = acts[1]!;
      env.step(a);
      out.push(env.pos[e * 2]!, env.pos[e * 2 + 1]!, env.outcome[e]!);
    }
    return out;
  };
  const one = new BatchEnv(pool, { envs: 1 });
  one.reset(0, 0, 1234);
  const many = new BatchEnv(pool, { envs: 5 });
  for (let e = 0; e < 5; e++) many.reset(e, 0, e === 3 ? 1234 : e);
  assert.deepEqual(trace(many, 3), trace(one, 0));
  const other = new BatchEnv(pool, { envs: 1 });
  other.reset(0, 0, 999);
  one.reset(0, 0, 1234);
  assert.notDeepEqual(trace(other, 0), trace(one, 0));
});

Deno.test("resetDone restarts ended envs with fresh seeds; mixed instance sizes", () => {
  const a = mk([".."], [[0, 0]], [[0, 1]]);
  const b = mk(["...", "...", "..."], [[0, 0], [2, 2]], [[2, 0], [0, 2]], {
    horizon: 3,
  });
  const pool = InstancePool.from([a, b]);
  assert.equal(pool.maxAgents, 2);
  assert.equal(pool.maxCells, 9);
  const env = new BatchEnv(pool, { envs: 3, seed: 5 });
  env.resetAll((e) => e % 2);
  assert.deepEqual(Array.from(env.pos), [0, -1, 0, 8, 0, -1]);
  const acts = Uint8Array.from([RIGHT, 0, DOWN, UP, RIGHT, 0]);
  assert.equal(env.step(acts), 2);
  assert.deepEqual(Array.from(env.done), [1, 0, 1]);
  const seeds = Array.from(env.episodeSeed);
  assert.equal(env.resetDone(), 2);
  assert.deepEqual(Array.from(env.done), [0, 0, 0]);
  assert.notEqual(env.episodeSeed[0], seeds[0]);
  assert.notEqual(env.episodeSeed[0], env.episodeSeed[2]);
  assert.equal(env.episode[0], 2);
  assert.equal(env.episode[1], 1);
  assert.throws(() => env.reset(0, 7, 1), RangeError);
  assert.throws(() => env.step(new Uint8Array(2)), RangeError);
});
