/**
 * Training checkpoints: an {@linkcode Mlp}, its observation layout, value
 * normaliser, optimiser state and training counters, stored as one ONNX file
 * (the policy contract of `onnx_export.ts`) whose metadata carries the rest,
 * so `train` can resume exactly where a previous `train` stopped and any
 * ONNX consumer can still run the file.
 *
 * Metadata entries (besides those of `exportOnnx`):
 * - `envsmith.obs`: `{"version": 1, "radius": 2}` (see `observation.ts`)
 * - `envsmith.train`: `{"updates", "samples", "episodes", "value_norm": {mean, var, count}, "adam_t"}`
 * - `envsmith.adam`: base64 of the float32 Adam moments `m` then `v` (absent before the first update)
 * - `envsmith.env`: `{"family": "maze", "observation_size": 54}` for a policy of another family's
 *   environment (its observation is the family's, not `envsmith.obs`'s; absent for MAPF-FrozenLake)
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { AdamState } from "./adam.ts";
import { PolicyContractError } from "./errors.ts";
import { type Activation, Mlp } from "./mlp.ts";
import { exportOnnx, importOnnx } from "./onnx_export.ts";
import {
  checkObsSpec,
  DEFAULT_OBS,
  obsSize,
  type ObsSpec,
} from "./observation.ts";
import { RunningMeanStd } from "./ppo_loss.ts";

/** Number of actions of MAPF-FrozenLake policies (stay, up, down, left, right). */
export const ACTIONS = 5;

/** Training counters carried across resumed runs. */
export interface TrainCounters {
  /** Parameter updates (rollout + optimisation rounds) so far. */
  updates: number;
  /** Agent-step samples trained on so far. */
  samples: number;
  /** Training episodes finished so far. */
  episodes: number;
}

/** Everything a checkpoint holds. */
export interface Checkpoint {
  /** The network. */
  net: Mlp;
  /** Observation layout the network reads. */
  obs: ObsSpec;
  /** Value-target normaliser. */
  valueNorm: RunningMeanStd;
  /** Optimiser state, if the policy has been trained. */
  adam?: AdamState;
  /** Counters. */
  counters: TrainCounters;
  /**
   * The family whose environment the network observes, when it is not
   * MAPF-FrozenLake (then `obs` is unused and the input width is the
   * family's observation size).
   */
  env?: { family: string; observationSize: number };
}

/** Options of {@linkcode initCheckpoint}. */
export interface InitOptions {
  /** Hidden layer sizes. @default [64, 64] */
  hidden?: readonly number[];
  /** Hidden activation. @default "tanh" */
  activation?: Activation;
  /** Observation layout. @default DEFAULT_OBS */
  obs?: ObsSpec;
  /** Initialisation seed. @default 0 */
  seed?: number;
  /**
   * Values per observation row, for another family's environment (its
   * `observationSize`). @default the size of `obs`
   */
  inputSize?: number;
  /** Number of actions, for another family's environment. @default ACTIONS */
  actions?: number;
  /** The family of that environment (recorded in the checkpoint with `inputSize`). */
  family?: string;
}

/**
 * A fresh, untrained policy.
 *
 * @example
 * ```ts
 * import { initCheckpoint, loadCheckpoint, saveCheckpoint } from "./checkpoint.ts";
 * import assert from "node:assert/strict";
 * const ck = initCheckpoint({ hidden: [32], seed: 3 });
 * const back = loadCheckpoint(saveCheckpoint(ck));
 * assert.deepEqual(back.net.params, ck.net.params);
 * ```
 */
export function initCheckpoint(options: InitOptions = {}): Checkpoint {
  const obs = checkObsSpec(options.obs ?? DEFAULT_OBS);
  const net = Mlp.init({
    inputSize: options.inputSize ?? obsSize(obs),
    hidden: options.hidden ?? [64, 64],
    actions: options.actions ?? ACTIONS,
    activation: options.activation ?? "tanh",
  }, { seed: options.seed ?? 0 });
  const ck: Checkpoint = {
    net,
    obs,
    valueNorm: new RunningMeanStd(),
    counters: { updates: 0, samples: 0, episodes: 0 },
  };
  if (options.family !== undefined) {
    ck.env = { family: options.family, observationSize: net.spec.inputSize };
  }
  return ck;
}

