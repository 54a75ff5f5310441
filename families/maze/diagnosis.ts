/**
 * Diagnosis of maze episodes: success, steps against the optimum, failure
 * types, and rendered failure cases.
 *
 * @module
 */
import type { Maze } from "./maze.ts";
import { renderMaze } from "./render.ts";
import { MazeRng } from "./random.ts";

/** One evaluated maze episode. */
export interface MazeEpisode {
  /** Id of the maze played. */
  readonly instance: string;
  /** Whether the goal was reached. */
  readonly success: boolean;
  /** Undiscounted return. */
  readonly return: number;
  /** Steps taken. */
  readonly steps: number;
  /** Fewest actions that win the maze (see `optimalActions`). */
  readonly optimal?: number;
  /** `timeout` on failure. */
  readonly failure?: string;
  /** The maze, for rendered failure cases. */
  readonly maze?: Maze;
  /** Final agent cell and direction. */
  readonly final?: { readonly pos: number; readonly dir: number };
}

/**
 * `success_rate`, `mean_return`, `mean_steps`, `steps_over_optimal` (mean
 * ratio of steps to the optimum over successes with a known optimum; NaN
 * when there are none) and `timeout_share`.
 */
export function mazeStatistics(
  episodes: readonly MazeEpisode[],
): Record<string, number> {
  const n = episodes.length;
  let succ = 0, ret = 0, steps = 0, ratio = 0, nRatio = 0, timeouts = 0;
  for (const ep of episodes) {
    if (ep.success) {
      succ++;
      if (ep.optimal && ep.optimal > 0) {
        ratio += ep.steps / ep.optimal;
        nRatio++;
      }
    } else if ((ep.failure ?? "timeout") === "timeout") timeouts++;
    ret += ep.return;
    steps += ep.steps;
  }
  const d = Math.max(1, n);
  return {
    episodes: n,
    success_rate: succ / d,
    mean_return: ret / d,
    mean_steps: steps / d,
    steps_over_optimal: nRatio ? ratio / nRatio : NaN,
    timeout_share: timeouts / d,
  };
}

/** Up to `count` failed episodes, drawn with `seed`, rendered with the agent where it stopped. */
export function mazeFailureCases(
  episodes: readonly MazeEpisode[],
  options: { readonly count: number; readonly seed: number },
): { instance: string; failure: string; text: string }[] {
  const failed = episodes.filter((e) => !e.success);
  const rng = new MazeRng(options.seed, 0xfa11);
  const picked: MazeEpisode[] = [];
  const pool = failed.slice();
  while (picked.length < options.count && pool.length) {
    picked.push(pool.splice(rng.int(pool.length), 1)[0]!);
  }
  return picked.map((ep) => ({
    instance: ep.instance,
    failure: ep.failure ?? "timeout",
    text: ep.maze
      ? `${
        renderMaze(ep.maze, ep.final?.pos, ep.final?.dir)
      }\n(stopped after ${ep.steps} steps; optimum ${ep.optimal ?? "?"})`
      : `${ep.instance}: ${ep.failure ?? "timeout"} after ${ep.steps} steps`,
  }));
}
