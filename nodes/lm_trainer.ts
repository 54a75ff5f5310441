/**
 * Running the Python LM trainer (`lm/envsmith_lm`) from a node: the venv
 * checked, every output line in the node's log (kept when the trainer
 * crashes), progress from its step lines, and the readiness check the LM
 * kinds declare (`ready`: asked by `plan` and `run`, never by `tables`).
 *
 * The trainer's Python files and pinned requirements are named below as
 * `new URL(..., import.meta.url)` data files, so they are in the code
 * digest of every kind that imports this module: editing the trainer
 * recomputes the LM nodes and nothing else.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { UserError } from "@envsmith/engine";
import type { NodeContext } from "@envsmith/engine/kind";
import { describeExit, runChild } from "@envsmith/engine/run";
import {
  LM_DIR,
  type LmDevice,
  lmEnvProblem,
  lmEnvState,
  lmPython,
  lmVenvDir,
  SETUP_LM_CUDA_COMMAND,
} from "./lm_env.ts";
import { scoreCompletion } from "../policy/plan_reward.ts";

/** The trainer's files (in every LM kind's code digest). */
export const LM_TRAINER_FILES: readonly URL[] = [
  new URL("../lm/envsmith_lm/__init__.py", import.meta.url),
  new URL("../lm/envsmith_lm/__main__.py", import.meta.url),
  new URL("../lm/envsmith_lm/common.py", import.meta.url),
  new URL("../lm/envsmith_lm/evaluate.py", import.meta.url),
  new URL("../lm/envsmith_lm/generate.py", import.meta.url),
  new URL("../lm/envsmith_lm/gguf_export.py", import.meta.url),
  new URL("../lm/envsmith_lm/grpo.py", import.meta.url),
  new URL("../lm/envsmith_lm/model.py", import.meta.url),
  new URL("../lm/envsmith_lm/reward.py", import.meta.url),
  new URL("../lm/envsmith_lm/sft.py", import.meta.url),
  new URL("../lm/envsmith_lm/stage.py", import.meta.url),
  new URL("../lm/envsmith_lm/tokenizer.py", import.meta.url),
  new URL("../lm/requirements.txt", import.meta.url),
];

export type { LmDevice };

/**
 * Set `ENVSMITH_LM_GPU_CHECK=run` to plan GPU nodes on a machine without a
 * GPU (a cluster's login node): the GPU is then checked where the node runs.
 */
export const GPU_CHECK_ENV = "ENVSMITH_LM_GPU_CHECK";

/** Whether the venv's torch is a CUDA build (read from torch/version.py, no GPU needed). */
export function torchCudaBuild(
  venv = lmVenvDir(undefined, "cuda"),
): boolean | undefined {
  const lib = join(venv, "lib");
  if (!existsSync(lib)) return undefined;
  for (const py of readdirSync(lib)) {
    const f = join(lib, py, "site-packages", "torch", "version.py");
    if (!existsSync(f)) continue;
    const m = /^cuda\s*(?::[^=]*)?=\s*(.+)$/m.exec(readFileSync(f, "utf8"));
    return m !== null && m[1]!.trim() !== "None";
  }
  return undefined;
}

let _gpu: boolean | undefined;

