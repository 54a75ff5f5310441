import assert from "node:assert/strict";
import { KernelArena } from "./kernels/arena.ts";
import { Mlp, type MlpSpec, MlpWorkspace } from "./mlp.ts";
import { SimdMlp } from "./simd_mlp.ts";
import { Rng } from "../mapf/rng.ts";
import { realObservations } from "./_test_instances.ts";
import { centralDifference, fiveActionSpec } from "./_test_mlp.ts";

/** Observation-like rows: exact zeros (the sparse path), ones and reals. */
function randomObs(rng: Rng, n: number, d: number, density = 0.5) {
  const x = new Float32Array(n * d);
  for (let i = 0; i < x.length; i++) {
    const u = rng.float();
    x[i] = u < density ? 0 : u < 0.75 ? 1 : rng.normal();
  }
  return x;
}

/** A SimdMlp over `net` with room for `rows` rows and `n` observation rows. */
function setup(net: Mlp, rows: number, n: number) {
  const arena = new KernelArena();
  const simd = new SimdMlp(net.spec, arena, rows);
  const obs = arena.reserve(4 * n * net.spec.inputSize);
  const idx = arena.reserve(4 * n);
  const out = arena.reserve(4 * n * simd.headStride);
  arena.commit();
  simd.pack(net.params);
  return { arena, simd, obs, idx, out };
}

/** Shapes the policy.init schema allows, tails of every width modulo 4 included. */
const SHAPES: MlpSpec[] = [
  { inputSize: 162, hidden: [64, 64], actions: 5, activation: "tanh" },
  { inputSize: 7, hidden: [1], actions: 5, activation: "tanh" },
  { inputSize: 13, hidden: [5, 7], actions: 3, activation: "relu" },
  { inputSize: 30, hidden: [13, 2, 9], actions: 5, activation: "tanh" },
  { inputSize: 9, hidden: [6, 11, 3], actions: 1, activation: "relu" },
  { inputSize: 50, hidden: [37], actions: 7, activation: "tanh" },
];

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i]! - b[i]!));
  return d;
}

for (const spec of SHAPES) {
  const name = `${spec.inputSize}-${spec.hidden.join("-")}-${
    spec.actions + 1
  } ${spec.activation}`;

  Deno.test(`simd mlp ${name}: forward and gradients match the TypeScript reference`, () => {
    const rng = new Rng(spec.inputSize * 31 + spec.hidden.length);
    const n = 37; // not a multiple of 4: row tails
    const net = Mlp.init(spec, { seed: 3, policyGain: 1 });
    const { arena, simd, obs } = setup(net, 40, n);
    const x = randomObs(rng, n, spec.inputSize);
    arena.f32(obs, x.length).set(x);
    simd.forward(obs, spec.inputSize, 0, n);
    const ws = new MlpWorkspace(spec, n);
    net.forward(x, n, ws);
    const st = spec.actions + 1, hs = simd.headStride;
    const head = simd.headView(n);
    let d = 0;
    for (let r = 0; r < n; r++) {
      for (let k = 0; k < st; k++) {
        d = Math.max(d, Math.abs(head[r * hs + k]! - ws.out[r * st + k]!));
      }
    }
    assert.ok(d < 2e-5, `forward differs by ${d}`);
    // the same loss gradient on both sides
    const dOut = arena.f32(simd.dOut, n * hs);
    for (let r = 0; r < n; r++) {
      for (let k = 0; k < st; k++) {
        const g = rng.normal() / n;
        ws.dOut[r * st + k] = g;
        dOut[r * hs + k] = g;
      }
    }
    net.zeroGrad();
    net.backward(x, n, ws);
    simd.backward(n);
    const grads = new Float32Array(net.size);
    simd.unpack(grads, simd.grads);
    const scale = Math.max(...net.grads.map(Math.abs));
    const gd = maxAbsDiff(grads, net.grads);
    assert.ok(gd < 1e-5 * Math.max(1, scale), `gradients differ by ${gd}`);
    // the padding carries no gradient
    const all = arena.f32(simd.grads, simd.size);
    let padded = 0;
    for (const g of all) padded += Math.abs(g);
    let real = 0;
    for (const g of grads) real += Math.abs(g);
    assert.ok(
      Math.abs(padded - real) <= 1e-6 * real,
      "padding gradients are zero",
    );
  });

  Deno.test(`simd mlp ${name}: gradients match finite differences`, () => {
    const rng = new Rng(7 + spec.inputSize);
    const n = 6;
    const net = Mlp.init(spec, { seed: 5, policyGain: 1 });
    const { arena, simd, obs } = setup(net, 8, n);
    const x = randomObs(rng, n, spec.inputSize);
    arena.f32(obs, x.length).set(x);
    const hs = simd.headStride, st = spec.actions + 1;
    const coef = new Float32Array(n * st).map(() => rng.float() + 0.5);
    const params = arena.f32(simd.params, simd.size);
    // loss = 0.5 sum coef * out^2 over the real head columns, in float64
    const lossAt = () => {
      simd.forward(obs, spec.inputSize, 0, n);
      const out = simd.headView(n), dOut = arena.f32(simd.dOut, n * hs);
      let l = 0;
      for (let r = 0; r < n; r++) {
        for (let k = 0; k < st; k++) {
          const o = out[r * hs + k]!, c = coef[r * st + k]!;
          l += 0.5 * c * o * o;
          dOut[r * hs + k] = c * o;
        }
      }
      return l;
    };
    lossAt();
    simd.backward(n);
    const analytic = new Float32Array(net.size);
    simd.unpack(analytic, simd.grads);
    // positions of parameters in the padded layout: pack an index vector
    const where = new Float32Array(net.size).map((_, i) => i + 1);
    const saved = new Float32Array(params);
    simd.pack(where);
    const pos = new Int32Array(net.size);
    params.forEach((v, p) => {
      if (v > 0) pos[v - 1] = p;
    });
    params.set(saved);
    // relu: a small step, so the difference rarely straddles a kink
    const h = spec.activation === "relu" ? 1e-3 : 1e-2;
    let checked = 0;
    for (
      let i = 0;
      i < net.size;
      i += Math.max(1, Math.floor(net.size / 120))
    ) {
      const fd = centralDifference(params, pos[i]!, h, lossAt);
      const tol = 2e-3 + 2e-2 * Math.abs(fd);
      assert.ok(
        Math.abs(fd - analytic[i]!) < tol,
        `param ${i}: finite difference ${fd} vs backward ${analytic[i]}`,
      );
      checked++;
    }
    assert.ok(checked >= Math.min(60, net.size));
  });
}

