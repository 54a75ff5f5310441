/**
 * An episode read as a joint plan, the way the paper's evaluator reads a
 * language model's answer: is it valid (every goal reached, no illegal move,
 * no conflict), and is it optimal (valid, and its cost equals the exact
 * optimum)?
 *
 * Any policy's episode can be read so: a language model's one-shot plan
 * replayed by the dynamics, or a stepping policy's rollout (its chosen
 * actions are the plan). Reading rules, on the chosen actions of agents not
 * yet on their goals (an agent stays on its goal once there, the dynamics'
 * rule, so later moves in a plan are never examined):
 * - an **illegal move** is a chosen move off the map, into a wall, or into a
 *   hole (impassable or lethal);
 * - a **conflict** is a vertex or edge collision (the episode's outcome in
 *   collision mode `fail`), or, in mode `block` on an instance without slip,
 *   a legal chosen move the dynamics cancelled because of another agent;
 * - the cost is the MAPF literature's: sum of arrival times (SoC) and the
 *   latest arrival (makespan).
 *
 * Optimality is decided against exact optima (exact_optimum.ts), and only
 * searched for when no bound settles it: a valid plan whose cost equals the
 * lower bound (sum, or maximum, of the agents' distances) is optimal; one
 * whose cost exceeds the instance's reference (a valid plan the solvers
 * found) is not; a sum-of-costs reference from CBS is exact (so is the
 * `paper-grid`'s makespan reference, but nothing in an instance says so, and
 * the makespan search confirms it). Otherwise the optimum is searched for, on
 * instances of up to `maxAgents` agents (5, the paper's grid: beyond that the
 * searches cost seconds an instance); when the search gives up or is not
 * made, optimality is unknown (`null`), never guessed.
 *
 * @module
 */
import { solveCBS } from "./solve_cbs.ts";
import { solveMakespan } from "./solve_makespan.ts";
import { FREE } from "./grid.ts";
import {
  type CompiledInstance,
  compileInstance,
  type Instance,
} from "./instance.ts";
import type { Episode } from "./trajectory.ts";

/** What an episode is, read as a plan. */
export interface PlanReading {
  /** Every agent ended on its goal. */
  readonly goals_reached: boolean;
  /** Agents on their goals at the end. */
  readonly agents_on_goal: number;
  /** Agents. */
  readonly agents: number;
  /** Chosen moves off the map, into a wall or into a hole. */
  readonly illegal_moves: number;
  /** Collisions (and, in mode `block`, moves cancelled because of another agent). */
  readonly conflicts: number;
  /** Goals reached, no illegal move, no conflict. */
  readonly valid: boolean;
  /** Sum of arrival times of a valid plan, else null. */
  readonly soc: number | null;
  /** Latest arrival of a valid plan, else null. */
  readonly makespan: number | null;
  /** Valid, at the least sum-of-costs; null when the optimum is unknown. */
  readonly optimal_soc: boolean | null;
  /** Valid, at the least makespan; null when the optimum is unknown. */
  readonly optimal_makespan: boolean | null;
}

/** Options of {@linkcode readPlan}. */
export interface ReadPlanOptions {
  /** High-level node limit of an optimum search (every optimum of the grid is found within it). @default 2000 */
  maxNodes?: number;
  /** Search optima only on instances of at most this many agents. @default 5 */
  maxAgents?: number;
  /** Optima found so far, by instance id (filled in; reuse it across episodes). */
  optima?: Map<string, { soc?: number | null; makespan?: number | null }>;
}

const _DR = [0, -1, 1, 0, 0];
const _DC = [0, 0, 0, -1, 1];

/**
 * Read `ep`, an episode of `inst`, as a plan.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validateInstance } from "./instance.ts";
 * import { replayPlan } from "./replay.ts";
 * import { readPlan } from "./plan_reading.ts";
 * const inst = validateInstance({
 *   id: "x", width: 3, height: 1, cells: ["..."], starts: [[0, 0]],
 *   goals: [[0, 2]], horizon: 9, holes: "blocked",
 * });
 * const r = readPlan(inst, replayPlan(inst, [[4, 4]]));
 * assert.equal(r.valid, true);
 * assert.equal(r.optimal_makespan, true);
 * assert.equal(readPlan(inst, replayPlan(inst, [[1, 4, 4]])).illegal_moves, 1);
 * ```
 */
