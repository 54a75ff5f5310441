/**
 * Render a failure case as text, in the spirit of the paper's prompt format:
 * the map at the failure step, then the moves of the agents involved in the
 * steps before it.
 *
 * Legend: `.` ice, `H` hole, `#` wall, `X` two agents in one cell; agents
 * `0`-`9` (then `*`), goals of
 * agents 0-9 as `a`-`j` (then `+`); an agent on its goal shows its digit.
 * Coordinates are (row, col), row 0 at the top. Agent positions are also
 * listed explicitly, so nothing is lost when symbols collide.
 *
 * @module
 */
import { ACTION_NAMES } from "../mapf/grid.ts";
import { CELL, type EpisodeView } from "./episode.ts";

/** Options of {@linkcode renderFailureCase}. */
export interface RenderCaseOptions {
  /** Steps of moves shown before the failure. @default {4} */
  window?: number;
  /** Episode index, shown in the header. */
  episode?: number;
  /** Largest map side drawn in full; larger maps are cropped around the failure. @default {24} */
  maxSide?: number;
}

const OUTCOME_TEXT: Record<string, string> = {
  hole: "fell into a hole",
  vertex_collision: "vertex collision (two agents in one cell)",
  edge_collision: "edge collision (two agents swapped cells)",
  timeout: "timeout (horizon reached before every agent was on its goal)",
  invalid_plan: "invalid action or plan",
  success: "success",
};

function _agentSymbol(i: number): string {
  return i < 10 ? String(i) : "*";
}

function _goalSymbol(i: number): string {
  return i < 10 ? String.fromCharCode(97 + i) : "+";
}

/**
 * Render the failure of an episode.
 *
 * Long by design: the text picture drawn top to bottom (header, grid, moves) in output order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { renderFailureCase } from "./render_case.ts";
 * const text = renderFailureCase({
 *   width: 3, height: 1, cells: new Uint8Array([0, 1, 0]), agents: 1,
 *   starts: Int32Array.of(0), goals: Int32Array.of(2), steps: 1,
 *   positions: Int32Array.of(0, 1), actions: Uint8Array.of(4),
 *   outcome: "hole", failAgents: [0], horizon: 6, referenceSoc: 2,
 *   referenceMakespan: 2, component: 0,
 * });
 * assert.equal(
 *   text.split("\n")[0],
 *   "Failure: fell into a hole at step 1; agents 0",
 * );
 * ```
 */
export function renderFailureCase(
  ep: EpisodeView,
  options: RenderCaseOptions = {},
): string {
  const window = options.window ?? 4;
  const maxSide = options.maxSide ?? 24;
  const T = ep.steps;
  const N = ep.agents;
  const W = ep.width;
  const pos = ep.positions;
  const involved = ep.outcome !== "timeout" && ep.failAgents.length > 0
    ? [...ep.failAgents]
    : Array.from({ length: N }, (_, i) => i).filter((i) =>
      pos[T * N + i] !== ep.goals[i]
    );
  const lines: string[] = [];
  const head = options.episode === undefined
    ? ""
    : ` (episode ${options.episode})`;
  lines.push(
    `Failure: ${OUTCOME_TEXT[ep.outcome] ?? ep.outcome} at step ${T}; agents ${
      involved.join(", ") || "-"
    }${head}`,
  );
  lines.push(
    `Grid ${ep.width}x${ep.height}, ${N} agents, horizon ${ep.horizon}, reference makespan ${ep.referenceMakespan}, component ${ep.component}`,
  );
  // Crop window.
  const focus = pos[T * N + (involved[0] ?? 0)]!;
  const fr = Math.floor(focus / W);
  const fc = focus - fr * W;
  const r0 = ep.height <= maxSide
    ? 0
    : Math.max(0, Math.min(ep.height - maxSide, fr - (maxSide >> 1)));
  const c0 = W <= maxSide
    ? 0
    : Math.max(0, Math.min(W - maxSide, fc - (maxSide >> 1)));
  const r1 = Math.min(ep.height, r0 + maxSide);
  const c1 = Math.min(W, c0 + maxSide);
  const grid: string[][] = [];
  for (let r = r0; r < r1; r++) {
    const row: string[] = [];
    for (let c = c0; c < c1; c++) {
      const code = ep.cells[r * W + c];
      row.push(code === CELL.hole ? "H" : code === CELL.wall ? "#" : ".");
    }
    grid.push(row);
  }
  const put = (cell: number, sym: string) => {
    const r = Math.floor(cell / W);
    const c = cell - r * W;
    if (r >= r0 && r < r1 && c >= c0 && c < c1) grid[r - r0]![c - c0] = sym;
  };
  for (let i = 0; i < N; i++) put(ep.goals[i]!, _goalSymbol(i));
  const seen = new Set<number>();
  for (let i = 0; i < N; i++) {
    const cell = pos[T * N + i]!;
    put(cell, seen.has(cell) ? "X" : _agentSymbol(i));
    seen.add(cell);
  }
  const cropped = r0 > 0 || c0 > 0 || r1 < ep.height || c1 < W;
  lines.push(
    `Map at step ${T}${
      cropped ? ` (rows ${r0}-${r1 - 1}, cols ${c0}-${c1 - 1})` : ""
    } (. ice, H hole, # wall, digits agents, letters their goals, X collision):`,
  );
  for (const row of grid) lines.push(`  ${row.join("")}`);
  const rc = (cell: number) => `(${Math.floor(cell / W)},${cell % W})`;
  lines.push(
    `Agents: ${
      Array.from({ length: N }, (_, i) =>
        `${i}@${rc(pos[T * N + i]!)}${
          ep.cells[pos[T * N + i]!] === CELL.hole ? "[in hole]" : ""
        }->${rc(ep.goals[i]!)}`).join(" ")
    }`,
  );
  const from = Math.max(0, T - window);
  if (T > 0) lines.push(`Moves, steps ${from}-${T}:`);
  for (let t = from; t < T; t++) {
    const parts: string[] = [];
    for (const i of involved.slice(0, 6)) {
      const a = pos[t * N + i]!;
      const b = pos[(t + 1) * N + i]!;
      const act = ep.actions === undefined
        ? ""
        : ACTION_NAMES[ep.actions[t * N + i]!] ?? "?";
      parts.push(`${i} ${act ? act + " " : ""}${rc(a)}->${rc(b)}`);
    }
    lines.push(`  t=${t}: ${parts.join("; ")}`);
  }
  return lines.join("\n");
}
