/**
 * Makespan-optimal MAPF: conflict-based search whose high level is ordered
 * by makespan instead of sum-of-costs.
 *
 * The tree is CBS's (solve_cbs.ts): a vertex conflict `(a, b, cell, t)`
 * forbids `cell` at `t` to `a` in one child and to `b` in the other; an edge
 * conflict forbids each agent its own move. The low level is the same
 * space-time A* (earliest arrival under the agent's constraints, agents stay
 * on their goals once there). Adding a constraint never makes an agent
 * arrive earlier, so a node's makespan (its latest earliest-arrival) bounds
 * every descendant's from below, and for any solution there is always an
 * open node whose constraints it satisfies and whose makespan is at most
 * its own. Best-first on makespan therefore returns a makespan-optimal plan
 * (ties: fewer conflicting pairs first, then lower sum-of-costs). With the
 * node limit reached it gives up (`null`); it never returns a plan that is
 * not makespan-optimal.
 *
 * @module
 */
import type { CompiledInstance } from "./instance.ts";
import { at, firstConflict, type Solution } from "./solution.ts";
import { spaceTimeAStar, type SpaceTimeBlocks } from "./space_time_astar.ts";

/** Options of {@linkcode solveMakespan}. */
export interface MakespanOptions {
  /** Give up after expanding this many high-level nodes. @default 20000 */
  maxNodes?: number;
  /** Expansion limit per low-level search. @default 100000 */
  maxExpansions?: number;
}

interface _Constraint {
  readonly agent: number;
  /** -1 for a vertex constraint, else the `from` cell of a forbidden move. */
  readonly from: number;
  readonly cell: number;
  readonly t: number;
}

interface _Node {
  readonly parent: _Node | null;
  readonly constraint: _Constraint | null;
  readonly paths: Int32Array[];
  readonly makespan: number;
  readonly soc: number;
  readonly conflicts: number;
  readonly id: number;
}

class _Blocks implements SpaceTimeBlocks {
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

function _conflictingPairs(paths: readonly Int32Array[]): number {
  const n = paths.length;
  let T = 0;
  for (const p of paths) if (p.length - 1 > T) T = p.length - 1;
  let count = 0;
  for (let a = 0; a < n; a++) {
    for (let b = a + 1; b < n; b++) {
      const pa = paths[a]!, pb = paths[b]!;
      for (let t = 0; t <= T; t++) {
        const ua = at(pa, t), ub = at(pb, t);
        if (
          ua === ub || (t > 0 && ua === at(pb, t - 1) && ub === at(pa, t - 1))
        ) {
          count++;
          break;
        }
      }
    }
  }
  return count;
}

function _better(x: _Node, y: _Node): boolean {
  if (x.makespan !== y.makespan) return x.makespan < y.makespan;
  if (x.conflicts !== y.conflicts) return x.conflicts < y.conflicts;
  if (x.soc !== y.soc) return x.soc < y.soc;
  return x.id > y.id;
}

/**
 * A makespan-optimal plan by CBS ordered on makespan, or `null` if none was
 * found within the node limit (or none exists). The plan's `soc` is the
 * lowest this search met among plans of that makespan, not necessarily the
 * lowest possible: take sum-of-costs optima from {@linkcode solveCBS}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compileInstance, validateInstance } from "./instance.ts";
 * import { solveMakespan } from "./solve_makespan.ts";
 * const inst = compileInstance(validateInstance({
 *   width: 3, height: 1, cells: ["..."], starts: [[0, 0]], goals: [[0, 2]], horizon: 9,
 * }));
 * assert.equal(solveMakespan(inst)?.makespan, 2);
 * ```
 */
export function solveMakespan(
  inst: CompiledInstance,
  options: MakespanOptions = {},
): Solution | null {
  const n = inst.agents;
  const cells = inst.cellCount;
  const maxNodes = options.maxNodes ?? 20000;
  const maxExpansions = options.maxExpansions ?? 100000;
  const plan = (
    a: number,
    node: _Node | null,
    extra: _Constraint | null,
  ): Int32Array | null => {
    const blocks = new _Blocks(cells);
    if (extra) blocks.add(extra);
    for (let k = node; k; k = k.parent) {
      if (k.constraint && k.constraint.agent === a) blocks.add(k.constraint);
    }
    return spaceTimeAStar(
      inst.grid,
      inst.width,
      inst.height,
      inst.starts[a]!,
      inst.goals[a]!,
      inst.dist.subarray(a * cells, (a + 1) * cells),
      blocks,
      { maxExpansions },
    );
  };
  let ids = 0;
  const mk = (
    parent: _Node | null,
    constraint: _Constraint | null,
    paths: Int32Array[],
  ): _Node => {
    let soc = 0, makespan = 0;
    for (const p of paths) {
      soc += p.length - 1;
      if (p.length - 1 > makespan) makespan = p.length - 1;
    }
    return {
      parent,
      constraint,
      paths,
      makespan,
      soc,
      conflicts: _conflictingPairs(paths),
      id: ids++,
    };
  };
  const root: Int32Array[] = [];
  for (let a = 0; a < n; a++) {
    const p = plan(a, null, null);
    if (!p) return null;
    root.push(p);
  }
  const heap: _Node[] = [];
  const push = (x: _Node) => {
    let i = heap.length;
    heap.push(x);
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (!_better(x, heap[up]!)) break;
      heap[i] = heap[up]!;
      i = up;
    }
    heap[i] = x;
  };
  const pop = (): _Node => {
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      let i = 0;
      for (;;) {
        let c = 2 * i + 1;
        if (c >= heap.length) break;
        if (c + 1 < heap.length && _better(heap[c + 1]!, heap[c]!)) c++;
        if (!_better(heap[c]!, last)) break;
        heap[i] = heap[c]!;
        i = c;
      }
      heap[i] = last;
    }
    return top;
  };
  push(mk(null, null, root));
  let expanded = 0;
  while (heap.length > 0) {
    const node = pop();
    const conflict = firstConflict(node.paths);
    if (!conflict) {
      return {
        paths: node.paths,
        soc: node.soc,
        makespan: node.makespan,
        solver: "cbs",
      };
    }
    if (++expanded > maxNodes) break;
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
      push(mk(node, c, paths));
    }
  }
  return null;
}
