/**
 * The `train` node kind: policy + environments + budget -> a new checkpoint.
 *
 * ```yaml
 * policy: { kind: train, with: { policy: $prev.policy, envs: $envs, updates: 40, algo: ppo } }
 * ```
 *
 * Parameters:
 * - `policy` (required): a policy value (`policy.init`, `train`) or an
 *   envsmith ONNX file; training resumes its optimiser state and counters.
 * - `envs` (required without a `sampler`): the training instances (a
 *   generate node's value).
 * - `sampler`: a level sampler (`nodes/train_sampler.ts`,
 *   `policy/level_sampler.ts`) that decides per batch of episodes which
 *   levels the policy plays: `{ name: plr | accel | dr, box, batch, buffer,
 *   replay_prob, temperature, staleness, min_fill, edits, max_agents }`.
 *   New levels come from its `box`, so `envs` is not given (or null; and
 *   `sampler: null` is no sampler, so a matrix row can switch between the two
 *   with `envs: $matrix.X.envs, sampler: $matrix.X.sampler`); `parallel`,
 *   `steps` and `algo: grpo` do not apply (a batch is one whole episode on
 *   each of `batch` levels). Its buffer carries over to the next `train`
 *   node through the policy value (`sampler`). The budget counts trained
 *   agent-steps; the episodes played only to score levels are reported apart
 *   (report `sampler.scored_agent_steps`).
 * - Budget: `updates` (default 40 when `samples` is not given) and/or
 *   `samples` (agent-steps); training stops at the first one reached; `null`
 *   is no budget of that kind (`samples: null, updates: 58`: equal updates,
 *   whatever the experience). A
 *   `samples` budget is met to within one environment step of the acting
 *   agents (PPO's last rollout stops early), so runs whose configurations
 *   have different agent counts get the same experience; GRPO's granularity
 *   is one group rollout.
 * - `algo`: `ppo` (default) or `grpo`; `group` (GRPO replays per instance, 8).
 * - `parallel` (environments, 64), `steps` (PPO rollout length, 32), `lr`
 *   (3e-4), `epochs` (4), `minibatch` (512), `clip` (0.2), `entropy`
 *   (0.01), `value_coef` (0.5 PPO / 0 GRPO), `gamma` (0.99), `lambda`
 *   (0.95), `max_grad_norm` (0.5), `reward` (coefficients, see
 *   `policy/reward.ts`), `seed` (default: the node's seed), `kernel`
 *   (`simd`, the WebAssembly SIMD kernels, default; or `ts`, the
 *   TypeScript reference maths: slower, and a different run of the same
 *   seed since float rounding differs).
 *
 * Value: the new policy value, with `level_scores`: per training instance
 * (in the order of `envs`) the ended `episodes`, their `successes`, the
 * acting agent-steps (`steps`) and `pvl`, the positive value loss (mean
 * positive GAE advantage per agent-step; see `Trainer.levelScores`), which
 * the `plr` and `accel` engineers rank levels by. Report: the training curve, one point per
 * update (`update`, `samples`, `seconds`, `episodes`, `success` of the
 * training episodes that ended in that update, `reward` per agent-step,
 * `entropy`, `approx_kl`, `clip_frac`, `value_loss`) and its last point.
 * Progress: updates done of the budget, with the recent success rate.
 *
 * @module
 */
import * as v from "valibot";
import type { Json, NodeKind } from "@envsmith/engine/kind";
import { InstancePool } from "../mapf/pool.ts";
import { mapfTrainingSource } from "../policy/mapf_training_env.ts";
import { mlpKernelDigest } from "../policy/kernels/modules.ts";
import {
  type CurvePoint,
  Trainer,
  type TrainerOptions,
} from "../policy/trainer.ts";
import {
  policyFingerprint,
  type PolicyValue,
  readCheckpoint,
  readInstances,
  writePolicy,
} from "./policy_io.ts";
import { RewardParamsSchema } from "./reward_params.ts";
import { trainingWarning } from "./train_warning.ts";
import { LevelSampler } from "../policy/level_sampler.ts";
import { trainWithSampler } from "../policy/sampler_training.ts";
import {
  readSamplerState,
  samplerOptions,
  SamplerParamsSchema,
  writeSamplerState,
} from "./train_sampler.ts";

