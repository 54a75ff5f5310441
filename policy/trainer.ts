/**
 * Multi-agent PPO and GRPO on a family's batched environments (the seam of
 * `training_env.ts`: MAPF-FrozenLake's `mapfTrainingSource`, the maze's
 * `mazeTrainingSource`), with one policy shared by all agents (decentralised
 * execution: each agent acts on its own observation). The trainer imports no
 * family, so a train kind's code digest covers only the family it trains on.
 *
 * One **update** is a rollout followed by optimisation:
 * - `ppo`: `envs` environments run `steps` steps (ended episodes restart on
 *   a random instance of the pool); advantages by GAE(`gamma`, `lambda`) on
 *   per-agent streams, bootstrapped with the value head; value targets
 *   normalised by a running mean/std.
 * - `grpo`: `envs / group` instances are drawn and each is played `group`
 *   times (same instance, different slip and action samples) to the end; an
 *   agent's advantage is its undiscounted episode return standardised
 *   against the same agent in the other replays of its group; no critic.
 *
 * With `episodes: "once"` (PPO; what the level sampler of `level_sampler.ts`
 * runs one batch of), environment `e` plays exactly one episode on pool
 * instance `e` and the rollout lasts until every episode has ended (at most
 * the pool's longest horizon): a batch of whole episodes, one per level.
 *
 * Then `epochs` passes of clipped-objective minibatch Adam steps (see
 * `learner.ts`). Everything is seeded: the same checkpoint, pool, options
 * and seed give byte-identical weights.
 *
 * @module
 */
import { Rng } from "../mapf/rng.ts";
import type { Checkpoint } from "./checkpoint.ts";
import {
  type Kernel,
  Learner,
  type LearnerOptions,
  type PolicyLearner,
  type SampleBuffer,
  type UpdateStats,
} from "./learner.ts";
import { KernelArena } from "./kernels/arena.ts";
import { gae, groupAdvantages } from "./ppo_loss.ts";
import { accumulatePositiveAdvantages, positiveValueLoss } from "./pvl.ts";
import { type RewardSpec, rewardSpec } from "./reward_spec.ts";
import { SimdLearner } from "./simd_learner.ts";
import type { TrainingEnv, TrainingEnvSource } from "./training_env.ts";

export type { TrainingEnvOptions, TrainingEnvSource } from "./training_env.ts";

/** Training algorithm. */
export type Algo = "ppo" | "grpo";

/** Options of {@linkcode Trainer}. */
export interface TrainerOptions extends LearnerOptions {
  /** Algorithm. @default "ppo" */
  algo?: Algo;
  /** Parallel environments. @default 64 */
  envs?: number;
  /** PPO rollout length (steps per environment per update). @default 32 */
  steps?: number;
  /** GRPO group size (replays of one instance). @default 8 */
  group?: number;
  /** Discount. @default 0.99 */
  gamma?: number;
  /** GAE lambda. @default 0.95 */
  lambda?: number;
  /** Reward coefficients (defaults in `reward.ts`). */
  reward?: Partial<RewardSpec>;
  /** Seed of instance draws, action sampling, shuffles and slip. @default 0 */
  seed?: number;
  /**
   * Network maths: `simd` (WebAssembly SIMD kernels, about ten times
   * faster) or `ts` (the TypeScript reference). They agree to rounding, so
   * the same seed gives different, equally valid runs. @default "simd"
   */
  kernel?: Kernel;
  /**
   * PPO episodes: `restart` (an ended environment restarts on a random pool
   * instance; `steps` per update) or `once` (environment `e` plays one
   * episode on instance `e`, `envs` is the pool's size and an update's
   * rollout lasts until all have ended; `steps` is ignored). @default "restart"
   */
  episodes?: "restart" | "once";
}

/** One point of the training curve (one update). */
export interface CurvePoint {
  /** Updates done (including those before a resume). */
  update: number;
  /** Samples trained on (including those before a resume). */
  samples: number;
  /** Wall-clock seconds since this trainer started (not deterministic). */
  seconds: number;
  /** Training episodes that ended during this update's rollout. */
  episodes: number;
  /** Their success rate (NaN if none ended). */
  success: number;
  /** Mean reward per agent-step in the rollout. */
  reward: number;
  /** Count of each outcome among the ended episodes, by name. */
  outcomes: Record<string, number>;
  /** Optimisation statistics. */
  stats: UpdateStats;
}

