/**
 * What the grid tests share (not part of the API): a small instance from rows of cells.
 *
 * @module
 */
import { type Instance, validateInstance } from "./instance.ts";

/** A `[row, col]` position. */
export type Cell = [number, number];

/**
 * The instance "t" on `cells` (rows of `.`, `H`, ...) with agents from
 * `starts` to `goals`, horizon 20 unless `extra` says otherwise.
 */
export function gridInstance(
  cells: string[],
  starts: Cell[],
  goals: Cell[],
  extra: Partial<Instance> = {},
): Instance {
  return validateInstance({
    id: "t",
    width: cells[0]!.length,
    height: cells.length,
    cells,
    starts,
    goals,
    horizon: 20,
    ...extra,
  });
}

/**
 * Two agents in two corridors of a 2x3 grid, each two moves left of its
 * goal: agent 0 (0,0) -> (0,2), agent 1 (1,0) -> (1,2) (the optimum: SoC 4,
 * makespan 2); horizon 6 unless `extra` says otherwise.
 */
export function twoCorridors(
  id: string,
  extra: Partial<Instance> = {},
): Instance {
  const starts: Cell[] = [[0, 0], [1, 0]], goals: Cell[] = [[0, 2], [1, 2]];
  return gridInstance(["...", "..."], starts, goals, {
    horizon: 6,
    ...extra,
    id,
  });
}
