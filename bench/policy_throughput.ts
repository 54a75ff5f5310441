/**
 * Policy throughput, measured side by side in one process (ratios are what
 * count on a shared 2-core machine):
 *
 * - PPO samples/s: one minibatch step = forward + PPO loss + backward +
 *   gradient clipping + Adam, for the default MLP (162-64-64-6, tanh) on
 *   observation rows encoded from real `easy` instances;
 * - policy inference rows/s: onnxruntime-node batched (`OnnxPolicy.run`, 1
 *   intra-op thread, graph optimisation all) vs the TS forward pass, at
 *   several batch sizes.
 *
 * Run: `deno run -A bench/policy_throughput.ts [--seconds 1.5] [--json]`
 *
 * @module
 */
import { BatchEnv, generate, InstancePool, Rng } from "../mapf/mod.ts";
import {
  Adam,
  clipGradNorm,
  DEFAULT_OBS,
  exportOnnx,
  Mlp,
  MlpWorkspace,
  ObservationEncoder,
  obsSize,
  OnnxPolicy,
  ppoLoss,
} from "../policy/mod.ts";

const argSeconds = Deno.args.indexOf("--seconds");
const SECONDS = argSeconds >= 0 ? Number(Deno.args[argSeconds + 1]) : 1.5;
const JSON_OUT = Deno.args.includes("--json");

/** Real observation rows: agents of generated `easy` instances after a few random steps. */
function observationRows(n: number): Float32Array {
  const pool = InstancePool.from(
    generate({ preset: "easy" }, { count: 256, seed: 1 }).instances,
  );
  const env = new BatchEnv(pool, { envs: Math.ceil(n / 2), seed: 1 });
  env.resetAll();
  const rng = new Rng(2);
  const act = new Uint8Array(env.envs * env.maxAgents);
  for (let t = 0; t < 3; t++) {
    for (let i = 0; i < act.length; i++) act[i] = rng.int(5);
    env.step(act);
    env.resetDone();
  }
  const enc = new ObservationEncoder(DEFAULT_OBS, env);
  const slots = new Int32Array(env.envs * env.maxAgents).map((_, i) => i);
  const out = new Float32Array(slots.length * enc.size);
  enc.encode(slots, slots.length, out);
  return out.subarray(0, n * enc.size);
}

async function time(
  fn: () => unknown | Promise<unknown>,
  units: number,
): Promise<number> {
  for (let i = 0; i < 5; i++) await fn();
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < SECONDS * 1000) {
    await fn();
    n += units;
  }
  return n / ((performance.now() - t0) / 1000);
}

const D = obsSize(DEFAULT_OBS);
const spec = {
  inputSize: D,
  hidden: [64, 64],
  actions: 5,
  activation: "tanh",
} as const;
const net = Mlp.init(spec, { seed: 1, policyGain: 1 });
const rows = observationRows(4096);
const results: Record<string, number> = {};

// PPO update step
for (const mb of [256, 512]) {
  const ws = new MlpWorkspace(spec, mb);
  const rng = new Rng(3);
  const batch = {
    actions: new Uint8Array(mb).map(() => rng.int(5)),
    logpOld: new Float32Array(mb).fill(-Math.log(5)),
    advantages: new Float32Array(mb).map(() => rng.normal()),
    returns: new Float32Array(mb).map(() => rng.normal()),
    valuesOld: new Float32Array(mb),
  };
  const adam = new Adam(net.size);
  const train = net.clone();
  const obs = rows.subarray(0, mb * D);
  results[`ppo_samples_per_s_mb${mb}`] = await time(() => {
    train.forward(obs, mb, ws);
    ppoLoss(ws.out, ws.dOut, 5, batch, mb);
    train.zeroGrad();
    train.backward(obs, mb, ws);
    clipGradNorm(train.grads, 0.5);
    adam.step(train.params, train.grads);
  }, mb);
}

// inference
const policy = await OnnxPolicy.load(exportOnnx(net), { inputSize: D });
for (const b of [64, 256, 1024, 4096]) {
  const ws = new MlpWorkspace(spec, b);
  const obs = rows.subarray(0, b * D);
  results[`ts_rows_per_s_b${b}`] = await time(() => net.forward(obs, b, ws), b);
  results[`ort_rows_per_s_b${b}`] = await time(() => policy.run(obs, b), b);
}
results.ort_us_per_call_b1 = 1e6 /
  (await time(() => policy.run(rows.subarray(0, D), 1), 1));
await policy.release();

if (JSON_OUT) console.log(JSON.stringify(results));
else {
  const f = (x: number) => Math.round(x).toLocaleString("en-US");
  console.log(`default MLP ${D}-64-64-(5+1) tanh, ${net.size} parameters`);
  console.log(
    `PPO samples/s (fwd+loss+bwd+clip+Adam): minibatch 256 ${
      f(results.ppo_samples_per_s_mb256!)
    }, 512 ${f(results.ppo_samples_per_s_mb512!)}`,
  );
  console.log("| batch | TS forward rows/s | ORT rows/s | ORT / TS |");
  console.log("|---:|---:|---:|---:|");
  for (const b of [64, 256, 1024, 4096]) {
    const ts = results[`ts_rows_per_s_b${b}`]!,
      ort = results[`ort_rows_per_s_b${b}`]!;
    console.log(`| ${b} | ${f(ts)} | ${f(ort)} | ${(ort / ts).toFixed(1)}x |`);
  }
  console.log(
    `ORT latency of one call at batch 1: ${
      results.ort_us_per_call_b1!.toFixed(1)
    } µs`,
  );
}
