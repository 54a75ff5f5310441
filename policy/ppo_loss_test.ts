import assert from "node:assert/strict";
import {
  gae,
  groupAdvantages,
  normalize,
  ppoLoss,
  RunningMeanStd,
} from "./ppo_loss.ts";

Deno.test("gae equals the hand-computed recursion and skips invalid steps", () => {
  // 4 steps x 2 slots. Slot 0: valid at t=0,1 (done at 1), invalid t=2, valid t=3 (running).
  // Slot 1: valid everywhere, never done.
  const steps = 4, slots = 2, g = 0.9, l = 0.8;
  const rewards = new Float32Array([1, 0, 0, 0.5, 0, 0, 2, 1]);
  const values = new Float32Array([0.5, 0.2, 0.3, 0.1, 0, 0.4, 0.6, 0.3]);
  const done = new Uint8Array([0, 0, 1, 0, 0, 0, 0, 0]);
  const valid = new Uint8Array([1, 1, 1, 1, 0, 1, 1, 1]);
  const boot = new Float32Array([0.7, 0.9]);
  const adv = new Float32Array(8), ret = new Float32Array(8);
  gae(rewards, values, done, valid, boot, steps, slots, g, l, adv, ret);
  // slot 0
  const a03 = 2 + g * 0.7 - 0.6; // t=3 bootstraps
  const a01 = 0 - 0.3; // done at t=1
  const a00 = 1 + g * 0.3 - 0.5 + g * l * a01;
  // slot 1
  const a13 = 1 + g * 0.9 - 0.3;
  const a12 = 0 + g * 0.3 - 0.4 + g * l * a13;
  const a11 = 0.5 + g * 0.4 - 0.1 + g * l * a12;
  const a10 = 0 + g * 0.1 - 0.2 + g * l * a11;
  const want = [a00, a10, a01, a11, 0, a12, a03, a13];
  want.forEach((w, i) =>
    assert.ok(Math.abs(adv[i]! - w) < 1e-6, `adv[${i}] ${adv[i]} vs ${w}`)
  );
  assert.ok(Math.abs(ret[0]! - (a00 + 0.5)) < 1e-6);
  assert.equal(ret[4], 0);
});

Deno.test("group advantages are zero-mean unit-std per group, zero for a constant group", () => {
  const r = new Float32Array([1, 2, 3, 4, 5, 5, 5, 5]);
  const out = new Float32Array(8);
  groupAdvantages(r, 2, 4, out);
  const m = (out[0]! + out[1]! + out[2]! + out[3]!) / 4;
  assert.ok(Math.abs(m) < 1e-6);
  const sd = Math.sqrt([0, 1, 2, 3].reduce((s, i) => s + out[i]! ** 2, 0) / 4);
  assert.ok(Math.abs(sd - 1) < 1e-5);
  assert.ok(out[3]! > out[0]!);
  assert.deepEqual(Array.from(out.subarray(4)), [0, 0, 0, 0]);
});

Deno.test("running mean/std merges batches like one pass", () => {
  const x = new Float32Array([1, 4, -2, 7, 3, 0, 9, 2]);
  const rms = new RunningMeanStd(0, 1, 0);
  rms.update(x.subarray(0, 3), 3);
  rms.update(x.subarray(3), 5);
  const mean = x.reduce((s, v) => s + v, 0) / 8;
  const v = x.reduce((s, q) => s + (q - mean) ** 2, 0) / 8;
  assert.ok(Math.abs(rms.mean - mean) < 1e-9);
  assert.ok(Math.abs(rms.var - v) < 1e-9);
  const masked = new RunningMeanStd(0, 1, 0);
  masked.update(x, 8, new Uint8Array([1, 1, 0, 0, 0, 0, 0, 0]));
  assert.equal(masked.mean, 2.5);
});

Deno.test("normalize gives zero mean and unit std", () => {
  const x = new Float32Array([2, 4, 6, 8]);
  normalize(x, 4);
  assert.ok(Math.abs(x[0]! + x[3]!) < 1e-6);
  assert.ok(Math.abs(x.reduce((s, v) => s + v * v, 0) / 4 - 1) < 1e-5);
});

Deno.test("ppo loss: clipped rows get no policy gradient, stats are exact", () => {
  // two rows, uniform logits: logp = -log 5 for all actions.
  const out = new Float32Array(12); // logits 0, value 0
  const dOut = new Float32Array(12);
  const lp = -Math.log(5);
  const batch = {
    actions: new Uint8Array([1, 2]),
    logpOld: new Float32Array([lp - 0.5, lp]), // row 0 ratio e^0.5 > 1.2 -> clipped for A > 0
    advantages: new Float32Array([1, -1]),
    returns: new Float32Array([1, 0]),
    valuesOld: new Float32Array([0, 0]),
  };
  const st = ppoLoss(out, dOut, 5, batch, 2, {
    clip: 0.2,
    valueCoef: 1,
    entropyCoef: 0,
  });
  assert.equal(st.clipFrac, 0.5);
  assert.ok(Math.abs(st.policyLoss - (-(1.2 * 1) + 1) / 2) < 1e-6);
  assert.ok(Math.abs(st.entropy - Math.log(5)) < 1e-6);
  assert.ok(Math.abs(st.valueLoss - 0.25) < 1e-6);
  for (let k = 0; k < 5; k++) assert.equal(dOut[k], 0);
  // row 1: d/dz_k of -ratio*A*logp = A * ([k==a] - p) * -1 * ... with A = -1: (1/2)(1)([k==2]-0.2)
  for (let k = 0; k < 5; k++) {
    assert.ok(Math.abs(dOut[6 + k]! - 0.5 * ((k === 2 ? 1 : 0) - 0.2)) < 1e-6);
  }
  assert.ok(Math.abs(dOut[5]! - 0.5 * (0 - 1)) < 1e-6);
});
