/**
 * The maze generator: walls placed uniformly at random at the configured
 * density (the literature's domain randomisation places a number of blocks
 * the same way), a random start cell and direction, and a goal drawn
 * uniformly among the free cells whose shortest-path distance from the start
 * lies in the configured band; when 180 draws find no such cell, the last
 * draws clip the band to the distances they reach (a band beyond the grid's
 * reach puts the goal at the farthest cells, so every configuration of the
 * space generates). Only solvable mazes are returned.
 *
 * Instance `i` of `generate(config, seed, count)` depends on (`config`,
 * `seed`, `i`) only, so a longer request extends a shorter one.
 *
 * @module
 */
import type { MazeConfig } from "./config.ts";
import { goalDistances, type Maze } from "./maze.ts";
import { MazeRng } from "./random.ts";

/** Draws per instance. */
export const GENERATE_ATTEMPTS = 200;
/** The last draws, which clip the distance band to what the draw reaches. */
export const CLIPPED_ATTEMPTS = 20;

/** The generator found no start with a reachable cell. */
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
    let dmax = 0;
    for (let c = 0; c < cells; c++) dmax = Math.max(dmax, dist[c]!);
    if (dmax < 1) continue; // the start is walled in
    // the band; on the last tries, clipped to the distances this draw
    // reaches (BFS distances run 1..dmax without gaps, so it is not empty)
    const clip = attempt >= GENERATE_ATTEMPTS - CLIPPED_ATTEMPTS;
    const lo = clip
      ? Math.min(config.goal.min_distance, dmax)
      : config.goal.min_distance;
    const hi = clip
      ? Math.max(lo, Math.min(config.goal.max_distance, dmax))
      : config.goal.max_distance;
    let n = 0;
    for (let c = 0; c < cells; c++) {
      const d = dist[c]!;
      if (d >= lo && d <= hi) n++;
    }
    if (n === 0) continue;
    let k = rng.int(n), goal = -1;
    for (let c = 0; c < cells && goal < 0; c++) {
      const d = dist[c]!;
      if (d >= lo && d <= hi && k-- === 0) goal = c;
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
    `maze: the start was walled in ${CLIPPED_ATTEMPTS} times at size ${side} and wall density ${config.walls.density}: lower walls.density or raise size`,
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
