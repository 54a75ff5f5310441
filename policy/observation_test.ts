import assert from "node:assert/strict";
import { BatchEnv, InstancePool } from "../mapf/mod.ts";
import { gridInstance } from "../mapf/_test_grid.ts";
import {
  DEFAULT_OBS,
  OBS_CHANNELS,
  OBS_VERSION,
  obsSize,
  obsSpecForSize,
  ReferenceObservationEncoder,
  SCALAR_FEATURES,
} from "./observation.ts";
import { ObservationEncoder } from "./observation_encoder.ts";

// 5 wide, 3 high:
//   . H . . #
//   . . . . .
//   # . . . .
// agent 0 at (1,1) -> goal (1,4); agent 1 at (0,2) -> goal (2,3)
const inst = gridInstance(
  [".H..#", ".....", "#...."],
  [[1, 1], [0, 2]],
  [[1, 4], [2, 3]],
  { id: "obs", horizon: 10, slip: 0.25, collision: "block", holes: "lethal" },
);

const ENCODERS = [
  ["reference", ReferenceObservationEncoder],
  ["wasm", ObservationEncoder],
] as const;

function makeSetup(Encoder: (typeof ENCODERS)[number][1]) {
  return (radius: number) => {
    const env = new BatchEnv(InstancePool.from([inst]), {
      envs: 2,
      maxAgents: 3,
    });
    env.resetAll(() => 0);
    const enc = new Encoder({ version: OBS_VERSION, radius }, env);
    return { env, enc };
  };
}

for (const [name, Encoder] of ENCODERS) {
  const setup = makeSetup(Encoder);

  Deno.test(`${name} observation size and spec lookup`, () => {
    assert.equal(obsSize(DEFAULT_OBS), 6 * 25 + 12);
    assert.equal(
      OBS_CHANNELS * 9 + SCALAR_FEATURES,
      obsSize({ version: 1, radius: 1 }),
    );
    assert.deepEqual(obsSpecForSize(162), DEFAULT_OBS);
    assert.equal(obsSpecForSize(100), undefined);
    assert.throws(() => setup(9), /radius must be an integer in 0..8/);
  });

  Deno.test(`${name} observation window channels and scalar features`, () => {
    const { enc } = setup(1);
    const D = enc.size, S = 3, SS = 9, sc = 6 * SS;
    const out = new Float32Array(2 * D).fill(7);
    // env 1 (slots 3, 4): agent 0 and agent 1
    enc.encode(new Int32Array([3, 4]), 2, out);
    const at = (row: number, ch: number, dr: number, dc: number) =>
      out[row * D + ch * SS + (dr + 1) * S + (dc + 1)];
    // agent 0 at (1,1): hole at (0,1) = offset (-1,0); wall at (2,0) = (1,-1); other agent at (0,2) = (-1,1)
    assert.equal(at(0, 0, -1, 0), 1);
    assert.equal(at(0, 1, 1, -1), 1);
    assert.equal(at(0, 2, -1, 1), 1);
    assert.equal(at(0, 2, 0, 0), 0, "own position is not another agent");
    // no out-of-grid cells around (1,1) with radius 1
    for (let w = 0; w < SS; w++) assert.equal(out[5 * SS + w], 0);
    // own goal (1,4) is outside the window; the scalar features point at it
    const f = (row: number, k: number) => out[row * D + sc + k]!;
    assert.ok(Math.abs(f(0, 0) - 3 / 5) < 1e-6); // goal col offset / max(w,h)
    assert.equal(f(0, 1), 0);
    assert.ok(Math.abs(f(0, 2) - 3 / 8) < 1e-6); // distance 3 / (w + h)
    // moves: up = hole (-1), down (2,1): distance 4 -> -1, left (1,0): 4 -> -1, right (1,2): 2 -> +1
    assert.deepEqual([f(0, 3), f(0, 4), f(0, 5), f(0, 6)], [-1, -1, -1, 1]);
    assert.equal(f(0, 7), 1); // t = 0: whole horizon left
    assert.equal(f(0, 8), 0.25);
    assert.equal(f(0, 9), 1); // block
    assert.equal(f(0, 10), 0); // lethal holes
    assert.equal(f(0, 11), 0);
    // agent 1 at (0,2): row above is out of grid; other agent at (1,1) = (1,-1); its goal (2,3) out of window
    assert.equal(at(1, 5, -1, 0), 1);
    assert.equal(at(1, 5, -1, -1), 1);
    assert.equal(at(1, 2, 1, -1), 1);
    assert.equal(at(1, 0, 0, -1), 1); // hole at (0,1)
    // agent 0's goal (1,4) is not within radius 1 of (0,2); with radius 2 it is, as "other goal"
    const big = setup(2);
    const out2 = new Float32Array(big.enc.size);
    big.enc.encode(new Int32Array([1]), 1, out2);
    assert.equal(
      out2[4 * 25 + (1 + 2) * 5 + (2 + 2)],
      1,
      "agent 0's goal at offset (1,2)",
    );
    assert.equal(
      out2[3 * 25 + (2 + 2) * 5 + (1 + 2)],
      1,
      "own goal at offset (2,1)",
    );
    // up move of agent 1 leaves the grid: blocked -> 0
    assert.equal(out2[6 * 25 + 3], 0);
  });

  Deno.test(`${name} observation time feature follows the environment clock`, () => {
    const { env, enc } = setup(1);
    const out = new Float32Array(enc.size);
    env.step(new Uint8Array(6)); // everyone stays
    env.step(new Uint8Array(6));
    enc.encode(new Int32Array([0]), 1, out);
    assert.ok(Math.abs(out[6 * 9 + 7]! - 0.8) < 1e-6);
  });
}
