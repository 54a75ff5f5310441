/**
 * Solutions of MAPF-FrozenLake instances and their conflicts.
 *
 * A solution is one path per agent: its cells from time 0 to its arrival on
 * its goal, where it then stays. Cost follows the MAPF literature: an agent's
 * cost is its arrival time; sum-of-costs (SoC) is their sum and makespan
 * their maximum.
 *
 * @module
 */

/** A joint plan and its cost. */
export interface Solution {
  /** Cells of each agent from time 0 to arrival. */
  readonly paths: Int32Array[];
  /** Sum of arrival times. */
  readonly soc: number;
  /** Largest arrival time. */
  readonly makespan: number;
  /** Which solver produced it. */
  readonly solver: "pp" | "cbs";
}

/** A conflict between two agents' paths. */
export interface Conflict {
  /** `vertex`: same cell at time `t`; `edge`: swap between `t - 1` and `t`. */
  readonly kind: "vertex" | "edge";
  /** First agent. */
  readonly a: number;
  /** Second agent. */
  readonly b: number;
  /** Time of the conflict (arrival time of the moves, for edges). */
  readonly t: number;
  /** Vertex: the cell. Edge: agent `a`'s cell at `t - 1`. */
  readonly cell: number;
  /** Edge: agent `a`'s cell at `t` (agent `b` moves the other way). Vertex: same as `cell`. */
  readonly to: number;
}

/** Cell of a path at time `t` (the last cell after arrival). */
export function at(path: ArrayLike<number>, t: number): number {
  return path[t < path.length ? t : path.length - 1]!;
}

/**
 * The earliest conflict among the paths (vertex before edge at equal times,
 * lowest agent indices first), or `null`.
 */
export function firstConflict(
  paths: readonly ArrayLike<number>[],
): Conflict | null {
  const n = paths.length;
  let T = 0;
  for (const p of paths) if (p.length - 1 > T) T = p.length - 1;
  const occ = new Map<number, number>();
  for (let t = 0; t <= T; t++) {
    occ.clear();
    for (let a = 0; a < n; a++) {
      const c = at(paths[a]!, t);
      const b = occ.get(c);
      if (b !== undefined) {
        return { kind: "vertex", a: b, b: a, t, cell: c, to: c };
      }
      occ.set(c, a);
    }
    if (t === 0) continue;
    for (let a = 0; a < n; a++) {
      const u = at(paths[a]!, t - 1), v = at(paths[a]!, t);
      if (u === v) continue;
      for (let b = a + 1; b < n; b++) {
        if (at(paths[b]!, t - 1) === v && at(paths[b]!, t) === u) {
          return { kind: "edge", a, b, t, cell: u, to: v };
        }
      }
    }
  }
  return null;
}
