/**
 * A maze of the unsupervised-environment-design literature (the MiniGrid
 * maze of PAIRED, robust PLR and ACCEL; `minimax`'s AMaze): one agent with a
 * position and a facing direction on a grid of walls, and one goal.
 *
 * Cells are indices `row * width + col`. Directions follow MiniGrid:
 * `0` east (col + 1), `1` south (row + 1), `2` west, `3` north. The agent's
 * actions are `0` turn left, `1` turn right, `2` forward; the episode is
 * won by moving forward into the goal cell (the agent never stands on it).
 * Outside the grid is wall.
 *
 * @module
 */

/** Column step of each direction (east, south, west, north). */
export const DIR_DX: readonly number[] = [1, 0, -1, 0];
/** Row step of each direction (east, south, west, north). */
export const DIR_DY: readonly number[] = [0, 1, 0, -1];

/** Action: turn left. */
export const TURN_LEFT = 0;
/** Action: turn right. */
export const TURN_RIGHT = 1;
/** Action: move forward. */
export const FORWARD = 2;
/** Number of actions. */
export const MAZE_ACTIONS = 3;

/** Distance of a cell that cannot reach the goal. */
export const UNREACHABLE = -1;

/** One maze. */
export interface Maze {
  /** A name (the named test mazes) or a generated id. */
  readonly name: string;
  /** Columns. */
  readonly width: number;
  /** Rows. */
  readonly height: number;
  /**
   * `1` for a wall, `0` for free, per cell (a plain array, so a maze is a
   * JSON value as family instances are).
   */
  readonly walls: readonly number[];
  /** The agent's start cell. */
  readonly start: number;
  /** The agent's start direction (0 east, 1 south, 2 west, 3 north). */
  readonly dir: number;
  /** The goal cell. */
  readonly goal: number;
  /** Episode length limit in steps. */
  readonly maxSteps: number;
}

/** Largest side the family accepts. */
export const MAX_SIDE = 32;

/**
 * Breadth-first distances (in moves between 4-neighbours, ignoring turns)
 * from every free cell to the goal; walls and cut-off cells get
 * {@linkcode UNREACHABLE}. The goal itself has distance 0.
 */
export function goalDistances(maze: Maze): Int32Array {
  const { width: w, height: h, walls, goal } = maze;
  const dist = new Int32Array(w * h).fill(UNREACHABLE);
  const queue = new Int32Array(w * h);
  let head = 0, tail = 0;
  dist[goal] = 0;
  queue[tail++] = goal;
  while (head < tail) {
    const c = queue[head++]!;
    const r = (c / w) | 0, col = c - r * w, d = dist[c]! + 1;
    for (let k = 0; k < 4; k++) {
      const nr = r + DIR_DY[k]!, nc = col + DIR_DX[k]!;
      if (nr < 0 || nr >= h || nc < 0 || nc >= w) continue;
      const n = nr * w + nc;
      if (walls[n] || dist[n] !== UNREACHABLE) continue;
      dist[n] = d;
      queue[tail++] = n;
    }
  }
  return dist;
}

/**
 * Shortest path length from the start to the goal in moves (the literature's
 * `shortest_path_length`), or {@linkcode UNREACHABLE}.
 */
export function shortestPath(maze: Maze): number {
  return goalDistances(maze)[maze.start]!;
}

/**
 * The fewest actions (turns included) that win the maze from its start
 * state, by breadth-first search over (cell, direction); or
 * {@linkcode UNREACHABLE}. Winning is the forward step into the goal, so a
 * maze whose start is next to the goal and facing it takes 1.
 */
