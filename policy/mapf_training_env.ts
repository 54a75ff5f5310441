/**
 * MAPF-FrozenLake behind the trainer's seam ({@linkcode TrainingEnv}): the
 * batched `BatchEnv`, the observation encoder of a checkpoint's layout
 * (the WebAssembly kernel writing sparse rows straight into the SIMD
 * learner's buffer, or the TypeScript reference) and the shaped rewards of
 * `reward.ts`.
 *
 * @module
 */
import { BatchEnv } from "../mapf/batch_env.ts";
import { OUTCOME_NAMES, SUCCESS } from "../mapf/outcome.ts";
import type { InstancePool } from "../mapf/pool.ts";
import type { KernelArena } from "./kernels/arena.ts";
import { ReferenceObservationEncoder } from "./observation.ts";
import type { ObsSpec } from "./observation.ts";
import { ObservationEncoder } from "./observation_encoder.ts";
import { agentRewards, type RewardSpec } from "./reward.ts";
import type {
  ObservationRows,
  TrainingEnv,
  TrainingEnvSource,
} from "./training_env.ts";

/** Options of {@linkcode MapfTrainingEnv}. */
export interface MapfTrainingEnvOptions {
  /** Parallel environments. */
  envs: number;
  /** Base seed of episode seeds. */
  seed: number;
  /** Observation layout (the checkpoint's). */
  obs: ObsSpec;
  /** Reward coefficients. */
  reward: RewardSpec;
  /** Kernel memory shared with the learner (the kernel encoder); absent: the TypeScript reference encoder. */
  arena?: KernelArena | undefined;
}

/** MAPF-FrozenLake environments as the trainer sees them. */
export class MapfTrainingEnv implements TrainingEnv {
  /** The environments. */
  readonly env: BatchEnv;
  /** Parallel environments. */
  readonly envs: number;
  /** Agent slots per environment. */
  readonly slots: number;
  /** Values per observation row. */
  readonly observationSize: number;
  /** Stay, up, down, left, right. */
  readonly actions = 5;
  /** Pool instances. */
  readonly instances: number;
  /** The pool's longest horizon. */
  readonly maxHorizon: number;
  /** Outcome names by code. */
  readonly outcomeNames: readonly string[] = OUTCOME_NAMES;
  /** Outcome code of a success. */
  readonly successCode = SUCCESS;
  readonly done: Uint8Array;
  readonly ended: Uint8Array;
  readonly outcome: Uint8Array;
  readonly instance: Int32Array;
  readonly #enc: ObservationEncoder | ReferenceObservationEncoder;
  readonly #reward: RewardSpec;

  /** Environments over `pool`; the encoder's buffers go into `options.arena` when given. */
  constructor(pool: InstancePool, options: MapfTrainingEnvOptions) {
    const env = new BatchEnv(pool, { envs: options.envs, seed: options.seed });
    this.env = env;
    this.#enc = options.arena
      ? new ObservationEncoder(options.obs, env, { arena: options.arena })
      : new ReferenceObservationEncoder(options.obs, env);
    this.#reward = options.reward;
    this.envs = env.envs;
    this.slots = env.maxAgents;
    this.observationSize = this.#enc.size;
    this.instances = pool.count;
    let maxH = 0;
    for (let i = 0; i < pool.count; i++) {
      maxH = Math.max(maxH, pool.horizon[i]!);
    }
    this.maxHorizon = maxH;
    this.done = env.done;
    this.ended = env.ended;
    this.outcome = env.outcome;
    this.instance = env.instance;
  }

  /** The acting agents: running environment, real agent, not yet arrived. */
  activeSlots(out: Int32Array): number {
    const env = this.env, m = env.maxAgents;
    let n = 0;
    for (let e = 0; e < env.envs; e++) {
      if (env.done[e]) continue;
      const na = env.agentCount[e]!;
      for (let a = 0; a < na; a++) {
        const s = e * m + a;
        if (!env.arrived[s]) out[n++] = s;
      }
    }
    return n;
  }

  /** Sparse rows by the kernel encoder straight into the SIMD learner's buffer, dense rows otherwise. */
  observe(
    slots: Int32Array,
    n: number,
    buf: ObservationRows,
    row0: number,
  ): void {
    const enc = this.#enc;
    if (buf.sparse && enc instanceof ObservationEncoder) {
      enc.encodeSparse(slots, n, buf.sparse, row0);
    } else enc.encode(slots, n, buf.obs, row0);
  }

  step(actions: Uint8Array): number {
    return this.env.step(actions);
  }

  rewards(
    slots: Int32Array,
    n: number,
    reward: Float32Array,
    done: Uint8Array,
  ): void {
    agentRewards(this.env, slots, n, this.#reward, reward, done);
  }

  resetAll(choose: (env: number) => number): void {
    this.env.resetAll(choose);
  }

  resetDone(choose: (env: number) => number): number {
    return this.env.resetDone(choose);
  }

  /** A new episode on `instance` with the environment's next episode seed. */
  restart(env: number, instance: number): void {
    this.env.reset(env, instance, this.env.nextEpisodeSeed(env));
  }
}

/**
 * MAPF-FrozenLake's source for the trainer: environments over `pool`, with
 * the checkpoint's observation layout and the trainer's rewards.
 *
 * Not run: it needs a checkpoint and instances.
 *
 * @example
 * ```ts ignore
 * const trainer = new Trainer(ck, mapfTrainingSource(InstancePool.from(instances)), { seed: 1 });
 * ```
 */
export function mapfTrainingSource(pool: InstancePool): TrainingEnvSource {
  return {
    count: pool.count,
    create: (options) =>
      new MapfTrainingEnv(pool, {
        envs: options.envs,
        seed: options.seed,
        obs: options.obs,
        reward: options.reward,
        arena: options.arena,
      }),
    describeObservation: (obs) => `observation ${JSON.stringify(obs)}`,
  };
}
