/**
 * What the policy benchmarks share: the default policy network, real
 * observation rows, a buffer of random PPO samples and the one-thread
 * PyTorch contender (`bench/ppo_torch.py`).
 *
 * @module
 */
import type { Rng } from "../mapf/mod.ts";
import {
  DEFAULT_OBS,
  type MlpSpec,
  ObservationEncoder,
  obsSize,
  type SampleBuffer,
} from "../policy/mod.ts";
import { randomlySteppedEnv } from "../policy/_test_instances.ts";

/** Observation size of the default observation layout. */
export const OBS_SIZE: number = obsSize(DEFAULT_OBS);

/** The default policy network: OBS_SIZE-64-64-(5+1), tanh. */
export const DEFAULT_MLP: MlpSpec = {
  inputSize: OBS_SIZE,
  hidden: [64, 64],
  actions: 5,
  activation: "tanh",
};

/**
 * `n` real observation rows: every agent of 256 generated `easy` instances
 * after a few random steps.
 */
export function observationRows(n: number): Float32Array {
  const env = randomlySteppedEnv("easy", 256, Math.ceil(n / 2));
  const enc = new ObservationEncoder(DEFAULT_OBS, env);
  const slots = new Int32Array(env.envs * env.maxAgents).map((_, i) => i);
  const rows = new Float32Array(slots.length * enc.size);
  enc.encode(slots, slots.length, rows);
  return rows.subarray(0, n * enc.size);
}

/**
 * Fills a PPO buffer with `n` samples: the observation `rows`, and random
 * actions, log-probabilities, advantages, returns and values drawn from `rng`.
 */
export function fillRandomSamples(
  buf: SampleBuffer,
  rows: Float32Array,
  n: number,
  rng: Pick<Rng, "int" | "normal">,
): void {
  buf.obs.set(rows);
  for (let i = 0; i < n; i++) {
    buf.actions[i] = rng.int(5);
    buf.logp[i] = Math.log(0.2) + 0.3 * rng.normal();
    buf.advantages[i] = rng.normal();
    buf.returns[i] = rng.normal();
    buf.values[i] = rng.normal();
  }
  buf.count = n;
}

/** How `bench/ppo_torch.py` is run. */
export interface TorchRun {
  /** Interpreter with torch. */
  python: string;
  /** File of float32 observation rows (one minibatch). */
  rowsFile: string;
  /** Observation size. */
  dim: number;
  minibatch: number;
  seconds: number;
  /** Rate per CPU second (`time.process_time`) instead of per wall second. */
  cpuTime?: boolean;
}

/**
 * Samples/s of one-thread PyTorch doing the PPO minibatch step, or why it
 * was not measured (the interpreter failed, or torch is not importable).
 * Throws when the interpreter cannot be started.
 */
export async function torchSamplesPerSecond(
  run: TorchRun,
): Promise<number | string> {
  const res = await new Deno.Command(run.python, {
    args: [
      new URL("./ppo_torch.py", import.meta.url).pathname,
      run.rowsFile,
      "--dim",
      String(run.dim),
      "--minibatch",
      String(run.minibatch),
      "--seconds",
      String(run.seconds),
      ...(run.cpuTime ? ["--cpu-time"] : []),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(res.stdout).trim();
  if (!res.success || !text) {
    return `${run.python} failed: ${
      new TextDecoder().decode(res.stderr).trim().split("\n").pop()
    }`;
  }
  const r = JSON.parse(text.split("\n").pop()!);
  return r.skipped
    ? `torch not importable by ${run.python} (${r.skipped})`
    : r.samples_per_s;
}
