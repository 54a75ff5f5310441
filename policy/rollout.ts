/**
 * Batched rollouts of a policy over many instances: every agent of every
 * parallel environment goes into one policy call per step. Produces
 * per-episode metrics, aggregates (overall and per suite) and, optionally,
 * the trajectories in mapf's binary encoding (one blob).
 *
 * Metrics (MAPF literature definitions; agents stay on their goals once
 * there, so an agent's cost is its arrival time):
 * - `success_rate`, and `outcome_rates` for every outcome (`success`,
 *   `hole`, `vertex_collision`, `edge_collision`, `timeout`, `invalid_plan`);
 * - `soc_ratio`: achieved sum-of-costs / reference sum-of-costs, mean over
 *   successful episodes whose instance has a reference (>= 1 means worse
 *   than the solver); `efficiency` is its inverse per episode (reference /
 *   achieved, the "path efficiency"), also a mean over successes;
 * - `makespan`: mean over successes; `steps`: mean over all episodes.
 *
 * @module
 */
import { BatchEnv } from "../mapf/batch_env.ts";
import type { Instance } from "../mapf/instance.ts";
import {
  EV_REACHED,
  OUTCOME_NAMES,
  type OutcomeName,
  SUCCESS,
} from "../mapf/outcome.ts";
import { InstancePool } from "../mapf/pool.ts";
import { mix32 } from "../mapf/rng.ts";
import { encodeTrajectories, TrajectoryRecorder } from "../mapf/trajectory.ts";
import { type ActingLoopOptions, runActingLoopAsync } from "./acting_loop.ts";
import { type Mlp, MlpWorkspace } from "./mlp.ts";
import type { ObsSpec } from "./observation.ts";
import { ObservationEncoder } from "./observation_encoder.ts";
import type { OnnxPolicy } from "./onnx_policy.ts";
import { Rng } from "../mapf/rng.ts";

/** Anything that maps observation rows to action logits in batches. */
export interface PolicyRunner {
  /** Values per observation row. */
  readonly inputSize: number;
  /**
   * Logits of `n` rows; row `r`'s logit for action `k` is
   * `logits[r * stride + k]`.
   */
  logits(
    obs: Float32Array,
    n: number,
  ): Promise<{ logits: Float32Array; stride: number }>;
}

/** A {@linkcode PolicyRunner} over an ONNX policy (onnxruntime, one call per step). */
export function onnxRunner(policy: OnnxPolicy): PolicyRunner {
  return {
    inputSize: policy.inputSize,
    async logits(obs, n) {
      const out = await policy.run(obs, n);
      return { logits: out.logits, stride: policy.actions };
    },
  };
}

/** A {@linkcode PolicyRunner} over an in-memory network (the TS forward pass). */
export function mlpRunner(net: Mlp): PolicyRunner {
  let ws: MlpWorkspace | undefined;
  return {
    inputSize: net.spec.inputSize,
    logits(obs, n) {
      if (!ws || ws.capacity < n) {
        ws = new MlpWorkspace(net.spec, Math.max(n, 64));
      }
      net.forward(obs, n, ws);
      return Promise.resolve({ logits: ws.out, stride: ws.stride });
    },
  };
}

/** Options of {@linkcode rollout}. */
export interface RolloutOptions {
  /** Observation layout the policy reads. */
  obs: ObsSpec;
  /** Episodes per instance. @default 1 */
  episodes?: number;
  /** Parallel environments. @default 256 */
  envs?: number;
  /** Seed of action sampling and slip. @default 0 */
  seed?: number;
  /** Take the most likely action instead of sampling. @default false */
  greedy?: boolean;
  /** Record trajectories (mapf binary encoding). @default true */
  record?: boolean;
  /** Called after each policy step with episodes finished so far and the total. */
  onProgress?: (done: number, total: number) => void;
  /** Stops the rollout early (throws the signal's reason). */
  signal?: AbortSignal;
}