/**
 * Trains a checkpoint's network in place on a pool of instances.
 *
 * @example
 * Not run: `instances` are generated levels and 50 updates take minutes; trainer_test.ts trains briefly.
 * ```ts ignore
 * const ck = initCheckpoint({ seed: 1 });
 * const trainer = new Trainer(ck, mapfTrainingSource(InstancePool.from(instances)), { seed: 1 });
 * for (let i = 0; i < 50; i++) console.log(trainer.update().success);
 * const bytes = saveCheckpoint(trainer.checkpoint());
 * ```
 */
export class Trainer {
  /** The checkpoint being trained (its net is updated in place). */
  readonly ck: Checkpoint;
  /** Options in force. */
  readonly options: Readonly<
    Required<Omit<TrainerOptions, "reward">> & { reward: RewardSpec }
  >;
  readonly #count: number;
  readonly #env: TrainingEnv;
  readonly #learner: PolicyLearner;
  readonly #rng: Rng;
  readonly #buf: SampleBuffer;
  readonly #slots: Int32Array;
  readonly #act: Uint8Array;
  readonly #actTmp: Uint8Array;
  readonly #logpTmp: Float32Array;
  readonly #valTmp: Float32Array;
  readonly #rewTmp: Float32Array;
  readonly #doneTmp: Uint8Array;
  readonly #t0 = performance.now();
  readonly #T: number;
  // PPO time-major storage (steps x slots)
  #rew = new Float32Array(0);
  #val = new Float32Array(0);
  #done = new Uint8Array(0);
  #valid = new Uint8Array(0);
  #row = new Int32Array(0);
  #adv = new Float32Array(0);
  #ret = new Float32Array(0);
  #boot = new Float32Array(0);
  // GRPO per-row slot and per-slot returns
  #rowSlot = new Int32Array(0);
  #epRet = new Float32Array(0);
  // per-instance scores (see levelScores): pool instance of each PPO sample,
  // and per pool instance the sum of positive advantages, agent-steps,
  // ended episodes and successes
  #inst = new Int32Array(0);
  #lvlPos = new Float64Array(0);
  #lvlSteps = new Float64Array(0);
  #lvlEpisodes = new Float64Array(0);
  #lvlSuccesses = new Float64Array(0);

