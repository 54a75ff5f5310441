/**
 * The `train.lm` node kind: RL fine-tuning (GRPO, `lm/envsmith_lm/grpo.py`)
 * of a causal language-model policy on one stage's instances, rendered in
 * the LLM policy's messages and rewarded by envsmith's dynamics (the
 * `reward` process: nothing is re-implemented in Python).
 *
 * ```yaml
 * policy:
 *   kind: train.lm
 *   with: { base: $prev.policy, envs: $envs, budget: { prompts: 32, samples: 4 } }
 * ```
 *
 * Parameters: `base` (a Hugging Face checkpoint directory, relative to the
 * experiment file, or an `lm.init` / `train.lm` node), `envs` (a generate
 * node), `budget` (`prompts` drawn in all, `samples` completions per
 * prompt: the RL budget is their product), `rl` (`batch` prompts per step
 * (4), `lr` (3e-4), `beta` KL weight to the base (0.02), `temperature` (1),
 * `max_new` tokens per completion (48), `micro_batch` sequences per backward
 * pass (all), `checkpointing` (gradient checkpointing, false), `sampler`
 * (`hf`, or `vllm` on a GPU where vLLM is installed)), `precision` (`f32`,
 * or `bf16` weights), `lora` (`{rank, alpha, dropout, targets}`: train
 * low-rank adapters, merged into the stored checkpoint; the KL reference is
 * the base with adapters off, not a copy), `gguf` (the export's type: f32,
 * f16 or q8_0), `prompt` (bare), `device` (cpu or cuda), `threads` (1),
 * `seed` (the node's).
 *
 * The key covers the trainer's Python files and pinned requirements (code
 * digest of `lm_trainer.ts`, plus the LoRA, vLLM and CUDA modules when the
 * parameters choose them), a base directory's content hash, or the base
 * node's key. Plan refuses a base that is not a usable checkpoint; plan and
 * run (never tables) refuse a missing or stale Python environment and
 * `device: cuda` without the CUDA environment or a GPU (`ready`).
 *
 * Value: `{ checkpoint, gguf, curve: [{step, reward, success,
 * invalid_plan, kl}], final, budget }`; `gguf` is a file output
 * (`$policy.gguf`).
 *
 * @module
 */
import { join } from "node:path";
import * as v from "valibot";
import type { Json, NodeKind } from "@envsmith/engine/kind";
import { lmRow, readLmInstances } from "./lm_rows.ts";
import { lmReadiness, rewardCommandLine, runTrainer } from "./lm_trainer.ts";
import {
  lmCodeModules,
  lmGpuReadiness,
  trainerOptionArgs,
} from "./lm_options.ts";
import { baseFingerprint, checkpointDir } from "./lm_checkpoint.ts";
import { LM_FILES, storeLmResult } from "./lm_result.ts";

const int = (min: number, max: number) =>
  v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));
const num = (min: number, max: number) =>
  v.pipe(v.number(), v.minValue(min), v.maxValue(max));

/** Parameters of `train.lm`. */
export const TrainLmParamsSchema = v.strictObject({
  base: v.unknown(),
  envs: v.unknown(),
  budget: v.strictObject({
    prompts: int(1, 10_000_000),
    samples: int(2, 1024),
  }),
  rl: v.optional(v.strictObject({
    batch: v.optional(int(1, 4096)),
    lr: v.optional(num(0, 1)),
    beta: v.optional(num(0, 100)),
    temperature: v.optional(num(0.01, 10)),
    max_new: v.optional(int(1, 32768)),
    micro_batch: v.optional(int(1, 1_000_000)),
    checkpointing: v.optional(v.boolean()),
    sampler: v.optional(v.picklist(["hf", "vllm"])),
  })),
  precision: v.optional(v.picklist(["f32", "bf16"])),
  lora: v.optional(v.strictObject({
    rank: int(1, 4096),
    alpha: v.optional(num(0, 1_000_000)),
    dropout: v.optional(num(0, 1)),
    targets: v.optional(v.pipe(
      v.array(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.]+$/))),
      v.minLength(1),
    )),
  })),
  gguf: v.optional(v.picklist(["f32", "f16", "q8_0"])),
  prompt: v.optional(v.picklist(["bare", "full"])),
  device: v.optional(v.picklist(["cpu", "cuda"])),
  threads: v.optional(int(1, 256)),
  seed: v.optional(int(0, 0xffffffff)),
});

/** Parameters of `train.lm`. */
export type TrainLmParams = v.InferOutput<typeof TrainLmParamsSchema>;

interface _Point {
  step: number;
  reward: number;
  success: number;
  invalid_plan: number;
  kl: number;
}

const _mean = (xs: number[]) =>
  xs.length
    ? Math.round(xs.reduce((a, b) => a + b, 0) / xs.length * 1e5) / 1e5
    : null;

