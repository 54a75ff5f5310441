import assert from "node:assert/strict";
import {
  BatchEnv,
  generate,
  type Instance,
  InstancePool,
  parseInstanceLines,
} from "../mapf/mod.ts";
import { Rng } from "../mapf/rng.ts";
import { KernelArena } from "./kernels/arena.ts";
import { OBS_VERSION, ReferenceObservationEncoder } from "./observation.ts";
import { ObservationEncoder } from "./observation_encoder.ts";
import { randomInstances } from "./_test_instances.ts";

/** Play random steps and compare both encoders byte for byte on random slot subsets. */
function compare(instances: Instance[], radius: number, seed: number) {
  const pool = InstancePool.from(instances);
  const env = new BatchEnv(pool, { envs: 24, seed });
  const rng = new Rng(seed);
  env.resetAll((e) => (e * 7 + seed) % pool.count);
  const spec = { version: OBS_VERSION, radius };
  const ref = new ReferenceObservationEncoder(spec, env);
  const fast = new ObservationEncoder(spec, env);
  const D = ref.size, m = env.maxAgents;
  const slots = new Int32Array(env.envs * m);
  const a = new Float32Array(slots.length * D), b = new Float32Array(a.length);
  const act = new Uint8Array(env.envs * m);
  let rows = 0;
  for (let step = 0; step < 12; step++) {
    // every agent of a random subset of environments (grouped by environment)
    let n = 0;
    for (let e = 0; e < env.envs; e++) {
      if (rng.float() < 0.3) continue;
      for (let k = 0; k < env.agentCount[e]!; k++) {
        if (rng.float() < 0.8) slots[n++] = e * m + k;
      }
    }
    const row0 = rng.int(3);
    a.fill(9);
    b.fill(9);
    ref.encode(slots, n, a, row0);
    fast.encode(slots, n, b, row0);
    assert.deepEqual(
      new Uint8Array(b.buffer),
      new Uint8Array(a.buffer),
      `radius ${radius}, step ${step}: encoders differ`,
    );
    // the encoder's own rows, written in place
    const own = fast.encode(slots, n);
    assert.deepEqual(
      own.subarray(0, n * D),
      a.subarray(row0 * D, (row0 + n) * D),
    );
    rows += n;
    for (let i = 0; i < act.length; i++) act[i] = rng.int(5);
    env.step(act);
    env.resetDone((e) => (e + step) % pool.count);
  }
  assert.ok(rows > 50);
}

Deno.test("wasm observations equal the reference byte for byte: every radius, generated presets", () => {
  const easy = generate({ preset: "easy" }, { count: 12, seed: 2 }).instances;
  const hard = generate({ preset: "hard" }, { count: 6, seed: 3 }).instances;
  for (let radius = 0; radius <= 8; radius++) {
    compare([...easy, ...hard], radius, radius + 1);
  }
});

Deno.test("wasm observations equal the reference: odd shapes, walls, blocked holes, block collisions, slip", () => {
  const odd = generate({
    width: 23,
    height: 9,
    agents: 6,
    hole_density: 0.2,
    slip: 0.3,
    collision: "block",
    holes: "blocked",
  }, { count: 5, seed: 4 }).instances;
  const corridors = generate({ preset: "medium" }, { count: 5, seed: 5 })
    .instances;
  const tiny = randomInstances(6, 7, { size: 3, agents: 1, holes: 0.2 });
  const line = [
    parseInstanceLines(JSON.stringify({
      id: "line",
      width: 7,
      height: 1,
      cells: [".H....."],
      starts: [[0, 0], [0, 6]],
      goals: [[0, 5], [0, 2]],
      horizon: 12,
    }))[0]!,
  ];
  for (const radius of [0, 1, 2, 3, 5, 8]) {
    compare([...odd, ...corridors, ...tiny, ...line], radius, 11 + radius);
  }
});

Deno.test("wasm observations written straight into a buffer of a shared arena", () => {
  const insts = generate({ preset: "easy" }, { count: 8, seed: 6 }).instances;
  const env = new BatchEnv(InstancePool.from(insts), { envs: 8, seed: 1 });
  env.resetAll();
  const arena = new KernelArena();
  const spec = { version: OBS_VERSION, radius: 2 };
  const fast = new ObservationEncoder(spec, env, { arena });
  const D = fast.size;
  const at = arena.reserve(4 * 20 * D);
  arena.commit();
  const buf = arena.f32(at, 20 * D).fill(5);
  const slots = Int32Array.from({ length: 8 }, (_, e) => e * env.maxAgents);
  assert.equal(fast.encode(slots, 8, buf, 3), buf);
  const ref = new Float32Array(8 * D);
  new ReferenceObservationEncoder(spec, env).encode(slots, 8, ref);
  assert.deepEqual(buf.subarray(3 * D, 11 * D), ref);
  assert.equal(buf[3 * D - 1], 5, "rows before row0 untouched");
  assert.equal(buf[11 * D], 5, "rows after untouched");
  assert.throws(() => fast.encode(slots, 8, buf, 15), RangeError);
});
