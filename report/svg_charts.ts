/**
 * Hand-written SVG line charts for the report: axes with "nice" ticks, light
 * grid lines, dashed vertical markers (stage boundaries) with labels, one
 * polyline per series and a legend under the plot. Output is deterministic
 * and every text is escaped.
 *
 * @module
 */
import { escapeHtml } from "./escape.ts";

/** One line of a chart. */
export interface ChartSeries {
  /** Legend text of its colour group (series sharing a `group` share one legend entry). */
  readonly group: string;
  /** Full label (tooltip). */
  readonly label: string;
  /** Stroke colour. */
  readonly color: string;
  /** Points `[x, y]`; `y` null breaks the line. */
  readonly points: readonly (readonly [number, number | null])[];
  /** Extra `data-*` attributes of the polyline (name without `data-` -> value). */
  readonly data?: Readonly<Record<string, string>>;
  /** Stroke width. @default 1.8 */
  readonly width?: number;
  /**
   * A band drawn under the line (e.g. ± 1 std over seeds): `[x, low, high]`
   * per point, `null` breaks it.
   */
  readonly band?: readonly (readonly [number, number, number] | null)[];
  /** Dashed line with a dot on every point (e.g. held-out success measured once per stage). */
  readonly dashed?: boolean;
}

/** A vertical marker. */
export interface ChartMarker {
  /** Position on the x axis. */
  readonly x: number;
  /** Label at the top of the plot, right of the line. */
  readonly label: string;
}

/** Options of {@linkcode lineChart}. */
export interface LineChartOptions {
  /** Accessible title. */
  readonly title: string;
  /** x axis label. */
  readonly xLabel: string;
  /** y axis label. */
  readonly yLabel: string;
  /** Width in pixels. @default 760 */
  readonly width?: number;
  /** Height of the plot area in pixels. @default 240 */
  readonly plotHeight?: number;
  /** y range. @default {[0, 1]} */
  readonly yDomain?: readonly [number, number];
  /** x range. @default from 0 (or the smallest x if negative) to the largest x */
  readonly xDomain?: readonly [number, number];
  /** Vertical markers (e.g. stage boundaries). */
  readonly markers?: readonly ChartMarker[];
  /** Label of the first region (left of the first marker). */
  readonly firstRegion?: string;
}

/**
 * About `count` round tick values covering `[lo, hi]` (steps of 1, 2, 2.5 or
 * 5 times a power of ten).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { niceTicks } from "./svg_charts.ts";
 * assert.deepEqual(niceTicks(0, 1, 5), [0, 0.2, 0.4, 0.6, 0.8, 1]);
 * ```
 */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  const pow = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * pow).find((s) => s >= raw)!;
  const out: number[] = [];
  const start = Math.ceil(lo / step - 1e-9);
  for (let i = start; i * step <= hi + step * 1e-9; i++) {
    out.push(Number((i * step).toPrecision(12)));
  }
  return out;
}

/**
 * Short number: `0`, `950`, `12k`, `1.5M`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { shortNumber } from "./svg_charts.ts";
 * assert.equal(shortNumber(125000), "125k");
 * ```
 */
export function shortNumber(x: number): string {
  const a = Math.abs(x);
  const trim = (s: string) =>
    s.replace(/\.0+$/, "").replace(/(\.\d*?)0+$/, "$1");
  if (a >= 1e9) return trim((x / 1e9).toFixed(2)) + "G";
  if (a >= 1e6) return trim((x / 1e6).toFixed(2)) + "M";
  if (a >= 1e3) return trim((x / 1e3).toFixed(1)) + "k";
  return trim(x.toFixed(Number.isInteger(x) ? 0 : 2));
}

const FONT =
  `font-family="system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"`;

function _f(x: number): string {
  return String(Math.round(x * 10) / 10);
}

/** The plot area of a chart and its scales. */
interface _Frame {
  readonly width: number;
  readonly plotW: number;
  readonly plotH: number;
  readonly m: { left: number; right: number; top: number; bottom: number };
  readonly x0: number;
  readonly xHi: number;
  readonly y0: number;
  readonly y1: number;
  readonly X: (x: number) => number;
  readonly Y: (y: number) => number;
}

function _frame(
  series: readonly ChartSeries[],
  options: LineChartOptions,
): _Frame {
  const width = options.width ?? 760;
  const plotH = options.plotHeight ?? 240;
  const m = { left: 56, right: 18, top: 26, bottom: 44 };
  const plotW = width - m.left - m.right;
  let xs = series.flatMap((s) => s.points.map((p) => p[0]));
  for (const mk of options.markers ?? []) xs = [...xs, mk.x];
  const [x0, x1] = options.xDomain ??
    [Math.min(0, ...xs), xs.length ? Math.max(...xs) : 1];
  // The x axis ends where the data end (rounding it up to the next tick
  // left up to a sixth of the plot empty); ticks stay inside it.
  const xHi = x1 > x0 ? x1 : x0 + 1;
  const [y0, y1] = options.yDomain ?? [0, 1];
  return {
    width,
    plotW,
    plotH,
    m,
    x0,
    xHi,
    y0,
    y1,
    X: (x: number) => m.left + ((x - x0) / (xHi - x0)) * plotW,
    Y: (y: number) => m.top + (1 - (y - y0) / (y1 - y0)) * plotH,
  };
}