const int = (min: number, max: number) =>
  v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));
const num = (min: number, max: number) =>
  v.pipe(v.number(), v.minValue(min), v.maxValue(max));

export { RewardParamsSchema };

/** Training hyper-parameters shared by `train` and the `train` command. */
export const TrainOptionsSchema = v.object({
  algo: v.optional(v.picklist(["ppo", "grpo"])),
  group: v.optional(int(2, 256)),
  parallel: v.optional(int(1, 4096)),
  steps: v.optional(int(1, 4096)),
  lr: v.optional(num(0, 1)),
  epochs: v.optional(int(1, 100)),
  minibatch: v.optional(int(1, 65536)),
  clip: v.optional(num(0, 10)),
  entropy: v.optional(num(0, 10)),
  value_coef: v.optional(num(0, 100)),
  gamma: v.optional(num(0, 1)),
  lambda: v.optional(num(0, 1)),
  max_grad_norm: v.optional(num(0, 1e6)),
  reward: v.optional(RewardParamsSchema),
  kernel: v.optional(v.picklist(["simd", "ts"])),
});

/** Parameters of `train`. */
export const TrainParamsSchema = v.pipe(
  v.strictObject({
    policy: v.unknown(),
    envs: v.optional(v.unknown()),
    sampler: v.optional(v.nullable(SamplerParamsSchema)),
    updates: v.optional(v.nullable(int(1, 1_000_000))),
    samples: v.optional(v.nullable(int(1, 1e12))),
    seed: v.optional(int(0, 0xffffffff)),
    ...TrainOptionsSchema.entries,
  }),
  v.check(
    (p) =>
      p.updates !== null || (p.samples !== null && p.samples !== undefined),
    "updates: null (no update budget) needs a samples budget",
  ),
  v.check(
    (p) =>
      p.samples !== null || (p.updates !== null && p.updates !== undefined),
    "samples: null (no agent-step budget) needs an updates budget",
  ),
  v.check(
    (p) => p.sampler != null || p.envs != null,
    "envs is required: the training instances (a generate node), unless a sampler draws the levels",
  ),
  v.check(
    (p) => p.sampler == null || p.envs == null,
    "with a sampler the levels come from sampler.box: drop envs",
  ),
  v.check(
    (p) =>
      p.sampler == null ||
      (p.parallel === undefined && p.steps === undefined &&
        p.algo !== "grpo"),
    "with a sampler a batch is one episode on each of sampler.batch levels: drop parallel and steps (and algo: grpo; the sampler trains with ppo)",
  ),
);

/** Parameters of `train`. */
export type TrainParams = v.InferOutput<typeof TrainParamsSchema>;

/** Map the snake_case parameters to {@linkcode TrainerOptions}. */
export function trainerOptions(
  p: v.InferOutput<typeof TrainOptionsSchema>,
  seed: number,
): TrainerOptions {
  const o: TrainerOptions = { seed };
  if (p.algo !== undefined) o.algo = p.algo;
  if (p.group !== undefined) o.group = p.group;
  if (p.parallel !== undefined) o.envs = p.parallel;
  if (p.steps !== undefined) o.steps = p.steps;
  if (p.lr !== undefined) o.lr = p.lr;
  if (p.epochs !== undefined) o.epochs = p.epochs;
  if (p.minibatch !== undefined) o.minibatch = p.minibatch;
  if (p.clip !== undefined) o.clip = p.clip;
  if (p.entropy !== undefined) o.entropyCoef = p.entropy;
  if (p.value_coef !== undefined) o.valueCoef = p.value_coef;
  if (p.gamma !== undefined) o.gamma = p.gamma;
  if (p.lambda !== undefined) o.lambda = p.lambda;
  if (p.max_grad_norm !== undefined) o.maxGradNorm = p.max_grad_norm;
  if (p.kernel !== undefined) o.kernel = p.kernel;
  if (p.reward !== undefined) {
    const r: Record<string, number> = {};
    for (const [k, x] of Object.entries(p.reward)) {
      if (x !== undefined) r[k] = x;
    }
    o.reward = r;
  }
  return o;
}