/** Serialise a checkpoint as ONNX bytes (deterministic: same checkpoint, same bytes). */
export function saveCheckpoint(ck: Checkpoint): Uint8Array {
  const metadata: Record<string, string> = {
    "envsmith.obs": JSON.stringify({
      version: ck.obs.version,
      radius: ck.obs.radius,
    }),
    "envsmith.train": JSON.stringify({
      updates: ck.counters.updates,
      samples: ck.counters.samples,
      episodes: ck.counters.episodes,
      value_norm: {
        mean: ck.valueNorm.mean,
        var: ck.valueNorm.var,
        count: ck.valueNorm.count,
      },
      adam_t: ck.adam?.t ?? 0,
    }),
  };
  if (ck.env) {
    metadata["envsmith.env"] = JSON.stringify({
      family: ck.env.family,
      observation_size: ck.env.observationSize,
    });
  }
  if (ck.adam) {
    const both = new Float32Array(ck.adam.m.length * 2);
    both.set(ck.adam.m);
    both.set(ck.adam.v, ck.adam.m.length);
    metadata["envsmith.adam"] = Buffer.from(both.buffer).toString("base64");
  }
  return exportOnnx(ck.net, {
    valueScale: ck.valueNorm.std,
    valueShift: ck.valueNorm.mean,
    metadata,
  });
}

/**
 * Read a checkpoint written by {@linkcode saveCheckpoint}. Throws
 * {@linkcode PolicyContractError} for files that are not envsmith checkpoints.
 */
export function loadCheckpoint(
  bytes: Uint8Array,
  source = "<bytes>",
): Checkpoint {
  const imp = importOnnx(bytes, source);
  const expected =
    "an envsmith checkpoint with envsmith.obs and envsmith.train metadata";
  let obs: ObsSpec,
    env: { family?: unknown; observation_size?: unknown } | null,
    train: {
      updates?: number;
      samples?: number;
      episodes?: number;
      value_norm?: { mean: number; var: number; count: number };
      adam_t?: number;
    };
  try {
    obs = JSON.parse(imp.metadata["envsmith.obs"] ?? "null") ?? DEFAULT_OBS;
    train = JSON.parse(imp.metadata["envsmith.train"] ?? "{}");
    env = JSON.parse(imp.metadata["envsmith.env"] ?? "null");
  } catch {
    throw new PolicyContractError(
      source,
      "its envsmith metadata is not valid JSON",
      expected,
    );
  }
  try {
    checkObsSpec(obs);
  } catch (e) {
    throw new PolicyContractError(source, (e as Error).message, expected);
  }
  if (env !== null) {
    if (
      typeof env.family !== "string" ||
      env.observation_size !== imp.net.spec.inputSize
    ) {
      throw new PolicyContractError(
        source,
        `its envsmith.env metadata ${
          JSON.stringify(env)
        } does not name a family and the network's input width ${imp.net.spec.inputSize}`,
        expected,
      );
    }
  } else if (obsSize(obs) !== imp.net.spec.inputSize) {
    throw new PolicyContractError(
      source,
      `its observation layout ${JSON.stringify(obs)} has ${
        obsSize(obs)
      } values but the network reads ${imp.net.spec.inputSize}`,
      expected,
    );
  }
  const vn = train.value_norm;
  const valueNorm = vn
    ? new RunningMeanStd(vn.mean, vn.var, vn.count)
    : new RunningMeanStd(imp.valueShift, imp.valueScale ** 2);
  const ck: Checkpoint = {
    net: imp.net,
    obs: { version: obs.version, radius: obs.radius },
    valueNorm,
    counters: {
      updates: train.updates ?? 0,
      samples: train.samples ?? 0,
      episodes: train.episodes ?? 0,
    },
  };
  if (env !== null) {
    ck.env = {
      family: env.family as string,
      observationSize: env.observation_size as number,
    };
  }
  const adam = imp.metadata["envsmith.adam"];
  if (adam) {
    const raw = Buffer.from(adam, "base64");
    const copy = new Uint8Array(raw.length);
    copy.set(raw);
    const both = new Float32Array(copy.buffer, 0, copy.length >> 2);
    const size = imp.net.size;
    if (both.length !== 2 * size) {
      throw new PolicyContractError(
        source,
        `its optimiser state has ${both.length} values, expected ${2 * size}`,
        expected,
      );
    }
    ck.adam = {
      t: train.adam_t ?? 0,
      m: both.slice(0, size),
      v: both.slice(size),
    };
  }
  return ck;
}