/** Legend entries (one per group) laid out in rows under the x-axis label, and the chart's height. */
function _legend(series: readonly ChartSeries[], f: _Frame) {
  // A group's swatch is dashed (with a dot) when its lines are.
  const groups: { group: string; color: string; dashed: boolean }[] = [];
  for (const s of series) {
    const g = groups.find((g) => g.group === s.group);
    if (!g) {
      groups.push({
        group: s.group,
        color: s.color,
        dashed: s.dashed === true,
      });
    } else if (!s.dashed) g.dashed = false;
  }
  const items: { x: number; y: number; g: (typeof groups)[number] }[] = [];
  const { m } = f;
  let lx = m.left, ly = m.top + f.plotH + m.bottom + 6;
  for (const g of groups) {
    const w = 30 + Math.min(40, g.group.length) * 6.6 + 18;
    if (lx + w > f.width - m.right && lx > m.left) {
      lx = m.left;
      ly += 20;
    }
    items.push({ x: lx, y: ly, g });
    lx += w;
  }
  const height = (items.length ? ly + 16 : m.top + f.plotH + m.bottom) + 4;
  return { items, height };
}

/** Background, grid, tick labels, axes and axis labels. */
function _axes(f: _Frame, options: LineChartOptions, out: string[]): void {
  const { m, plotW, plotH, X, Y } = f;
  out.push(
    `<rect x="${m.left}" y="${m.top}" width="${
      _f(plotW)
    }" height="${plotH}" fill="#fbfcfe" stroke="none"/>`,
  );
  const yTicks = niceTicks(f.y0, f.y1, 5);
  const xTicks = niceTicks(f.x0, f.xHi, Math.max(3, Math.round(plotW / 110)));
  const grid: string[] = [];
  for (const t of yTicks) {
    grid.push(`M${m.left} ${_f(Y(t))}H${_f(m.left + plotW)}`);
  }
  for (const t of xTicks) grid.push(`M${_f(X(t))} ${m.top}V${m.top + plotH}`);
  out.push(
    `<path class="grid" d="${
      grid.join("")
    }" stroke="#e3e8ef" stroke-width="1" fill="none"/>`,
  );
  for (const t of yTicks) {
    out.push(
      `<text x="${m.left - 8}" y="${
        _f(Y(t))
      }" text-anchor="end" dominant-baseline="middle" fill="#5b6573">${
        escapeHtml(shortNumber(t))
      }</text>`,
    );
  }
  for (const t of xTicks) {
    out.push(
      `<text x="${_f(X(t))}" y="${
        m.top + plotH + 16
      }" text-anchor="middle" fill="#5b6573">${
        escapeHtml(shortNumber(t))
      }</text>`,
    );
  }
  out.push(
    `<path class="axis" d="M${m.left} ${m.top}V${m.top + plotH}H${
      _f(m.left + plotW)
    }" stroke="#8a94a3" stroke-width="1" fill="none"/>`,
  );
  out.push(
    `<text x="${_f(m.left + plotW / 2)}" y="${
      m.top + plotH + 34
    }" text-anchor="middle" fill="#303844">${
      escapeHtml(options.xLabel)
    }</text>`,
  );
  out.push(
    `<text transform="translate(14 ${
      _f(m.top + plotH / 2)
    }) rotate(-90)" text-anchor="middle" fill="#303844">${
      escapeHtml(options.yLabel)
    }</text>`,
  );
}

/** Region markers (dashed lines with labels) and the first region's label. */
function _markers(f: _Frame, options: LineChartOptions, out: string[]): void {
  const { m, plotH, X } = f;
  const markers = [...(options.markers ?? [])].sort((a, b) => a.x - b.x);
  if (options.firstRegion !== undefined) {
    out.push(
      `<text class="region" x="${m.left + 6}" y="${
        m.top - 8
      }" fill="#5b6573" font-size="11">${
        escapeHtml(options.firstRegion)
      }</text>`,
    );
  }
  for (const mk of markers) {
    const x = _f(X(mk.x));
    out.push(
      `<line class="marker" x1="${x}" y1="${m.top - 4}" x2="${x}" y2="${
        m.top + plotH
      }" stroke="#9aa3b0" stroke-width="1" stroke-dasharray="4 3"/>`,
    );
    out.push(
      `<text class="region" x="${Number(x) + 6}" y="${
        m.top - 8
      }" fill="#5b6573" font-size="11">${escapeHtml(mk.label)}</text>`,
    );
  }
}

