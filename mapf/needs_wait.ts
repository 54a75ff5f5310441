/**
 * Whether an instance needs a wait: the property the per-size form's wait
 * ratio counts (the paper: "the share of instances whose optimal solution
 * needs at least one wait to resolve conflicts").
 *
 * Definition. A plan *waits* when some agent stays in its cell at a step
 * before its arrival (the step it reaches its goal, where it then stays;
 * the dynamics never let an agent pass through its own goal). An instance
 * **needs a wait** when every plan of optimal sum of costs waits, i.e. when
 * the optimal sum of costs over all plans (CBS) is smaller than the optimal
 * sum of costs over plans that never wait, or no plan without a wait
 * exists. An instance whose optimum needs only a detour (on a 4-connected
 * grid a detour costs 2 moves, a wait 1: two waits and a detour of 2 tie)
 * does not need a wait; neither does an instance whose agents' shortest
 * paths never meet.
 *
 * Computation: {@linkcode solveCBS} gives the optimum `C*`; a second CBS,
 * whose low level forbids staying before arrival and whose arrivals are
 * bounded so that no plan costs more than `C*`, looks for a wait-free plan
 * of cost `C*`. It explores only nodes of cost `<= C*`, so it is cheap
 * exactly when the answer is "needs a wait" quickly.
 *
 * @module
 */
import type { CompiledInstance } from "./instance.ts";
import { spaceTimeAStar, type SpaceTimeBlocks } from "./space_time_astar.ts";
import { firstConflict, type Solution } from "./solution.ts";
import { solveCBS } from "./solve_cbs.ts";

/** Options of {@linkcode needsWait}. */
export interface NeedsWaitOptions {
  /** High-level node budget of each CBS search. @default 2000 */
  maxNodes?: number;
  /** Expansion limit of each low-level search. @default 50000 */
  maxExpansions?: number;
}

/** What {@linkcode needsWait} found. */
export interface WaitVerdict {
  /** Every sum-of-costs-optimal plan waits. */
  readonly needs_wait: boolean;
  /** The CBS-optimal plan (sum of costs `soc`). */
  readonly solution: Solution;
  /** Sum of the agents' shortest-path distances (a lower bound of `soc`). */
  readonly shortest: number;
}

/** Whether a plan waits: some agent stays in its cell before its arrival. */
export function planWaits(paths: readonly ArrayLike<number>[]): boolean {
  for (const p of paths) {
    for (let t = 1; t < p.length; t++) if (p[t] === p[t - 1]) return true;
  }
  return false;
}

/**
 * Decide whether an instance needs a wait (see the module doc), or `null`
 * when CBS cannot solve it within the budget (no plan, or too hard).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compileInstance } from "./instance.ts";
 * import { needsWait } from "./needs_wait.ts";
 * // a plus-shaped crossing: both agents reach the centre at t = 1
 * const inst = compileInstance({
 *   id: "x", config: "x", seed: 0, index: 0, width: 3, height: 3,
 *   cells: ["H.H", "...", "H.H"], starts: [[1, 0], [0, 1]], goals: [[1, 2], [2, 1]],
 *   slip: 0, horizon: 10, collision: "fail", holes: "lethal", reference: null,
 * });
 * assert.equal(needsWait(inst)?.needs_wait, true);
 * ```
 */
export function needsWait(
  inst: CompiledInstance,
  options: NeedsWaitOptions = {},
): WaitVerdict | null {
  const maxNodes = options.maxNodes ?? 2000;
  const maxExpansions = options.maxExpansions ?? 50000;
  const solution = solveCBS(inst, { maxNodes, maxExpansions });
  if (!solution) return null;
  let shortest = 0;
  const cells = inst.cellCount;
  for (let a = 0; a < inst.agents; a++) {
    shortest += inst.dist[a * cells + inst.starts[a]!]!;
  }
  if (!planWaits(solution.paths)) {
    return { needs_wait: false, solution, shortest };
  }
  const free = waitFreePlan(inst, solution.soc, { maxNodes, maxExpansions });
  // a budget overrun of the wait-free search is undecided: treat as unsolved
  if (free === "budget") return null;
  return { needs_wait: free === null, solution, shortest };
}

/** A CBS constraint of the wait-free search. */
interface _Constraint {
  readonly agent: number;
  /** -1: vertex constraint; else the `from` cell of a forbidden move. */
  readonly from: number;
  readonly cell: number;
  readonly t: number;
}

