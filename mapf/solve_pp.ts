/**
 * Prioritized planning (PP): agents plan one after another with space-time
 * A*, each avoiding the paths of the agents planned before it through a
 * reservation table with vertex reservations (cell, time), edge reservations
 * (no swaps) and parked agents (an agent occupies its goal from its arrival
 * on). Fast and incomplete: if an order fails, other orders are tried.
 *
 * @module
 */
import type { CompiledInstance } from "./instance.ts";
import { Rng } from "./rng.ts";
import { spaceTimeAStar, type SpaceTimeBlocks } from "./space_time_astar.ts";
import type { Solution } from "./solution.ts";

const NEVER = 0x7fffffff;

/** The reservation table of prioritized planning. */
export class Reservations implements SpaceTimeBlocks {
  #cells: number;
  #occ = new Map<number, number>();
  #parked: Int32Array;
  #last: Int32Array;
  #horizon = -1;

  /** An empty table for a grid of `cells` cells. */
  constructor(cells: number) {
    this.#cells = cells;
    this.#parked = new Int32Array(cells).fill(NEVER);
    this.#last = new Int32Array(cells).fill(-1);
  }

  /** Reserve an agent's path; it stays on the last cell forever. */
  add(agent: number, path: ArrayLike<number>): void {
    const cells = this.#cells;
    const T = path.length - 1;
    for (let t = 0; t <= T; t++) {
      const c = path[t]!;
      this.#occ.set(t * cells + c, agent);
      if (t > this.#last[c]!) this.#last[c] = t;
    }
    this.#parked[path[T]!] = T;
    if (T > this.#horizon) this.#horizon = T;
  }

  blocked(from: number, to: number, t: number): boolean {
    if (this.#parked[to]! <= t) return true;
    const cells = this.#cells;
    if (this.#occ.has(t * cells + to)) return true;
    if (from !== to) {
      const b = this.#occ.get((t - 1) * cells + to);
      if (b !== undefined && this.#occ.get(t * cells + from) === b) return true;
    }
    return false;
  }

  lastBlocked(cell: number): number {
    return this.#parked[cell] !== NEVER ? NEVER - 1 : this.#last[cell]!;
  }

  horizon(): number {
    return this.#horizon;
  }
}

/** Options of {@linkcode solvePP}. */
export interface PPOptions {
  /** Random agent orders tried after the two fixed ones (longest distance first, then index order). @default 4 */
  restarts?: number;
  /** Seed of the random orders. @default 0 */
  seed?: number;
  /** Latest allowed arrival time of any agent. @default unbounded (the search bounds itself) */
  maxTime?: number;
  /** Expansion limit per single-agent search. @default 200000 */
  maxExpansions?: number;
}

/** Plan agents in the given order; `null` if some agent finds no path. */
export function planInOrder(
  inst: CompiledInstance,
  order: readonly number[],
  options: PPOptions = {},
): Int32Array[] | null {
  const res = new Reservations(inst.cellCount);
  const paths: Int32Array[] = new Array(inst.agents);
  for (const a of order) {
    const dist = inst.dist.subarray(
      a * inst.cellCount,
      (a + 1) * inst.cellCount,
    );
    const path = spaceTimeAStar(
      inst.grid,
      inst.width,
      inst.height,
      inst.starts[a]!,
      inst.goals[a]!,
      dist,
      res,
      {
        ...(options.maxTime !== undefined ? { maxTime: options.maxTime } : {}),
        maxExpansions: options.maxExpansions ?? 200000,
      },
    );
    if (!path) return null;
    res.add(a, path);
    paths[a] = path;
  }
  return paths;
}

/**
 * Solve by prioritized planning: try the longest-distance-first order, the
 * index order, then `restarts` seeded random orders; return the first
 * success, or `null`.
 */
export function solvePP(
  inst: CompiledInstance,
  options: PPOptions = {},
): Solution | null {
  const n = inst.agents;
  const idx = Array.from({ length: n }, (_, a) => a);
  const d = (a: number) => inst.dist[a * inst.cellCount + inst.starts[a]!]!;
  const orders: number[][] = [[...idx].sort((a, b) => d(b) - d(a) || a - b)];
  if (n > 1) orders.push(idx);
  const rng = new Rng(options.seed ?? 0, n, 0x99);
  const restarts = options.restarts ?? 4;
  const tried = new Set<string>();
  for (let k = 0; k < 2 + restarts; k++) {
    const order = k < orders.length ? orders[k]! : rng.shuffle([...idx]);
    const key = order.join(",");
    if (tried.has(key)) continue;
    tried.add(key);
    const paths = planInOrder(inst, order, options);
    if (paths) return makeSolution(paths, "pp");
  }
  return null;
}

/** Build a {@linkcode Solution} from paths. */
export function makeSolution(
  paths: Int32Array[],
  solver: "pp" | "cbs",
): Solution {
  let soc = 0, makespan = 0;
  for (const p of paths) {
    soc += p.length - 1;
    if (p.length - 1 > makespan) makespan = p.length - 1;
  }
  return { paths, soc, makespan, solver };
}