/** The `train.lm` kind. */
export const kind: NodeKind<TrainLmParams, Json> = {
  name: "train.lm",
  description:
    "RL fine-tuning (GRPO) of a language-model policy on a stage's instances, rewarded by the dynamics; stores the checkpoint and its GGUF export",
  params: TrainLmParamsSchema,
  paramDocs: {
    base:
      "the checkpoint to start from: a Hugging Face directory, an lm.init or a train.lm node",
    envs: "the stage's instances (a generate node)",
    budget: "{prompts: prompts drawn in all, samples: completions per prompt}",
    rl:
      "{batch: 4 prompts per step, lr: 3e-4, beta: 0.02, temperature: 1, max_new: 48, micro_batch: all sequences per backward pass, checkpointing: false, sampler: hf (or vllm: a GPU with vLLM installed)}",
    precision:
      "f32 (default) or bf16 (weights, activations and the stored checkpoint in bfloat16)",
    lora:
      "{rank, alpha: 2 x rank, dropout: 0, targets: [q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj]}: train LoRA adapters (merged into the stored checkpoint) instead of every weight; the KL reference is the base with the adapters off, no copy",
    gguf: "the GGUF export's type: f32 (default), f16 or q8_0",
    prompt: "bare (default: the benchmark's prompt alone) or full",
    device: "cpu (default) or cuda (checked at plan; never falls back to cpu)",
    threads: "torch CPU threads (default 1)",
    seed: "seed of prompts and samples (default: the node's seed)",
  },
  module: import.meta.url,
  files: LM_FILES,
  fingerprint(params, info) {
    const p = params as { base?: unknown } | null;
    const base = baseFingerprint(p?.base, info.baseDir);
    return base === null ? null : { base };
  },
  codeModules: lmCodeModules,
  ready(params) {
    const p = params as { device?: unknown } | null;
    return lmReadiness(p?.device) ?? lmGpuReadiness(params);
  },
  async run(p, ctx) {
    const threads = p.threads ?? 1;
    const rl = p.rl ?? {};
    const batch = Math.min(rl.batch ?? 4, p.budget.prompts);
    const steps = Math.ceil(p.budget.prompts / batch);
    const instances = await readLmInstances(p.envs, ctx, "envs");
    if (instances.length === 0) throw new TypeError("envs: no instances");
    const instFile = join(ctx.workDir, "instances.jsonl");
    const rowsFile = join(ctx.workDir, "rows.jsonl");
    await Deno.writeTextFile(
      instFile,
      instances.map((i) => JSON.stringify(i)).join("\n") + "\n",
    );
    await Deno.writeTextFile(
      rowsFile,
      instances.map((i) => JSON.stringify(lmRow(i, p.prompt ?? "bare")))
        .join("\n") + "\n",
    );
    const device = p.device ?? "cpu";
    const base = await checkpointDir(p.base, join(ctx.workDir, "base"), ctx);
    const out = join(ctx.workDir, "checkpoint");
    ctx.log(
      `GRPO: ${steps} steps x ${batch} prompts x ${p.budget.samples} samples on ${instances.length} instances`,
    );
    await runTrainer(
      [
        "grpo",
        "--base",
        base,
        "--rows",
        rowsFile,
        "--instances",
        instFile,
        "--out",
        out,
        "--reward-cmd",
        rewardCommandLine(),
        "--seed",
        String(p.seed ?? ctx.seed),
        "--threads",
        String(threads),
        "--device",
        device,
        "--steps",
        String(steps),
        "--prompts",
        String(batch),
        "--group",
        String(p.budget.samples),
        "--lr",
        String(rl.lr ?? 3e-4),
        "--beta",
        String(rl.beta ?? 0.02),
        "--temperature",
        String(rl.temperature ?? 1),
        "--max-new",
        String(rl.max_new ?? 48),
        ...trainerOptionArgs(p),
      ],
      ctx,
      threads,
      device,
    );
    const res = await storeLmResult(out, ctx, threads, device, p.gguf);
    const curve = ((res.curve.grpo ?? []) as unknown as _Point[]).map((x) => ({
      step: x.step,
      reward: x.reward,
      success: x.success,
      invalid_plan: x.invalid_plan,
      kl: x.kl,
    }));
    const tail = curve.slice(-Math.max(1, Math.ceil(curve.length / 4)));
    const final = {
      reward: _mean(tail.map((x) => x.reward)),
      success: _mean(tail.map((x) => x.success)),
      invalid_plan: _mean(tail.map((x) => x.invalid_plan)),
    };
    ctx.log(
      `GRPO done: last-quarter reward ${final.reward}, success ${final.success}, invalid plans ${final.invalid_plan}`,
    );
    return {
      value: {
        checkpoint: res.checkpoint,
        gguf: res.gguf,
        curve,
        final,
        budget: {
          prompts: steps * batch,
          samples: p.budget.samples,
          steps,
          completions: steps * batch * p.budget.samples,
        },
      },
      report: { final, steps },
    };
  },
};
