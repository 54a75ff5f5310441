/**
 * Plays a policy once on each of a set of mazes, batched, and reports one
 * {@linkcode MazeEpisode} per maze.
 *
 * @module
 */
import { MAZE_OBS_SIZE, MAZE_SUCCESS, MazeBatchEnv } from "./batch_env.ts";
import type { MazeEpisode } from "./diagnosis.ts";
import { type Maze, optimalActions } from "./maze.ts";

/** A policy over observation rows: writes one action per row into `actions`. */
export type MazePolicy = (
  obs: Float32Array,
  n: number,
  actions: Uint8Array,
) => void;

/** One episode of `policy` on every maze of `mazes` (environment `i` plays maze `i`). */
export function evaluateMazes(
  mazes: readonly Maze[],
  policy: MazePolicy,
): MazeEpisode[] {
  const env = new MazeBatchEnv(mazes, { envs: mazes.length });
  env.resetAll((e) => e);
  const slots = new Int32Array(env.envs);
  const obs = new Float32Array(env.envs * MAZE_OBS_SIZE);
  const act = new Uint8Array(env.envs);
  const full = new Uint8Array(env.envs);
  const ret = new Float64Array(env.envs);
  for (;;) {
    const n = env.activeSlots(slots);
    if (n === 0) break;
    env.observeInto(slots, n, obs);
    policy(obs, n, act);
    full.fill(0);
    for (let k = 0; k < n; k++) full[slots[k]!] = act[k]!;
    env.step(full);
    for (let k = 0; k < n; k++) {
      ret[slots[k]!] = ret[slots[k]!]! + env.reward[slots[k]!]!;
    }
  }
  return mazes.map((m, e) => {
    const success = env.outcome[e] === MAZE_SUCCESS;
    return {
      instance: m.name,
      success,
      return: ret[e]!,
      steps: env.t[e]!,
      optimal: optimalActions(m),
      ...(success ? {} : { failure: "timeout" }),
      maze: m,
      final: { pos: env.pos[e]!, dir: env.dir[e]! },
    };
  });
}
