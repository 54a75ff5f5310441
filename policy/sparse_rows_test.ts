import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { BatchEnv, InstancePool, Rng } from "../mapf/mod.ts";
import { initCheckpoint } from "./checkpoint.ts";
import { KernelArena } from "./kernels/arena.ts";
import type { SparseRows } from "./learner.ts";
import { Mlp } from "./mlp.ts";
import { DEFAULT_OBS } from "./observation.ts";
import { ObservationEncoder } from "./observation_encoder.ts";
import { SimdLearner } from "./simd_learner.ts";
import { Trainer, type TrainerOptions } from "./trainer.ts";
import { mapfTrainingSource } from "./mapf_training_env.ts";
import { randomInstances } from "./_test_instances.ts";

function digest(arrays: Float32Array[]): string {
  const h = createHash("sha256");
  for (const a of arrays) {
    h.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  }
  return h.digest("hex");
}

const small = InstancePool.from(
  randomInstances(40, 5, { size: 6, agents: 2, holes: 0.1 }),
);
const big = InstancePool.from(
  randomInstances(24, 9, {
    size: 12,
    agents: 6,
    holes: 0.15,
    collision: "block",
    slip: 0.1,
  }),
);

// sha256 of the weights and Adam moments after 3 updates, computed with the
// trainer of commit 3a146d0 (observation rows stored dense and compressed
// per minibatch, the first layer's weight gradient through a compressed-
// column copy, weight gradients in one pass): sparse rows in the sample
// buffer, spmm_t, the unrolled and blocked GEMMs change the speed, not one
// bit of the results.
const BEFORE_SPARSE_ROWS: [string, InstancePool, TrainerOptions, string][] = [
  [
    "ppo 6x6",
    small,
    { envs: 32, steps: 16, minibatch: 256 },
    "45ff58c8c74aec66d458366813e8745f063eb33f10cfa16b314c83b604d99840",
  ],
  [
    "ppo 12x12 block slip",
    big,
    { envs: 16, steps: 16, minibatch: 128, epochs: 3 },
    "2dcc1740c590f7a2c8863399040876ae8d83ee5c6b63f6cf699bc6cd2fe78eee",
  ],
  [
    "ppo 6x6, minibatch 1024",
    small,
    { envs: 64, steps: 24, minibatch: 1024, epochs: 2 },
    "1401f6908bad7b21ec3f47c91d6cb93374351e41c513404e592635ee5dfaddc1",
  ],
  [
    "grpo 6x6",
    small,
    { algo: "grpo", envs: 16, group: 4, minibatch: 128 },
    "0ee2b346f24c9f8d14206020c35c2912974f3bc949a30bec0fe12ef736d922bc",
  ],
];

for (const [name, pool, options, expected] of BEFORE_SPARSE_ROWS) {
  Deno.test(`faster kernels and sparse sample rows: ${name} trains to the bits of commit 3a146d0`, () => {
    const ck = initCheckpoint({ hidden: [64, 64], seed: 3 });
    const tr = new Trainer(ck, mapfTrainingSource(pool), {
      ...options,
      seed: 11,
    });
    for (let i = 0; i < 3; i++) tr.update();
    const out = tr.checkpoint();
    assert.equal(
      digest([out.net.params, out.adam!.m, out.adam!.v]),
      expected,
    );
  });
}

Deno.test("encodeSparse writes the non-zeros of encode's rows, in column order, appended after earlier rows", () => {
  const env = new BatchEnv(big, { envs: 8, seed: 2 });
  const rng = new Rng(4);
  env.resetAll(() => rng.int(big.count));
  const arena = new KernelArena();
  const enc = new ObservationEncoder(DEFAULT_OBS, env, { arena });
  const D = enc.size, S = env.envs * env.maxAgents;
  const cap = 3 * S;
  const at = {
    rowptr: arena.reserve(4 * (cap + 1)),
    cols: arena.reserve(4 * (cap * D + 4)),
    vals: arena.reserve(4 * (cap * D + 4)),
  };
  arena.commit();
  const rows: SparseRows = {
    rowptr: arena.i32(at.rowptr, cap + 1),
    cols: arena.i32(at.cols, cap * D + 4),
    vals: arena.f32(at.vals, cap * D + 4),
    rows: 0,
  };
  const slots = Int32Array.from({ length: S }, (_, i) => i);
  const dense = new Float32Array(cap * D);
  let row0 = 0;
  for (let step = 0; step < 3; step++) {
    const n = S - 5 * step; // a different subset each step
    enc.encode(slots, n, dense, row0);
    enc.encodeSparse(slots, n, rows, row0);
    row0 += n;
    assert.equal(rows.rows, row0);
    const acts = new Uint8Array(S).map(() => rng.int(5));
    env.step(acts);
    env.resetDone(() => rng.int(big.count));
  }
  let nonZero = 0;
  for (let r = 0; r < row0; r++) {
    const back = new Float32Array(D);
    let last = -1;
    for (let e = rows.rowptr[r]!; e < rows.rowptr[r + 1]!; e++) {
      const c = rows.cols[e]!;
      assert.ok(c > last, `row ${r}: columns ascend`);
      last = c;
      assert.notEqual(rows.vals[e], 0);
      back[c] = rows.vals[e]!;
      nonZero++;
    }
    assert.deepEqual(back, dense.subarray(r * D, (r + 1) * D), `row ${r}`);
  }
  assert.ok(nonZero > 0 && nonZero < 0.5 * row0 * D, `${nonZero} non-zeros`);
  // rewriting from an earlier row replaces the rows after it
  enc.encodeSparse(slots, 4, rows, 2);
  assert.equal(rows.rows, 6);
  assert.throws(
    () => enc.encodeSparse(slots, 1, rows, 7),
    /Cannot append sparse row 7: the rows end at 6/,
  );
});

Deno.test("SimdLearner: dense rows written to obs are compressed once and read like encoder rows; lowering count rereads them", () => {
  const spec = {
    inputSize: 20,
    hidden: [8],
    actions: 5,
    activation: "tanh",
  } as const;
  const rng = new Rng(3);
  const rowsA = new Float32Array(64 * 20).map(() =>
    rng.float() < 0.2 ? rng.normal() : 0
  );
  const rowsB = new Float32Array(64 * 20).map(() =>
    rng.float() < 0.2 ? rng.normal() : 0
  );
  const run = (rows: Float32Array, rewrite?: Float32Array) => {
    const net = Mlp.init(spec, { seed: 1, policyGain: 1 });
    const l = new SimdLearner(net, { capacity: 64, actRows: 64 }, {
      minibatch: 32,
      epochs: 2,
    });
    const buf = l.createBuffer(64);
    buf.obs.set(rows);
    for (let i = 0; i < 64; i++) {
      buf.actions[i] = i % 5;
      buf.logp[i] = -1.6;
      buf.advantages[i] = Math.sin(i);
      buf.returns[i] = Math.cos(i);
    }
    buf.count = 64;
    l.update(buf, new Rng(1));
    assert.equal(buf.sparse!.rows, 64);
    if (rewrite) {
      buf.count = 0; // rows will be written again
      assert.equal(buf.sparse!.rows, 0);
      buf.obs.set(rewrite);
      buf.count = 64;
      l.update(buf, new Rng(2));
    }
    return Float32Array.from(net.params);
  };
  const a = run(rowsA), a2 = run(rowsA);
  assert.deepEqual(a, a2);
  // the second update reads the rewritten rows, not the first ones'
  const ab = run(rowsA, rowsB), aa = run(rowsA, rowsA);
  assert.notDeepEqual(ab, aa);
});
