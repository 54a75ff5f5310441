import assert from "node:assert/strict";
import { Learner, SampleBuffer } from "./learner.ts";
import { Mlp } from "./mlp.ts";
import { ppoLoss, type PpoLossOptions } from "./ppo_loss.ts";
import { SimdLearner } from "./simd_learner.ts";
import { KernelArena } from "./kernels/arena.ts";
import { SimdMlp } from "./simd_mlp.ts";
import { Rng } from "../mapf/rng.ts";
import { realObservations } from "./_test_instances.ts";
import { fiveActionSpec } from "./_test_mlp.ts";

const { obs: OBS, size: D, rows: ROWS } = realObservations(600);
const SPEC = fiveActionSpec(D, [32, 17]);

/** Fill `buf` with the real observation rows and random PPO quantities. */
function fill(buf: SampleBuffer, n: number, seed: number): void {
  const rng = new Rng(seed);
  buf.obs.set(OBS.subarray(0, n * D));
  for (let i = 0; i < n; i++) {
    buf.actions[i] = rng.int(5);
    buf.logp[i] = Math.log(0.2) + 0.4 * rng.normal();
    buf.advantages[i] = rng.normal();
    buf.returns[i] = 2 + rng.normal();
    buf.values[i] = rng.normal();
  }
  buf.count = n;
}

for (
  const options of [
    {},
    { clipValue: true, entropyCoef: 0.05 },
    { valueCoef: 0, clip: 0.1 },
  ] as PpoLossOptions[]
) {
  Deno.test(`ppo_loss kernel matches ppoLoss ${JSON.stringify(options)}`, () => {
    const n = 203, A = 5, st = A + 1;
    const rng = new Rng(11);
    const arena = new KernelArena();
    const simd = new SimdMlp(
      { inputSize: 4, hidden: [4], actions: A, activation: "tanh" },
      arena,
      n,
    );
    const hs = simd.headStride;
    const mb = ["act", "logp", "adv", "ret", "val"].map(() =>
      arena.reserve(4 * 208)
    );
    const scratch = arena.reserve(16 * 3 * (A + 1)), stats = arena.reserve(64);
    arena.commit();
    const out = new Float32Array(n * st).map(() => 2 * rng.normal());
    const batch = {
      actions: new Uint8Array(n).map(() => rng.int(A)),
      logpOld: new Float32Array(n).map(() => -1.6 + 0.5 * rng.normal()),
      advantages: new Float32Array(n).map(() => rng.normal()),
      returns: new Float32Array(n).map(() => rng.normal()),
      valuesOld: new Float32Array(n).map(() => rng.normal()),
    };
    const head = arena.f32(simd.headOut, n * hs);
    for (let r = 0; r < n; r++) {
      for (let k = 0; k < st; k++) head[r * hs + k] = out[r * st + k]!;
    }
    arena.i32(mb[0]!, n).set(batch.actions);
    arena.f32(mb[1]!, n).set(batch.logpOld);
    arena.f32(mb[2]!, n).set(batch.advantages);
    arena.f32(mb[3]!, n).set(batch.returns);
    arena.f32(mb[4]!, n).set(batch.valuesOld);
    const o = { clip: 0.2, valueCoef: 0.5, entropyCoef: 0.01, ...options };
    simd.kernels.ppo_loss(
      simd.headOut,
      hs,
      simd.dOut,
      n,
      A,
      mb[0]!,
      mb[1]!,
      mb[2]!,
      mb[3]!,
      mb[4]!,
      o.clip,
      o.valueCoef,
      o.entropyCoef,
      o.clipValue ? 1 : 0,
      scratch,
      stats,
    );
    const dOut = new Float32Array(n * st);
    const ref = ppoLoss(out, dOut, A, batch, n, o);
    const s = arena.f64(stats, 5);
    const close = (a: number, b: number, what: string) =>
      assert.ok(
        Math.abs(a - b) < 1e-5 * (1 + Math.abs(b)),
        `${what}: ${a} vs ${b}`,
      );
    close(s[0]! / n, ref.policyLoss, "policy loss");
    close(s[1]! / n, ref.valueLoss, "value loss");
    close(s[2]! / n, ref.entropy, "entropy");
    close(s[3]! / n, ref.approxKl, "approx KL");
    assert.equal(s[4]! / n, ref.clipFrac);
    const g = arena.f32(simd.dOut, n * hs);
    for (let r = 0; r < n; r++) {
      for (let k = 0; k < st; k++) {
        assert.ok(
          Math.abs(g[r * hs + k]! - dOut[r * st + k]!) < 1e-7,
          `dOut[${r}, ${k}]: ${g[r * hs + k]} vs ${dOut[r * st + k]}`,
        );
      }
      for (let k = st; k < hs; k++) assert.equal(g[r * hs + k], 0, "padding");
    }
  });
}