export function readPlan(
  inst: Instance,
  ep: Episode,
  options: ReadPlanOptions = {},
): PlanReading {
  const c = compileInstance(inst);
  const n = c.agents, W = c.width, H = c.height;
  if (ep.agents !== n) {
    throw new RangeError(
      `episode of ${ep.instance} has ${ep.agents} agents; instance ${inst.id} has ${n}`,
    );
  }
  const arrival = new Int32Array(n).fill(-1);
  for (let a = 0; a < n; a++) {
    if (ep.positions[a] === c.goals[a]) arrival[a] = 0;
  }
  let illegal = 0, conflicts = 0;
  for (let t = 0; t < ep.steps; t++) {
    for (let a = 0; a < n; a++) {
      if (arrival[a]! >= 0 && arrival[a]! <= t) continue;
      const act = ep.actions[t * n + a]!;
      const p = ep.positions[t * n + a]!;
      if (act >= 1 && act <= 4) {
        const r = Math.floor(p / W) + _DR[act]!, col = (p % W) + _DC[act]!;
        if (r < 0 || r >= H || col < 0 || col >= W) illegal++;
        else {
          const q = r * W + col;
          if (c.grid[q] !== FREE) illegal++;
          else if (
            c.collision === 1 && c.slip === 0 &&
            ep.positions[(t + 1) * n + a] !== q
          ) conflicts++;
        }
      }
      if (ep.positions[(t + 1) * n + a] === c.goals[a] && arrival[a]! < 0) {
        arrival[a] = t + 1;
      }
    }
  }
  if (ep.outcome === "vertex_collision" || ep.outcome === "edge_collision") {
    conflicts++;
  }
  if (ep.outcome === "hole" && illegal === 0) illegal++;
  let onGoal = 0;
  for (let a = 0; a < n; a++) {
    if (ep.positions[ep.steps * n + a] === c.goals[a]) onGoal++;
  }
  const reached = ep.outcome === "success";
  const valid = reached && illegal === 0 && conflicts === 0;
  let soc: number | null = null, makespan: number | null = null;
  if (valid) {
    soc = 0;
    makespan = 0;
    for (let a = 0; a < n; a++) {
      soc += arrival[a]!;
      if (arrival[a]! > makespan) makespan = arrival[a]!;
    }
  }
  const optimal = valid
    ? _optimality(inst, c, soc!, makespan!, options)
    : { soc: false, makespan: false };
  return {
    goals_reached: reached,
    agents_on_goal: onGoal,
    agents: n,
    illegal_moves: illegal,
    conflicts,
    valid,
    soc,
    makespan,
    optimal_soc: optimal.soc,
    optimal_makespan: optimal.makespan,
  };
}

function _optimality(
  inst: Instance,
  c: CompiledInstance,
  soc: number,
  makespan: number,
  options: ReadPlanOptions,
): { soc: boolean | null; makespan: boolean | null } {
  let sumDist = 0, maxDist = 0;
  for (let a = 0; a < c.agents; a++) {
    const d = c.dist[a * c.cellCount + c.starts[a]!]!;
    sumDist += d;
    if (d > maxDist) maxDist = d;
  }
  const ref = inst.reference;
  const memo = options.optima?.get(inst.id) ?? {};
  const maxNodes = options.maxNodes ?? 2000;
  const search = c.agents <= (options.maxAgents ?? 5);
  let optSoc: boolean | null;
  if (soc === sumDist) optSoc = true;
  else if (ref && soc > ref.soc) optSoc = false;
  else if (ref?.solver === "cbs") optSoc = soc === ref.soc;
  else {
    if (memo.soc === undefined) {
      memo.soc = search ? solveCBS(c, { maxNodes })?.soc ?? null : null;
    }
    optSoc = memo.soc === null ? null : soc === memo.soc;
  }
  let optMakespan: boolean | null;
  if (makespan === maxDist) optMakespan = true;
  else if (ref && makespan > ref.makespan) optMakespan = false;
  else {
    if (memo.makespan === undefined) {
      memo.makespan = search
        ? solveMakespan(c, { maxNodes })?.makespan ?? null
        : null;
    }
    optMakespan = memo.makespan === null ? null : makespan === memo.makespan;
  }
  options.optima?.set(inst.id, memo);
  return { soc: optSoc, makespan: optMakespan };
}
