/**
 * The maze family of the unsupervised-environment-design literature: one
 * agent with a partial egocentric view, walls, a goal (Dennis et al. 2020;
 * Jiang et al. 2021; Parker-Holder et al. 2022; `minimax`, Jiang et al.
 * 2023). Its configuration space, generator, ACCEL's edit, renderings,
 * suites (the named held-out mazes as the test split, generated validation
 * mazes) and diagnosis, in the shape of the environment-family interface.
 *
 * @module
 */
import type { EnvironmentFamily } from "../family.ts";
import { MazeBatchEnv } from "./batch_env.ts";
import {
  getMazeValue,
  MAZE_DIMENSIONS,
  MAZE_PRESETS,
  type MazeConfig,
  MazeConfigSchema,
  renderMazeConfig,
  setMazeValue,
} from "./config.ts";
import {
  type MazeEpisode,
  mazeFailureCases,
  mazeStatistics,
} from "./diagnosis.ts";
import { generateMazes } from "./generate.ts";
import { checkMaze, type Maze } from "./maze.ts";
import { mazeLines, parseMazeLines } from "./maze_json.ts";
import { type EditRng, mutateMaze } from "./mutate.ts";
import { renderMaze } from "./render.ts";
import { testMazes } from "./test_mazes.ts";

/** Seed of the validation suite (disjoint from training seeds in practice: engineers draw theirs). */
export const VALIDATION_SEED = 0x7a11d;

/** The validation suite: `count` generated mazes at the `medium` preset (the literature's 13x13 grid). */
export function validationMazes(count = 100): Maze[] {
  return generateMazes(MAZE_PRESETS.medium!, VALIDATION_SEED, count);
}

/** FNV-1a of a maze's contents, as 8 hex digits. */
export function mazeDigest(m: Maze): string {
  let h = 0x811c9dc5;
  const mix = (x: number) => {
    h ^= x & 0xff;
    h = Math.imul(h, 0x01000193);
  };
  mix(m.width);
  mix(m.height);
  for (let i = 0; i < m.walls.length; i++) mix(m.walls[i]!);
  for (
    const x of [
      m.start,
      m.start >> 8,
      m.goal,
      m.goal >> 8,
      m.dir,
      m.maxSteps,
      m.maxSteps >> 8,
    ]
  ) mix(x);
  return (h >>> 0).toString(16).padStart(8, "0");
}

/** The maze family. */
export const mazeFamily: EnvironmentFamily<MazeConfig, Maze, MazeEpisode> & {
  readonly env: {
    readonly module: string;
    create(
      instances: readonly Maze[],
      options: { readonly envs: number; readonly seed: number },
    ): MazeBatchEnv;
  };
} = {
  name: "maze",
  description:
    "maze navigation of the environment-design literature: one agent, 5x5 egocentric view, walls, a goal",
  module: import.meta.url,
  schema: MazeConfigSchema,
  dimensions: MAZE_DIMENSIONS,
  presets: MAZE_PRESETS,
  // the literature's domain randomisation: 13x13, random blocks (up to about
  // 60, wall density 0.35), the goal anywhere reachable, 250 steps
  box: {
    size: [13, 13],
    "walls.density": [0, 0.35],
    "goal.min_distance": [1, 1],
    "goal.max_distance": [200, 200],
    max_steps: [250, 250],
  },
  get: getMazeValue,
  set: setMazeValue,
  generate: (config: MazeConfig, seed: number, count: number): Maze[] =>
    generateMazes(config, seed, count),
  mutate: (instance: Maze, rng: EditRng, _seed: number): Maze | null =>
    mutateMaze(instance, rng),
  check: checkMaze,
  instanceId: (m: Maze): string => `${m.name}@${mazeDigest(m)}`,
  renderInstance: (m: Maze): string => renderMaze(m),
  renderConfig: renderMazeConfig,
  suites: {
    heldout: {
      description:
        "the named held-out mazes of the literature (SixteenRooms, Labyrinth, StandardMaze, corridors, perfect mazes)",
      split: "test",
      instances: (): Maze[] => testMazes(),
    },
    validation: {
      description:
        "generated 13x13 mazes at the medium preset (wall density 0.15)",
      split: "validation",
      instances: validationMazes,
    },
  },
  diagnosis: {
    statistics: (episodes: readonly MazeEpisode[]): Record<string, number> =>
      mazeStatistics(episodes),
    failureCases: mazeFailureCases,
  },
  instanceLines: mazeLines,
  parseInstanceLines: parseMazeLines,
  env: {
    module: import.meta.url,
    create: (
      instances: readonly Maze[],
      options: { readonly envs: number; readonly seed: number },
    ): MazeBatchEnv => new MazeBatchEnv(instances, { envs: options.envs }),
  },
};
