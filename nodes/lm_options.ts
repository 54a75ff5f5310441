/**
 * The options of the LM kinds that reach past the micro CPU path (LoRA,
 * bf16, vLLM sampling, CUDA): the trainer arguments they become, the code
 * they add to a node's key, and what they need of the machine.
 *
 * The code of each option (its Python file, the CUDA requirements) is named
 * by a module of its own, added to a node's code digest only when the
 * node's parameters choose the option (`codeModules`), so editing the LoRA
 * or vLLM code recomputes the nodes that use it and nothing else. Those
 * modules are named here by `import.meta.resolve`, not imported.
 *
 * @module
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { lmVenvDir } from "./lm_env.ts";

/** The module naming `lora.py` (LoRA adapters, merged on save). */
export const LM_LORA_MODULE: string = import.meta.resolve("./lm_lora.ts");
/** The module naming `vllm_sampler.py` (GRPO samples drawn by vLLM). */
export const LM_VLLM_MODULE: string = import.meta.resolve("./lm_vllm.ts");
/** The module naming `lm/requirements-cuda.txt` (the `device: cuda` environment). */
export const LM_CUDA_MODULE: string = import.meta.resolve("./lm_cuda.ts");

/** The default LoRA target modules (every linear layer of a Llama/Qwen block). */
export const LORA_TARGETS: readonly string[] = [
  "q_proj",
  "k_proj",
  "v_proj",
  "o_proj",
  "gate_proj",
  "up_proj",
  "down_proj",
];

interface _Options {
  device?: unknown;
  precision?: unknown;
  lora?: {
    rank?: unknown;
    alpha?: unknown;
    dropout?: unknown;
    targets?: unknown;
  } | null;
  rl?: {
    micro_batch?: unknown;
    checkpointing?: unknown;
    sampler?: unknown;
  } | null;
}

function _opts(params: unknown): _Options {
  return (params !== null && typeof params === "object"
    ? params
    : {}) as _Options;
}

/** The modules an LM node's options add to its code digest. */
export function lmCodeModules(params: unknown): string[] {
  const p = _opts(params);
  const out: string[] = [];
  if (p.lora !== undefined && p.lora !== null) out.push(LM_LORA_MODULE);
  if (p.rl?.sampler === "vllm") out.push(LM_VLLM_MODULE);
  if (p.device === "cuda") out.push(LM_CUDA_MODULE);
  return out;
}

/**
 * The trainer arguments of the options a `train.lm` node gives (none for
 * an option left at its default, so the micro CPU path runs as before).
 */
export function trainerOptionArgs(params: unknown): string[] {
  const p = _opts(params);
  const args: string[] = [];
  if (p.precision === "bf16") args.push("--precision", "bf16");
  if (p.lora !== undefined && p.lora !== null) {
    const rank = Number(p.lora.rank);
    args.push(
      "--lora-rank",
      String(rank),
      "--lora-alpha",
      String(p.lora.alpha ?? 2 * rank),
      "--lora-dropout",
      String(p.lora.dropout ?? 0),
      "--lora-targets",
      (Array.isArray(p.lora.targets) ? p.lora.targets : LORA_TARGETS).join(
        ",",
      ),
    );
  }
  if (p.rl?.micro_batch !== undefined) {
    args.push("--micro-batch", String(p.rl.micro_batch));
  }
  if (p.rl?.checkpointing === true) args.push("--checkpointing");
  if (p.rl?.sampler === "vllm") args.push("--sampler", "vllm");
  return args;
}

/** Whether the Python package `name` is installed in `venv`. */
export function venvHasPackage(venv: string, name: string): boolean {
  const lib = join(venv, "lib");
  if (!existsSync(lib)) return false;
  return readdirSync(lib).some((py) =>
    existsSync(join(lib, py, "site-packages", name))
  );
}

/**
 * What the options of a `train.lm` node need beyond its device's
 * environment: vLLM sampling runs on `device: cuda` with vLLM installed in
 * the CUDA environment. Null when ready, else one line with the fix.
 */
export function lmGpuReadiness(
  params: unknown,
  env: (k: string) => string | undefined = (k) => Deno.env.get(k),
): string | null {
  const p = _opts(params);
  if (p.rl?.sampler !== "vllm") return null;
  if (p.device !== "cuda") {
    return "rl.sampler: vllm draws samples on a GPU; set device: cuda, or leave sampler at hf";
  }
  const venv = lmVenvDir(env, "cuda");
  if (!venvHasPackage(venv, "vllm")) {
    return `rl.sampler: vllm, but vLLM is not installed in ${venv}; install a vLLM release built for its torch (${venv}/bin/pip install vllm==VERSION, docs/lm.md, GPU recipe), or use sampler: hf`;
  }
  return null;
}
