/**
 * The exact optima of an instance: the least sum-of-costs (conflict-based
 * search, solve_cbs.ts) and the least makespan (CBS ordered on makespan,
 * solve_makespan.ts), each over all collision-free plans under the dynamics'
 * rules (agents stay on their goals once there). The two optima may come
 * from different plans.
 *
 * @module
 */
import type { CompiledInstance } from "./instance.ts";
import { solveCBS } from "./solve_cbs.ts";
import { solveMakespan } from "./solve_makespan.ts";

/** Exact optimal costs of an instance. */
export interface Optimum {
  /** Least sum of arrival times over all valid plans. */
  readonly soc: number;
  /** Least largest arrival time over all valid plans. */
  readonly makespan: number;
}

/** Options of {@linkcode exactOptimum}. */
export interface ExactOptions {
  /** High-level node limit of each search. @default 20000 */
  maxNodes?: number;
}

/**
 * The exact optima of `inst`, or `null` when a search gave up at its node
 * limit (or the instance has no plan). Never an approximation.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compileInstance, validateInstance } from "./instance.ts";
 * import { exactOptimum } from "./exact_optimum.ts";
 * // two agents swap the ends of a corridor: one steps into the side pocket
 * const inst = compileInstance(validateInstance({
 *   width: 3, height: 2, cells: ["...", "#.#"], starts: [[0, 0], [0, 2]],
 *   goals: [[0, 2], [0, 0]], horizon: 20,
 * }));
 * assert.deepEqual(exactOptimum(inst), { soc: 7, makespan: 4 });
 * ```
 */
export function exactOptimum(
  inst: CompiledInstance,
  options: ExactOptions = {},
): Optimum | null {
  const maxNodes = options.maxNodes ?? 20000;
  const soc = solveCBS(inst, { maxNodes });
  if (!soc) return null;
  // lower bound of the makespan: the farthest agent's distance
  let lower = 0;
  for (let a = 0; a < inst.agents; a++) {
    const d = inst.dist[a * inst.cellCount + inst.starts[a]!]!;
    if (d > lower) lower = d;
  }
  if (soc.makespan === lower) return { soc: soc.soc, makespan: lower };
  const mk = solveMakespan(inst, { maxNodes });
  if (!mk) return null;
  return { soc: soc.soc, makespan: mk.makespan };
}
