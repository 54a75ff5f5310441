/**
 * Mutation of MAPF instances: the small edits ACCEL (Parker-Holder et al.
 * 2022) applies to high-regret levels, on this testbed's cells and agents
 * (mazes' edits are wall flips): add or remove a hole, move an agent's start
 * or goal, add an agent (up to a maximum) or remove one (down to one). An
 * edited level is checked valid and solvable within a horizon with its
 * parent's slack, and carries its reference cost.
 *
 * @module
 */
import { type Instance, validateInstance } from "./instance.ts";
import type { Rng } from "./rng.ts";

/** What the edits draw from: the integers of a seeded generator. */
type _Draws = Pick<Rng, "int">;
import { solve } from "./solve.ts";

/** The edits, drawn uniformly by {@linkcode editLevel}. */
export const EDIT_KINDS = [
  "add_hole",
  "remove_hole",
  "move_start",
  "move_goal",
  "add_agent",
  "remove_agent",
] as const;
/** An edit. */
export type EditKind = typeof EDIT_KINDS[number];

type Cell = [number, number];

function _free(inst: Instance): Cell[] {
  const used = new Set<string>();
  for (const [r, c] of inst.starts) used.add(`${r},${c}`);
  for (const [r, c] of inst.goals) used.add(`${r},${c}`);
  const out: Cell[] = [];
  inst.cells.forEach((row, r) => {
    for (let c = 0; c < row.length; c++) {
      if (row[c] === "." && !used.has(`${r},${c}`)) out.push([r, c]);
    }
  });
  return out;
}

function _setCell(
  cells: readonly string[],
  [r, c]: Cell,
  ch: string,
): string[] {
  const out = [...cells];
  const row = out[r]!;
  out[r] = row.slice(0, c) + ch + row.slice(c + 1);
  return out;
}

/** One edit of an instance (no solvability check); null when it cannot apply. */
export function applyEdit(
  inst: Instance,
  kind: EditKind,
  rng: _Draws,
  maxAgents: number,
): Instance | null {
  const free = _free(inst);
  const pick = <T>(xs: readonly T[]): T | null =>
    xs.length === 0 ? null : xs[rng.int(xs.length)]!;
  switch (kind) {
    case "add_hole": {
      const cell = pick(free);
      return cell && { ...inst, cells: _setCell(inst.cells, cell, "H") };
    }
    case "remove_hole": {
      const holes: Cell[] = [];
      inst.cells.forEach((row, r) => {
        for (let c = 0; c < row.length; c++) {
          if (row[c] === "H") holes.push([r, c]);
        }
      });
      const cell = pick(holes);
      return cell && { ...inst, cells: _setCell(inst.cells, cell, ".") };
    }
    case "move_start":
    case "move_goal": {
      const cell = pick(free);
      if (cell === null) return null;
      const a = rng.int(inst.starts.length);
      const list = [...(kind === "move_start" ? inst.starts : inst.goals)];
      list[a] = cell;
      return kind === "move_start"
        ? { ...inst, starts: list }
        : { ...inst, goals: list };
    }
    case "remove_agent": {
      if (inst.starts.length <= 1) return null;
      const a = rng.int(inst.starts.length);
      return {
        ...inst,
        starts: inst.starts.filter((_, i) => i !== a),
        goals: inst.goals.filter((_, i) => i !== a),
      };
    }
    case "add_agent": {
      if (inst.starts.length >= maxAgents) return null;
      const s = pick(free);
      if (s === null) return null;
      const rest = free.filter(([r, c]) => r !== s[0] || c !== s[1]);
      const g = pick(rest);
      if (g === null) return null;
      return {
        ...inst,
        starts: [...inst.starts, s],
        goals: [...inst.goals, g],
      };
    }
  }
}

/**
 * Edit a level `steps` times and check the result (exported for tests): a
 * valid instance that the solvers solve within a horizon with the parent's
 * slack, with its reference cost. Redrawn up to `tries` times; null when no
 * draw gave a solvable level. Deterministic for the rng's state.
 */
export function editLevel(
  parent: Instance,
  id: string,
  rng: _Draws,
  options: { steps: number; maxAgents: number; tries: number },
): { instance: Instance; edits: EditKind[] } | null {
  const slack = parent.reference
    ? parent.horizon / Math.max(1, parent.reference.makespan)
    : 3;
  for (let t = 0; t < options.tries; t++) {
    let cur: Instance | null = parent;
    const edits: EditKind[] = [];
    for (let k = 0; k < options.steps && cur !== null; k++) {
      const kind = EDIT_KINDS[rng.int(EDIT_KINDS.length)]!;
      cur = applyEdit(cur, kind, rng, options.maxAgents);
      edits.push(kind);
    }
    if (cur === null) continue;
    // edits that cancel out (a hole added and removed) are redrawn
    if (
      cur.cells.join("/") === parent.cells.join("/") &&
      JSON.stringify(cur.starts) === JSON.stringify(parent.starts) &&
      JSON.stringify(cur.goals) === JSON.stringify(parent.goals)
    ) continue;
    let valid: Instance;
    try {
      valid = validateInstance({ ...cur, id, reference: null });
    } catch {
      continue; // e.g. a start on its own goal
    }
    if (
      valid.starts.some(([r, c], a) =>
        valid.goals[a]![0] === r && valid.goals[a]![1] === c
      )
    ) {
      continue;
    }
    const sol = solve(valid, { cbsMaxAgents: 4 });
    if (sol === null) continue;
    const horizon = Math.max(1, Math.ceil(slack * sol.makespan - 1e-9));
    let holes = 0;
    for (const row of valid.cells) {
      for (const ch of row) if (ch === "H") holes++;
    }
    const instance: Instance = {
      ...valid,
      horizon,
      reference: { soc: sol.soc, makespan: sol.makespan, solver: sol.solver },
      ...(parent.stats ? { stats: { ...parent.stats, holes } } : {}),
    };
    return { instance, edits };
  }
  return null;
}
