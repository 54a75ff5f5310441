/**
 * Conflict-based search (CBS, Sharon et al. 2015): optimal sum-of-costs for
 * small instances.
 *
 * The high level searches a binary tree of constraint sets, best-first on
 * sum-of-costs (ties: fewer conflicting pairs, then newer nodes); each node
 * holds one path per agent that respects that agent's constraints. At the
 * earliest conflict the node splits: a vertex conflict `(a, b, cell, t)`
 * forbids `cell` at `t` to `a` in one child and to `b` in the other; an edge
 * conflict forbids each agent its own move at `t`. The low level is
 * space-time A*, with the dynamics' rule that an agent stays on its goal once
 * there (so a constraint on its goal at a later time delays its arrival).
 * With the node limit reached, the search gives up (`null`); it never
 * returns a suboptimal plan.
 *
 * @module
 */
import type { CompiledInstance } from "./instance.ts";
import { spaceTimeAStar, type SpaceTimeBlocks } from "./space_time_astar.ts";
import { at, firstConflict, type Solution } from "./solution.ts";
import { makeSolution } from "./solve_pp.ts";

/** Options of {@linkcode solveCBS}. */
export interface CBSOptions {
  /** Give up after expanding this many high-level nodes. @default 5000 */
  maxNodes?: number;
  /** Expansion limit per low-level search. @default 100000 */
  maxExpansions?: number;
}

/** Statistics of the last CBS run (for benchmarks and tests). */
export const cbsStats = { nodes: 0 };

interface Constraint {
  readonly agent: number;
  /** -1 for a vertex constraint, else the `from` cell of a forbidden move. */
  readonly from: number;
  readonly cell: number;
  readonly t: number;
}

interface Node {
  readonly parent: Node | null;
  readonly constraint: Constraint | null;
  readonly paths: Int32Array[];
  readonly cost: number;
  readonly conflicts: number;
  readonly id: number;
}

class ConstraintBlocks implements SpaceTimeBlocks {
  #cells: number;
  #vertex = new Set<number>();
  #edge = new Set<number>();
  #last = new Map<number, number>();
  #horizon = -1;
  constructor(cells: number) {
    this.#cells = cells;
  }
  add(c: Constraint): void {
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

function countConflicts(paths: readonly Int32Array[]): number {
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

function better(x: Node, y: Node): boolean {
  if (x.cost !== y.cost) return x.cost < y.cost;
  if (x.conflicts !== y.conflicts) return x.conflicts < y.conflicts;
  return x.id > y.id;
}

/**
 * Optimal sum-of-costs solution by CBS, or `null` if none was found within
 * the node limit (or none exists).
 */
export function solveCBS(
  inst: CompiledInstance,
  options: CBSOptions = {},
): Solution | null {
  const n = inst.agents;
  const cells = inst.cellCount;
  const maxNodes = options.maxNodes ?? 5000;
  const maxExpansions = options.maxExpansions ?? 100000;
  const plan = (
    a: number,
    node: Node | null,
    extra: Constraint | null,
  ): Int32Array | null => {
    const blocks = new ConstraintBlocks(cells);
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

  const rootPaths: Int32Array[] = [];
  for (let a = 0; a < n; a++) {
    const p = plan(a, null, null);
    if (!p) return null;
    rootPaths.push(p);
  }
  let ids = 0;
  const mk = (
    parent: Node | null,
    constraint: Constraint | null,
    paths: Int32Array[],
  ): Node => {
    let cost = 0;
    for (const p of paths) cost += p.length - 1;
    return {
      parent,
      constraint,
      paths,
      cost,
      conflicts: countConflicts(paths),
      id: ids++,
    };
  };

  // binary heap of nodes
  const heap: Node[] = [];
  const push = (x: Node) => {
    let i = heap.length;
    heap.push(x);
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (!better(x, heap[up]!)) break;
      heap[i] = heap[up]!;
      i = up;
    }
    heap[i] = x;
  };
  const pop = (): Node => {
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      let i = 0;
      for (;;) {
        let c = 2 * i + 1;
        if (c >= heap.length) break;
        if (c + 1 < heap.length && better(heap[c + 1]!, heap[c]!)) c++;
        if (!better(heap[c]!, last)) break;
        heap[i] = heap[c]!;
        i = c;
      }
      heap[i] = last;
    }
    return top;
  };

  push(mk(null, null, rootPaths));
  let expanded = 0;
  while (heap.length > 0) {
    const node = pop();
    const conflict = firstConflict(node.paths);
    if (!conflict) {
      cbsStats.nodes = expanded;
      return makeSolution(node.paths, "cbs");
    }
    if (++expanded > maxNodes) break;
    const branches: Constraint[] = conflict.kind === "vertex"
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
  cbsStats.nodes = expanded;
  return null;
}
