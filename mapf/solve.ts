/**
 * One entry point for the solvers.
 *
 * @module
 */
import {
  type CompiledInstance,
  compileInstance,
  type Instance,
} from "./instance.ts";
import type { Solution } from "./solution.ts";
import { type CBSOptions, solveCBS } from "./solve_cbs.ts";
import { type PPOptions, solvePP } from "./solve_pp.ts";

/** Which solver: `pp`, `cbs`, or `auto` (PP first, CBS when PP fails on a small instance). */
export type SolverName = "pp" | "cbs" | "auto";

/** Options of {@linkcode solve}. */
export interface SolveOptions {
  /** @default "auto" */
  solver?: SolverName;
  /** With `auto`, the largest agent count CBS is tried on. @default 6 */
  cbsMaxAgents?: number;
  /** Options of prioritized planning. */
  pp?: PPOptions;
  /** Options of CBS. */
  cbs?: CBSOptions;
}

/** Solve an instance; `null` if the chosen solver(s) found no plan. */
export function solve(
  instance: Instance | CompiledInstance,
  options: SolveOptions = {},
): Solution | null {
  const inst = "grid" in instance ? instance : compileInstance(instance);
  const solver = options.solver ?? "auto";
  if (solver === "cbs") return solveCBS(inst, options.cbs);
  const pp = solvePP(inst, options.pp);
  if (pp || solver === "pp") return pp;
  return inst.agents <= (options.cbsMaxAgents ?? 6)
    ? solveCBS(inst, options.cbs)
    : null;
}
