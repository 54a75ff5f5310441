/**
 * Grid basics shared by the dynamics, solvers and renderers: cell codes,
 * actions, and breadth-first shortest-path distances.
 *
 * Cells are addressed by index `row * width + col`; row 0 is the top row.
 *
 * @module
 */

/** Cell code: frozen surface (free). */
export const FREE = 0;
/** Cell code: hole (lethal or impassable, per the hole mode). */
export const HOLE = 1;
/** Cell code: wall (always impassable). */
export const WALL = 2;

/** Action: stay in place. */
export const STAY = 0;
/** Action: move up (row - 1). */
export const UP = 1;
/** Action: move down (row + 1). */
export const DOWN = 2;
/** Action: move left (col - 1). */
export const LEFT = 3;
/** Action: move right (col + 1). */
export const RIGHT = 4;
/** Number of actions. */
export const ACTION_COUNT = 5;

/** Letters of the actions, indexed by action: `S U D L R`. */
export const ACTION_LETTERS: readonly string[] = ["S", "U", "D", "L", "R"];
/** Names of the actions, indexed by action. */
export const ACTION_NAMES: readonly string[] = [
  "stay",
  "up",
  "down",
  "left",
  "right",
];
/** Row offset of each action. */
export const ACTION_DR: readonly number[] = [0, -1, 1, 0, 0];
/** Column offset of each action. */
export const ACTION_DC: readonly number[] = [0, 0, 0, -1, 1];

/** Distance value of a cell from which the goal cannot be reached. */
export const UNREACHABLE = 0xffff;

/** Character of each cell code in the JSON form: `.` free, `H` hole, `#` wall. */
export const CELL_CHARS: readonly string[] = [".", "H", "#"];

/**
 * The cell reached by `action` from `cell`, or -1 if it leaves the grid.
 * (Walls and holes are not considered here.)
 */
export function moveCell(
  cell: number,
  action: number,
  width: number,
  height: number,
): number {
  const c = cell % width;
  switch (action) {
    case UP:
      return cell >= width ? cell - width : -1;
    case DOWN:
      return cell + width < width * height ? cell + width : -1;
    case LEFT:
      return c > 0 ? cell - 1 : -1;
    case RIGHT:
      return c < width - 1 ? cell + 1 : -1;
    default:
      return cell;
  }
}

/** The action that moves from `from` to the adjacent (or same) cell `to`, or -1. */
export function actionBetween(from: number, to: number, width: number): number {
  const d = to - from;
  if (d === 0) return STAY;
  if (d === -width) return UP;
  if (d === width) return DOWN;
  if (d === -1 && from % width !== 0) return LEFT;
  if (d === 1 && to % width !== 0) return RIGHT;
  return -1;
}

/**
 * Breadth-first distances (in moves) from every cell to `goal` over free
 * cells (holes and walls are not traversed; a hole or wall cell gets
 * {@linkcode UNREACHABLE}, as does any cell cut off from the goal).
 *
 * @param grid Cell codes, `width * height`.
 * @param out Distances are written here (length `width * height`); a new
 *   array is allocated if omitted.
 * @param queue Optional scratch of length `width * height`.
 */
export function bfsDistances(
  grid: Uint8Array,
  width: number,
  height: number,
  goal: number,
  out: Uint16Array = new Uint16Array(width * height),
  queue: Int32Array = new Int32Array(width * height),
): Uint16Array {
  const n = width * height;
  out.fill(UNREACHABLE, 0, n);
  if (grid[goal] !== FREE) return out;
  out[goal] = 0;
  queue[0] = goal;
  let head = 0, tail = 1;
  while (head < tail) {
    const u = queue[head++]!;
    const du = out[u]! + 1;
    const c = u % width;
    if (u >= width) {
      const w = u - width;
      if (out[w] === UNREACHABLE && grid[w] === FREE) {
        out[w] = du;
        queue[tail++] = w;
      }
    }
    if (u + width < n) {
      const w = u + width;
      if (out[w] === UNREACHABLE && grid[w] === FREE) {
        out[w] = du;
        queue[tail++] = w;
      }
    }
    if (c > 0) {
      const w = u - 1;
      if (out[w] === UNREACHABLE && grid[w] === FREE) {
        out[w] = du;
        queue[tail++] = w;
      }
    }
    if (c < width - 1) {
      const w = u + 1;
      if (out[w] === UNREACHABLE && grid[w] === FREE) {
        out[w] = du;
        queue[tail++] = w;
      }
    }
  }
  return out;
}

/**
 * Label the 4-connected components of free cells. Returns the label of each
 * cell (-1 for holes and walls) and the size of each component.
 */
export function connectedComponents(
  grid: Uint8Array,
  width: number,
  height: number,
): { labels: Int32Array; sizes: number[] } {
  const n = width * height;
  const labels = new Int32Array(n).fill(-1);
  const sizes: number[] = [];
  const queue = new Int32Array(n);
  for (let s = 0; s < n; s++) {
    if (grid[s] !== FREE || labels[s] !== -1) continue;
    const label = sizes.length;
    let head = 0, tail = 1;
    queue[0] = s;
    labels[s] = label;
    while (head < tail) {
      const u = queue[head++]!;
      for (let a = 1; a <= 4; a++) {
        const w = moveCell(u, a, width, height);
        if (w >= 0 && grid[w] === FREE && labels[w] === -1) {
          labels[w] = label;
          queue[tail++] = w;
        }
      }
    }
    sizes.push(tail);
  }
  return { labels, sizes };
}

/**
 * One shortest path (list of cells, start first) from `start` to the goal of
 * a distance map, choosing moves in the fixed order up, down, left, right.
 * Returns `null` if the goal cannot be reached.
 */
export function shortestPath(
  dist: Uint16Array,
  start: number,
  width: number,
  height: number,
): number[] | null {
  if (dist[start] === UNREACHABLE) return null;
  const path = [start];
  let u = start;
  while (dist[u] !== 0) {
    const du = dist[u]!;
    let next = -1;
    for (let a = 1; a <= 4; a++) {
      const w = moveCell(u, a, width, height);
      if (w >= 0 && dist[w] === du - 1) {
        next = w;
        break;
      }
    }
    if (next < 0) return null;
    path.push(next);
    u = next;
  }
  return path;
}
