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
  extra: Partial<Pick<Instance, "slip" | "horizon" | "collision" | "holes">> =
    {},
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
