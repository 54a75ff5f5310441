/**
 * Failure-case pictures for the report: mapf's instance renderer with each
 * agent's path up to the failure and the agents where they stood at the
 * failure step (agents sharing a cell side by side), plus marks for the
 * failure (a dark ring on the cell of a fall or a vertex collision, a dark
 * bar across the cells of an edge collision, dashed rings around the agents
 * still off their goal at a timeout) and a small ring on each start cell.
 *
 * @module
 */
import type { Instance } from "../mapf/instance.ts";
import { agentColor, renderSvg } from "../mapf/render_svg.ts";
import type { Episode } from "../mapf/trajectory.ts";

/** Options of {@linkcode renderFailureSvg}. */
export interface FailureSvgOptions {
  /** The failure step (positions at this time are drawn). */
  readonly step: number;
  /** Failure type (`hole`, `vertex_collision`, `edge_collision`, `timeout`, ...). */
  readonly outcome: string;
  /** Agents involved. */
  readonly agents: readonly number[];
  /** Tooltip / accessible title. */
  readonly title: string;
  /** Largest side of the picture in pixels. @default 240 */
  readonly maxSide?: number;
}

/** Colour of failure marks (near black: agent colours span every hue). */
export const FAIL_COLOR = "#111827";

function _f(x: number): string {
  return String(Math.round(x * 10) / 10);
}

/** The cell size that fits a `width` x `height` grid into `maxSide` pixels. */
export function cellSize(width: number, height: number, maxSide = 240): number {
  return Math.max(
    6,
    Math.min(28, Math.floor(maxSide / Math.max(width, height))),
  );
}

/** Renders one failure case as a standalone `<svg>` element. */
export function renderFailureSvg(
  inst: Instance,
  ep: Episode,
  options: FailureSvgOptions,
): string {
  const n = ep.agents;
  const W = inst.width;
  const s = cellSize(inst.width, inst.height, options.maxSide);
  const step = Math.max(0, Math.min(options.step, ep.steps));
  const at = (t: number, a: number) => ep.positions[t * n + a]!;
  const positions = Array.from({ length: n }, (_, a) => at(step, a));
  const paths = Array.from({ length: n }, (_, a) => {
    const p: number[] = [];
    for (let t = 0; t <= step; t++) p.push(at(t, a));
    return p;
  });
  // Agents sharing a cell are drawn side by side (smaller) instead of on top
  // of each other, so both numbers of a vertex collision stay visible.
  const byCell = new Map<number, number[]>();
  positions.forEach((p, a) => {
    if (p < 0) return;
    const list = byCell.get(p);
    if (list) list.push(a);
    else byCell.set(p, [a]);
  });
  const shown = positions.map((p) => (byCell.get(p)?.length ?? 0) > 1 ? -1 : p);
  const svg = renderSvg(inst, {
    cell: s,
    positions: shown,
    paths,
    title: options.title,
  });
  const cx = (cell: number) => (cell % W) * s + s / 2;
  const cy = (cell: number) => Math.floor(cell / W) * s + s / 2;
  // Marks go under the agents' circles (before the first <circle> of the
  // picture); agents sharing a cell on top of everything.
  const marks: string[] = [];
  const over: string[] = [];
  // Start cells: small rings.
  for (let a = 0; a < n; a++) {
    const c = at(0, a);
    if (c === positions[a]) continue;
    marks.push(
      `<circle cx="${cx(c)}" cy="${cy(c)}" r="${
        (s * 0.16).toFixed(1)
      }" fill="#fff" stroke="${agentColor(a)}" stroke-width="${
        Math.max(1, s / 14).toFixed(1)
      }"/>`,
    );
  }
  for (const [cell, list] of byCell) {
    if (list.length < 2) continue;
    const k = list.length;
    const r = Math.max(2, Math.min(s * 0.3, (s * 0.6) / k));
    list.forEach((a, i) => {
      const x = cx(cell) - s * 0.2 + (i * s * 0.4) / (k - 1);
      const y = cy(cell);
      over.push(
        `<circle cx="${_f(x)}" cy="${_f(y)}" r="${_f(r)}" fill="${
          agentColor(a)
        }" stroke="#fff" stroke-width="1"/>`,
      );
      over.push(
        `<text x="${_f(x)}" y="${_f(y)}" font-family="sans-serif" font-size="${
          Math.max(6, Math.round(r * 1.15))
        }" fill="#fff" text-anchor="middle" dominant-baseline="central">${a}</text>`,
      );
    });
  }
  const ring = (cell: number, dashed = false) =>
    `<circle class="fail-mark" cx="${cx(cell)}" cy="${cy(cell)}" r="${
      (s * 0.5).toFixed(1)
    }" fill="none" stroke="${FAIL_COLOR}" stroke-width="${
      Math.max(1.5, s / 9).toFixed(1)
    }"${
      dashed
        ? ` stroke-dasharray="${(s / 5).toFixed(1)} ${(s / 8).toFixed(1)}"`
        : ""
    }/>`;
  const involved = options.agents.filter((a) => a >= 0 && a < n);
  if (options.outcome === "timeout" || involved.length === 0) {
    inst.goals.forEach(([r, c], a) => {
      if (a < n && positions[a] !== r * W + c) {
        marks.push(ring(positions[a]!, true));
      }
    });
  } else if (options.outcome === "edge_collision" && involved.length >= 2) {
    const [a, b] = involved as [number, number];
    const from = step > 0 ? at(step - 1, a) : at(step, a);
    const to = step > 0 ? at(step - 1, b) : at(step, b);
    marks.push(
      `<line class="fail-mark" x1="${cx(from)}" y1="${cy(from)}" x2="${
        cx(to)
      }" y2="${cy(to)}" stroke="${FAIL_COLOR}" stroke-width="${
        Math.max(2, s / 6).toFixed(1)
      }" stroke-linecap="round" stroke-opacity="0.85"/>`,
    );
    for (const cell of new Set([from, to])) marks.push(ring(cell));
  } else {
    for (const cell of new Set(involved.map((a) => positions[a]!))) {
      marks.push(ring(cell));
    }
  }
  const end = svg.lastIndexOf("</svg>");
  const first = svg.indexOf("<circle");
  const at0 = first < 0 ? end : first;
  const head = svg.slice(0, at0).replace(
    /^<svg /,
    `<svg class="case-map" data-outcome="${
      options.outcome.replace(/[^a-z_]/g, "")
    }" `,
  );
  return head + marks.map((m) => m + "\n").join("") + svg.slice(at0, end) +
    over.map((m) => m + "\n").join("") + "</svg>";
}