/** Whether `nvidia-smi -L` lists a GPU (asked once per process). */
export function gpuVisible(): boolean {
  if (_gpu !== undefined) return _gpu;
  try {
    const o = new Deno.Command("nvidia-smi", {
      args: ["-L"],
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    _gpu = o.success && /GPU \d+/.test(new TextDecoder().decode(o.stdout));
  } catch {
    _gpu = false;
  }
  return _gpu;
}

/**
 * The readiness check of the LM kinds: null when this machine can run a
 * node on `device`, else one line saying what it lacks and the fix. CPU: the
 * trainer's environment exists and matches `lm/requirements.txt`. CUDA,
 * everything missing at once: the CUDA environment (built from
 * `lm/requirements-cuda.txt`, with a CUDA build of torch) and a visible GPU
 * (unless {@linkcode GPU_CHECK_ENV} defers that to where the node runs).
 */
export function lmReadiness(
  device: unknown,
  env: (k: string) => string | undefined = (k) => Deno.env.get(k),
  gpu: () => boolean = gpuVisible,
): string | null {
  if (device !== "cuda") return lmEnvProblem("cpu", lmVenvDir(env, "cpu"));
  const venv = lmVenvDir(env, "cuda");
  const lacks: string[] = [];
  const state = lmEnvState("cuda", venv);
  if (state === "missing") {
    lacks.push(
      `the CUDA Python environment ${venv} (create it with \`${SETUP_LM_CUDA_COMMAND}\`)`,
    );
  } else if (state === "stale") {
    lacks.push(
      `a CUDA Python environment built from lm/requirements-cuda.txt (${venv} was built from other requirements; run \`${SETUP_LM_CUDA_COMMAND}\` again)`,
    );
  } else if (torchCudaBuild(venv) === false) {
    lacks.push(
      `a CUDA build of torch (the torch of ${venv} is a CPU build; run \`${SETUP_LM_CUDA_COMMAND}\` again)`,
    );
  }
  if (env(GPU_CHECK_ENV) !== "run" && !gpu()) {
    lacks.push(
      `a GPU (nvidia-smi -L lists none; run where one is, or set ${GPU_CHECK_ENV}=run to plan here and check the GPU where the node runs)`,
    );
  }
  return lacks.length === 0
    ? null
    : `device: cuda, but this machine lacks ${lacks.join("; and ")}`;
}

/**
 * The reward the trainer's reward process (`cli reward`) computes per
 * completion: imported here so that its code (and the dynamics it replays)
 * is in the LM kinds' code digest.
 */
export const LM_REWARD: typeof scoreCompletion = scoreCompletion;

/** The command the trainer starts the reward process with (`... reward --instances F`). */
export function rewardCommandLine(): string {
  const cli = join(dirname(LM_DIR), "cli.ts");
  return `${Deno.execPath()} run -A ${cli}`;
}

/**
 * Runs `python -m envsmith_lm ARGS` with `lm/` on its module path, in the
 * caller's directory (so relative paths in ARGS, e.g. under the default
 * cache `.envsmith/cache`, mean what they mean here); every line goes to the
 * node's log, `... step i/n ...` lines to its progress.
 *
 * @throws {UserError} when the environment is missing or stale, or the
 * trainer refused its input (exit 2: its one line).
 * @throws {Error} when the trainer failed otherwise (the log has its output).
 */
export async function runTrainer(
  args: readonly string[],
  ctx: Pick<NodeContext, "log" | "progress" | "signal">,
  threads: number,
  device: LmDevice = "cpu",
): Promise<void> {
  const python = lmPython(lmVenvDir(undefined, device), device);
  let last = "";
  const r = await runChild(python, {
    args: ["-m", "envsmith_lm", ...args],
    clearEnv: false,
    env: {
      PYTHONPATH: LM_DIR,
      PYTHONDONTWRITEBYTECODE: "1",
      OMP_NUM_THREADS: String(threads),
      MKL_NUM_THREADS: String(threads),
      TOKENIZERS_PARALLELISM: "false",
    },
    signal: ctx.signal,
    onLine: (_stream, line) => {
      ctx.log(line);
      if (line.trim()) last = line.trim();
      const m = /step (\d+)\/(\d+)/.exec(line);
      if (m) ctx.progress(Number(m[1]) + 1, Number(m[2]), line.slice(0, 60));
    },
  });
  if (!r.success) {
    if (r.code === 2 && last.startsWith("error: ")) {
      throw new UserError(last.slice("error: ".length));
    }
    throw new Error(
      `${
        describeExit(`the LM trainer (${args[0]})`, r, {
          stderrTailChars: 300,
        })
      } (the node's log has its whole output)`,
    );
  }
}
