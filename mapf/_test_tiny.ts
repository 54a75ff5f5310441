// Test utility: tiny random instances and their exact optima by brute force.
import {
  type CompiledInstance,
  type Instance,
  validateInstance,
} from "./instance.ts";
import { FREE } from "./grid.ts";
import type { Rng } from "./rng.ts";

/**
 * Both optima by exhaustive search over joint states (tiny instances only):
 * Dijkstra for the sum of arrival times (a step costs the agents not yet on
 * their goals), breadth-first for the makespan. Agents stay on their goals
 * once there; vertex and swap conflicts are forbidden.
 */
export function bruteForceOptima(
  inst: CompiledInstance,
): { soc: number; makespan: number } | null {
  const n = inst.agents, W = inst.width, H = inst.height, C = inst.cellCount;
  const enc = (pos: readonly number[]) => pos.reduce((k, p) => k * C + p, 0);
  const successors = (pos: readonly number[]): number[][] => {
    const opts = pos.map((p, a) => {
      if (p === inst.goals[a]) return [p];
      const r = Math.floor(p / W), c = p % W;
      const out = [p];
      if (r > 0) out.push(p - W);
      if (r < H - 1) out.push(p + W);
      if (c > 0) out.push(p - 1);
      if (c < W - 1) out.push(p + 1);
      return out.filter((q) => inst.grid[q] === FREE);
    });
    const all: number[][] = [];
    const next = new Array<number>(n);
    const rec = (a: number) => {
      if (a === n) {
        for (let i = 0; i < n; i++) {
          for (let j = i + 1; j < n; j++) {
            if (next[i] === next[j]) return;
            if (next[i] === pos[j] && next[j] === pos[i]) return;
          }
        }
        all.push([...next]);
        return;
      }
      for (const q of opts[a]!) {
        next[a] = q;
        rec(a + 1);
      }
    };
    rec(0);
    return all;
  };
  const done = (pos: readonly number[]) =>
    pos.every((p, a) => p === inst.goals[a]);
  const start = Array.from(inst.starts);
  // makespan: BFS
  let makespan = -1;
  const seen = new Set([enc(start)]);
  let layer = [start];
  for (let d = 0; layer.length > 0 && makespan < 0; d++) {
    if (layer.some(done)) {
      makespan = d;
      break;
    }
    const nextLayer: number[][] = [];
    for (const pos of layer) {
      for (const s of successors(pos)) {
        const k = enc(s);
        if (!seen.has(k)) {
          seen.add(k);
          nextLayer.push(s);
        }
      }
    }
    layer = nextLayer;
  }
  if (makespan < 0) return null;
  // sum of costs: Dijkstra with bucketed costs
  const dist = new Map<number, number>([[enc(start), 0]]);
  const buckets: number[][][] = [[start]];
  for (let d = 0; d < buckets.length; d++) {
    for (const pos of buckets[d] ?? []) {
      if (dist.get(enc(pos)) !== d) continue;
      if (done(pos)) return { soc: d, makespan };
      const active = pos.filter((p, a) => p !== inst.goals[a]).length;
      for (const s of successors(pos)) {
        const k = enc(s), nd = d + active;
        if (nd < (dist.get(k) ?? Infinity)) {
          dist.set(k, nd);
          (buckets[nd] ??= []).push(s);
        }
      }
    }
  }
  return null;
}

/**
 * A random `w x h` map (each cell a hole with probability `holes`) with `n`
 * agents on distinct free starts and goals, horizon 100, or null when fewer
 * than `2 n` cells are free. `holeRule` is the instance's `holes` field
 * (left out: the default).
 */
export function randomTinyInstance(
  rng: Rng,
  w: number,
  h: number,
  n: number,
  holes: number,
  holeRule?: "blocked",
): Instance | null {
  const cells = Array.from(
    { length: h },
    () =>
      Array.from({ length: w }, () => (rng.chance(holes) ? "H" : ".")).join(""),
  );
  const free: number[] = [];
  for (let i = 0; i < w * h; i++) {
    if (cells[Math.floor(i / w)]![i % w] === ".") free.push(i);
  }
  if (free.length < 2 * n) return null;
  rng.shuffle(free);
  const pos = (c: number) => [Math.floor(c / w), c % w];
  return validateInstance({
    id: "tiny",
    width: w,
    height: h,
    cells,
    starts: free.slice(0, n).map(pos),
    goals: free.slice(n, 2 * n).map(pos),
    horizon: 100,
    ...(holeRule ? { holes: holeRule } : {}),
  });
}
