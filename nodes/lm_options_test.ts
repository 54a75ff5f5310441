/**
 * The large-model options of `train.lm` (LoRA, bf16, micro-batches,
 * gradient checkpointing, vLLM sampling, CUDA): the trainer arguments they
 * become (none at their defaults, so the micro CPU path runs as before), the
 * code they add to a node's key (only when chosen), what they need of the
 * machine, and, with the trainer's environment, what they compute on a
 * micro model.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { nodeCodeDigest } from "@envsmith/engine/cache";
import { kind as trainLm } from "./lm_train.ts";
import { kind as lmInit } from "./lm_init.ts";
import { LM_DIR } from "./lm_env.ts";
import { lmTest } from "./_lm_test_util.ts";
import { lmGpuReadiness, trainerOptionArgs } from "./lm_options.ts";

const BASE = {
  base: "$start",
  envs: "$envs",
  budget: { prompts: 4, samples: 2 },
};

Deno.test("train.lm options: no trainer argument at their defaults; each given option its arguments", () => {
  assert.deepEqual(trainerOptionArgs(BASE), []);
  assert.deepEqual(
    trainerOptionArgs({
      ...BASE,
      precision: "bf16",
      lora: { rank: 16 },
      rl: { micro_batch: 8, checkpointing: true, sampler: "vllm" },
    }),
    [
      "--precision",
      "bf16",
      "--lora-rank",
      "16",
      "--lora-alpha",
      "32",
      "--lora-dropout",
      "0",
      "--lora-targets",
      "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj",
      "--micro-batch",
      "8",
      "--checkpointing",
      "--sampler",
      "vllm",
    ],
  );
  assert.deepEqual(
    trainerOptionArgs({
      ...BASE,
      lora: { rank: 4, alpha: 4, dropout: 0.1, targets: ["q_proj"] },
    }),
    [
      "--lora-rank",
      "4",
      "--lora-alpha",
      "4",
      "--lora-dropout",
      "0.1",
      "--lora-targets",
      "q_proj",
    ],
  );
});

Deno.test("train.lm options: the LoRA, vLLM and CUDA code is in a node's key only when its parameters choose it", () => {
  const files = (kind: typeof trainLm | typeof lmInit, p: unknown) =>
    Object.keys(nodeCodeDigest(kind, p, ".").files);
  const plain = files(trainLm, BASE);
  for (const f of ["lm/envsmith_lm/grpo.py", "lm/requirements.txt"]) {
    assert.ok(plain.includes(f), f);
  }
  const optional = [
    "lm/envsmith_lm/lora.py",
    "lm/envsmith_lm/vllm_sampler.py",
    "lm/requirements-cuda.txt",
  ];
  for (const f of optional) assert.ok(!plain.includes(f), f);
  for (const f of optional) {
    assert.ok(!files(lmInit, { data: "$d" }).includes(f));
  }
  assert.ok(
    files(trainLm, { ...BASE, lora: { rank: 8 } }).includes(optional[0]!),
  );
  assert.ok(
    files(trainLm, { ...BASE, device: "cuda", rl: { sampler: "vllm" } })
      .includes(optional[1]!),
  );
  assert.ok(files(trainLm, { ...BASE, device: "cuda" }).includes(optional[2]!));
  assert.ok(
    files(lmInit, { data: "$d", device: "cuda" }).includes(optional[2]!),
  );
});

Deno.test("train.lm options: vLLM sampling asks for a GPU and vLLM, in one line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const env = (k: string) =>
      k === "ENVSMITH_LM_CUDA_VENV" ? join(dir, "venv") : undefined;
    assert.equal(lmGpuReadiness(BASE, env), null);
    assert.match(
      lmGpuReadiness({ ...BASE, rl: { sampler: "vllm" } }, env)!,
      /^rl\.sampler: vllm draws samples on a GPU; set device: cuda/,
    );
    const cuda = { ...BASE, device: "cuda", rl: { sampler: "vllm" } };
    assert.match(
      lmGpuReadiness(cuda, env)!,
      /^rl\.sampler: vllm, but vLLM is not installed in .*venv; install a vLLM release built for its torch/,
    );
    Deno.mkdirSync(
      join(dir, "venv", "lib", "python3.11", "site-packages", "vllm"),
      {
        recursive: true,
      },
    );
    assert.equal(lmGpuReadiness(cuda, env), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

lmTest(
  "train.lm options on a micro model: micro-batches give the same gradient, LoRA trains without a copy of the model and merges exactly, bf16 halves the checkpoint",
  async (python, dir) => {
    const o = await new Deno.Command(python, {
      args: ["-m", "envsmith_lm.options_fixture", dir],
      cwd: LM_DIR,
      env: { OMP_NUM_THREADS: "1", PYTHONDONTWRITEBYTECODE: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(o.code, 0, new TextDecoder().decode(o.stderr));
    const r = JSON.parse(new TextDecoder().decode(o.stdout));
    // micro-batches: the gradient of the whole batch (a real one: KL and
    // policy gradient both non-zero), and the same training within float
    // rounding amplified by Adam over 3 steps
    assert.ok(r.grad_norm > 0.1 && r.kl > 1e-3, JSON.stringify(r));
    assert.ok(r.micro_batch_grad_diff < 1e-6, JSON.stringify(r));
    assert.ok(r.micro_batch_kl_diff < 1e-6, JSON.stringify(r));
    assert.ok(r.weights_moved > 0.01, JSON.stringify(r));
    assert.ok(r.micro_batch_weight_diff < 0.01 * r.weights_moved);
    assert.ok(
      new Set(r.rewards).size > 1,
      "rewards vary, so advantages are non-zero",
    );
    // LoRA: a small trainable share, no model copied for the reference
    // (the full run copies one), the reference is the starting model
    // exactly, the adapted model moved, merging keeps it, reruns agree
    assert.ok(r.lora_trainable_share > 0 && r.lora_trainable_share < 0.2);
    assert.deepEqual(r.model_copies_lora, []);
    assert.deepEqual(r.model_copies_full, ["LlamaForCausalLM"]);
    assert.equal(r.lora_reference_vs_start, 0);
    assert.ok(r.lora_adapted_vs_start > 1e-3, JSON.stringify(r));
    assert.ok(r.lora_merged_vs_adapted < 1e-4, JSON.stringify(r));
    assert.equal(r.lora_merged_type, "LlamaForCausalLM");
    assert.equal(r.lora_rerun_diff, 0);
    // bf16: the weights, a training step that moves them, half the bytes
    assert.equal(r.bf16_dtype, "torch.bfloat16");
    assert.ok(r.bf16_moved > 0.01);
    assert.ok(r.bf16_size_ratio > 0.45 && r.bf16_size_ratio < 0.55);
  },
);
