/**
 * Text views of states and episodes, for diagnoses, failure cases and logs.
 *
 * A state is a grid of space-separated tokens: `.` frozen, `H` hole, `#`
 * wall, `gK` the goal of agent K, `K` agent K (`K*` when on its own goal),
 * `X` two or more agents in one cell. Columns are padded to equal width.
 *
 * @module
 */
import type { Instance } from "./instance.ts";
import type { Episode } from "./trajectory.ts";
import { ACTION_LETTERS, actionBetween } from "./grid.ts";

/**
 * Render the grid with agents at `positions` (cell indices, one per agent).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { renderState } from "./render_state.ts";
 * const inst = { width: 3, height: 1, cells: ["..H"], goals: [[0, 1] as [number, number]] };
 * assert.equal(renderState(inst, [0]), "0  g0 H");
 * ```
 */
export function renderState(
  inst: Pick<Instance, "width" | "height" | "cells" | "goals">,
  positions: ArrayLike<number>,
): string {
  const W = inst.width;
  const tokens = inst.cells.map((row) => [...row]);
  inst.goals.forEach(([r, c], a) => (tokens[r]![c] = `g${a}`));
  const count = new Map<number, number>();
  for (let a = 0; a < positions.length; a++) {
    const p = positions[a]!;
    if (p < 0) continue;
    count.set(p, (count.get(p) ?? 0) + 1);
  }
  for (let a = 0; a < positions.length; a++) {
    const p = positions[a]!;
    if (p < 0) continue;
    const r = Math.floor(p / W), c = p % W;
    const [gr, gc] = inst.goals[a] ?? [-1, -1];
    tokens[r]![c] = count.get(p)! > 1
      ? "X"
      : `${a}${gr === r && gc === c ? "*" : ""}`;
  }
  let width = 1;
  for (const row of tokens) {
    for (const t of row) width = Math.max(width, t.length);
  }
  return tokens.map((row) =>
    row.map((t) => t.padEnd(width)).join(" ").trimEnd()
  ).join("\n");
}

/** Options of {@linkcode renderEpisode}. */
export interface RenderEpisodeOptions {
  /** Steps shown before the end of the episode (or before `at`). @default 3 */
  before?: number;
  /** Centre the window on this time instead of the end. */
  at?: number;
}

/**
 * Describe an episode: outcome line, the map before the window, each step's
 * moves (chosen action, and what happened when it differs), and the map at
 * the end of the window.
 */
export function renderEpisode(
  inst: Pick<Instance, "id" | "width" | "height" | "cells" | "goals">,
  ep: Episode,
  options: RenderEpisodeOptions = {},
): string {
  const n = ep.agents, W = ep.width;
  const end = Math.min(ep.steps, options.at ?? ep.steps);
  const from = Math.max(0, end - (options.before ?? 3));
  const snap = (t: number) => ep.positions.subarray(t * n, (t + 1) * n);
  const head = `Episode on ${ep.instance || inst.id}: ${ep.outcome}` +
    (ep.failAgents.length
      ? ` at step ${ep.failStep} (agents ${ep.failAgents.join(", ")})`
      : "") +
    `, ${ep.steps} steps`;
  const out = [head, `t=${from}:`, renderState(inst, snap(from))];
  for (let t = from; t < end; t++) {
    const moves: string[] = [];
    for (let a = 0; a < n; a++) {
      const chosen = ep.actions[t * n + a]!;
      const done = actionBetween(
        ep.positions[t * n + a]!,
        ep.positions[(t + 1) * n + a]!,
        W,
      );
      let s = `${a}:${ACTION_LETTERS[chosen] ?? "?"}`;
      if (done !== chosen) {
        s += done === 0 ? "(stayed)" : `(went ${ACTION_LETTERS[done]})`;
      }
      moves.push(s);
    }
    out.push(`t=${t}->${t + 1}: ${moves.join(" ")}`);
  }
  if (end > from) {
    out.push(`t=${end}:`);
    out.push(renderState(inst, snap(end)));
  }
  return out.join("\n");
}
