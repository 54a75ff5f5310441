/**
 * SVG pictures of instances and episodes, for reports.
 *
 * Frozen cells are pale blue, holes dark blue, walls grey; each agent has a
 * colour (golden-angle hues): its goal is a square outlined in that colour,
 * the agent a filled circle with its number, and an episode's path a line.
 * Output is deterministic (same input, same bytes).
 *
 * @module
 */
import type { Instance } from "./instance.ts";

/** Options of {@linkcode renderSvg}. */
export interface RenderSvgOptions {
  /** Cell size in pixels. @default 24 */
  cell?: number;
  /** Agent positions to draw (cell indices); @default the starts */
  positions?: ArrayLike<number>;
  /** Paths to draw (cells per time, one list per agent), e.g. from an episode or a solution. */
  paths?: readonly ArrayLike<number>[];
  /** A title shown on hover and to screen readers. @default the instance id */
  title?: string;
}

/** The colour of agent `a`. */
export function agentColor(a: number): string {
  const hue = Math.round((a * 137.508) % 360);
  return `hsl(${hue} 70% 45%)`;
}

function _esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}

/** Render an instance (optionally with positions and paths) as a standalone SVG document. */
export function renderSvg(
  inst: Instance,
  options: RenderSvgOptions = {},
): string {
  const s = options.cell ?? 24;
  const W = inst.width, H = inst.height;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W * s}" height="${
      H * s
    }" viewBox="0 0 ${W * s} ${H * s}" role="img">`,
  );
  out.push(`<title>${_esc(options.title ?? inst.id)}</title>`);
  out.push(`<rect width="${W * s}" height="${H * s}" fill="#e8f4fb"/>`);
  for (let r = 0; r < H; r++) {
    const row = inst.cells[r]!;
    for (let c = 0; c < W; c++) {
      const ch = row[c];
      if (ch === "H") {
        out.push(
          `<rect x="${c * s}" y="${
            r * s
          }" width="${s}" height="${s}" fill="#1d4e89"/>`,
        );
      } else if (ch === "#") {
        out.push(
          `<rect x="${c * s}" y="${
            r * s
          }" width="${s}" height="${s}" fill="#7a7a7a"/>`,
        );
      }
    }
  }
  const grid: string[] = [];
  for (let c = 1; c < W; c++) grid.push(`M${c * s} 0V${H * s}`);
  for (let r = 1; r < H; r++) grid.push(`M0 ${r * s}H${W * s}`);
  if (grid.length) {
    out.push(`<path d="${grid.join("")}" stroke="#b8d4e6" stroke-width="1"/>`);
  }
  const center = (
    cell: number,
  ) => [(cell % W) * s + s / 2, Math.floor(cell / W) * s + s / 2];
  inst.goals.forEach(([r, c], a) => {
    const pad = s * 0.12;
    out.push(
      `<rect x="${c * s + pad}" y="${r * s + pad}" width="${
        s - 2 * pad
      }" height="${s - 2 * pad}" fill="none" stroke="${
        agentColor(a)
      }" stroke-width="${Math.max(1.5, s / 10)}"/>`,
    );
  });
  (options.paths ?? []).forEach((path, a) => {
    if (path.length < 2) return;
    const pts: string[] = [];
    for (let t = 0; t < path.length; t++) {
      const [x, y] = center(path[t]!);
      pts.push(`${x},${y}`);
    }
    out.push(
      `<polyline points="${pts.join(" ")}" fill="none" stroke="${
        agentColor(a)
      }" stroke-width="${
        Math.max(1, s / 12)
      }" stroke-opacity="0.7" stroke-linejoin="round"/>`,
    );
  });
  const positions = options.positions ?? inst.starts.map(([r, c]) => r * W + c);
  for (let a = 0; a < positions.length; a++) {
    const p = positions[a]!;
    if (p < 0) continue;
    const [x, y] = center(p);
    out.push(
      `<circle cx="${x}" cy="${y}" r="${s * 0.36}" fill="${agentColor(a)}"/>`,
    );
    out.push(
      `<text x="${x}" y="${y}" font-family="sans-serif" font-size="${
        Math.round(s * 0.45)
      }" fill="#fff" text-anchor="middle" dominant-baseline="central">${a}</text>`,
    );
  }
  out.push("</svg>");
  return out.join("\n") + "\n";
}
