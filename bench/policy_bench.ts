/**
 * `deno task bench` cases of the policy library: one PPO minibatch step
 * (forward + loss + backward + clipping + Adam, 512 rows), and inference of
 * 1024 observation rows with the TS forward pass and with onnxruntime-node.
 * The side-by-side table with ratios is `bench/policy_throughput.ts`.
 *
 * @module
 */
import { Rng } from "../mapf/mod.ts";
import {
  Adam,
  clipGradNorm,
  DEFAULT_OBS,
  exportOnnx,
  Mlp,
  MlpWorkspace,
  obsSize,
  OnnxPolicy,
  ppoLoss,
} from "../policy/mod.ts";

const D = obsSize(DEFAULT_OBS);
const spec = {
  inputSize: D,
  hidden: [64, 64],
  actions: 5,
  activation: "tanh",
} as const;
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

Deno.bench("policy: PPO minibatch step, 512 rows", { group: "ppo" }, () => {
  train.forward(obs, mb, ws);
  ppoLoss(ws.out, ws.dOut, 5, batch, mb);
  train.zeroGrad();
  train.backward(obs, mb, ws);
  clipGradNorm(train.grads, 0.5);
  adam.step(train.params, train.grads);
});

Deno.bench("policy: TS forward, 1024 rows", {
  group: "inference",
  baseline: true,
}, () => {
  net.forward(obs, 1024, ws);
});

Deno.bench(
  "policy: onnxruntime run, 1024 rows",
  { group: "inference" },
  async () => {
    await policy.run(obs, 1024);
  },
);