/** Metrics of one episode. */
export interface EpisodeResult {
  /** Instance id. */
  instance: string;
  /** Suite of the instance, if any. */
  suite: string | null;
  /** Episode number for this instance (0-based). */
  episode: number;
  /** Outcome. */
  outcome: OutcomeName;
  /** Steps taken. */
  steps: number;
  /** Achieved sum-of-costs (successes only). */
  soc: number | null;
  /** Achieved makespan (successes only). */
  makespan: number | null;
  /** Reference sum-of-costs of the instance, if known. */
  ref_soc: number | null;
  /** Reference makespan, if known. */
  ref_makespan: number | null;
}

/** Aggregate metrics of a set of episodes. */
export interface RolloutSummary {
  /** Episodes. */
  episodes: number;
  /** Fraction that succeeded. */
  success_rate: number;
  /** Fraction of each outcome (every outcome name present, 0 if none). */
  outcome_rates: Record<string, number>;
  /** Mean achieved/reference sum-of-costs over successes with a reference (null if none). */
  soc_ratio: number | null;
  /** Mean reference/achieved sum-of-costs over successes with a reference (null if none). */
  efficiency: number | null;
  /** Mean makespan over successes (null if none). */
  makespan: number | null;
  /** Mean steps over all episodes. */
  steps: number;
}

/** What {@linkcode rollout} returns. */
export interface RolloutResult {
  /** Per-episode metrics, in the order episodes finished (= trajectory order). */
  episodes: EpisodeResult[];
  /** Aggregate over all episodes. */
  summary: RolloutSummary;
  /** Aggregates per suite (instances without a suite are under `""`). */
  suites: Record<string, RolloutSummary>;
  /** Trajectories, encoded with mapf's `encodeTrajectories`, if recorded. */
  trajectories?: Uint8Array;
}

/**
 * Play every instance `episodes` times with `policy`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseInstanceLines } from "../mapf/instance.ts";
 * import { initCheckpoint } from "./checkpoint.ts";
 * import { mlpRunner, rollout } from "./rollout.ts";
 * const instances = parseInstanceLines(
 *   '{"id":"a","width":4,"height":1,"cells":["...."],"starts":[[0,0]],"goals":[[0,3]],"horizon":12}',
 * );
 * const ck = initCheckpoint({ seed: 1, hidden: [8, 8] });
 * const res = await rollout(mlpRunner(ck.net), instances, { obs: ck.obs, episodes: 2 });
 * assert.equal(res.summary.episodes, 2);
 * assert.ok(res.summary.success_rate >= 0 && res.summary.success_rate <= 1);
 * ```
 */