  /**
   * A trainer for `ck` on `pool`, a family's batched environment
   * (MAPF-FrozenLake's `mapfTrainingSource(InstancePool.from(...))`, the
   * maze's `mazeTrainingSource(mazes)`). Resumes the optimiser state the
   * checkpoint carries.
   */
  constructor(
    ck: Checkpoint,
    pool: TrainingEnvSource,
    options: TrainerOptions = {},
  ) {
    if (pool.count === 0) {
      throw new RangeError("Cannot train on an empty set of instances");
    }
    const algo = options.algo ?? "ppo";
    if (algo !== "ppo" && algo !== "grpo") {
      throw new RangeError(`Unknown algo "${algo}": use "ppo" or "grpo"`);
    }
    const kernel = options.kernel ?? "simd";
    if (kernel !== "simd" && kernel !== "ts") {
      throw new RangeError(`Unknown kernel "${kernel}": use "simd" or "ts"`);
    }
    const group = options.group ?? 8;
    const episodes = options.episodes ?? "restart";
    if (episodes !== "restart" && episodes !== "once") {
      throw new RangeError(
        `Unknown episodes "${episodes}": use "restart" or "once"`,
      );
    }
    if (episodes === "once" && algo !== "ppo") {
      throw new RangeError(`episodes "once" needs algo "ppo" (got ${algo})`);
    }
    let envs = episodes === "once" ? pool.count : options.envs ?? 64;
    if (algo === "grpo") {
      if (!Number.isInteger(group) || group < 2) {
        throw new RangeError(
          `GRPO group size must be an integer >= 2 (got ${group})`,
        );
      }
      envs = Math.max(group, Math.floor(envs / group) * group);
    }
    this.options = {
      algo,
      envs,
      steps: options.steps ?? 32,
      group,
      gamma: options.gamma ?? 0.99,
      lambda: options.lambda ?? 0.95,
      seed: options.seed ?? 0,
      kernel,
      lr: options.lr ?? 3e-4,
      epochs: options.epochs ?? 4,
      minibatch: options.minibatch ?? 512,
      maxGradNorm: options.maxGradNorm ?? 0.5,
      normalizeAdvantages: options.normalizeAdvantages ?? algo === "ppo",
      targetKl: options.targetKl ?? 0,
      clip: options.clip ?? 0.2,
      valueCoef: options.valueCoef ?? (algo === "ppo" ? 0.5 : 0),
      entropyCoef: options.entropyCoef ?? 0.01,
      clipValue: options.clipValue ?? false,
      episodes,
      reward: rewardSpec(options.reward),
    };
    const o = this.options;
    if (!Number.isInteger(o.steps) || o.steps < 1) {
      throw new RangeError(`steps must be a positive integer (got ${o.steps})`);
    }
    this.ck = ck;
    this.#count = pool.count;
    this.#rng = new Rng(o.seed ^ 0x2545f491);
    // simd: one kernel memory for the MAPF encoder and the learner, so
    // observations are written straight into the sample buffer; ts: the
    // TypeScript reference throughout (same observation bytes)
    const arena = kernel === "simd" ? new KernelArena() : undefined;
    this.#env = pool.create({
      envs,
      seed: o.seed,
      obs: ck.obs,
      reward: o.reward,
      arena,
    });
    const size = this.#env.observationSize;
    if (size !== ck.net.spec.inputSize) {
      throw new RangeError(
        `The policy reads ${ck.net.spec.inputSize} values per agent but ${
          pool.describeObservation?.(ck.obs) ??
            "the environment's observation"
        } has ${size}`,
      );
    }
    if (this.#env.actions !== ck.net.spec.actions) {
      throw new RangeError(
        `The policy chooses among ${ck.net.spec.actions} actions but the environment has ${this.#env.actions}`,
      );
    }
    const S = envs * this.#env.slots;
    const maxH = this.#env.maxHorizon;
    const T = algo === "ppo" && episodes === "restart" ? o.steps : maxH;
    this.#T = T;
    // S spare rows past the samples hold the PPO bootstrap observations
    const rows = S * T + (algo === "ppo" ? S : 0);
    this.#learner = arena
      ? new SimdLearner(
        ck.net,
        { capacity: rows, actRows: S, arena },
        o,
        ck.valueNorm,
      )
      : new Learner(ck.net, o, ck.valueNorm);
    arena?.commit();
    if (ck.adam) this.#learner.loadAdam(ck.adam);
    this.#buf = this.#learner.createBuffer(rows);
    this.#slots = new Int32Array(S);
    this.#act = new Uint8Array(S);
    this.#actTmp = new Uint8Array(S);
    this.#logpTmp = new Float32Array(S);
    this.#valTmp = new Float32Array(S);
    this.#rewTmp = new Float32Array(S);
    this.#doneTmp = new Uint8Array(S);
    this.#lvlPos = new Float64Array(this.#count);
    this.#lvlSteps = new Float64Array(this.#count);
    this.#lvlEpisodes = new Float64Array(this.#count);
    this.#lvlSuccesses = new Float64Array(this.#count);
    if (algo === "ppo") {
      this.#inst = new Int32Array(T * S);
      this.#rew = new Float32Array(T * S);
      this.#val = new Float32Array(T * S);
      this.#done = new Uint8Array(T * S);
      this.#valid = new Uint8Array(T * S);
      this.#row = new Int32Array(T * S);
      this.#adv = new Float32Array(T * S);
      this.#ret = new Float32Array(T * S);
      this.#boot = new Float32Array(S);
      if (episodes === "once") this.#env.resetAll((e) => e);
      else this.#env.resetAll(() => this.#rng.int(this.#count));
    } else {
      this.#rowSlot = new Int32Array(S * T);
      this.#epRet = new Float32Array(S);
    }
  }

  /**
   * Run one update (rollout + optimisation); returns its curve point. With
   * `maxSamples` (PPO), the rollout stops after the step that reaches that
   * many agent-steps, so a budget in agent-steps is met to within one step's
   * acting agents instead of one whole update. With `learn: false` (PPO) the
   * rollout is collected and scored ({@linkcode levelScores}) but the
   * network, optimiser and counters are left as they were: robust PLR's
   * rollouts on new levels.
   */
  update(options: { maxSamples?: number; learn?: boolean } = {}): CurvePoint {
    const tally = {
      episodes: 0,
      success: 0,
      reward: 0,
      outcomes: {} as Record<string, number>,
    };
    if (options.learn === false && this.options.algo !== "ppo") {
      throw new RangeError("an update without learning needs algo ppo");
    }
    this.#buf.count = 0;
    this.#learner.pull();
    if (this.options.algo === "ppo") {
      this.#collectPpo(tally, options.maxSamples ?? Infinity);
    } else this.#collectGrpo(tally);
    const n = this.#buf.count;
    const learn = options.learn ?? true;
    const c = this.ck.counters;
    if (!learn) {
      return {
        update: c.updates,
        samples: c.samples,
        seconds: (performance.now() - this.#t0) / 1000,
        episodes: tally.episodes,
        success: tally.episodes > 0 ? tally.success / tally.episodes : NaN,
        reward: n > 0 ? tally.reward / n : 0,
        outcomes: tally.outcomes,
        stats: {
          samples: n,
          steps: 0,
          loss: 0,
          policyLoss: 0,
          valueLoss: 0,
          entropy: 0,
          approxKl: 0,
          clipFrac: 0,
          gradNorm: 0,
        },
      };
    }
    const stats = this.#learner.update(this.#buf, this.#rng);
    c.updates++;
    c.samples += n;
    c.episodes += tally.episodes;
    this.ck.adam = this.#learner.adamState();
    return {
      update: c.updates,
      samples: c.samples,
      seconds: (performance.now() - this.#t0) / 1000,
      episodes: tally.episodes,
      success: tally.episodes > 0 ? tally.success / tally.episodes : NaN,
      reward: n > 0 ? tally.reward / n : 0,
      outcomes: tally.outcomes,
      stats,
    };
  }

  /** The checkpoint with the current weights, normaliser, optimiser state and counters. */
  checkpoint(): Checkpoint {
    return this.ck;
  }

  /**
   * Per pool instance, what training saw of it since this trainer started:
   * ended `episodes` and their `successes`, the acting agent-steps taken on
   * it (`steps`, PPO) and `pvl`, the positive value loss of Jiang et al.
   * 2021 (`pvl.ts`: the mean over those agent-steps of `max(A_t, 0)` with
   * `A_t` the GAE advantage before normalisation; 0 without steps; GRPO has
   * no critic and leaves `steps` and `pvl` at 0). Level replay ranks
   * instances by it; `policy/level_scores.ts` measures it with the same
   * function in a rollout without learning.
   */
  levelScores(): {
    episodes: Float64Array;
    successes: Float64Array;
    steps: Float64Array;
    pvl: Float64Array;
  } {
    const pvl = positiveValueLoss(this.#lvlPos, this.#lvlSteps);
    return {
      episodes: this.#lvlEpisodes.slice(),
      successes: this.#lvlSuccesses.slice(),
      steps: this.#lvlSteps.slice(),
      pvl,
    };
  }

  /** Collect the acting streams (MAPF: running env, real agent, not yet arrived) into `#slots`. */
  #activeSlots(): number {
    return this.#env.activeSlots(this.#slots);
  }

  /**
   * Encode, run the network and sample actions for the `n` active slots,
   * storing rows in the sample buffer. Returns the first row index.
   */
  #act1(n: number): number {
    const buf = this.#buf;
    const row0 = buf.count;
    this.#encode(n, row0);
    this.#learner.act(
      buf,
      row0,
      n,
      this.#rng,
      this.#actTmp,
      this.#logpTmp,
      this.#valTmp,
    );
    this.#act.fill(0);
    for (let i = 0; i < n; i++) {
      const r = row0 + i;
      this.#act[this.#slots[i]!] = this.#actTmp[i]!;
      buf.actions[r] = this.#actTmp[i]!;
      buf.logp[r] = this.#logpTmp[i]!;
      buf.values[r] = this.#valTmp[i]!;
    }
    buf.count += n;
    return row0;
  }

  /**
   * Observation rows of the `n` slots in `#slots` into buffer rows `row0 ..`
   * (MAPF: sparse rows written by the kernel encoder straight into the SIMD
   * learner's buffer, dense rows otherwise).
   */
  #encode(n: number, row0: number): void {
    this.#env.observe(this.#slots, n, this.#buf, row0);
  }

  #tallyEnded(
    tally: {
      episodes: number;
      success: number;
      outcomes: Record<string, number>;
    },
  ): void {
    const env = this.#env;
    for (let e = 0; e < env.envs; e++) {
      if (!env.ended[e]) continue;
      const oc = env.outcome[e]!;
      tally.episodes++;
      const success = oc === env.successCode;
      if (success) tally.success++;
      const inst = env.instance[e]!;
      this.#lvlEpisodes[inst] = this.#lvlEpisodes[inst]! + 1;
      if (success) {
        this.#lvlSuccesses[inst] = this.#lvlSuccesses[inst]! + 1;
      }
      const name = env.outcomeNames[oc]!;
      tally.outcomes[name] = (tally.outcomes[name] ?? 0) + 1;
    }
  }

  #collectPpo(
    tally: {
      episodes: number;
      success: number;
      reward: number;
      outcomes: Record<string, number>;
    },
    maxSamples: number,
  ): void {
    const o = this.options, env = this.#env, buf = this.#buf;
    const S = env.envs * env.slots;
    let T = this.#T;
    const once = o.episodes === "once";
    const vm = this.ck.valueNorm.mean, vs = this.ck.valueNorm.std;
    this.#valid.fill(0);
    for (let t = 0; t < T; t++) {
      const n = this.#activeSlots();
      if (once && n === 0) {
        T = t; // every episode has ended
        break;
      }
      const row0 = this.#act1(n);
      env.step(this.#act);
      env.rewards(this.#slots, n, this.#rewTmp, this.#doneTmp);
      for (let i = 0; i < n; i++) {
        const idx = t * S + this.#slots[i]!;
        this.#valid[idx] = 1;
        this.#rew[idx] = this.#rewTmp[i]!;
        this.#done[idx] = this.#doneTmp[i]!;
        this.#val[idx] = buf.values[row0 + i]! * vs + vm;
        this.#row[idx] = row0 + i;
        this.#inst[idx] = env.instance[(this.#slots[i]! / env.slots) | 0]!;
        tally.reward += this.#rewTmp[i]!;
      }
      this.#tallyEnded(tally);
      if (!once) env.resetDone(() => this.#rng.int(this.#count));
      if (buf.count >= maxSamples) {
        T = t + 1; // the budget is spent: a shorter rollout
        break;
      }
    }
    // bootstrap values of the agents still acting
    this.#boot.fill(0);
    const n = this.#activeSlots();
    if (n > 0) {
      // encode into the spare rows past the filled part of the buffer
      this.#encode(n, buf.count);
      this.#learner.values(buf, buf.count, n, this.#valTmp);
      for (let i = 0; i < n; i++) {
        this.#boot[this.#slots[i]!] = this.#valTmp[i]! * vs + vm;
      }
    }
    gae(
      this.#rew,
      this.#val,
      this.#done,
      this.#valid,
      this.#boot,
      T,
      S,
      o.gamma,
      o.lambda,
      this.#adv,
      this.#ret,
    );
    for (let idx = 0; idx < T * S; idx++) {
      if (!this.#valid[idx]) continue;
      const r = this.#row[idx]!;
      buf.advantages[r] = this.#adv[idx]!;
      buf.returns[r] = this.#ret[idx]!;
    }
    accumulatePositiveAdvantages(
      this.#adv,
      this.#valid,
      this.#inst,
      T * S,
      this.#lvlPos,
      this.#lvlSteps,
    );
  }

  #collectGrpo(
    tally: {
      episodes: number;
      success: number;
      reward: number;
      outcomes: Record<string, number>;
    },
  ): void {
    const o = this.options, env = this.#env, buf = this.#buf;
    const G = o.group, groups = env.envs / G, m = env.slots;
    for (let g = 0; g < groups; g++) {
      const inst = this.#rng.int(this.#count);
      for (let k = 0; k < G; k++) env.restart(g * G + k, inst);
    }
    this.#epRet.fill(0);
    for (;;) {
      const n = this.#activeSlots();
      if (n === 0) break;
      const row0 = this.#act1(n);
      env.step(this.#act);
      env.rewards(this.#slots, n, this.#rewTmp, this.#doneTmp);
      for (let i = 0; i < n; i++) {
        const s = this.#slots[i]!;
        this.#rowSlot[row0 + i] = s;
        this.#epRet[s] = this.#epRet[s]! + this.#rewTmp[i]!;
        tally.reward += this.#rewTmp[i]!;
      }
      this.#tallyEnded(tally);
    }
    // group-relative advantages per (group, agent) across the G replays
    const R = new Float32Array(groups * m * G),
      A = new Float32Array(groups * m * G);
    for (let g = 0; g < groups; g++) {
      for (let a = 0; a < m; a++) {
        for (let k = 0; k < G; k++) {
          R[(g * m + a) * G + k] = this.#epRet[(g * G + k) * m + a]!;
        }
      }
    }
    groupAdvantages(R, groups * m, G, A);
    const advSlot = this.#epRet; // reuse: per-slot advantage
    for (let g = 0; g < groups; g++) {
      for (let a = 0; a < m; a++) {
        for (let k = 0; k < G; k++) {
          advSlot[(g * G + k) * m + a] = A[(g * m + a) * G + k]!;
        }
      }
    }
    for (let r = 0; r < buf.count; r++) {
      buf.advantages[r] = advSlot[this.#rowSlot[r]!]!;
      buf.returns[r] = 0;
    }
  }
}
