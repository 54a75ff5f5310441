/**
 * The maze generator: walls placed uniformly at random at the configured
 * density (the literature's domain randomisation places a number of blocks
 * the same way), a random start cell and direction, and a goal drawn
 * uniformly among the free cells whose shortest-path distance from the start
 * lies in the configured band. Only solvable mazes are returned.
 *
 * Instance `i` of `generate(config, seed, count)` depends on (`config`,
 * `seed`, `i`) only, so a longer request extends a shorter one.
 *
 * @module
 */
import type { MazeConfig } from "./config.ts";
import { goalDistances, type Maze, UNREACHABLE } from "./maze.ts";
import { MazeRng } from "./random.ts";

/** Attempts per instance before the configuration is declared unsatisfiable. */
export const GENERATE_ATTEMPTS = 200;

/** The generator could not place a goal in the configured band. */
export class MazeGenerationError extends RangeError {
  /** An error naming the configuration and the fix. */
  constructor(message: string) {
    super(message);
    this.name = "MazeGenerationError";
  }
}

/** Maze `index` of (`config`, `seed`). */
export function generateMaze(
  config: MazeConfig,
  seed: number,
  index: number,
): Maze {
  const rng = new MazeRng(seed, index + 1);
  const side = config.size, cells = side * side;
  const nWalls = Math.min(cells - 2, Math.round(config.walls.density * cells));
  const order = new Int32Array(cells);
  for (let attempt = 0; attempt < GENERATE_ATTEMPTS; attempt++) {
    for (let i = 0; i < cells; i++) order[i] = i;
    const walls: number[] = new Array(cells).fill(0);
    // partial Fisher-Yates: the first nWalls cells of a random order are walls
    for (let i = 0; i < nWalls; i++) {
      const j = i + rng.int(cells - i);
      const t = order[i]!;
      order[i] = order[j]!;
      order[j] = t;
      walls[order[i]!] = 1;
    }
    const start = order[nWalls + rng.int(cells - nWalls)]!;
    const dir = rng.int(4);
    // distances from the start (the grid graph is undirected)
    const dist = goalDistances({
      name: "",
      width: side,
      height: side,
      walls,
      start,
      dir,
      goal: start,
      maxSteps: 1,
    });
    let n = 0;
    for (let c = 0; c < cells; c++) {
      const d = dist[c]!;
      if (
        d !== UNREACHABLE && d >= config.goal.min_distance &&
        d <= config.goal.max_distance
      ) n++;
    }
    if (n === 0) continue;
    let k = rng.int(n), goal = -1;
    for (let c = 0; c < cells && goal < 0; c++) {
      const d = dist[c]!;
      if (
        d !== UNREACHABLE && d >= config.goal.min_distance &&
        d <= config.goal.max_distance && k-- === 0
      ) goal = c;
    }
    return {
      name: `s${seed >>> 0}i${index}`,
      width: side,
      height: side,
      walls,
      start,
      dir,
      goal,
      maxSteps: config.max_steps,
    };
  }
  throw new MazeGenerationError(
    `maze: no goal ${config.goal.min_distance}..${config.goal.max_distance} moves from the start in ${GENERATE_ATTEMPTS} tries at size ${side} and wall density ${config.walls.density}: lower goal.min_distance or walls.density, or raise size`,
  );
}

/** `count` mazes of (`config`, `seed`); deterministic. */
export function generateMazes(
  config: MazeConfig,
  seed: number,
  count: number,
): Maze[] {
  const out: Maze[] = [];
  for (let i = 0; i < count; i++) out.push(generateMaze(config, seed, i));
  return out;
}
