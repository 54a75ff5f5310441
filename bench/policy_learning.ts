/**
 * The policy learning benchmark (not a unit test): train the default policy
 * from scratch on the `easy` preset for a wall-time budget on one core, and
 * evaluate it on held-out `easy` instances, the `base` suite and the `hard`
 * preset.
 *
 * Targets: >= 0.95 success on `easy` and >= 0.80 on `base` within
 * 5 minutes; `hard` is reported.
 *
 * - Training instances: 4000 `easy` instances, generator seed `--seed`.
 * - Evaluation: 200 held-out `easy` instances (suite seed space
 *   `preset:easy`), the 100 `base` suite instances, 100 `hard` instances
 *   (suite seed space `preset:hard`), 1 episode each, sampled actions
 *   (seed 0), as `./envsmith evaluate` does.
 * - Curve: every `--eval-every` seconds of training, success on easy and
 *   base (the TS forward pass; it gives the same episodes as onnxruntime,
 *   see policy/rollout_test.ts); evaluation time is not counted as training
 *   time. The final evaluation runs the exported ONNX checkpoint through
 *   onnxruntime-node.
 *
 * Run: `deno run -A bench/policy_learning.ts [--minutes 5] [--seed 1] [--algo ppo|grpo] [--eval-every 15] [--updates N] [--kernel simd|ts]`
 * (`--updates` stops after N updates, whatever the time, to compare kernels
 * on the same budget; `--kernel` picks the network maths, default simd).
 * Writes `bench/results/policy_learning_<algo>_seed<seed>[_<kernel>_u<N>].json`
 * and prints a markdown summary.
 *
 * @module
 */
import {
  generate,
  generateSuite,
  type Instance,
  InstancePool,
} from "../mapf/mod.ts";
import { mapfTrainingSource } from "../policy/mapf_training_env.ts";
import {
  initCheckpoint,
  mlpRunner,
  obsSize,
  OnnxPolicy,
  onnxRunner,
  rollout,
  saveCheckpoint,
  Trainer,
} from "../policy/mod.ts";
import { arg } from "./_common.ts";

const minutes = Number(arg("minutes", "5"));
const seed = Number(arg("seed", "1"));
const algo = arg("algo", "ppo") as "ppo" | "grpo";
const evalEvery = Number(arg("eval-every", "15"));
const maxUpdates = Number(arg("updates", "Infinity"));
const kernel = arg("kernel", "simd") as "simd" | "ts";

const t0 = performance.now();
const train = generate({ preset: "easy" }, { count: 4000, seed }).instances;
const sets: Record<string, Instance[]> = {
  easy:
    generate({ preset: "easy" }, { count: 200, seed: 0, suite: "preset:easy" })
      .instances,
  base: generateSuite("base").instances,
  hard:
    generate({ preset: "hard" }, { count: 100, seed: 0, suite: "preset:hard" })
      .instances,
};
const genSeconds = (performance.now() - t0) / 1000;

const ck = initCheckpoint({ seed });
const trainer = new Trainer(ck, mapfTrainingSource(InstancePool.from(train)), {
  algo,
  seed,
  kernel,
});
const curve: Record<string, number>[] = [];

async function evalCurve(trainSeconds: number) {
  const point: Record<string, number> = {
    seconds: Math.round(trainSeconds * 10) / 10,
    updates: ck.counters.updates,
    samples: ck.counters.samples,
  };
  for (const name of ["easy", "base"]) {
    const res = await rollout(mlpRunner(ck.net), sets[name]!, {
      obs: ck.obs,
      record: false,
    });
    point[name] = res.summary.success_rate;
  }
  curve.push(point);
  console.error(JSON.stringify(point));
}

let trainMs = 0, nextEval = 0;
while (trainMs < minutes * 60_000 && ck.counters.updates < maxUpdates) {
  if (trainMs >= nextEval * 1000) {
    await evalCurve(trainMs / 1000);
    nextEval += evalEvery;
  }
  const t = performance.now();
  trainer.update();
  trainMs += performance.now() - t;
}
await evalCurve(trainMs / 1000);

const policy = await OnnxPolicy.load(saveCheckpoint(ck), {
  inputSize: obsSize(ck.obs),
});
const final: Record<string, unknown> = {};
for (const [name, insts] of Object.entries(sets)) {
  const res = await rollout(onnxRunner(policy), insts, {
    obs: ck.obs,
    record: false,
  });
  final[name] = res.summary;
}
await policy.release();

const result = {
  command:
    `deno run -A bench/policy_learning.ts --minutes ${minutes} --seed ${seed} --algo ${algo} --eval-every ${evalEvery}${
      Number.isFinite(maxUpdates) ? ` --updates ${maxUpdates}` : ""
    } --kernel ${kernel}`,
  algo,
  kernel,
  seed,
  train_seconds: Math.round(trainMs / 100) / 10,
  generation_seconds: Math.round(genSeconds * 10) / 10,
  updates: ck.counters.updates,
  samples: ck.counters.samples,
  samples_per_second: Math.round(ck.counters.samples / (trainMs / 1000)),
  final,
  curve,
};
await Deno.mkdir(new URL("./results/", import.meta.url), { recursive: true });
await Deno.writeTextFile(
  new URL(
    `./results/policy_learning_${algo}_seed${seed}${
      Number.isFinite(maxUpdates) ? `_${kernel}_u${maxUpdates}` : ""
    }.json`,
    import.meta.url,
  ),
  JSON.stringify(result, null, 1) + "\n",
);
const s = (name: string) =>
  (final[name] as { success_rate: number }).success_rate.toFixed(3);
console.log(
  `## ${algo} seed ${seed} (kernel ${kernel}): ${result.train_seconds} s training, ${result.updates} updates, ${result.samples} samples (${result.samples_per_second} samples/s end to end)`,
);
console.log(
  `final success: easy ${s("easy")}, base ${s("base")}, hard ${s("hard")}`,
);
console.log(
  "| train s | updates | samples | easy | base |\n|---:|---:|---:|---:|---:|",
);
for (const p of curve) {
  console.log(
    `| ${p.seconds} | ${p.updates} | ${p.samples} | ${p.easy!.toFixed(3)} | ${
      p.base!.toFixed(3)
    } |`,
  );
}
