/**
 * Policy throughput, measured side by side in one process (ratios are what
 * count on a shared 2-core machine; every comparison alternates its
 * contenders, 3 rounds, and reports the median):
 *
 * - PPO update samples/s: `Learner.update` (the TypeScript reference) vs
 *   `SimdLearner.update` (WebAssembly SIMD kernels) on the same buffer of
 *   4096 observation rows encoded from real `easy` instances (one epoch of
 *   512-row minibatches: gather, forward, PPO loss, backward, gradient
 *   clipping, Adam), default MLP 162-64-64-(5+1) tanh; and one-thread
 *   PyTorch doing the same step (`bench/ppo_torch.py`, run as a subprocess
 *   between the two; skipped, with the reason, when torch cannot be
 *   imported).
 * - Inference rows/s at the trainer's batch sizes (64 environments x 2-8
 *   agents) and larger: TS forward, SIMD forward, onnxruntime-node (1
 *   intra-op thread), plus what using onnxruntime in the trainer would add
 *   per update (export + session creation).
 * - End-to-end training: `Trainer.update` on `easy` and `hard` pools, kernel
 *   `ts` vs `simd`: agent-steps (samples) collected and trained on per
 *   second.
 *
 * Run: `deno run -A bench/policy_throughput.ts [--seconds 1.5] [--python python3] [--json]`
 * (`--python` names an interpreter with torch, e.g. a venv's).
 *
 * @module
 */
import { join } from "node:path";
import { generate, InstancePool, Rng } from "../mapf/mod.ts";
import { mapfTrainingSource } from "../policy/mapf_training_env.ts";
import {
  exportOnnx,
  initCheckpoint,
  Learner,
  Mlp,
  MlpWorkspace,
  OnnxPolicy,
  SimdLearner,
  Trainer,
} from "../policy/mod.ts";
import { arg, median } from "./_common.ts";
import {
  DEFAULT_MLP as spec,
  fillRandomSamples,
  OBS_SIZE as D,
  observationRows,
  torchSamplesPerSecond,
} from "./_policy.ts";

const SECONDS = Number(arg("seconds", "1.5"));
const PYTHON = arg("python", "python3");
const JSON_OUT = Deno.args.includes("--json");

const f = (x: number) => Math.round(x).toLocaleString("en-US");

/** Units per second of `fn` over SECONDS (after a warm-up). */
async function rate(
  fn: () => unknown | Promise<unknown>,
  units: number,
  seconds = SECONDS,
): Promise<number> {
  for (let i = 0; i < 3; i++) await fn();
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < seconds * 1000) {
    await fn();
    n += units;
  }
  return n / ((performance.now() - t0) / 1000);
}

const N = 4096, MB = 512;
const rows = observationRows(N);
const results: Record<string, unknown> = {};

// ---- PPO update -----------------------------------------------------------
const opts = { minibatch: MB, epochs: 1 };
const tsLearner = new Learner(Mlp.init(spec, { seed: 1 }), opts);
const simdLearner = new SimdLearner(
  Mlp.init(spec, { seed: 1 }),
  { capacity: N, actRows: 64 },
  opts,
);
const tsBuf = tsLearner.createBuffer(N), simdBuf = simdLearner.createBuffer(N);
fillRandomSamples(tsBuf, rows, N, new Rng(3));
fillRandomSamples(simdBuf, rows, N, new Rng(3));
const rowsFile = join(await Deno.makeTempDir(), "rows.f32");
await Deno.writeFile(rowsFile, new Uint8Array(rows.buffer, 0, MB * D * 4));

async function torchRate(): Promise<number | string> {
  try {
    return await torchSamplesPerSecond({
      python: PYTHON,
      rowsFile,
      dim: D,
      minibatch: MB,
      seconds: SECONDS,
    });
  } catch (e) {
    return `cannot run ${PYTHON}: ${(e as Error).message}`;
  }
}

const ppo = { ts: [] as number[], simd: [] as number[], torch: [] as number[] };
let torchSkip = "";
for (let round = 0; round < 3; round++) {
  const rng = new Rng(round);
  ppo.ts.push(await rate(() => tsLearner.update(tsBuf, rng), N));
  ppo.simd.push(await rate(() => simdLearner.update(simdBuf, rng), N));
  const t = await torchRate();
  if (typeof t === "number") ppo.torch.push(t);
  else torchSkip = t;
}
results.ppo = {
  ts: median(ppo.ts),
  simd: median(ppo.simd),
  torch: ppo.torch.length ? median(ppo.torch) : null,
  torch_skipped: ppo.torch.length ? null : torchSkip,
  rounds: ppo,
};

// ---- inference --------------------------------------------------------------
const net = Mlp.init(spec, { seed: 1, policyGain: 1 });
const policy = await OnnxPolicy.load(exportOnnx(net), { inputSize: D });
const actLearner = new SimdLearner(net.clone(), { capacity: N, actRows: N });
const actBuf = actLearner.createBuffer(N);
actBuf.obs.set(rows);
const act = new Uint8Array(N),
  logp = new Float32Array(N),
  val = new Float32Array(N);
