import assert from "node:assert/strict";
import {
  type CompiledInstance,
  compileInstance,
  validateInstance,
} from "./instance.ts";
import { exactOptimum } from "./exact_optimum.ts";
import { solveMakespan } from "./solve_makespan.ts";
import { solveCBS } from "./solve_cbs.ts";
import { firstConflict } from "./solution.ts";
import { pathsToPlan, replayPlan } from "./replay.ts";
import { FREE } from "./grid.ts";
import { Rng } from "./rng.ts";

/**
 * Both optima by exhaustive search over joint states (tiny instances only):
 * Dijkstra for the sum of arrival times (a step costs the agents not yet on
 * their goals), breadth-first for the makespan. Agents stay on their goals
 * once there; vertex and swap conflicts are forbidden.
 */
function bruteForce(
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

function randomTiny(rng: Rng, w: number, h: number, n: number) {
  const cells = Array.from(
    { length: h },
    () =>
      Array.from({ length: w }, () => (rng.chance(0.15) ? "H" : ".")).join(""),
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
    holes: "blocked",
  });
}

Deno.test("exact optima equal brute force on random tiny maps (sum of costs and makespan); makespan plans replay", () => {
  const rng = new Rng(77);
  let compared = 0, differ = 0, unsolvable = 0;
  for (let k = 0; k < 150; k++) {
    const w = 2 + rng.int(3), h = 2 + rng.int(2), n = 2 + rng.int(2);
    const inst = randomTiny(rng, w, h, n);
    if (!inst) continue;
    const c = compileInstance(inst);
    const exact = bruteForce(c);
    const got = exactOptimum(c, { maxNodes: exact === null ? 500 : 20000 });
    const where = `${inst.cells.join("/")} starts ${
      JSON.stringify(inst.starts)
    } goals ${JSON.stringify(inst.goals)}`;
    if (exact === null) {
      assert.equal(got, null, where);
      unsolvable++;
      continue;
    }
    assert.deepEqual(got, exact, where);
    const mk = solveMakespan(c)!;
    assert.equal(mk.makespan, exact.makespan, where);
    assert.equal(firstConflict(mk.paths), null);
    const ep = replayPlan(inst, pathsToPlan(mk.paths, inst.width), {
      noSlip: true,
    });
    assert.equal(ep.outcome, "success", where);
    assert.equal(ep.steps, exact.makespan, where);
    compared++;
    // the least-SoC plan's makespan is not always the least makespan
    if (solveCBS(c)!.makespan > exact.makespan) differ++;
  }
  assert.ok(compared >= 80, `only ${compared} solvable instances compared`);
  assert.ok(unsolvable >= 1, "no unsolvable instance was drawn");
  assert.ok(differ >= 1, "no instance where the least SoC plan is late");
});