/** CBS constraints of one agent, plus the ban on staying before arrival. */
class _NoWaitBlocks implements SpaceTimeBlocks {
  #cells: number;
  #vertex = new Set<number>();
  #edge = new Set<number>();
  #last = new Map<number, number>();
  #horizon = -1;
  constructor(cells: number) {
    this.#cells = cells;
  }
  add(c: _Constraint): void {
    const cells = this.#cells;
    if (c.from < 0) {
      this.#vertex.add(c.t * cells + c.cell);
      if ((this.#last.get(c.cell) ?? -1) < c.t) this.#last.set(c.cell, c.t);
    } else this.#edge.add((c.t * cells + c.from) * cells + c.cell);
    if (c.t > this.#horizon) this.#horizon = c.t;
  }
  blocked(from: number, to: number, t: number): boolean {
    // t = 0 is the start check of the low level, not a step
    if (from === to && t > 0) return true;
    const cells = this.#cells;
    if (this.#vertex.has(t * cells + to)) return true;
    return from !== to && this.#edge.has((t * cells + from) * cells + to);
  }
  lastBlocked(cell: number): number {
    return this.#last.get(cell) ?? -1;
  }
  horizon(): number {
    return this.#horizon;
  }
}

interface _Node {
  readonly parent: _Node | null;
  readonly constraint: _Constraint | null;
  readonly paths: Int32Array[];
  readonly cost: number;
  readonly id: number;
}

/**
 * A plan that never waits and costs at most `bound` (sum of arrival
 * times), found by CBS over wait-free paths; `null` if none exists,
 * `"budget"` if the search ran out of nodes first.
 */
export function waitFreePlan(
  inst: CompiledInstance,
  bound: number,
  options: { maxNodes?: number; maxExpansions?: number } = {},
): Int32Array[] | null | "budget" {
  const n = inst.agents;
  const cells = inst.cellCount;
  const maxNodes = options.maxNodes ?? 2000;
  const maxExpansions = options.maxExpansions ?? 50000;
  const lower: number[] = [];
  let lowerSum = 0;
  for (let a = 0; a < n; a++) {
    const d = inst.dist[a * cells + inst.starts[a]!]!;
    lower.push(d);
    lowerSum += d;
  }
  if (lowerSum > bound) return null;
  const plan = (a: number, node: _Node | null, extra: _Constraint | null) => {
    const blocks = new _NoWaitBlocks(cells);
    if (extra) blocks.add(extra);
    for (let k = node; k; k = k.parent) {
      if (k.constraint && k.constraint.agent === a) blocks.add(k.constraint);
    }
    // no plan may cost more than `bound`: the others need at least their distances
    const maxTime = bound - (lowerSum - lower[a]!);
    return spaceTimeAStar(
      inst.grid,
      inst.width,
      inst.height,
      inst.starts[a]!,
      inst.goals[a]!,
      inst.dist.subarray(a * cells, (a + 1) * cells),
      blocks,
      { maxTime, maxExpansions },
    );
  };
  let ids = 0;
  const mk = (
    parent: _Node | null,
    constraint: _Constraint | null,
    paths: Int32Array[],
  ): _Node => {
    let cost = 0;
    for (const p of paths) cost += p.length - 1;
    return { parent, constraint, paths, cost, id: ids++ };
  };
  const root: Int32Array[] = [];
  for (let a = 0; a < n; a++) {
    const p = plan(a, null, null);
    if (!p) return null;
    root.push(p);
  }
  // best-first on cost (then newest): a small sorted open list is enough here
  const open: _Node[] = [mk(null, null, root)];
  let expanded = 0;
  while (open.length > 0) {
    let best = 0;
    for (let i = 1; i < open.length; i++) {
      const x = open[i]!, y = open[best]!;
      if (x.cost < y.cost || (x.cost === y.cost && x.id > y.id)) best = i;
    }
    const node = open[best]!;
    open[best] = open[open.length - 1]!;
    open.pop();
    if (node.cost > bound) continue;
    const conflict = firstConflict(node.paths);
    if (!conflict) return node.paths;
    if (++expanded > maxNodes) return "budget";
    const branches: _Constraint[] = conflict.kind === "vertex"
      ? [
        { agent: conflict.a, from: -1, cell: conflict.cell, t: conflict.t },
        { agent: conflict.b, from: -1, cell: conflict.cell, t: conflict.t },
      ]
      : [
        {
          agent: conflict.a,
          from: conflict.cell,
          cell: conflict.to,
          t: conflict.t,
        },
        {
          agent: conflict.b,
          from: conflict.to,
          cell: conflict.cell,
          t: conflict.t,
        },
      ];
    for (const c of branches) {
      const p = plan(c.agent, node, c);
      if (!p) continue;
      const paths = node.paths.slice();
      paths[c.agent] = p;
      const child = mk(node, c, paths);
      if (child.cost <= bound) open.push(child);
    }
  }
  return null;
}