/** A curve point as JSON (rounded so reports stay small). */
export function curvePointJson(p: CurvePoint): { [k: string]: Json } {
  const r = (
    x: number,
    d = 4,
  ) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : null);
  return {
    update: p.update,
    samples: p.samples,
    seconds: r(p.seconds, 2),
    episodes: p.episodes,
    success: r(p.success),
    reward: r(p.reward),
    entropy: r(p.stats.entropy),
    approx_kl: r(p.stats.approxKl, 6),
    clip_frac: r(p.stats.clipFrac),
    value_loss: r(p.stats.valueLoss),
  };
}

/** One line per parameter, for editors (the JSON Schema's descriptions). */
export const TRAIN_PARAM_DOCS: Readonly<Record<string, string>> = {
  policy:
    "the policy to train further: a policy.init or train node ($prev.policy), or an envsmith ONNX file",
  envs:
    "the training instances: a generate node (not with a sampler, whose levels come from its box)",
  sampler:
    "a level sampler deciding per batch what the policy plays: { name: plr | accel | dr, box, batch, buffer, replay_prob, temperature, staleness, min_fill, edits, max_agents } (docs/engineers.md)",
  updates:
    "budget in PPO/GRPO updates (default 40 when samples is not given; null: none, with a samples budget); training stops at the first budget reached",
  samples:
    "budget in agent-steps (equal experience whatever the agent count; null: none, with an updates budget); training stops at the first budget reached",
  seed: "seed of the training run (default: the node's seed)",
  algo: "ppo (default) or grpo",
  group: "GRPO: replays per instance (default 8)",
  parallel: "environments stepped together (default 64)",
  steps: "PPO rollout length per update, in environment steps (default 32)",
  lr: "Adam learning rate (default 3e-4)",
  epochs: "passes over each update's batch (default 4)",
  minibatch: "minibatch size in agent-steps (default 512)",
  clip: "PPO clip range (default 0.2)",
  entropy: "entropy bonus coefficient (default 0.01)",
  value_coef: "value loss coefficient (default 0.5 for PPO, 0 for GRPO)",
  gamma: "discount factor (default 0.99)",
  lambda: "GAE lambda (default 0.95)",
  max_grad_norm: "gradient norm clip (default 0.5)",
  reward:
    "reward coefficients (goal, hole, collision, progress, step, ...; see policy/reward.ts); { progress: 0, step: 0 } gives outcome rewards",
  kernel:
    "simd (WebAssembly SIMD kernels, default) or ts (the TypeScript reference maths: slower, and a different run of the same seed)",
};

/** The `train` kind. */
export const kind: NodeKind<TrainParams, PolicyValue> = {
  name: "train",
  description:
    "Train a policy on instances with multi-agent PPO or GRPO for a budget of updates/samples",
  params: TrainParamsSchema,
  paramDocs: TRAIN_PARAM_DOCS,
  module: import.meta.url,
  heavy: true,
  fingerprint: policyFingerprint,
  warning: trainingWarning,
  async run(p, ctx) {
    if (p.sampler != null) return await _runSampler(p, ctx);
    const ck = await readCheckpoint(p.policy, ctx);
    const instances = await readInstances(p.envs, ctx);
    const pool = InstancePool.from(instances);
    const trainer = new Trainer(
      ck,
      mapfTrainingSource(pool),
      trainerOptions(p, p.seed ?? ctx.seed),
    );
    // a budget left out or null is no limit, except updates (40) when
    // samples is left out too
    const maxUpdates = p.updates ??
      (p.updates === undefined && p.samples === undefined ? 40 : Infinity);
    const maxSamples = p.samples ?? Infinity;
    const startSamples = ck.counters.samples;
    const curve: Json[] = [];
    let done = 0, recentOk = 0, recentN = 0;
    const total = Number.isFinite(maxUpdates) ? maxUpdates : maxSamples;
    while (
      done < maxUpdates && ck.counters.samples - startSamples < maxSamples
    ) {
      ctx.signal.throwIfAborted();
      const spent = ck.counters.samples - startSamples;
      const pt = trainer.update(
        Number.isFinite(maxSamples) ? { maxSamples: maxSamples - spent } : {},
      );
      done++;
      curve.push(curvePointJson(pt));
      // success over the last few updates' episodes, for the progress line
      const ok = pt.episodes > 0 ? pt.success * pt.episodes : 0;
      recentOk = 0.7 * recentOk + ok;
      recentN = 0.7 * recentN + pt.episodes;
      const progressed = Number.isFinite(maxUpdates)
        ? done
        : ck.counters.samples - startSamples;
      ctx.progress(
        Math.min(progressed, total),
        total,
        `success ${(recentN > 0 ? recentOk / recentN : 0).toFixed(2)}`,
      );
    }
    const value = await writePolicy(trainer.checkpoint(), ctx);
    // per-instance scores for level-replay engineers (plr, accel), aligned
    // with the order of `envs`
    const lv = trainer.levelScores();
    value.level_scores = {
      episodes: Array.from(lv.episodes),
      successes: Array.from(lv.successes),
      steps: Array.from(lv.steps),
      pvl: Array.from(lv.pvl, (x) => Math.round(x * 1e6) / 1e6),
    };
    const last = curve[curve.length - 1] ?? null;
    ctx.log(
      `trained ${done} updates, ${
        ck.counters.samples - startSamples
      } samples on ${instances.length} instances`,
    );
    return {
      value,
      report: {
        algo: trainer.options.algo,
        kernel: trainer.options.kernel === "simd"
          ? { name: "simd", wasm_sha256: mlpKernelDigest() }
          : { name: "ts" },
        instances: instances.length,
        updates: done,
        samples: ck.counters.samples - startSamples,
        last,
        curve,
      },
    };
  },
};