/** One series: polylines between gaps (null values), single points as dots. */
function _seriesSvg(f: _Frame, s: ChartSeries, out: string[]): void {
  const segs: string[][] = [[]];
  for (const [x, y] of s.points) {
    if (y === null) {
      if (segs[segs.length - 1]!.length) segs.push([]);
      continue;
    }
    segs[segs.length - 1]!.push(`${_f(f.X(x))},${_f(f.Y(y))}`);
  }
  const data = Object.entries(s.data ?? {}).map(([k, v]) =>
    ` data-${k.replace(/[^a-z0-9-]/g, "")}="${escapeHtml(v)}"`
  ).join("");
  out.push(`<g class="series"${data}><title>${escapeHtml(s.label)}</title>`);
  if (s.band) _bandSvg(f, s.band, s.color, out);
  for (const seg of segs) {
    if (seg.length === 0) continue;
    const dots = () => {
      for (const pt of seg) {
        const [cx, cy] = pt.split(",");
        out.push(
          `<circle cx="${cx}" cy="${cy}" r="${s.dashed ? 3.5 : 2.5}" fill="${
            s.dashed ? "#fff" : s.color
          }" stroke="${s.color}" stroke-width="1.6"/>`,
        );
      }
    };
    if (seg.length === 1) {
      dots();
      continue;
    }
    out.push(
      `<polyline points="${
        seg.join(" ")
      }" fill="none" stroke="${s.color}" stroke-width="${
        s.width ?? 1.8
      }" stroke-linejoin="round" stroke-linecap="round"${
        s.dashed ? ' stroke-dasharray="5 4"' : ""
      }/>`,
    );
    if (s.dashed) dots();
  }
  out.push(`</g>`);
}

/** A filled band between low and high, one polygon per run of points without a gap. */
function _bandSvg(
  f: _Frame,
  band: readonly (readonly [number, number, number] | null)[],
  color: string,
  out: string[],
): void {
  const runs: (readonly [number, number, number])[][] = [[]];
  for (const b of band) {
    if (b === null) {
      if (runs[runs.length - 1]!.length) runs.push([]);
    } else runs[runs.length - 1]!.push(b);
  }
  for (const run of runs) {
    if (run.length < 2) continue;
    const top = run.map(([x, , hi]) => `${_f(f.X(x))},${_f(f.Y(hi))}`);
    const bottom = run.map(([x, lo]) => `${_f(f.X(x))},${_f(f.Y(lo))}`)
      .reverse();
    out.push(
      `<polygon class="band" points="${
        [...top, ...bottom].join(" ")
      }" fill="${color}" fill-opacity="0.16" stroke="none"/>`,
    );
  }
}

/** Renders a line chart as a standalone `<svg>` element. */
export function lineChart(
  series: readonly ChartSeries[],
  options: LineChartOptions,
): string {
  const f = _frame(series, options);
  const legend = _legend(series, f);
  const out: string[] = [];
  out.push(
    `<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="${f.width}" height="${
      _f(legend.height)
    }" viewBox="0 0 ${f.width} ${
      _f(legend.height)
    }" role="img" ${FONT} font-size="12">`,
  );
  out.push(`<title>${escapeHtml(options.title)}</title>`);
  _axes(f, options, out);
  _markers(f, options, out);
  for (const s of series) _seriesSvg(f, s, out);
  for (const { x, y, g } of legend.items) {
    const swatch = g.dashed
      ? `<line x1="${_f(x)}" y1="${y}" x2="${
        _f(x + 22)
      }" y2="${y}" stroke="${g.color}" stroke-width="1.8" stroke-dasharray="5 4"/><circle cx="${
        _f(x + 11)
      }" cy="${y}" r="3.5" fill="#fff" stroke="${g.color}" stroke-width="1.6"/>`
      : `<line x1="${_f(x)}" y1="${y}" x2="${
        _f(x + 22)
      }" y2="${y}" stroke="${g.color}" stroke-width="3" stroke-linecap="round"/>`;
    out.push(
      `<g class="legend-item${g.dashed ? " dashed" : ""}">${swatch}<text x="${
        _f(x + 28)
      }" y="${y}" dominant-baseline="middle" fill="#303844">${
        escapeHtml(g.group.length > 40 ? g.group.slice(0, 39) + "…" : g.group)
      }</text></g>`,
    );
  }
  out.push(`</svg>`);
  return out.join("\n");
}

/**
 * Okabe–Ito-like qualitative palette (colour-blind safe first eight), 12
 * distinct colours: the paper table's 12 methods each get their own.
 */
export const PALETTE: readonly string[] = [
  "#0072b2",
  "#e69f00",
  "#009e73",
  "#cc79a7",
  "#56b4e9",
  "#d55e00",
  "#7f7f7f",
  "#b8a000",
  "#1b3a6b",
  "#8c564b",
  "#6a3d9a",
  "#111111",
];
