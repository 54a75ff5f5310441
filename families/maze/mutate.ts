/**
 * ACCEL's edit of a maze (Parker-Holder et al. 2022): flip one cell between
 * wall and free, or move the goal to another free cell. The result is always
 * a valid, solvable maze; edits that would cut the goal off are redrawn.
 *
 * @module
 */
import { checkMaze, type Maze } from "./maze.ts";

/** The random numbers an edit draws (a family's `FamilyRng`). */
export interface EditRng {
  /** Uniform float in [0, 1). */
  float(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
}

/** Share of edits that flip a cell (the rest move the goal). */
export const FLIP_SHARE = 0.8;
/** Draws before giving up (then the edit is `null`). */
export const EDIT_ATTEMPTS = 32;

/**
 * One edit of `maze` drawn from `rng`: a flipped cell (never the start or
 * the goal) or a moved goal; `null` when no solvable edit was found in
 * {@linkcode EDIT_ATTEMPTS} draws.
 */
export function mutateMaze(maze: Maze, rng: EditRng): Maze | null {
  const cells = maze.width * maze.height;
  for (let attempt = 0; attempt < EDIT_ATTEMPTS; attempt++) {
    let next: Maze;
    if (rng.float() < FLIP_SHARE) {
      const c = rng.int(cells);
      if (c === maze.start || c === maze.goal) continue;
      const walls = maze.walls.slice();
      walls[c] = walls[c] ? 0 : 1;
      next = { ...maze, walls };
    } else {
      const c = rng.int(cells);
      if (c === maze.start || c === maze.goal || maze.walls[c]) continue;
      next = { ...maze, goal: c };
    }
    if (checkMaze(next) === undefined) return next;
  }
  return null;
}
