/**
 * The maze family's configuration space: grid side, wall density, the band
 * of start-to-goal distances, and the episode length. A valibot schema with
 * bounds, the dimensions engineers move along, and presets.
 *
 * @module
 */
import * as v from "valibot";
import { MAX_SIDE } from "./maze.ts";

/** A maze generator configuration. */
export interface MazeConfig {
  /** Side of the square grid in cells. */
  readonly size: number;
  /** Walls. */
  readonly walls: {
    /** Share of the grid's cells that are walls (placed uniformly at random). */
    readonly density: number;
  };
  /** Where the goal goes. */
  readonly goal: {
    /** Fewest moves from the start to the goal. */
    readonly min_distance: number;
    /** Most moves from the start to the goal. */
    readonly max_distance: number;
  };
  /** Episode length limit in steps (the literature trains with 250). */
  readonly max_steps: number;
}

const int = (min: number, max: number, description: string) =>
  v.pipe(
    v.number(),
    v.integer(),
    v.minValue(min),
    v.maxValue(max),
    v.description(description),
  );

/** The valibot schema of {@linkcode MazeConfig}, with bounds and descriptions. */
export const MazeConfigSchema: v.GenericSchema<unknown, MazeConfig> = v
  .strictObject({
    size: int(5, MAX_SIDE - 7, "side of the square grid in cells"),
    walls: v.strictObject({
      density: v.pipe(
        v.number(),
        v.minValue(0),
        v.maxValue(0.6),
        v.description("share of cells that are walls"),
      ),
    }),
    goal: v.strictObject({
      min_distance: int(1, 200, "fewest moves from start to goal"),
      max_distance: int(1, 200, "most moves from start to goal"),
    }),
    max_steps: int(20, 1000, "episode length limit in steps"),
  });

/** One dimension of the maze space (the shape of the family interface's `Dimension`). */
export interface MazeDimension {
  readonly path: string;
  readonly description: string;
  readonly min: number;
  readonly max: number;
  readonly step: number;
  readonly integer: boolean;
  readonly harder: "up" | "down";
}

/** The dimensions engineers move along. */
export const MAZE_DIMENSIONS: readonly MazeDimension[] = [
  {
    path: "size",
    description: "side of the square grid in cells",
    min: 5,
    max: 25,
    step: 2,
    integer: true,
    harder: "up",
  },
  {
    path: "walls.density",
    description: "share of cells that are walls",
    min: 0,
    max: 0.5,
    step: 0.05,
    integer: false,
    harder: "up",
  },
  {
    path: "goal.min_distance",
    description: "fewest moves from start to goal",
    min: 1,
    max: 40,
    step: 2,
    integer: true,
    harder: "up",
  },
  {
    path: "goal.max_distance",
    description: "most moves from start to goal",
    min: 1,
    max: 200,
    step: 8,
    integer: true,
    harder: "up",
  },
  {
    path: "max_steps",
    description: "episode length limit in steps",
    min: 50,
    max: 500,
    step: 25,
    integer: true,
    harder: "down",
  },
];

/** Named configurations: the literature's 13x13 training grid at three wall densities. */
export const MAZE_PRESETS: Readonly<Record<string, MazeConfig>> = {
  easy: {
    size: 7,
    walls: { density: 0.1 },
    goal: { min_distance: 1, max_distance: 6 },
    max_steps: 250,
  },
  medium: {
    size: 13,
    walls: { density: 0.15 },
    goal: { min_distance: 1, max_distance: 200 },
    max_steps: 250,
  },
  hard: {
    size: 13,
    walls: { density: 0.35 },
    goal: { min_distance: 12, max_distance: 200 },
    max_steps: 250,
  },
};

/** The value of dimension `path` in `config`. */
export function getMazeValue(config: MazeConfig, path: string): number {
  switch (path) {
    case "size":
      return config.size;
    case "walls.density":
      return config.walls.density;
    case "goal.min_distance":
      return config.goal.min_distance;
    case "goal.max_distance":
      return config.goal.max_distance;
    case "max_steps":
      return config.max_steps;
  }
  throw new RangeError(
    `maze has no dimension "${path}": use one of ${
      MAZE_DIMENSIONS.map((d) => d.path).join(", ")
    }`,
  );
}

/**
 * `config` with dimension `path` set to `value`, clamped to the dimension's
 * bounds (rounded when integer); the distance band stays ordered (moving one
 * end past the other moves both).
 */
export function setMazeValue(
  config: MazeConfig,
  path: string,
  value: number,
): MazeConfig {
  const dim = MAZE_DIMENSIONS.find((d) => d.path === path);
  if (!dim) getMazeValue(config, path); // throws the one-line error
  const x0 = Math.max(dim!.min, Math.min(dim!.max, value));
  const x = dim!.integer ? Math.round(x0) : x0;
  const g = config.goal;
  switch (path) {
    case "size":
      return { ...config, size: x };
    case "walls.density":
      return { ...config, walls: { density: x } };
    case "goal.min_distance":
      return {
        ...config,
        goal: { min_distance: x, max_distance: Math.max(x, g.max_distance) },
      };
    case "goal.max_distance":
      return {
        ...config,
        goal: { min_distance: Math.min(x, g.min_distance), max_distance: x },
      };
    default:
      return { ...config, max_steps: x };
  }
}

/** A configuration as one line of text. */
export function renderMazeConfig(c: MazeConfig): string {
  return `maze ${c.size}x${c.size}, wall density ${c.walls.density}, goal ${c.goal.min_distance}..${c.goal.max_distance} moves from the start, ${c.max_steps} steps`;
}