Deno.test("simd mlp: real observation batches, rows gathered by index, give the same rows bit for bit", () => {
  const { obs: x, size: D, rows: n } = realObservations(300);
  const spec = fiveActionSpec(D, [64, 64]);
  const net = Mlp.init(spec, { seed: 9, policyGain: 1 });
  const { arena, simd, obs, idx, out } = setup(net, 64, n);
  arena.f32(obs, x.length).set(x);
  // all rows, in chunks of 64 (the workspace) straight into `out`
  simd.forward(obs, D, 0, n, out);
  const all = new Float32Array(simd.headView(n, out));
  const ws = new MlpWorkspace(spec, n);
  net.forward(x, n, ws);
  const hs = simd.headStride;
  for (let r = 0; r < n; r++) {
    for (let k = 0; k < 6; k++) {
      assert.ok(Math.abs(all[r * hs + k]! - ws.out[r * 6 + k]!) < 2e-5);
    }
  }
  // a shuffled subset through the gather path: each row identical
  const rng = new Rng(4);
  const pick = arena.i32(idx, 45);
  for (let i = 0; i < 45; i++) pick[i] = rng.int(n);
  simd.forward(obs, D, idx, 45);
  const sub = simd.headView(45);
  for (let i = 0; i < 45; i++) {
    for (let k = 0; k < hs; k++) {
      assert.equal(sub[i * hs + k], all[pick[i]! * hs + k]);
    }
  }
});

Deno.test("simd mlp: Adam keeps the padding at zero and pack/unpack round-trips", () => {
  const spec = fiveActionSpec(11, [6, 3]);
  const net = Mlp.init(spec, { seed: 2 });
  const n = 9;
  const { arena, simd, obs } = setup(net, 12, n);
  arena.f32(obs, n * 11).set(randomObs(new Rng(1), n, 11));
  const dOut = arena.f32(simd.dOut, n * simd.headStride);
  for (let t = 1; t <= 5; t++) {
    simd.forward(obs, 11, 0, n);
    for (let r = 0; r < n; r++) {
      for (let k = 0; k < 6; k++) dOut[r * simd.headStride + k] = 0.1 * (k - 2);
    }
    simd.backward(n);
    simd.adamStep(t, 1e-2, 1);
  }
  const back = new Float32Array(net.size);
  simd.unpack(back);
  assert.notDeepEqual(back, net.params, "the parameters moved");
  const again = net.clone();
  again.params.set(back);
  simd.pack(again.params);
  const packed = arena.f32(simd.params, simd.size);
  let sumPacked = 0, sumBack = 0;
  for (const v of packed) sumPacked += Math.abs(v);
  for (const v of back) sumBack += Math.abs(v);
  assert.equal(sumPacked, sumBack, "every padded value is exactly zero");
  const round = new Float32Array(net.size);
  simd.unpack(round);
  assert.deepEqual(round, back);
});
