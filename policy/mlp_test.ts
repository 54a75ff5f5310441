import assert from "node:assert/strict";
import { Mlp, mlpLayout, type MlpSpec, MlpWorkspace } from "./mlp.ts";
import { ppoLoss, type PpoMinibatch } from "./ppo_loss.ts";
import { Rng } from "../mapf/mod.ts";
import { centralDifference, fiveActionSpec } from "./_test_mlp.ts";

function randomObs(
  rng: Rng,
  n: number,
  d: number,
  density = 0.5,
): Float32Array {
  const x = new Float32Array(n * d);
  for (let i = 0; i < x.length; i++) {
    // mix of exact zeros (sparse path), binary ones and real values
    const u = rng.float();
    x[i] = u < density ? 0 : u < 0.75 ? 1 : rng.normal();
  }
  return x;
}

/** 0.5 * sum of squared head outputs weighted by fixed coefficients. */
function quadLoss(
  out: Float32Array,
  dOut: Float32Array,
  coef: Float32Array,
  n: number,
  stride: number,
) {
  let l = 0;
  for (let i = 0; i < n * stride; i++) {
    l += 0.5 * coef[i]! * out[i]! * out[i]!;
    dOut[i] = coef[i]! * out[i]!;
  }
  return l;
}

function checkGradients(spec: MlpSpec, seed: number, h = 1e-2) {
  const rng = new Rng(seed);
  const n = 7;
  const net = Mlp.init(spec, { seed, policyGain: 1 });
  const ws = new MlpWorkspace(spec, n);
  const obs = randomObs(rng, n, spec.inputSize);
  const stride = spec.actions + 1;
  const coef = new Float32Array(n * stride).map(() => rng.float() + 0.5);
  const lossAt = () => {
    net.forward(obs, n, ws);
    return quadLoss(ws.out, ws.dOut, coef, n, stride);
  };
  lossAt();
  net.zeroGrad();
  net.backward(obs, n, ws);
  const analytic = new Float32Array(net.grads);
  let checked = 0;
  for (let i = 0; i < net.size; i += Math.max(1, Math.floor(net.size / 150))) {
    const fd = centralDifference(net.params, i, h, lossAt);
    const tol = 2e-3 + 2e-2 * Math.abs(fd);
    assert.ok(
      Math.abs(fd - analytic[i]!) < tol,
      `param ${i}: finite difference ${fd} vs backward ${analytic[i]}`,
    );
    checked++;
  }
  assert.ok(checked > 50);
}

Deno.test("mlp layout counts every weight and bias", () => {
  const { layers, size } = mlpLayout({
    inputSize: 10,
    hidden: [8, 4],
    actions: 5,
    activation: "tanh",
  });
  assert.equal(layers.length, 3);
  assert.equal(size, 10 * 8 + 8 + 8 * 4 + 4 + 4 * 6 + 6);
  assert.deepEqual(layers.map((l) => [l.inSize, l.outSize]), [[10, 8], [8, 4], [
    4,
    6,
  ]]);
});

Deno.test("mlp backward matches finite differences (tanh)", () => {
  checkGradients({
    inputSize: 13,
    hidden: [9, 7],
    actions: 5,
    activation: "tanh",
  }, 3);
});

Deno.test("mlp backward matches finite differences (relu)", () => {
  checkGradients(
    { inputSize: 11, hidden: [8], actions: 5, activation: "relu" },
    4,
    // A small step, so the difference rarely straddles a ReLU kink (where
    // central differences are meaningless); float32 noise stays below 1e-4.
    1e-3,
  );
});

Deno.test("mlp forward of a batch equals forward of each row", () => {
  const spec = fiveActionSpec(12, [16, 16]);
  const net = Mlp.init(spec, { seed: 9, policyGain: 1 });
  const n = 5;
  const obs = randomObs(new Rng(1), n, spec.inputSize);
  const ws = new MlpWorkspace(spec, n), ws1 = new MlpWorkspace(spec, 1);
  net.forward(obs, n, ws);
  for (let r = 0; r < n; r++) {
    net.forward(obs.subarray(r * 12, r * 12 + 12), 1, ws1);
    for (let k = 0; k < 6; k++) assert.equal(ws1.out[k], ws.out[r * 6 + k]);
  }
});

Deno.test("mlp init is deterministic and orthogonal", () => {
  const spec = fiveActionSpec(20, [8], "relu");
  const a = Mlp.init(spec, { seed: 5 }),
    b = Mlp.init(spec, { seed: 5 }),
    c = Mlp.init(spec, { seed: 6 });
  assert.deepEqual(a.params, b.params);
  assert.notDeepEqual(a.params, c.params);
  // first layer W is 20x8 (tall): columns are orthonormal scaled by sqrt(2)
  const w = a.params.subarray(0, 160);
  for (let p = 0; p < 8; p++) {
    for (let q = 0; q < 8; q++) {
      let dot = 0;
      for (let i = 0; i < 20; i++) dot += w[i * 8 + p]! * w[i * 8 + q]!;
      assert.ok(
        Math.abs(dot - (p === q ? 2 : 0)) < 1e-5,
        `column ${p}.${q} dot ${dot}`,
      );
    }
  }
});

Deno.test("mlp rejects bad specs and oversize batches with clear errors", () => {
  assert.throws(
    () =>
      new Mlp({ inputSize: 0, hidden: [4], actions: 5, activation: "tanh" }),
    /positive integers/,
  );
  const spec = fiveActionSpec(3, [4]);
  const ws = new MlpWorkspace(spec, 2);
  assert.throws(
    () => Mlp.init(spec).forward(new Float32Array(9), 3, ws),
    /exceeds the workspace capacity 2/,
  );
  assert.throws(() => new Mlp(spec, new Float32Array(3)), /needs 46/);
});

Deno.test("mlp + ppo loss gradient matches finite differences", () => {
  const spec = fiveActionSpec(10, [12]);
  const rng = new Rng(11);
  const n = 9;
  const net = Mlp.init(spec, { seed: 2, policyGain: 1 });
  const ws = new MlpWorkspace(spec, n);
  const obs = randomObs(rng, n, spec.inputSize);
  net.forward(obs, n, ws);
  const batch: PpoMinibatch = {
    actions: new Uint8Array(n).map(() => rng.int(5)),
    // old log-probs near the current ones, some far enough to be clipped
    logpOld: new Float32Array(n).map((_, r) =>
      -Math.log(5) + (r % 3 === 0 ? 0.6 : 0.05 * rng.normal())
    ),
    advantages: new Float32Array(n).map(() => rng.normal()),
    returns: new Float32Array(n).map(() => rng.normal()),
    valuesOld: new Float32Array(n).map((_, r) =>
      ws.out[r * 6 + 5]! + 0.1 * rng.normal()
    ),
  };
  for (const clipValue of [false, true]) {
    const opts = { clip: 0.2, valueCoef: 0.7, entropyCoef: 0.05, clipValue };
    const lossAt = () => {
      net.forward(obs, n, ws);
      return ppoLoss(ws.out, ws.dOut, 5, batch, n, opts).loss;
    };
    lossAt();
    net.zeroGrad();
    net.backward(obs, n, ws);
    const analytic = new Float32Array(net.grads);
    for (let i = 0; i < net.size; i += 3) {
      const fd = centralDifference(net.params, i, 3e-3, lossAt);
      assert.ok(
        Math.abs(fd - analytic[i]!) < 2e-3 + 3e-2 * Math.abs(fd),
        `clipValue=${clipValue} param ${i}: fd ${fd} vs backward ${
          analytic[i]
        }`,
      );
    }
  }
});
