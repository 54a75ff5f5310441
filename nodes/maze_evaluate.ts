/**
 * The `maze.evaluate` node kind: a maze policy's solve rate on mazes.
 *
 * ```yaml
 * score: { kind: maze.evaluate, with: { policy: $last, envs: $bench, episodes: 4, seed: $seed } }
 * ```
 *
 * Parameters: `policy` (a `maze.train` value), `envs` (a `maze.generate`
 * value), `episodes` per maze (default 4; sampled actions), `greedy` (the
 * most likely action instead; default false), `seed`. Value:
 * `{ success_rate, mean_return, steps_over_optimal, timeout_share, episodes,
 * suites: { <maze>: { success_rate } }, per_instance: [{ id, suite,
 * episodes, success_rate }] }`, where a maze's suite is its name without the
 * `#k` of its goal or seed variant (the corridors' goals, the perfect
 * mazes), so `suites` has one column per named test maze. Report: the same
 * without `per_instance`, and three rendered failure cases.
 *
 * @module
 */
import * as v from "valibot";
import type { Json, NodeKind } from "@envsmith/engine/kind";
import {
  type MazeEpisode,
  mazeFailureCases,
  mazeStatistics,
} from "../families/maze/diagnosis.ts";
import { evaluateMazes, type MazePolicy } from "../families/maze/evaluate.ts";
import { MAZE_ACTIONS } from "../families/maze/maze.ts";
import { MazeRng } from "../families/maze/random.ts";
import { type Mlp, MlpWorkspace } from "../policy/mlp.ts";
import {
  MazePolicyValueSchema,
  MazesValueSchema,
  readMazePolicy,
  readMazes,
} from "./maze_io.ts";

/**
 * A maze policy from a network: actions sampled from its softmax with
 * `rng` (or the most likely action when `greedy`).
 */
export function mlpMazePolicy(
  net: Mlp,
  rng: MazeRng,
  greedy = false,
): MazePolicy {
  let ws = new MlpWorkspace(net.spec, 64);
  return (obs, n, act) => {
    if (ws.capacity < n) ws = new MlpWorkspace(net.spec, n);
    net.forward(obs, n, ws);
    const A = MAZE_ACTIONS, st = ws.stride, out = ws.out;
    for (let r = 0; r < n; r++) {
      let mx = -Infinity, arg = 0;
      for (let a = 0; a < A; a++) {
        if (out[r * st + a]! > mx) {
          mx = out[r * st + a]!;
          arg = a;
        }
      }
      if (greedy) {
        act[r] = arg;
        continue;
      }
      let z = 0;
      for (let a = 0; a < A; a++) z += Math.exp(out[r * st + a]! - mx);
      let u = rng.float() * z, pick = A - 1;
      for (let a = 0; a < A; a++) {
        u -= Math.exp(out[r * st + a]! - mx);
        if (u < 0) {
          pick = a;
          break;
        }
      }
      act[r] = pick;
    }
  };
}

/** A maze's suite: its name without a `#k` variant. */
export function mazeSuite(name: string): string {
  const i = name.indexOf("#");
  return i < 0 ? name : name.slice(0, i);
}

/** Parameters of `maze.evaluate`. */
export const MazeEvaluateParamsSchema = v.strictObject({
  policy: MazePolicyValueSchema,
  envs: MazesValueSchema,
  episodes: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(64)),
  ),
  greedy: v.optional(v.boolean()),
  seed: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(0xffffffff)),
  ),
});

/** The `maze.evaluate` kind. */
export const kind: NodeKind<v.InferOutput<typeof MazeEvaluateParamsSchema>> = {
  name: "maze.evaluate",
  description:
    "A maze policy's solve rate, return and steps against the optimum, per maze",
  params: MazeEvaluateParamsSchema,
  paramDocs: {
    policy: "a maze policy (a maze.train value)",
    envs: "the mazes (a maze.generate value)",
    episodes: "episodes per maze (default 4)",
    greedy: "play the most likely action instead of sampling (default false)",
    seed: "seed of the action sampling (default: the node's seed)",
  },
  module: import.meta.url,
  heavy: true,
  async run(p, ctx) {
    const ck = await readMazePolicy(p.policy, ctx);
    const mazes = await readMazes(p.envs, ctx);
    const n = p.episodes ?? 4, seed = p.seed ?? ctx.seed;
    const episodes: MazeEpisode[] = [];
    for (let k = 0; k < n; k++) {
      episodes.push(
        ...evaluateMazes(
          mazes,
          mlpMazePolicy(ck.net, new MazeRng(seed, k), p.greedy ?? false),
        ),
      );
      ctx.progress(k + 1, n);
    }
    const stats = mazeStatistics(episodes);
    const bySuite = new Map<string, MazeEpisode[]>(),
      byId = new Map<string, MazeEpisode[]>();
    for (const e of episodes) {
      const s = mazeSuite(e.instance);
      if (!bySuite.has(s)) bySuite.set(s, []);
      bySuite.get(s)!.push(e);
      if (!byId.has(e.instance)) byId.set(e.instance, []);
      byId.get(e.instance)!.push(e);
    }
    const rate = (es: MazeEpisode[]) =>
      es.filter((e) => e.success).length / es.length;
    const suites: { [k: string]: Json } = {};
    for (const [s, es] of bySuite) suites[s] = { success_rate: rate(es) };
    const summary: { [k: string]: Json } = {};
    for (const [k, x] of Object.entries(stats)) {
      summary[k] = Number.isFinite(x) ? x : null;
    }
    const per_instance: Json[] = [...byId].map(([id, es]) => ({
      id,
      suite: mazeSuite(id),
      episodes: es.length,
      success_rate: rate(es),
    }));
    const cases = mazeFailureCases(episodes, { count: 3, seed });
    return {
      value: { ...summary, suites, per_instance },
      report: {
        ...summary,
        suites,
        failure_cases: cases.map((c) => ({ ...c })),
      },
    };
  },
};