const inference: Record<string, Record<string, number>> = {};
for (const b of [128, 512, 1024, 4096]) {
  const ws = new MlpWorkspace(spec, b);
  const obs = rows.subarray(0, b * D);
  const r = { ts: [] as number[], simd: [] as number[], ort: [] as number[] };
  for (let round = 0; round < 3; round++) {
    r.ts.push(await rate(() => net.forward(obs, b, ws), b, SECONDS / 2));
    r.simd.push(
      await rate(() => actLearner.values(actBuf, 0, b, val), b, SECONDS / 2),
    );
    r.ort.push(await rate(() => policy.run(obs, b), b, SECONDS / 2));
  }
  inference[b] = { ts: median(r.ts), simd: median(r.simd), ort: median(r.ort) };
}
// act = forward + log-softmax + sampling, the trainer's per-step call
inference.act512 = {
  simd: await rate(
    () => actLearner.act(actBuf, 0, 512, new Rng(1), act, logp, val),
    512,
  ),
};
// onnxruntime in the trainer would need the new weights every update
const t0 = performance.now();
for (let i = 0; i < 20; i++) {
  const p = await OnnxPolicy.load(exportOnnx(net), { inputSize: D });
  await p.release();
}
inference.ort_session = { ms_per_update: (performance.now() - t0) / 20 };
await policy.release();
results.inference = inference;

// ---- end to end --------------------------------------------------------------
const e2e: Record<string, Record<string, number>> = {};
for (const preset of ["easy", "hard"] as const) {
  const pool = InstancePool.from(
    generate({ preset }, { count: 256, seed: 3 }).instances,
  );
  const r = { ts: [] as number[], simd: [] as number[] };
  const ms = { ts: [] as number[], simd: [] as number[] };
  for (let round = 0; round < 3; round++) {
    for (const kernel of ["ts", "simd"] as const) {
      const tr = new Trainer(
        initCheckpoint({ seed: 1 }),
        mapfTrainingSource(pool),
        {
          seed: 5,
          kernel,
        },
      );
      tr.update();
      let samples = 0, updates = 0;
      const t = performance.now();
      while (performance.now() - t < SECONDS * 1000 * 2) {
        samples += tr.update().stats.samples;
        updates++;
      }
      const sec = (performance.now() - t) / 1000;
      r[kernel].push(samples / sec);
      ms[kernel].push((sec * 1000) / updates);
    }
  }
  e2e[preset] = {
    ts: median(r.ts),
    simd: median(r.simd),
    ts_ms_per_update: median(ms.ts),
    simd_ms_per_update: median(ms.simd),
  };
}
results.train = e2e;

if (JSON_OUT) console.log(JSON.stringify(results));
else {
  const p = results.ppo as {
    ts: number;
    simd: number;
    torch: number | null;
    torch_skipped: string | null;
  };
  console.log(
    `default MLP ${D}-64-64-(5+1) tanh, ${net.size} parameters; ${SECONDS} s per cell, median of 3 alternating rounds\n`,
  );
  console.log(
    "PPO update, samples/s (minibatch 512: gather, fwd, loss, bwd, clip, Adam):\n",
  );
  console.log(
    "| TS reference | SIMD (wasm) | SIMD / TS | PyTorch 1 thread | SIMD / PyTorch |",
  );
  console.log("|---:|---:|---:|---:|---:|");
  console.log(
    `| ${f(p.ts)} | ${f(p.simd)} | ${(p.simd / p.ts).toFixed(1)}x | ${
      p.torch === null ? `skipped: ${p.torch_skipped}` : f(p.torch)
    } | ${p.torch === null ? "-" : (p.simd / p.torch).toFixed(2) + "x"} |`,
  );
  console.log("\nInference, rows/s:\n");
  console.log(
    "| batch | TS forward | SIMD forward | onnxruntime | SIMD / TS | ORT / SIMD |",
  );
  console.log("|---:|---:|---:|---:|---:|---:|");
  for (const b of [128, 512, 1024, 4096]) {
    const r = inference[b]!;
    console.log(
      `| ${b} | ${f(r.ts!)} | ${f(r.simd!)} | ${f(r.ort!)} | ${
        (r.simd! / r.ts!).toFixed(1)
      }x | ${(r.ort! / r.simd!).toFixed(1)}x |`,
    );
  }
  console.log(
    `\nSIMD act (forward + log-softmax + sampling) at 512 rows: ${
      f(inference.act512!.simd!)
    } rows/s; an onnxruntime session for new weights (export + load): ${
      inference.ort_session!.ms_per_update!.toFixed(1)
    } ms per update`,
  );
  console.log(
    "\nTraining end to end (Trainer.update, default options), samples/s:\n",
  );
  console.log(
    "| preset | TS | SIMD | SIMD / TS | ms/update TS | ms/update SIMD |",
  );
  console.log("|---|---:|---:|---:|---:|---:|");
  for (const [k, r] of Object.entries(e2e)) {
    console.log(
      `| ${k} | ${f(r.ts!)} | ${f(r.simd!)} | ${
        (r.simd! / r.ts!).toFixed(1)
      }x | ${r.ts_ms_per_update!.toFixed(0)} | ${
        r.simd_ms_per_update!.toFixed(0)
      } |`,
    );
  }
}