export async function rollout(
  policy: PolicyRunner,
  instances: readonly Instance[],
  options: RolloutOptions,
): Promise<RolloutResult> {
  const perInstance = options.episodes ?? 1;
  const seed = options.seed ?? 0;
  const greedy = options.greedy ?? false;
  const record = options.record ?? true;
  const total = instances.length * perInstance;
  if (!Number.isInteger(perInstance) || perInstance < 1) {
    throw new RangeError(
      `episodes must be a positive integer (got ${perInstance})`,
    );
  }
  if (total === 0) return { episodes: [], summary: summarize([]), suites: {} };
  const pool = InstancePool.from(instances);
  const envs = Math.max(1, Math.min(options.envs ?? 256, total));
  const env = new BatchEnv(pool, { envs, seed });
  const enc = new ObservationEncoder(options.obs, env);
  if (enc.size !== policy.inputSize) {
    throw new RangeError(
      `The policy reads ${policy.inputSize} values per agent but observation ${
        JSON.stringify(options.obs)
      } has ${enc.size}`,
    );
  }
  const m = env.maxAgents, S = envs * m;
  const rec = record
    ? new TrajectoryRecorder(env, instances.map((i) => i.id))
    : undefined;
  const arrival = new Int32Array(S);
  const results: EpisodeResult[] = [];
  const onStart = (e: number) => {
    for (let a = 0; a < m; a++) arrival[e * m + a] = 0;
  };
  const afterStep = (act: Uint8Array) => {
    rec?.record(act);
    for (let e = 0; e < envs; e++) {
      if (env.done[e] && !env.ended[e]) continue;
      const na = env.agentCount[e]!;
      for (let a = 0; a < na; a++) {
        if (env.events[e * m + a]! & EV_REACHED) arrival[e * m + a] = env.t[e]!;
      }
    }
  };
  const onEnd = (e: number, j: number) => {
    const instance = instances[Math.floor(j / perInstance)]!;
    const ok = env.outcome[e] === SUCCESS;
    const na = env.agentCount[e]!;
    let soc = 0;
    for (let a = 0; a < na; a++) soc += arrival[e * m + a]!;
    results.push({
      instance: instance.id,
      suite: instance.suite ?? null,
      episode: j % perInstance,
      outcome: OUTCOME_NAMES[env.outcome[e]!]!,
      steps: env.t[e]!,
      soc: ok ? soc : null,
      makespan: ok ? env.t[e]! : null,
      ref_soc: instance.reference?.soc ?? null,
      ref_makespan: instance.reference?.makespan ?? null,
    });
  };
  const loop: ActingLoopOptions = {
    env,
    enc,
    total,
    per: perInstance,
    seed,
    rng: new Rng(mix32(seed ^ 0x68e31da4)),
    actions: 5,
    greedy,
    onStart,
    afterStep,
    onEnd,
  };
  if (options.onProgress) loop.onProgress = options.onProgress;
  if (options.signal) loop.signal = options.signal;
  await runActingLoopAsync(loop, ({ obs, n }) => policy.logits(obs, n));
  const suites: Record<string, RolloutSummary> = {};
  const bySuite = new Map<string, EpisodeResult[]>();
  for (const r of results) {
    const k = r.suite ?? "";
    if (!bySuite.has(k)) bySuite.set(k, []);
    bySuite.get(k)!.push(r);
  }
  for (const k of [...bySuite.keys()].sort()) {
    suites[k] = summarize(bySuite.get(k)!);
  }
  const out: RolloutResult = {
    episodes: results,
    summary: summarize(results),
    suites,
  };
  if (rec) out.trajectories = encodeTrajectories(rec.take());
  return out;
}

/** Aggregate metrics of episode results (see the module documentation). */
export function summarize(results: readonly EpisodeResult[]): RolloutSummary {
  const n = results.length;
  const outcome_rates: Record<string, number> = {};
  for (const name of OUTCOME_NAMES) {
    if (name !== "running") outcome_rates[name] = 0;
  }
  let steps = 0, succ = 0, mk = 0, ratio = 0, eff = 0, withRef = 0;
  for (const r of results) {
    outcome_rates[r.outcome] = (outcome_rates[r.outcome] ?? 0) + 1;
    steps += r.steps;
    if (r.outcome === "success") {
      succ++;
      mk += r.makespan ?? 0;
      if (r.ref_soc !== null && r.soc !== null && r.soc > 0 && r.ref_soc > 0) {
        withRef++;
        ratio += r.soc / r.ref_soc;
        eff += r.ref_soc / r.soc;
      }
    }
  }
  for (const k of Object.keys(outcome_rates)) {
    outcome_rates[k] = n > 0 ? outcome_rates[k]! / n : 0;
  }
  return {
    episodes: n,
    success_rate: n > 0 ? succ / n : 0,
    outcome_rates,
    soc_ratio: withRef > 0 ? ratio / withRef : null,
    efficiency: withRef > 0 ? eff / withRef : null,
    makespan: succ > 0 ? mk / succ : null,
    steps: n > 0 ? steps / n : 0,
  };
}