Deno.test("SimdLearner.update follows the TypeScript learner: same steps, statistics and weights to rounding", () => {
  const n = 530; // one full minibatch of 256 and one of 256, remainder 18 skipped
  const opts = { minibatch: 256, epochs: 2, lr: 1e-3 };
  const a = Mlp.init(SPEC, { seed: 4 }), b = a.clone();
  const ts = new Learner(a, opts);
  const simd = new SimdLearner(b, { capacity: n, actRows: 16 }, opts);
  const bufA = ts.createBuffer(n), bufB = simd.createBuffer(n);
  fill(bufA, n, 3);
  fill(bufB, n, 3);
  const sa = ts.update(bufA, new Rng(5)), sb = simd.update(bufB, new Rng(5));
  assert.equal(sb.steps, sa.steps);
  assert.equal(sb.steps, 4);
  for (
    const k of [
      "loss",
      "policyLoss",
      "valueLoss",
      "entropy",
      "approxKl",
      "gradNorm",
    ] as const
  ) {
    assert.ok(
      Math.abs(sa[k] - sb[k]) < 2e-5 * (1 + Math.abs(sa[k])),
      `${k}: ts ${sa[k]} simd ${sb[k]}`,
    );
  }
  assert.ok(Math.abs(sa.clipFrac - sb.clipFrac) <= 1 / 256);
  let moved = 0, diff = 0;
  const start = Mlp.init(SPEC, { seed: 4 }).params;
  for (let i = 0; i < a.size; i++) {
    moved = Math.max(moved, Math.abs(a.params[i]! - start[i]!));
    diff = Math.max(diff, Math.abs(a.params[i]! - b.params[i]!));
  }
  assert.ok(moved > 1e-3, "the weights moved");
  assert.ok(diff < 1e-5, `weights differ by ${diff} after 4 Adam steps`);
  // optimiser state in the Mlp layout
  const ma = ts.adamState(), mb = simd.adamState();
  assert.equal(mb.t, 4);
  let md = 0;
  for (let i = 0; i < a.size; i++) {
    md = Math.max(md, Math.abs(ma.m[i]! - mb.m[i]!));
  }
  assert.ok(md < 1e-6, `first moments differ by ${md}`);
});

Deno.test("SimdLearner: actions sampled by act() have log-ratio exactly 0 at the first step", () => {
  const n = 96;
  const net = Mlp.init(SPEC, { seed: 8, policyGain: 1 });
  const learner = new SimdLearner(net, { capacity: n, actRows: n }, {
    minibatch: n,
    epochs: 1,
  });
  const buf = learner.createBuffer(n);
  buf.obs.set(OBS.subarray(0, n * D));
  const act = new Uint8Array(n),
    logp = new Float32Array(n),
    v = new Float32Array(n);
  learner.act(buf, 0, n, new Rng(1), act, logp, v);
  const rng = new Rng(2);
  for (let i = 0; i < n; i++) {
    buf.actions[i] = act[i]!;
    buf.logp[i] = logp[i]!;
    buf.values[i] = v[i]!;
    buf.advantages[i] = rng.normal();
    buf.returns[i] = rng.normal();
  }
  buf.count = n;
  const counts = new Array(5).fill(0);
  for (const x of act) counts[x]++;
  assert.ok(
    counts.filter((c) => c > 0).length >= 3,
    "sampling spreads over actions",
  );
  const st = learner.update(buf, new Rng(3));
  assert.equal(st.steps, 1);
  assert.equal(st.approxKl, 0);
  assert.equal(st.clipFrac, 0);
  // greedy picks the arg-max
  learner.act(buf, 0, 4, new Rng(1), act, logp, v, true);
  const ts = new Learner(net);
  const tsBuf = ts.createBuffer(n);
  tsBuf.obs.set(buf.obs);
  const act2 = new Uint8Array(n),
    logp2 = new Float32Array(n),
    v2 = new Float32Array(n);
  ts.act(tsBuf, 0, 4, new Rng(1), act2, logp2, v2, true);
  assert.deepEqual(act.subarray(0, 4), act2.subarray(0, 4));
  for (let i = 0; i < 4; i++) {
    assert.ok(Math.abs(logp[i]! - logp2[i]!) < 1e-5);
    assert.ok(Math.abs(v[i]! - v2[i]!) < 1e-5);
  }
});

Deno.test("SimdLearner: optimiser state loads and saves in the Mlp layout; buffers are checked", () => {
  const net = Mlp.init(SPEC, { seed: 1 });
  const learner = new SimdLearner(net, { capacity: 64, actRows: 8 });
  const m = new Float32Array(net.size).map((_, i) => i * 1e-3);
  const v = new Float32Array(net.size).map((_, i) => i * 1e-6);
  learner.loadAdam({ t: 7, m, v });
  const back = learner.adamState();
  assert.equal(back.t, 7);
  assert.deepEqual(back.m, m);
  assert.deepEqual(back.v, v);
  assert.throws(() => learner.createBuffer(65), RangeError);
  assert.throws(
    () => learner.update(new SampleBuffer(4, D), new Rng(1)),
    /only the sample buffer it created/,
  );
  assert.throws(
    () =>
      learner.loadAdam({
        t: 1,
        m: new Float32Array(3),
        v: new Float32Array(3),
      }),
    RangeError,
  );
  assert.ok(ROWS >= 600);
});