/** `train` with a level sampler (`policy/sampler_training.ts`). */
async function _runSampler(
  p: TrainParams,
  ctx: Parameters<NodeKind<TrainParams, PolicyValue>["run"]>[1],
): Promise<{ value: PolicyValue; report: Json }> {
  const sp = p.sampler!;
  const ck = await readCheckpoint(p.policy, ctx);
  const seed = p.seed ?? ctx.seed;
  const state = await readSamplerState(p.policy, sp.name, ctx.readBlob);
  const sampler = new LevelSampler(samplerOptions(sp, seed), state);
  const maxUpdates = p.updates ??
    (p.updates === undefined && p.samples === undefined ? 40 : Infinity);
  const maxSamples = p.samples ?? Infinity;
  const total = Number.isFinite(maxUpdates) ? maxUpdates : maxSamples;
  const startSamples = ck.counters.samples, startUpdates = ck.counters.updates;
  const first = sampler.batches;
  const r = trainWithSampler(ck, sampler, {
    trainer: trainerOptions(p, seed),
    maxUpdates,
    maxSamples,
    onBatch() {
      ctx.signal.throwIfAborted();
      const done = Number.isFinite(maxUpdates)
        ? ck.counters.updates - startUpdates
        : ck.counters.samples - startSamples;
      ctx.progress(
        Math.min(done, total),
        total,
        `${sp.name}: buffer ${sampler.size}, ${
          sampler.batches - first
        } batches`,
      );
    },
  });
  const value = await writePolicy(ck, ctx);
  value.sampler = await writeSamplerState(
    sp.name,
    sampler.state(),
    ctx.writeBlob,
  );
  const curve = r.curve.map(curvePointJson);
  const c = sampler.counts;
  ctx.log(
    `trained ${r.curve.length} batches, ${r.samples} samples with sampler ${sp.name} (${r.batches} batches in all; buffer ${sampler.size})`,
  );
  return {
    value,
    report: {
      algo: "ppo",
      kernel: trainerOptions(p, seed).kernel === "ts"
        ? { name: "ts" }
        : { name: "simd", wasm_sha256: mlpKernelDigest() },
      updates: r.curve.length,
      samples: r.samples,
      sampler: {
        name: sp.name,
        batches: r.batches,
        branches: { dr: c.dr, new: c.new, replay: c.replay, edit: c.edit },
        reranks: c.reranks,
        edit_generations: c.edit,
        edits_skipped: c.skipped,
        buffer: sampler.size,
        scored_agent_steps: r.scoredSamples,
        scored_episodes: r.scoredEpisodes,
        trained_episodes: r.episodes,
        trained_success: r.episodes > 0
          ? Math.round(r.successes / r.episodes * 1e4) / 1e4
          : null,
      },
      last: curve[curve.length - 1] ?? null,
      curve,
    },
  };
}