export function optimalActions(maze: Maze): number {
  const { width: w, height: h, walls, goal } = maze;
  const n = w * h * 4;
  const dist = new Int32Array(n).fill(UNREACHABLE);
  const queue = new Int32Array(n);
  let head = 0, tail = 0;
  const s0 = maze.start * 4 + maze.dir;
  dist[s0] = 0;
  queue[tail++] = s0;
  while (head < tail) {
    const s = queue[head++]!;
    const c = s >> 2, d = s & 3, nd = dist[s]! + 1;
    const r = (c / w) | 0, col = c - r * w;
    const nr = r + DIR_DY[d]!, nc = col + DIR_DX[d]!;
    if (nr >= 0 && nr < h && nc >= 0 && nc < w) {
      const f = nr * w + nc;
      if (f === goal) return nd;
      if (!walls[f] && dist[f * 4 + d] === UNREACHABLE) {
        dist[f * 4 + d] = nd;
        queue[tail++] = f * 4 + d;
      }
    }
    for (const t of [(d + 3) & 3, (d + 1) & 3]) {
      const ns = c * 4 + t;
      if (dist[ns] === UNREACHABLE) {
        dist[ns] = nd;
        queue[tail++] = ns;
      }
    }
  }
  return UNREACHABLE;
}

/**
 * Why `maze` is malformed or unsolvable, or `undefined` when it is a valid,
 * solvable maze.
 */
export function checkMaze(maze: Maze): string | undefined {
  const { width: w, height: h } = maze;
  if (
    !Number.isInteger(w) || !Number.isInteger(h) || w < 2 || h < 2 ||
    w > MAX_SIDE || h > MAX_SIDE
  ) {
    return `maze "${maze.name}": size ${w}x${h} is outside 2..${MAX_SIDE}`;
  }
  if (
    !Array.isArray(maze.walls) || maze.walls.length !== w * h ||
    maze.walls.some((x) => x !== 0 && x !== 1)
  ) {
    return `maze "${maze.name}": walls must hold ${w * h} cells of 0 or 1`;
  }
  for (
    const [what, c] of [["start", maze.start], ["goal", maze.goal]] as const
  ) {
    if (!Number.isInteger(c) || c < 0 || c >= w * h) {
      return `maze "${maze.name}": ${what} cell ${c} is off the grid`;
    }
    if (maze.walls[c]) return `maze "${maze.name}": the ${what} is on a wall`;
  }
  if (maze.start === maze.goal) {
    return `maze "${maze.name}": the start is the goal`;
  }
  if (!Number.isInteger(maze.dir) || maze.dir < 0 || maze.dir > 3) {
    return `maze "${maze.name}": direction ${maze.dir} is not 0..3`;
  }
  if (!Number.isInteger(maze.maxSteps) || maze.maxSteps < 1) {
    return `maze "${maze.name}": maxSteps must be a positive integer`;
  }
  if (shortestPath(maze) === UNREACHABLE) {
    return `maze "${maze.name}": the goal cannot be reached from the start`;
  }
  return undefined;
}

/** Wall share of the maze's cells. */
export function wallDensity(maze: Maze): number {
  let n = 0;
  for (let i = 0; i < maze.walls.length; i++) n += maze.walls[i]!;
  return n / maze.walls.length;
}

/**
 * A maze from rows of `0`/`1` (`1` wall) and positions given as
 * `[col, row]` (the literature's `(x, y)`).
 */
export function mazeFromRows(
  name: string,
  rows: readonly string[],
  agent: readonly [number, number],
  goal: readonly [number, number],
  dir: number,
  maxSteps: number,
): Maze {
  const grid = rows.map((r) => r.replaceAll(" ", ""));
  const height = grid.length, width = grid[0]!.length;
  const walls: number[] = new Array(width * height).fill(0);
  grid.forEach((row, r) => {
    if (row.length !== width) {
      throw new RangeError(
        `maze "${name}": row ${r} has ${row.length} cells, not ${width}`,
      );
    }
    for (let c = 0; c < width; c++) {
      walls[r * width + c] = row[c] === "1" ? 1 : 0;
    }
  });
  return {
    name,
    width,
    height,
    walls,
    start: agent[1] * width + agent[0],
    dir,
    goal: goal[1] * width + goal[0],
    maxSteps,
  };
}
