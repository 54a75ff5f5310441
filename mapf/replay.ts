/**
 * Run a joint plan (per-agent action lists, e.g. from a solver or an LLM)
 * through the dynamics and get the {@linkcode Episode}.
 *
 * @module
 */
import { BatchEnv } from "./batch_env.ts";
import { actionBetween } from "./grid.ts";
import {
  type CompiledInstance,
  compileInstance,
  type Instance,
} from "./instance.ts";
import { InstancePool } from "./pool.ts";
import { type Episode, TrajectoryRecorder } from "./trajectory.ts";

/** Options of {@linkcode replayPlan}. */
export interface ReplayOptions {
  /** Episode seed (slip RNG). @default 0 */
  seed?: number;
  /** Ignore slip (replay solver plans exactly). @default false */
  noSlip?: boolean;
  /** Instance id recorded in the episode. @default the instance's id, or "" */
  id?: string;
}

/**
 * Execute `plan[agent][t]` (actions `0..4`) on an instance until the episode
 * ends; agents whose list is exhausted stay. Returns the episode.
 */
export function replayPlan(
  instance: Instance | CompiledInstance,
  plan: readonly (readonly number[])[],
  options: ReplayOptions = {},
): Episode {
  const compiled = "grid" in instance ? instance : compileInstance(instance);
  const id = options.id ?? ("id" in instance ? instance.id : "");
  const env = new BatchEnv(new InstancePool([compiled]), {
    envs: 1,
    noSlip: options.noSlip ?? false,
  });
  env.reset(0, 0, options.seed ?? 0);
  const rec = new TrajectoryRecorder(env, [id]);
  const n = compiled.agents;
  if (plan.length !== n) {
    throw new RangeError(
      `plan has ${plan.length} agents; the instance has ${n}`,
    );
  }
  const actions = new Uint8Array(env.maxAgents);
  for (let t = 0; env.done[0] === 0; t++) {
    for (let a = 0; a < n; a++) actions[a] = plan[a]![t] ?? 0;
    env.step(actions);
    rec.record(actions);
  }
  return rec.take()[0]!;
}

/** Convert paths (cells per time, start first) into per-agent action lists. */
export function pathsToPlan(
  paths: readonly ArrayLike<number>[],
  width: number,
): number[][] {
  return paths.map((path) => {
    const acts: number[] = [];
    for (let t = 1; t < path.length; t++) {
      const a = actionBetween(path[t - 1]!, path[t]!, width);
      if (a < 0) {
        throw new RangeError(
          `path jumps from cell ${path[t - 1]} to ${path[t]} at step ${t}`,
        );
      }
      acts.push(a);
    }
    return acts;
  });
}
