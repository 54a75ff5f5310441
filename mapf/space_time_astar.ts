/**
 * Space-time A* for one agent: the low level of prioritized planning and of
 * conflict-based search.
 *
 * States are `(cell, t)`; each step costs 1 (moving or waiting). The
 * heuristic is the agent's BFS distance to its goal (admissible and
 * consistent), so the first goal state popped has the earliest arrival.
 * Agents stay on their goals once there (the dynamics' rule), so reaching the
 * goal at time `t` is only allowed if the goal cell is never blocked at a
 * time `>= t`; a state on the goal earlier than that is a dead end (the agent
 * cannot pass through its own goal).
 *
 * @module
 */
import { FREE, UNREACHABLE } from "./grid.ts";

/** What blocks an agent: implemented by the PP reservation table and CBS constraints. */
export interface SpaceTimeBlocks {
  /** Whether the agent may not move from `from` (at `t - 1`) to `to` (at `t`); `from === to` is waiting. */
  blocked(from: number, to: number, t: number): boolean;
  /** The last time `cell` is blocked for this agent (-1 if never). */
  lastBlocked(cell: number): number;
  /** The last time anything is blocked (-1 if never), to bound the search. */
  horizon(): number;
}

/** Options of {@linkcode spaceTimeAStar}. */
export interface SpaceTimeOptions {
  /** Latest allowed arrival time. @default blocks.horizon() + cells + 1 */
  maxTime?: number;
  /** Give up after this many expansions. @default 500000 */
  maxExpansions?: number;
}

/** Statistics of the last search (for benchmarks). */
export const searchStats = { expansions: 0 };

/**
 * Earliest-arrival path of one agent, as cells from time 0 to arrival, or
 * `null` if none exists within the limits.
 *
 * @param grid Cell codes (holes and walls are impassable for planning).
 * @param dist The agent's BFS distance map (the heuristic).
 */
export function spaceTimeAStar(
  grid: Uint8Array,
  width: number,
  height: number,
  start: number,
  goal: number,
  dist: Uint16Array,
  blocks: SpaceTimeBlocks,
  options: SpaceTimeOptions = {},
): Int32Array | null {
  const cells = width * height;
  if (dist[start] === UNREACHABLE) return null;
  const goalFrom = blocks.lastBlocked(goal) + 1;
  const maxTime = options.maxTime ?? blocks.horizon() + cells + 1;
  const maxExpansions = options.maxExpansions ?? 500000;
  if (dist[start]! > maxTime) return null;
  // an agent that starts on its goal stays there (the dynamics' rule)
  if (start === goal) return goalFrom <= 0 ? Int32Array.of(start) : null;
  if (blocks.blocked(start, start, 0)) return null;

  // node storage
  let cap = 1024;
  let nCell = new Int32Array(cap);
  let nT = new Int32Array(cap);
  let nParent = new Int32Array(cap);
  let nodes = 0;
  // binary heap of node ids, keyed by f (then larger t first)
  let heap = new Int32Array(cap);
  let heapF = new Float64Array(cap);
  let size = 0;
  const seen = new Set<number>();

  const push = (cell: number, t: number, parent: number) => {
    if (nodes === cap) {
      cap *= 2;
      const c = new Int32Array(cap),
        tt = new Int32Array(cap),
        p = new Int32Array(cap);
      c.set(nCell);
      tt.set(nT);
      p.set(nParent);
      nCell = c;
      nT = tt;
      nParent = p;
      const h = new Int32Array(cap), hf = new Float64Array(cap);
      h.set(heap);
      hf.set(heapF);
      heap = h;
      heapF = hf;
    }
    const id = nodes++;
    nCell[id] = cell;
    nT[id] = t;
    nParent[id] = parent;
    // key: f * 2^16 - t  (smaller first: lower f, then later t)
    const f = (t + dist[cell]!) * 65536 - t;
    let i = size++;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (heapF[up]! <= f) break;
      heap[i] = heap[up]!;
      heapF[i] = heapF[up]!;
      i = up;
    }
    heap[i] = id;
    heapF[i] = f;
  };
  const pop = (): number => {
    const top = heap[0]!;
    const lastId = heap[--size]!;
    const lastF = heapF[size]!;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= size) break;
      if (c + 1 < size && heapF[c + 1]! < heapF[c]!) c++;
      if (heapF[c]! >= lastF) break;
      heap[i] = heap[c]!;
      heapF[i] = heapF[c]!;
      i = c;
    }
    heap[i] = lastId;
    heapF[i] = lastF;
    return top;
  };

  seen.add(start);
  push(start, 0, -1);
  let expansions = 0;
  while (size > 0) {
    const id = pop();
    const u = nCell[id]!, t = nT[id]!;
    if (u === goal) {
      if (t >= goalFrom) {
        const path = new Int32Array(t + 1);
        for (let k = id; k >= 0; k = nParent[k]!) path[nT[k]!] = nCell[k]!;
        searchStats.expansions = expansions;
        return path;
      }
      if (t > 0) continue; // would be frozen on its goal while it is still needed
    }
    if (++expansions > maxExpansions) break;
    const nt = t + 1;
    if (nt > maxTime) continue;
    const c = u % width;
    for (let a = 0; a < 5; a++) {
      let v: number;
      if (a === 0) v = u;
      else if (a === 1) v = u >= width ? u - width : -1;
      else if (a === 2) v = u + width < cells ? u + width : -1;
      else if (a === 3) v = c > 0 ? u - 1 : -1;
      else v = c < width - 1 ? u + 1 : -1;
      if (v < 0 || grid[v] !== FREE) continue;
      if (nt + dist[v]! > maxTime) continue;
      const key = nt * cells + v;
      if (seen.has(key)) continue;
      if (blocks.blocked(u, v, nt)) continue;
      seen.add(key);
      push(v, nt, id);
    }
  }
  searchStats.expansions = expansions;
  return null;
}

/** No blocks at all (single-agent shortest path with waiting allowed). */
export const NO_BLOCKS: SpaceTimeBlocks = {
  blocked: () => false,
  lastBlocked: () => -1,
  horizon: () => -1,
};
