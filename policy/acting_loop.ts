/**
 * The acting loop shared by every rollout with no learning (`rollout.ts`'s
 * evaluation rollouts and `level_scores.ts`'s scoring rollouts): `total`
 * episodes (job `j` plays instance `floor(j / per)`, reset with seed
 * `mix32(seed ^ mix32(j + 1))`) over the parallel environments of one
 * {@linkcode BatchEnv}; at every step every acting agent (not arrived, its
 * environment not done) gets one row of one policy call and an action
 * sampled by {@linkcode sampleActions}; an environment whose episode ended
 * starts the next job.
 *
 * The loop is a generator so that one loop serves a synchronous policy (the
 * in-memory network) and an asynchronous one (onnxruntime): it yields the
 * step's observation rows and takes back their logits;
 * {@linkcode runActingLoop} and {@linkcode runActingLoopAsync} drive it.
 *
 * @module
 */
import type { BatchEnv } from "../mapf/batch_env.ts";
import { mix32, type Rng } from "../mapf/rng.ts";
import { sampleActions } from "./learner.ts";
import type { ObservationEncoder } from "./observation_encoder.ts";

/** One step's request for logits: the acting agents' slots and observation rows. */
export interface ActRequest {
  /** Slot (`env * maxAgents + agent`) of each of the `n` rows. */
  slots: Int32Array;
  /** Rows. */
  n: number;
  /** Observation rows (the encoder's own memory). */
  obs: Float32Array;
}

/** Logits answering an {@linkcode ActRequest}: row `r`'s logit `k` at `logits[r * stride + k]`. */
export interface ActLogits {
  /** Logits. */
  logits: Float32Array;
  /** Values per row. */
  stride: number;
}

/** What {@linkcode actingLoop} plays and the hooks it calls. */
export interface ActingLoopOptions {
  /** The environments (their count is the parallelism). */
  env: BatchEnv;
  /** Encoder of the environments' observations. */
  enc: ObservationEncoder;
  /** Episodes in all. */
  total: number;
  /** Episodes per instance. */
  per: number;
  /** Seed of the episodes' resets. */
  seed: number;
  /** Generator of the sampled actions. */
  rng: Rng;
  /** Actions per row. */
  actions: number;
  /** Take the most likely action. @default false */
  greedy?: boolean;
  /** After environment `e` was reset for job `j`. */
  onStart?: (e: number, j: number) => void;
  /** After every step, before ended episodes are handled. */
  afterStep?: (act: Uint8Array, slots: Int32Array, n: number) => void;
  /** Environment `e` ended job `j` (before it starts the next). */
  onEnd: (e: number, j: number) => void;
  /** After every step, with episodes finished so far and the total. */
  onProgress?: (done: number, total: number) => void;
  /** Checked before every step (throws the signal's reason). */
  signal?: AbortSignal;
}

/**
 * The loop itself: yields an {@linkcode ActRequest} whenever some agent acts
 * and expects its {@linkcode ActLogits} back.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { BatchEnv, InstancePool, Rng } from "../mapf/mod.ts";
 * import { parseInstanceLines } from "../mapf/instance.ts";
 * import { DEFAULT_OBS } from "./observation.ts";
 * import { ObservationEncoder } from "./observation_encoder.ts";
 * import { runActingLoop } from "./acting_loop.ts";
 * const [inst] = parseInstanceLines(
 *   '{"width":3,"height":1,"cells":["..."],"starts":[[0,0]],"goals":[[0,2]],"horizon":5}',
 * );
 * const env = new BatchEnv(InstancePool.from([inst!]), { envs: 1 });
 * const ended: number[] = [];
 * // every row's logits favour action 4 (right): two steps to the goal
 * const right = (n: number) => {
 *   const logits = new Float32Array(n * 5);
 *   for (let r = 0; r < n; r++) logits[r * 5 + 4] = 50;
 *   return { logits, stride: 5 };
 * };
 * runActingLoop({
 *   env,
 *   enc: new ObservationEncoder(DEFAULT_OBS, env),
 *   total: 2,
 *   per: 2,
 *   seed: 1,
 *   rng: new Rng(1),
 *   actions: 5,
 *   onEnd: (e, j) => ended.push(j * 10 + env.t[e]!),
 * }, (req) => right(req.n));
 * assert.deepEqual(ended, [2, 12]); // jobs 0 and 1, two steps each
 * ```
 */
export function* actingLoop(
  o: ActingLoopOptions,
): Generator<ActRequest, void, ActLogits> {
  const { env, enc, total, per, seed, rng } = o;
  const envs = env.envs, m = env.maxAgents, S = envs * m;
  const slots = new Int32Array(S);
  const act = new Uint8Array(S),
    actTmp = new Uint8Array(S),
    logpTmp = new Float32Array(S);
  const job = new Int32Array(envs);
  let next = 0, finished = 0;
  const start = (e: number) => {
    const j = next++;
    job[e] = j;
    env.reset(e, Math.floor(j / per), mix32(seed ^ mix32(j + 1)));
    o.onStart?.(e, j);
  };
  for (let e = 0; e < envs && next < total; e++) start(e);
  while (finished < total) {
    o.signal?.throwIfAborted();
    let n = 0;
    for (let e = 0; e < envs; e++) {
      if (env.done[e]) continue;
      const na = env.agentCount[e]!;
      for (let a = 0; a < na; a++) {
        if (!env.arrived[e * m + a]) slots[n++] = e * m + a;
      }
    }
    act.fill(0);
    if (n > 0) {
      const { logits, stride } = yield { slots, n, obs: enc.encode(slots, n) };
      sampleActions(
        logits,
        stride,
        o.actions,
        n,
        rng,
        actTmp,
        logpTmp,
        o.greedy ?? false,
      );
      for (let i = 0; i < n; i++) act[slots[i]!] = actTmp[i]!;
    }
    env.step(act);
    o.afterStep?.(act, slots, n);
    for (let e = 0; e < envs; e++) {
      if (!env.ended[e]) continue;
      o.onEnd(e, job[e]!);
      finished++;
      if (next < total) start(e);
    }
    o.onProgress?.(finished, total);
  }
}

/**
 * Drive {@linkcode actingLoop} with a synchronous policy.

 * (see {@linkcode actingLoop}'s example).
 */
export function runActingLoop(
  o: ActingLoopOptions,
  policy: (req: ActRequest) => ActLogits,
): void {
  const g = actingLoop(o);
  for (let r = g.next(); !r.done; r = g.next(policy(r.value)));
}

/**
 * Drive {@linkcode actingLoop} with an asynchronous policy.

 * (see {@linkcode actingLoop}'s example).
 */
export async function runActingLoopAsync(
  o: ActingLoopOptions,
  policy: (req: ActRequest) => Promise<ActLogits>,
): Promise<void> {
  const g = actingLoop(o);
  for (let r = g.next(); !r.done; r = g.next(await policy(r.value)));
}
