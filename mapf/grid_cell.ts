/**
 * Cells of agents x map size, as the paper's benchmark names them
 * (`3ag_3x3`: 3 agents on 3 rows x 3 columns): the columns of its tables.
 *
 * @module
 */
import type { Instance } from "./instance.ts";

/**
 * The cell name of an agent count and a map size.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cellName } from "./grid_cell.ts";
 * assert.equal(cellName(3, 4, 4), "3ag_4x4");
 * ```
 */
export function cellName(agents: number, rows: number, cols: number): string {
  return `${agents}ag_${rows}x${cols}`;
}

/** The cell of an instance (its agents and map size), whatever its origin. */
export function cellOf(inst: Instance): string {
  return cellName(inst.starts.length, inst.height, inst.width);
}
