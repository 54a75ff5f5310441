/**
 * The trainer's seam to a batched environment: the smallest surface
 * {@linkcode Trainer} (`trainer.ts`) needs to run PPO or GRPO on many
 * environments at once, whatever their dynamics (MAPF-FrozenLake's
 * `BatchEnv` through `mapf_training_env.ts`, the maze family's
 * `MazeBatchEnv` directly).
 *
 * Streams: environment `e` has `slots` streams (agents), stream
 * `e * slots + a`; each acting stream gets one observation row, one action
 * and one reward per step. An environment's episode has ended when
 * `done[e]` is 1; `ended[e]` is 1 only in the step in which it ended, and
 * then `outcome[e]` names how (`outcomeNames`, `successCode`).
 *
 * @module
 */
import type { KernelArena } from "./kernels/arena.ts";
import type { SparseRows } from "./learner.ts";
import type { ObsSpec } from "./observation.ts";
import type { RewardSpec } from "./reward_spec.ts";

/** The part of a sample buffer an environment writes observations into. */
export interface ObservationRows {
  /** Dense rows (`observationSize` values each). */
  readonly obs: Float32Array;
  /** Sparse rows, when the learner reads them so (the SIMD learner's buffers). */
  readonly sparse?: SparseRows | undefined;
}

/** What the trainer reads from and writes to a batched environment. */
export interface TrainingEnv {
  /** Parallel environments. */
  readonly envs: number;
  /** Streams (agents) per environment. */
  readonly slots: number;
  /** Values per observation row. */
  readonly observationSize: number;
  /** Number of discrete actions. */
  readonly actions: number;
  /** Number of instances environments are reset to. */
  readonly instances: number;
  /** The longest episode among the instances, in steps. */
  readonly maxHorizon: number;
  /** Outcome names by code. */
  readonly outcomeNames: readonly string[];
  /** The outcome code of a success. */
  readonly successCode: number;
  /** 1 once an environment's episode has ended (until reset). */
  readonly done: Uint8Array;
  /** 1 for environments whose episode ended in the latest step. */
  readonly ended: Uint8Array;
  /** Outcome code of each environment. */
  readonly outcome: Uint8Array;
  /** Instance of each environment. */
  readonly instance: Int32Array;
  /** The streams that act in the next step, into `out`; returns their count. */
  activeSlots(out: Int32Array): number;
  /**
   * Observation rows of the streams `slots[0..n)` into rows `row0 ..` of
   * `buf.obs` (or of its sparse rows, when the environment writes them).
   */
  observe(
    slots: Int32Array,
    n: number,
    buf: ObservationRows,
    row0: number,
  ): void;
  /** One step; `actions` holds one action per stream (`envs * slots`). */
  step(actions: Uint8Array): unknown;
  /**
   * Rewards and episode-end flags (no bootstrapping past them) of the
   * streams `slots[0..n)` that acted in the latest step; call right after
   * `step`.
   */
  rewards(
    slots: Int32Array,
    n: number,
    reward: Float32Array,
    done: Uint8Array,
  ): void;
  /** Reset every environment, `choose(e)` naming its instance. */
  resetAll(choose: (env: number) => number): void;
  /** Reset the ended environments, `choose(e)` naming the instance. */
  resetDone(choose: (env: number) => number): unknown;
  /** Start environment `env` again on `instance` (a GRPO group's replays). */
  restart(env: number, instance: number): void;
}

/** What the trainer gives a source when it builds its environments. */
export interface TrainingEnvOptions {
  /** Parallel environments. */
  readonly envs: number;
  /** Base seed of episode seeds. */
  readonly seed: number;
  /** The checkpoint's observation layout (a family with its own view ignores it). */
  readonly obs: ObsSpec;
  /** The trainer's reward coefficients (a family with its own reward ignores them). */
  readonly reward: RewardSpec;
  /**
   * Kernel memory shared with the SIMD learner, so observations can be
   * written straight into its sample buffer; absent with the TypeScript
   * kernel.
   */
  readonly arena?: KernelArena | undefined;
}

/**
 * A family's batched environment for the trainer: its instance count and a
 * builder of `envs` environments. MAPF-FrozenLake's is
 * `mapfTrainingSource` (`mapf_training_env.ts`), the maze's
 * `mazeTrainingSource`; the trainer imports neither, so a kind's code
 * digest covers only the family it trains on.
 */
export interface TrainingEnvSource {
  /** Instances the environments are reset to. */
  readonly count: number;
  /** `envs` environments, seeded. */
  create(options: TrainingEnvOptions): TrainingEnv;
  /**
   * The observation named in an error when the policy's input size does
   * not match (absent: "the environment's observation").
   */
  describeObservation?(obs: ObsSpec): string;
}
