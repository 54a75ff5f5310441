/**
 * `./envsmith bench` cases of the policy library: one PPO minibatch step
 * (forward + loss + backward + clipping + Adam, 512 rows) with the
 * TypeScript reference and with the WebAssembly SIMD learner, and inference
 * of 1024 observation rows with the TS forward pass, the SIMD forward pass
 * and onnxruntime-node.
 * The side-by-side table with ratios is `bench/policy_throughput.ts`.
 *
 * @module
 */
import { Rng } from "../mapf/mod.ts";
import {
  Adam,
  clipGradNorm,
  exportOnnx,
  Mlp,
  MlpWorkspace,
  OnnxPolicy,
  ppoLoss,
  SimdLearner,
} from "../policy/mod.ts";
import { DEFAULT_MLP as spec, OBS_SIZE as D } from "./_policy.ts";

const net = Mlp.init(spec, { seed: 1, policyGain: 1 });
const rng = new Rng(1);
// sparse binary window + dense scalars, like real observations
const obs = new Float32Array(1024 * D).map((
  _,
  i,
) => (i % D < D - 12 ? (rng.float() < 0.12 ? 1 : 0) : rng.normal()));
const ws = new MlpWorkspace(spec, 1024);
const mb = 512;
const batch = {
  actions: new Uint8Array(mb).map(() => rng.int(5)),
  logpOld: new Float32Array(mb).fill(-Math.log(5)),
  advantages: new Float32Array(mb).map(() => rng.normal()),
  returns: new Float32Array(mb).map(() => rng.normal()),
  valuesOld: new Float32Array(mb),
};
const adam = new Adam(net.size);
const train = net.clone();
const policy = await OnnxPolicy.load(exportOnnx(net), { inputSize: D });
// one SimdLearner.update = one minibatch step over a buffer of 512 rows
const simd = new SimdLearner(net.clone(), { capacity: 1024, actRows: 1024 }, {
  minibatch: mb,
  epochs: 1,
});
const buf = simd.createBuffer(1024);
buf.obs.set(obs);
buf.actions.set(batch.actions);
buf.logp.set(batch.logpOld);
buf.advantages.set(batch.advantages);
buf.returns.set(batch.returns);
const simdRng = new Rng(2);
const values = new Float32Array(1024);

Deno.bench("policy: PPO minibatch step, 512 rows", {
  group: "ppo",
  baseline: true,
}, () => {
  train.forward(obs, mb, ws);
  ppoLoss(ws.out, ws.dOut, 5, batch, mb);
  train.zeroGrad();
  train.backward(obs, mb, ws);
  clipGradNorm(train.grads, 0.5);
  adam.step(train.params, train.grads);
});

Deno.bench(
  "policy: SIMD PPO minibatch step, 512 rows",
  { group: "ppo" },
  () => {
    buf.count = mb;
    simd.update(buf, simdRng);
  },
);

Deno.bench("policy: TS forward, 1024 rows", {
  group: "inference",
  baseline: true,
}, () => {
  net.forward(obs, 1024, ws);
});

Deno.bench("policy: SIMD forward, 1024 rows", { group: "inference" }, () => {
  buf.count = 0;
  simd.values(buf, 0, 1024, values);
});

Deno.bench(
  "policy: onnxruntime run, 1024 rows",
  { group: "inference" },
  async () => {
    await policy.run(obs, 1024);
  },
);
