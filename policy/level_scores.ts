/**
 * Per-instance scores of a policy, measured by rolling it out with no
 * learning: what level-replay engineers rank levels by and what a probing
 * engineer picks a configuration by.
 *
 * Every instance is played `episodes` times to the end (actions sampled,
 * seeded). For every episode and agent the rewards (the trainer's reward
 * spec) and the value head's estimates (denormalised by the checkpoint's
 * value normaliser) give GAE(`gamma`, `lambda`) advantages, as the PPO
 * trainer computes them; an episode's end is terminal (no bootstrap).
 *
 * - `pvl`: positive value loss (Jiang et al. 2021), the mean over the
 *   instance's agent-steps of `max(A_t, 0)`.
 * - `successes` / `episodes`, and `agentSteps`: the cost, every acting
 *   agent's step counted once.
 *
 * The advantages come from the trainer's own GAE (`ppo_loss.ts`) and the
 * PVL from the function the trainer accumulates it with (`pvl.ts`), so a
 * level's score means the same whether it was last seen in training or in a
 * scoring rollout.
 *
 * @module
 */
import { BatchEnv } from "../mapf/batch_env.ts";
import type { Instance } from "../mapf/instance.ts";
import { SUCCESS } from "../mapf/outcome.ts";
import { InstancePool } from "../mapf/pool.ts";
import { mix32, Rng } from "../mapf/rng.ts";
import type { Checkpoint } from "./checkpoint.ts";
import { runActingLoop } from "./acting_loop.ts";
import { MlpWorkspace } from "./mlp.ts";
import { ObservationEncoder } from "./observation_encoder.ts";
import { gae } from "./ppo_loss.ts";
import { accumulatePositiveAdvantages, positiveValueLoss } from "./pvl.ts";
import { agentRewards, type RewardSpec, rewardSpec } from "./reward.ts";

/** Scores of one instance. */
export interface LevelScore {
  /** Episodes played. */
  episodes: number;
  /** Of which successful. */
  successes: number;
  /** Agent-steps taken (acting agents only). */
  agentSteps: number;
  /** Mean positive GAE advantage per agent-step (0 when no step was taken). */
  pvl: number;
}

/** Options of {@linkcode scoreLevels}. */
export interface ScoreLevelsOptions {
  /** Episodes per instance. @default 1 */
  episodes?: number;
  /** Seed of actions and slip. @default 0 */
  seed?: number;
  /** Reward coefficients (as the trainer's). */
  reward?: Partial<RewardSpec>;
  /** Discount. @default 0.99 */
  gamma?: number;
  /** GAE lambda. @default 0.95 */
  lambda?: number;
  /** Parallel environments. @default 128 */
  envs?: number;
}

/**
 * Roll `ck` out on `instances` with no learning and score every instance.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseInstanceLines } from "../mapf/instance.ts";
 * import { initCheckpoint } from "./checkpoint.ts";
 * import { scoreLevels } from "./level_scores.ts";
 * const instances = parseInstanceLines(
 *   '{"id":"a","width":4,"height":1,"cells":["...."],"starts":[[0,0]],"goals":[[0,3]],"horizon":12}',
 * );
 * const ck = initCheckpoint({ seed: 1, hidden: [8, 8] });
 * const [s] = scoreLevels(ck, instances, { episodes: 2, seed: 1 });
 * assert.equal(s!.episodes, 2);
 * assert.ok(s!.agentSteps >= 2 * 3 && s!.pvl >= 0); // at least 3 steps each
 * ```
 */
export function scoreLevels(
  ck: Checkpoint,
  instances: readonly Instance[],
  options: ScoreLevelsOptions = {},
): LevelScore[] {
  const per = options.episodes ?? 1;
  if (!Number.isInteger(per) || per < 1) {
    throw new RangeError(`episodes must be a positive integer (got ${per})`);
  }
  const out: LevelScore[] = instances.map(() => ({
    episodes: 0,
    successes: 0,
    agentSteps: 0,
    pvl: 0,
  }));
  const total = instances.length * per;
  if (total === 0) return out;
  const seed = (options.seed ?? 0) >>> 0;
  const gamma = options.gamma ?? 0.99, lambda = options.lambda ?? 0.95;
  const spec = rewardSpec(options.reward);
  const pool = InstancePool.from([...instances]);
  const envs = Math.max(1, Math.min(options.envs ?? 128, total));
  const env = new BatchEnv(pool, { envs, seed });
  const enc = new ObservationEncoder(ck.obs, env);
  const net = ck.net;
  if (enc.size !== net.spec.inputSize) {
    throw new RangeError(
      `The policy reads ${net.spec.inputSize} values per agent but observation ${
        JSON.stringify(ck.obs)
      } has ${enc.size}`,
    );
  }
  const m = env.maxAgents, S = envs * m;
  const ws = new MlpWorkspace(net.spec, S);
  const vm = ck.valueNorm.mean, vs = ck.valueNorm.std;
  const A = net.spec.actions;
  const rew = new Float32Array(S), done = new Uint8Array(S);
  // per slot: the episode's rewards, values and terminal flags so far
  const rs: number[][] = Array.from({ length: S }, () => []);
  const vals: number[][] = Array.from({ length: S }, () => []);
  const ds: number[][] = Array.from({ length: S }, () => []);
  const pos = new Float64Array(instances.length);
  const steps = new Float64Array(instances.length);
  let adv = new Float32Array(0), ret = new Float32Array(0);
  const onStart = (e: number) => {
    for (let a = 0; a < m; a++) {
      rs[e * m + a]!.length = 0;
      vals[e * m + a]!.length = 0;
      ds[e * m + a]!.length = 0;
    }
  };
  const onEnd = (e: number, j: number) => {
    const inst = Math.floor(j / per);
    const sc = out[inst]!;
    sc.episodes++;
    if (env.outcome[e] === SUCCESS) sc.successes++;
    for (let a = 0; a < env.agentCount[e]!; a++) {
      const s = e * m + a, L = rs[s]!.length;
      if (L === 0) continue;
      if (adv.length < L) {
        adv = new Float32Array(L);
        ret = new Float32Array(L);
      }
      // one slot over the episode's L steps; it ended, so no bootstrap
      gae(
        Float32Array.from(rs[s]!),
        Float32Array.from(vals[s]!),
        Uint8Array.from(ds[s]!),
        new Uint8Array(L).fill(1),
        new Float32Array(1),
        L,
        1,
        gamma,
        lambda,
        adv,
        ret,
      );
      accumulatePositiveAdvantages(adv, null, inst, L, pos, steps);
      sc.agentSteps += L;
    }
  };
  const afterStep = (_act: Uint8Array, slots: Int32Array, n: number) => {
    if (n === 0) return;
    agentRewards(env, slots, n, spec, rew, done);
    for (let i = 0; i < n; i++) {
      rs[slots[i]!]!.push(rew[i]!);
      ds[slots[i]!]!.push(done[i]!);
    }
  };
  runActingLoop({
    env,
    enc,
    total,
    per,
    seed,
    rng: new Rng(mix32(seed ^ 0x5c0e1e7a)),
    actions: A,
    onStart,
    afterStep,
    onEnd,
  }, ({ slots, n, obs }) => {
    net.forward(obs, n, ws);
    const o = ws.out, stride = ws.stride;
    for (let i = 0; i < n; i++) {
      vals[slots[i]!]!.push(o[i * stride + A]! * vs + vm);
    }
    return { logits: o, stride };
  });
  const pvl = positiveValueLoss(pos, steps);
  for (let i = 0; i < out.length; i++) out[i]!.pvl = pvl[i]!;
  return out;
}
