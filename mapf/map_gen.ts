/**
 * Random FrozenLake maps from a configuration component: corridor
 * partitions, scattered walls, and (optionally clustered) holes.
 *
 * 1. **Corridors** (`corridors` in 0..1): `round(corridors * maxLines)` full
 *    wall lines (alternately across the longer and the shorter side, at least
 *    2 free cells apart and from the border), where
 *    `maxLines = floor((min(width, height) - 2) / 3)`.
 *    Crossing lines split each other into segments; every segment gets one
 *    door (a free cell), so all rooms stay connected, but only through
 *    1-cell bottlenecks. Doors and the cells on both sides of them are
 *    protected from walls and holes.
 * 2. **Walls** (`walls` in 0..0.5): scattered wall cells until walls cover
 *    `walls * cells` cells beyond the partitions.
 * 3. **Holes** (`hole_density` in 0..0.6 of the remaining free cells,
 *    `hole_clustering` in 0..1): each hole is placed, with probability
 *    `hole_clustering`, next to an existing hole, otherwise uniformly.
 *
 * @module
 */
import type { EnvConfig } from "../schemas/env_config.ts";
import { FREE, HOLE, WALL } from "./grid.ts";
import type { Rng } from "./rng.ts";

/** A generated map. */
export interface GeneratedMap {
  /** Cell codes, `width * height`. */
  readonly grid: Uint8Array;
  /** Number of wall cells. */
  readonly walls: number;
  /** Number of hole cells. */
  readonly holes: number;
  /** Number of corridor partition lines drawn. */
  readonly lines: number;
}

/** The number of partition lines a component draws. */
export function partitionLines(c: EnvConfig): number {
  const maxLines = Math.max(
    0,
    Math.floor((Math.min(c.width, c.height) - 2) / 3),
  );
  return Math.round(c.corridors * maxLines);
}

/** Draw a random map for component `c`. */
export function generateMap(c: EnvConfig, rng: Rng): GeneratedMap {
  const N = c.width * c.height;
  const grid = new Uint8Array(N);
  const protect = new Uint8Array(N);
  const lines = _drawCorridors(c, rng, grid, protect);
  let walls = 0;
  for (let i = 0; i < N; i++) if (grid[i] === WALL) walls++;
  walls += _scatterWalls(c, rng, grid, protect);
  const holes = _placeHoles(c, rng, grid, protect);
  return { grid, walls, holes, lines };
}

/**
 * Partition lines of wall with one door per segment between crossing lines;
 * the doors and the cells on either side are protected from walls and holes.
 * Returns the number of lines drawn.
 */
function _drawCorridors(
  c: EnvConfig,
  rng: Rng,
  grid: Uint8Array,
  protect: Uint8Array,
): number {
  const W = c.width, H = c.height;
  const lines = partitionLines(c);
  const vertical: number[] = [];
  const horizontal: number[] = [];
  for (let k = 0; k < lines; k++) {
    const vert = (k % 2 === 0) === (W >= H);
    const dim = vert ? W : H;
    const used = vert ? vertical : horizontal;
    const options: number[] = [];
    for (let x = 2; x <= dim - 3; x++) {
      if (used.every((u) => Math.abs(u - x) >= 3)) options.push(x);
    }
    if (options.length === 0) continue;
    used.push(options[rng.int(options.length)]!);
  }
  for (const col of vertical) {
    for (let r = 0; r < H; r++) grid[r * W + col] = WALL;
  }
  for (const row of horizontal) {
    for (let col = 0; col < W; col++) grid[row * W + col] = WALL;
  }
  const door = (cell: number, a: number, b: number) => {
    grid[cell] = FREE;
    protect[cell] = 1;
    if (a >= 0) protect[a] = 1;
    if (b >= 0) protect[b] = 1;
  };
  for (const col of vertical) {
    const cuts = [-1, ...[...horizontal].sort((x, y) => x - y), H];
    for (let s = 0; s + 1 < cuts.length; s++) {
      const lo = cuts[s]! + 1, hi = cuts[s + 1]! - 1;
      if (hi < lo) continue;
      const r = lo + rng.int(hi - lo + 1);
      door(
        r * W + col,
        col > 0 ? r * W + col - 1 : -1,
        col < W - 1 ? r * W + col + 1 : -1,
      );
    }
  }
  for (const row of horizontal) {
    const cuts = [-1, ...[...vertical].sort((x, y) => x - y), W];
    for (let s = 0; s + 1 < cuts.length; s++) {
      const lo = cuts[s]! + 1, hi = cuts[s + 1]! - 1;
      if (hi < lo) continue;
      const col = lo + rng.int(hi - lo + 1);
      door(
        row * W + col,
        row > 0 ? (row - 1) * W + col : -1,
        row < H - 1 ? (row + 1) * W + col : -1,
      );
    }
  }
  return vertical.length + horizontal.length;
}

/** Scattered walls on free, unprotected cells; returns how many were placed. */
function _scatterWalls(
  c: EnvConfig,
  rng: Rng,
  grid: Uint8Array,
  protect: Uint8Array,
): number {
  const N = grid.length;
  const wallTarget = Math.round(c.walls * N);
  const free: number[] = [];
  for (let i = 0; i < N; i++) {
    if (grid[i] === FREE && protect[i] === 0) free.push(i);
  }
  rng.shuffle(free);
  let placed = 0;
  let k = 0;
  while (placed < wallTarget && k < free.length) {
    const cell = free[k++]!;
    grid[cell] = WALL;
    placed++;
  }
  return placed;
}

/**
 * Holes on free, unprotected cells: `hole_density` of the free cells, each
 * next to an earlier hole with probability `hole_clustering`. Returns how
 * many were placed.
 */
function _placeHoles(
  c: EnvConfig,
  rng: Rng,
  grid: Uint8Array,
  protect: Uint8Array,
): number {
  const W = c.width, H = c.height, N = grid.length;
  const candidates: number[] = [];
  for (let i = 0; i < N; i++) {
    if (grid[i] === FREE && protect[i] === 0) candidates.push(i);
  }
  let freeCount = 0;
  for (let i = 0; i < N; i++) if (grid[i] === FREE) freeCount++;
  const holeTarget = Math.min(
    candidates.length,
    Math.round(c.hole_density * freeCount),
  );
  const holeList: number[] = [];
  const isCandidate = new Uint8Array(N);
  for (const cell of candidates) isCandidate[cell] = 1;
  let remaining = candidates.length;
  const pickUniform = (): number => {
    // rejection sampling over the candidate list (kept dense below)
    for (;;) {
      const cell = candidates[rng.int(candidates.length)]!;
      if (isCandidate[cell] === 1) return cell;
    }
  };
  const nb = [0, 0, 0, 0];
  while (holeList.length < holeTarget && remaining > 0) {
    let cell = -1;
    if (holeList.length > 0 && rng.chance(c.hole_clustering)) {
      const h = holeList[rng.int(holeList.length)]!;
      const r = Math.floor(h / W), col = h % W;
      let m = 0;
      if (r > 0 && isCandidate[h - W] === 1) nb[m++] = h - W;
      if (r < H - 1 && isCandidate[h + W] === 1) nb[m++] = h + W;
      if (col > 0 && isCandidate[h - 1] === 1) nb[m++] = h - 1;
      if (col < W - 1 && isCandidate[h + 1] === 1) nb[m++] = h + 1;
      if (m > 0) cell = nb[rng.int(m)]!;
    }
    if (cell < 0) cell = pickUniform();
    grid[cell] = HOLE;
    isCandidate[cell] = 0;
    remaining--;
    holeList.push(cell);
  }
  return holeList.length;
}
