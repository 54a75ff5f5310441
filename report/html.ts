/**
 * The report as one self-contained static HTML page: inline CSS, inline SVG,
 * no script, no external resource. Every text from the cache or the
 * experiment file is escaped. Same data, same bytes.
 *
 * @module
 */
import {
  type CompareCell,
  comparisonCaption,
  formatCell,
  formatDifference,
  formatPValues,
  type Table,
  tableNotes,
} from "@envsmith/engine/tables";
import { escapeHtml as esc } from "./escape.ts";
import type {
  ConfigTrajectory,
  CurveSet,
  ExperimentReport,
  FailureFigure,
  TrajectoryRow,
} from "./data.ts";
import { type ChartSeries, lineChart, PALETTE } from "./svg_charts.ts";
import { profilesHtml } from "./profiles.ts";
import { dagSvg } from "./dag_svg.ts";
import { type ScheduleView, scheduleView } from "./schedules.ts";

/** Options of {@linkcode renderReportHtml}. */
export interface RenderHtmlOptions {
  /** Page title. @default "envsmith report" */
  readonly title?: string;
  /** Strings to replace by `[redacted]` wherever they appear (e.g. API keys). */
  readonly redact?: readonly string[];
}

const CSS = `
:root{--fg:#1f2933;--muted:#5b6573;--line:#dfe4ea;--soft:#f5f7fa;--accent:#0b5cad;--bad:#b42318;--warn-bg:#fff8e6;--warn-line:#f0c36d}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;color:var(--fg);background:#fff;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
.wrap{max-width:1480px;margin:0 auto;padding:0 28px}
header.top{background:#10243e;color:#e8eef6;padding:26px 0 18px;margin-bottom:8px}
header.top h1{margin:0;font-size:26px;font-weight:650;letter-spacing:.2px}
header.top .sub{margin:4px 0 12px;color:#b4c2d3;font-size:14px}
header.top nav a{display:inline-block;margin:0 8px 6px 0;padding:3px 10px;border:1px solid #3a5373;border-radius:14px;color:#e8eef6;text-decoration:none;font-size:13px}
header.top nav a:hover{background:#1d3a5f}
section.experiment{padding:22px 0 30px;border-bottom:1px solid var(--line)}
section.experiment:last-of-type{border-bottom:0}
h2{font-size:22px;margin:6px 0 2px;font-weight:650}
h2 .file{font:500 13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:var(--muted);margin-left:10px;vertical-align:middle}
h3{font-size:17px;margin:28px 0 10px;padding-bottom:4px;border-bottom:2px solid var(--soft);font-weight:620}
h4{font-size:14.5px;margin:18px 0 6px;font-weight:620}
p{margin:6px 0}
.desc{color:#36404c;max-width:860px}
.meta{color:var(--muted);font-size:13px}
.meta .chip{display:inline-block;background:var(--soft);border:1px solid var(--line);border-radius:10px;padding:0 8px;margin-right:4px;font-size:12.5px}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:12.5px}
code{background:var(--soft);padding:1px 5px;border-radius:4px}
.callout{border:1px solid var(--warn-line);background:var(--warn-bg);border-radius:8px;padding:10px 14px;margin:14px 0;font-size:14px}
.callout ul{list-style:none;margin:8px 0;padding:0;display:flex;flex-wrap:wrap;gap:4px 6px}
.callout li{background:#fff;border:1px solid var(--warn-line);border-radius:4px;padding:0 6px;font-size:12px}
.callout code{background:#fff;word-break:break-all}
.callout details{margin:0 0 8px}
.callout summary{cursor:pointer;color:var(--accent);font-size:13px}
.empty{color:var(--muted);font-style:italic;font-size:14px}
figure{margin:12px 0 20px}
figcaption{color:var(--muted);font-size:13px;margin-top:4px}
table{border-collapse:collapse;font-size:14px}
table.results{min-width:420px;margin:4px 0}
table.results caption{caption-side:top;text-align:left;font-weight:600;padding:0 0 6px;font-size:14.5px}
table.results th,table.results td{padding:5px 10px;border-bottom:1px solid var(--line);white-space:nowrap;vertical-align:top}
table.results thead th{font-weight:600;color:#36404c;border-bottom:2px solid #c9d1db;text-align:right;background:#fff}
table.results thead th:first-child,table.results tbody th{text-align:left}
table.results tbody th{font-weight:600}
table.results td{text-align:right;font-variant-numeric:tabular-nums}
table.results td.bar{background:rgba(11,92,173,calc(var(--v)*.16))}
table.results .agg{border-right:2px solid #c9d1db;font-weight:650}
table.results tbody th{position:sticky;left:0;background:#fff;z-index:1}
td .m{display:block}
td .imported{color:var(--muted);font-size:11px;vertical-align:top;margin-left:2px}
td .sd,td .n{display:block;color:var(--muted);font-size:11.5px;font-weight:400;line-height:1.2}
td.missing{color:var(--bad);font-style:italic}
.cmp-caption{font-weight:500;font-size:13.5px;margin:12px 0 6px}
table.compare td.sig .m{font-weight:700}
table.compare td .ci,table.compare td .p{display:block;color:var(--muted);font-size:11.5px;font-weight:400;line-height:1.2}
td.skipped{color:var(--muted);font-style:italic;white-space:normal;min-width:12em;overflow-wrap:anywhere;text-align:left}
.scroll{overflow-x:auto}
.chart{max-width:100%;height:auto;display:block}
.traj-grid{display:grid;grid-template-columns:1fr;gap:4px}
details.traj{border:1px solid var(--line);border-radius:8px;padding:2px 14px 10px;margin:8px 0;background:#fff}
details.traj>summary{cursor:pointer;padding:8px 0;font-weight:600;font-size:14.5px}
details.traj>summary .meta{font-weight:400;margin-left:6px}
table.traj-table{width:100%;font-size:13.5px}
table.traj-table th{text-align:left;font-weight:600;color:#36404c;border-bottom:2px solid #c9d1db;padding:5px 8px;white-space:nowrap}
table.traj-table td{vertical-align:top;border-bottom:1px solid var(--line);padding:6px 8px}
table.traj-table tr:last-child td{border-bottom:0}
table.traj-table td.stage{font-variant-numeric:tabular-nums;font-weight:600;width:48px}
table.traj-table td.cfg{white-space:nowrap;width:1%}
table.traj-table td.why{color:#36404c;max-width:520px}
.dim{display:inline-block;background:#e8f1fb;color:#0b4a8b;border-radius:10px;padding:0 8px;margin:0 4px 3px 0;font-size:12.5px;font-weight:550}
.dim.soft{background:var(--soft);color:var(--muted);font-weight:500}
table.traj-table td.who{white-space:nowrap;width:1%}
.same{color:var(--muted);font-style:italic}
ul.changes{margin:3px 0 0;padding-left:16px;color:var(--muted);font-size:12.5px}
.event{display:inline-block;border-radius:10px;padding:0 8px;margin:3px 4px 0 0;font-size:12px}
.event.bad{background:#fdecea;color:var(--bad)}
.event.warn{background:var(--warn-bg);color:#8a5a00}
.event.info{background:var(--soft);color:var(--muted)}
.cases{display:grid;grid-template-columns:repeat(auto-fill,minmax(250px,1fr));gap:16px;margin-top:8px}
.case{border:1px solid var(--line);border-radius:8px;padding:10px;background:#fff;margin:0}
.case svg{display:block;margin:0 auto 8px;max-width:100%;height:auto;border-radius:3px}
.case figcaption{color:var(--fg);font-size:13px}
.case .what{font-weight:600;line-height:1.4}
.case .detail{color:#36404c;font-size:12.5px;margin-top:2px}
.case .where{color:var(--muted);font-size:12px;word-break:break-word}
.case details{margin-top:4px}
.case summary{cursor:pointer;color:var(--accent);font-size:12.5px}
.case pre{white-space:pre;overflow-x:auto;background:var(--soft);padding:8px;border-radius:6px;font-size:11.5px;line-height:1.35;margin:6px 0 0}
.legend-note{color:var(--muted);font-size:12.5px;margin:2px 0 8px}
.swatch{display:inline-block;width:10px;height:10px;border-radius:50%;vertical-align:-1px;margin:0 3px 0 8px}
footer{color:var(--muted);font-size:12.5px;padding:18px 0 40px}
.callout.warning{border-color:#e8a09a;background:#fdf0ee}
nav.toc{margin:8px 0 4px;font-size:13.5px}
nav.toc a{color:var(--accent);text-decoration:none;margin-right:14px;white-space:nowrap}
nav.toc a:hover{text-decoration:underline}
details.section{margin:22px 0 0;border-top:2px solid var(--soft)}
details.section>summary{cursor:pointer;list-style:none;padding:10px 0 4px}
details.section>summary::-webkit-details-marker{display:none}
details.section>summary h3{display:inline;margin:0;border:0;padding:0}
details.section>summary:before{content:"▸";display:inline-block;width:18px;color:var(--muted)}
details.section[open]>summary:before{content:"▾"}
details.section>summary .meta{margin-left:8px}
.sched{border:1px solid var(--line);border-radius:8px;padding:8px 14px 10px;margin:10px 0;background:#fff}
.sched h4{margin:4px 0 6px}
table.sched-table{font-size:13px;margin:4px 0}
table.sched-table th,table.sched-table td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top;white-space:nowrap}
table.sched-table thead th{border-bottom:2px solid #c9d1db;font-weight:600;color:#36404c}
.vc{display:block;font-variant-numeric:tabular-nums}
.vc.top{font-weight:650}
.vc .k{color:var(--muted);font-size:11.5px;margin-left:4px;font-weight:400}
ul.reasons{margin:4px 0 0;padding-left:18px;font-size:13px;color:#36404c}
ul.reasons .k{color:var(--muted);font-variant-numeric:tabular-nums;margin-right:6px}
.dag{max-width:100%;height:auto;display:block}
@media (max-width:900px){.wrap{padding:0 14px}table.results th,table.results td{padding:4px 6px}table.results{font-size:13px}}
@media print{header.top{background:#fff;color:#000}header.top nav{display:none}}
`.trim();

function _id(s: string): string {
  return "exp-" + s.replace(/[^A-Za-z0-9_-]+/g, "-");
}

const OUTCOME_TEXT: Record<string, string> = {
  hole: "Fell into a hole",
  vertex_collision: "Vertex collision",
  edge_collision: "Edge collision",
  timeout: "Timeout",
  invalid_plan: "Invalid plan",
};

/**
 * The columns in the order the page shows them: the aggregate (the headline
 * number, e.g. `mean`) first after the row label, so it is on screen at any
 * window width; then the others as the table lists them.
 */
export function displayColumns(t: Table): string[] {
  return t.aggregate === undefined ? [...t.columns] : [
    t.aggregate,
    ...t.columns.filter((c) => c !== t.aggregate),
  ];
}

/** One cell: mean, with `± std` and `(n=…)` under it in small type. */
function _cellHtml(t: Table, r: string, col: string, numeric: boolean): string {
  const c = t.cells.find((x) => x.row === r && x.column === col);
  const attrs = ` data-row="${esc(r)}" data-col="${esc(col)}"`;
  const agg = col === t.aggregate ? " agg" : "";
  if (!c) return `<td class="none${agg}"${attrs}>—</td>`;
  const text = formatCell(t, c);
  if (c.skipped) {
    return `<td class="skipped${agg}"${attrs}>${esc(text)}</td>`;
  }
  if (c.mean === null) {
    return `<td class="${
      c.missing.length ? "missing" : "none"
    }${agg}"${attrs}>${esc(text)}</td>`;
  }
  const m = /^(\S+)( ± \S+)?( \(n=\d+\))?$/.exec(text);
  const mark = _imported(c)
    ? `<span class="imported" title="from an imported results bundle (computed elsewhere)">†</span>`
    : "";
  const inner = m
    ? `<span class="m">${esc(m[1]!)}${mark}</span>${
      m[2] ? `<span class="sd">${esc(m[2])}</span>` : ""
    }${m[3] ? `<span class="n">${esc(m[3])}</span>` : ""}`
    : esc(text);
  const bar = numeric ? ` style="--v:${Math.round(c.mean * 1000) / 1000}"` : "";
  return `<td class="${
    numeric ? "bar" : ""
  }${agg}"${attrs}${bar}>${inner}</td>`;
}

/**
 * Whether a cell's numbers come from entries imported from a bundle rather
 * than computed in this cache: the engine sets `imported` on such cells.
 */
function _imported(c: Table["cells"][number]): boolean {
  return c.imported === true;
}

/** The `<table>` of a built table: rows, the aggregate column first, cells as `./envsmith tables` prints them. */
export function resultsTableHtml(t: Table): string {
  const numeric = t.cells.every((c) =>
    c.mean === null || (c.mean >= 0 && c.mean <= 1)
  );
  const cols = displayColumns(t);
  const out: string[] = [];
  out.push(
    `<div class="scroll"><table class="results" data-table="${esc(t.name)}">`,
  );
  out.push(`<caption>${esc(t.title)}</caption>`);
  out.push(
    `<thead><tr><th scope="col">${esc(t.rowsAxis)}</th>${
      cols.map((c) =>
        `<th scope="col"${c === t.aggregate ? ` class="agg"` : ""}>${
          esc(c)
        }</th>`
      ).join("")
    }</tr></thead>`,
  );
  out.push("<tbody>");
  for (const r of t.rows) {
    // A row not run at all (an unset variable) is one cell, not the same
    // sentence in every column.
    const cells = cols.map((col) =>
      t.cells.find((x) => x.row === r && x.column === col)
    );
    const why = cells[0]?.skipped;
    if (cols.length > 1 && why && cells.every((c) => c?.skipped === why)) {
      out.push(
        `<tr><th scope="row">${
          esc(r)
        }</th><td class="skipped row" colspan="${cols.length}" data-row="${
          esc(r)
        }" data-col="*">not run: ${esc(why)}</td></tr>`,
      );
      continue;
    }
    const tds = cols.map((col) => _cellHtml(t, r, col, numeric));
    out.push(`<tr><th scope="row">${esc(r)}</th>${tds.join("")}</tr>`);
  }
  out.push("</tbody></table></div>");
  return out.join("\n");
}

/**
 * The paired comparisons of a table (`compare:`), in the results table's
 * column order: per cell the difference (bold when its 95 % interval
 * excludes 0, with `*` as in markdown), the interval, and the exact /
 * Holm-adjusted p-values; empty for a table without `compare:`.
 */
export function comparisonHtml(t: Table): string {
  const cmp = t.comparison;
  if (!cmp) return "";
  const cols = displayColumns(t).filter((c) =>
    cmp.cells.some((x) => x.column === c)
  );
  const cell = (c: CompareCell | undefined, col: string) => {
    const agg = col === t.aggregate ? " agg" : "";
    if (!c || c.diff === null) return `<td class="none${agg}">—</td>`;
    const d = formatDifference(c, t.digits);
    const m = /^(\S+) (\[.*\])(\*?)$/.exec(d);
    return `<td class="${(c.significant ?? c.excludesZero) ? "sig" : ""}${
      c.exploratory ? " expl" : ""
    }${agg}" data-row="${esc(c.row)}" data-col="${esc(col)}"><span class="m">${
      esc(m?.[1] ?? d)
    }${m?.[3] ?? ""}</span><span class="ci">${
      esc(m?.[2] ?? "")
    }</span><span class="p">p ${esc(formatPValues(c))}</span></td>`;
  };
  // The description goes above the scrolling table, not in its <caption>:
  // a caption is as wide as the table and would scroll off a narrow window.
  const out = [
    `<p class="cmp-caption">${esc(comparisonCaption(cmp))}; bold: *</p>`,
    `<div class="scroll"><table class="results compare" data-compare="${
      esc(t.name)
    }">`,
    `<thead><tr><th scope="col">${esc(t.rowsAxis)}</th><th scope="col">n</th>${
      cols.map((c) =>
        `<th scope="col"${c === t.aggregate ? ` class="agg"` : ""}>${
          esc(c)
        }</th>`
      ).join("")
    }</tr></thead><tbody>`,
  ];
  for (const r of cmp.rows) {
    const cells = cmp.cells.filter((c) => c.row === r);
    const ns = [...new Set(cells.map((c) => c.n))];
    out.push(
      `<tr><th scope="row">${esc(r)} − ${esc(cmp.against)}</th><td>${
        ns.join("–")
      }</td>${
        cols.map((col) => cell(cells.find((c) => c.column === col), col))
          .join("")
      }</tr>`,
    );
  }
  out.push("</tbody></table></div>");
  if (cmp.tooFewPairs) {
    out.push(`<p class="empty">Note: ${esc(cmp.tooFewPairs)}.</p>`);
  }
  if (cmp.imported) {
    out.push(
      `<p class="empty">† Compared values include results imported from a bundle, not computed here.</p>`,
    );
  }
  return out.join("\n");
}

/** What a table's numbers are, its problems and what is missing, as a caption. */
export function tableCaptionHtml(t: Table): string {
  const notes = tableNotes(t);
  if (t.cells.some(_imported)) {
    notes.push("† from an imported results bundle (computed elsewhere)");
  }
  const probs = [...new Set(t.cells.flatMap((c) => c.notes))];
  if (probs.length) {
    notes.push(`problems: ${probs.slice(0, 10).join("; ")}`);
  }
  if (t.missing.length) {
    notes.push(
      `${t.missing.length} node${
        t.missing.length > 1 ? "s" : ""
      } missing; compute with ${t.command ?? ""}`,
    );
  }
  return notes.length
    ? `<figcaption>${esc(notes.join(". ") + ".")}</figcaption>`
    : "";
}

/**
 * One table, with the same cell texts as `./envsmith tables`: the results
 * table, then (where a table has one) further blocks about it, then its
 * caption. A block about the table (e.g. paired comparisons against a
 * baseline row) goes between the two.
 */
export function tableHtml(t: Table): string {
  return [
    `<figure class="table-card">`,
    resultsTableHtml(t),
    comparisonHtml(t),
    profilesHtml(t),
    tableCaptionHtml(t),
    "</figure>",
  ].filter((x) => x !== "").join("\n");
}

/** `behavior: not run: X not set`, or `15 variants not run (X not set)` when many. */
function _skippedNotes(
  list: readonly { label: string; why: string }[],
): string[] {
  const byWhy = new Map<string, string[]>();
  for (const x of list) {
    const l = byWhy.get(x.why);
    if (l) l.push(x.label);
    else byWhy.set(x.why, [x.label]);
  }
  return [...byWhy].map(([why, labels]) =>
    labels.length <= 3
      ? `${labels.join("; ")}: not run: ${why}`
      : `${labels.length} variants not run (${why}), e.g. ${labels[0]}`
  );
}

function _median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** How far (a share of the x range) a run's first and last values hold past its ends in a mean. */
const END_HOLD = 0.03;

/** Points of the interpolated mean: at most this many x positions per chart line. */
const MEAN_POINTS = 240;

/**
 * `y` of a run's curve at `x` by linear interpolation between its points
 * (sorted by x), or null outside the run's range or across a gap.
 */
function _interpolate(
  pts: readonly (readonly [number, number])[],
  x: number,
  hold = 0,
): number | null {
  if (pts.length === 0) return null;
  const first = pts[0]!, last = pts[pts.length - 1]!;
  // within `hold` of its ends, a run keeps its first or last value
  if (x < first[0]) return first[0] - x <= hold ? first[1] : null;
  if (x > last[0]) return x - last[0] <= hold ? last[1] : null;
  let lo = 0, hi = pts.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (pts[mid]![0] <= x) lo = mid;
    else hi = mid;
  }
  const [x0, y0] = pts[lo]!, [x1, y1] = pts[hi]!;
  return x1 === x0 ? y1 : y0 + ((y1 - y0) * (x - x0)) / (x1 - x0);
}

/**
 * The mean curve of a variant's runs (seeds) and a band of ± 1 std, on
 * cumulative agent-steps: each run is interpolated linearly at common x
 * positions (the runs' sample counts differ a little, and their update
 * numbers do not line up across stages), and the mean at an x is over the
 * runs whose curve covers it. The x positions increase, so the line never
 * steps back. Within 3 % of the x range of its ends, a run keeps its
 * first and last values, so runs that end a little apart give no jump at
 * the end of the mean.
 */
export function meanSeries(
  members: readonly CurveSet["series"][number][],
): {
  points: [number, number | null][];
  band: ([number, number, number] | null)[];
} {
  const runs = members.map((m) =>
    m.points.filter((p) => p.success !== null).map((p) =>
      [p.samples, p.success as number] as const
    ).sort((a, b) => a[0] - b[0])
  ).filter((r) => r.length > 0);
  const points: [number, number | null][] = [];
  const band: ([number, number, number] | null)[] = [];
  if (runs.length === 0) return { points, band };
  const lo = Math.min(...runs.map((r) => r[0]![0]));
  const hi = Math.max(...runs.map((r) => r[r.length - 1]![0]));
  const n = Math.min(
    MEAN_POINTS,
    Math.max(...runs.map((r) => r.length)),
  );
  // Runs of one budget end (and start) a little apart: their last updates
  // overshoot by different batch sizes. Near the ends each keeps its first
  // or last value, so the mean is over every run to the end, instead of
  // jumping to the one run that reached furthest.
  const hold = (hi - lo) * END_HOLD;
  for (let i = 0; i < n; i++) {
    const x = n === 1 ? lo : lo + ((hi - lo) * i) / (n - 1);
    const ys = runs.map((r) => _interpolate(r, x, hold)).filter((
      y,
    ): y is number => y !== null);
    if (ys.length === 0) {
      points.push([x, null]);
      band.push(null);
      continue;
    }
    const mean = ys.reduce((a, y) => a + y, 0) / ys.length;
    const sd = ys.length > 1
      ? Math.sqrt(
        ys.reduce((a, y) => a + (y - mean) ** 2, 0) / (ys.length - 1),
      )
      : 0;
    points.push([x, mean]);
    band.push([x, Math.max(0, mean - sd), Math.min(1, mean + sd)]);
  }
  return { points, band };
}

/**
 * The chart of one curve set, with notes on variants not shown: one line
 * per variant, and where a variant ran with several seeds (series sharing
 * a label up to the `over` axis) their mean with a band of ± 1 std, so the
 * chart has one colour per variant and stays readable with many seeds.
 */
export function curvesHtml(set: CurveSet): string {
  const { series, averaged, lacking } = _curveSeries(set);
  const notes = _curveNotes(set, lacking);
  const open = `<figure class="curves" data-group="${
    esc(set.group)
  }" data-name="${esc(set.name)}">`;
  if (series.length === 0) {
    return `${open}\n<p class="empty">No training curve of ${
      esc(set.group)
    } is in the cache yet${
      notes.length ? ": " + esc(notes.join("; ")) : ""
    }.</p></figure>`;
  }
  const heldout = series.some((x) => x.dashed);
  const chart = lineChart(series, {
    title: `Training success vs samples: ${set.group}.${set.name}`,
    xLabel: "cumulative samples (agent-steps)",
    yLabel: heldout ? "success rate" : "training success rate",
    markers: _stageMarkers(set),
    firstRegion: set.stages > 1 ? "stage 0" : "",
    width: 880,
  });
  const caption =
    `<figcaption>Success rate of the training episodes that ended in each update of <code>${
      esc(set.name === "" ? set.group : `${set.group}.*.${set.name}`)
    }</code>, against the policy's cumulative samples${
      set.stages > 1 ? `, ${set.stages} stages` : ""
    }; one line per variant${
      averaged > 1
        ? "; where a variant ran with several seeds, the line is their mean and the band ± 1 std over them"
        : ""
    }${set.stages > 1 ? "; dashed grey lines: stage boundaries" : ""}${
      set.appended
        ? `; the last stage is <code>${
          esc(set.appended)
        }</code>, trained on the last redesign`
        : ""
    }${
      heldout
        ? `; dashed lines with dots: success of each stage's policy on held-out instances (<code>${
          esc(set.heldoutNode ?? "")
        }</code>, mean over its suites)`
        : ""
    }. Means over seeds are taken on cumulative agent-steps (each run interpolated).${
      notes.length ? " " + esc(notes.join("; ")) + "." : ""
    }</figcaption>`;
  return [open, chart, caption, "</figure>"].join("\n");
}

/**
 * The lines of a curve chart: one per variant, the mean of its seeds with a
 * band where it has several; `averaged` is the most seeds averaged, `lacking`
 * the variants with stages not in the cache.
 */
function _curveSeries(
  set: CurveSet,
): { series: ChartSeries[]; averaged: number; lacking: string[] } {
  const groups = new Map<string, CurveSet["series"][number][]>();
  const series: ChartSeries[] = [];
  const lacking: string[] = [];
  for (const s of set.series) {
    if (s.skipped) continue;
    if (s.missing.length) {
      lacking.push(`${s.label}: ${s.missing.length} of ${set.stages} stages`);
    }
    const name = s.series || s.label || "all";
    groups.set(name, [...(groups.get(name) ?? []), s]);
  }
  let averaged = 0;
  let colorIndex = 0;
  for (const [name, members] of groups) {
    const color = PALETTE[colorIndex++ % PALETTE.length]!;
    const held = _heldoutSeries(name, members, color);
    if (held) series.push(held);
    const drawn = members.filter((m) =>
      m.points.some((p) => p.success !== null)
    );
    if (drawn.length === 0) continue;
    if (drawn.length === 1) {
      const s = drawn[0]!;
      const pts = s.points.filter((p) => p.success !== null);
      series.push({
        group: name,
        label: s.label || "all",
        color,
        points: pts.map((p) => [p.samples, p.success] as const),
        data: { variant: name, points: String(pts.length) },
      });
      continue;
    }
    averaged = Math.max(averaged, drawn.length);
    const { points, band } = meanSeries(drawn);
    series.push({
      group: `${name} (mean of ${drawn.length})`,
      label: `${name}: mean of ${drawn.length} (${
        drawn.map((m) => m.label).join("; ")
      })`,
      color,
      points,
      band,
      data: {
        variant: name,
        runs: String(drawn.length),
        points: String(points.filter((p) => p[1] !== null).length),
      },
    });
  }
  return { series, averaged, lacking };
}

/**
 * The held-out success of a variant's runs at the end of each stage (mean
 * over seeds at the mean sample count), as a dashed line with dots; null when
 * no stage of it was evaluated.
 */
function _heldoutSeries(
  name: string,
  members: readonly CurveSet["series"][number][],
  color: string,
): ChartSeries | null {
  const byStage = new Map<number, { xs: number[]; ys: number[] }>();
  for (const m of members) {
    for (const h of m.heldout) {
      const b = byStage.get(h.stage) ?? { xs: [], ys: [] };
      b.xs.push(h.samples);
      b.ys.push(h.success);
      byStage.set(h.stage, b);
    }
  }
  if (byStage.size === 0) return null;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const points = [...byStage].sort((a, b) => a[0] - b[0]).map((
    [, b],
  ) => [mean(b.xs), mean(b.ys)] as const);
  return {
    group: `${name}: held-out`,
    label: `${name}: held-out success after each stage${
      members.length > 1 ? ` (mean of ${members.length})` : ""
    }`,
    color,
    points,
    dashed: true,
    data: { variant: name, heldout: String(points.length) },
  };
}

/** Dashed stage boundaries: the median start of each stage over the series. */
function _stageMarkers(set: CurveSet): { x: number; label: string }[] {
  const markers = [];
  for (let st = 1; st < set.stages; st++) {
    const xs = set.series.map((s) => s.stageStarts[st]).filter((
      x,
    ): x is number => typeof x === "number");
    if (xs.length) {
      markers.push({
        x: _median(xs),
        label: st === set.stages - 1 && set.appended
          ? `${set.appended}`
          : `stage ${st}`,
      });
    }
  }
  return markers;
}

/** Notes under a curve chart: shared stages, stages not in the cache, variants not run. */
function _curveNotes(set: CurveSet, lacking: readonly string[]): string[] {
  const notes: string[] = [];
  if (lacking.length) {
    notes.push(
      lacking.length <= 3
        ? `not in the cache: ${lacking.join("; ")}`
        : `${lacking.length} of ${
          set.series.filter((s) => !s.skipped).length
        } variants have stages not in the cache`,
    );
  }
  notes.push(
    ..._skippedNotes(
      set.series.filter((s) => s.skipped).map((s) => ({
        label: s.label,
        why: s.skipped!,
      })),
    ),
  );
  const shared: number[] = [];
  for (let st = 0; st < set.stages && set.series.length > 1; st++) {
    const id = set.series[0]!.nodes[st];
    if (id && set.series.every((s) => s.nodes[st] === id)) shared.push(st);
  }
  if (shared.length) {
    notes.unshift(
      `Stage${shared.length > 1 ? "s" : ""} ${shared.join(", ")} ${
        shared.length > 1 ? "are" : "is"
      } shared by every variant (one node), so the lines coincide there`,
    );
  }
  return notes;
}

function _row(r: TrajectoryRow): string {
  if (r.status !== "ok") {
    return `<tr data-stage="${r.stage}" class="${r.status}"><td class="stage">${r.stage}</td><td colspan="4" class="${
      r.status === "missing" ? "missing" : "same"
    }">${
      r.status === "missing"
        ? `not in the cache: ${esc(r.id)}`
        : `not run: ${esc(r.why ?? "")}`
    }</td></tr>`;
  }
  const who = `<b>${esc(r.engineer ?? "?")}</b>${
    r.context ? `<div class="meta">context ${esc(r.context)}</div>` : ""
  }${
    r.model ? `<div class="meta">model <code>${esc(r.model)}</code></div>` : ""
  }`;
  const cfg = r.changed === false
    ? `<code>${esc(r.toId ?? "?")}</code> <span class="same">unchanged</span>`
    : `<code>${esc(r.fromId ?? "?")}</code> → <code class="to">${
      esc(r.toId ?? "?")
    }</code>`;
  let dims = (r.dimensions ?? []).map((d) =>
    `<span class="dim">${esc(d)}</span>`
  ).join("");
  if (!dims && r.changed) {
    dims = `<span class="dim soft">${
      (r.changes ?? []).some((c) => / (added|removed)/.test(c))
        ? "components"
        : "weights"
    }</span>`;
  }
  const changes = (r.changes ?? []).length
    ? `<ul class="changes">${
      (r.changes ?? []).map((c) => `<li>${esc(c)}</li>`).join("")
    }</ul>`
    : "";
  const events = (r.events ?? []).map((e) =>
    `<span class="event ${
      /fallback|error/.test(e.type)
        ? "bad"
        : /retry|clamp/.test(e.type)
        ? "warn"
        : "info"
    }">${esc(e.type)}${e.detail ? `: ${esc(e.detail)}` : ""}</span>`
  ).join("");
  return `<tr data-stage="${r.stage}" data-to="${
    esc(r.toId ?? "")
  }"><td class="stage">${r.stage}</td><td class="who">${who}</td><td class="cfg">${cfg}</td><td class="dims">${
    dims || (r.changed === false ? `<span class="same">none</span>` : "")
  }${changes}</td><td class="why">${esc(r.rationale ?? "")}${
    events ? `<div>${events}</div>` : ""
  }</td></tr>`;
}

/** One variant's configuration trajectory as a table. */
export function trajectoryHtml(
  t: ConfigTrajectory,
  open: boolean,
  withGroup = false,
): string {
  const ok = t.rows.filter((r) => r.status === "ok");
  const changedDims = [...new Set(ok.flatMap((r) => r.dimensions ?? []))];
  const name = withGroup
    ? `${t.group}${t.label ? ` · ${t.label}` : ""}`
    : t.label || "all";
  const summary = `${
    esc(name)
  } <span class="meta">${ok.length}/${t.rows.length} stages${
    changedDims.length ? ` · changed: ${esc(changedDims.join(", "))}` : ""
  }</span>`;
  return `<details class="traj" data-group="${esc(t.group)}" data-variant="${
    esc(t.label)
  }"${
    open ? " open" : ""
  }><summary>${summary}</summary><div class="scroll"><table class="traj-table"><thead><tr><th>Stage</th><th>Engineer</th><th>Config (before → after)</th><th>Changed dimensions</th><th>Rationale</th></tr></thead><tbody>${
    t.rows.map(_row).join("")
  }</tbody></table></div></details>`;
}

function _case(f: FailureFigure): string {
  const what = OUTCOME_TEXT[f.outcome] ?? f.outcome;
  const detail = f.text.split("\n")[1] ?? "";
  const agents = f.agents.length
    ? ` · agent${f.agents.length > 1 ? "s" : ""} ${f.agents.join(", ")}`
    : "";
  return `<figure class="case" data-source="${f.source}" data-outcome="${
    esc(f.outcome)
  }" title="${esc(what)} at step ${f.step}${
    esc(agents)
  }">${f.svg}<figcaption><div class="what">${esc(f.caption)}</div>${
    detail ? `<div class="detail">${esc(detail)}</div>` : ""
  }<div class="where">${esc(f.label ? `${f.label} · ` : "")}${
    esc(f.node)
  } · episode ${f.episode} · ${esc(f.instance)}</div>${
    f.text.includes("\n")
      ? `<details><summary>text rendering</summary><pre>${
        esc(f.text)
      }</pre></details>`
      : ""
  }</figcaption></figure>`;
}

/** The id of a section of an experiment. */
function _sectionId(r: ExperimentReport, part: string): string {
  return `${_id(r.name)}-${part}`;
}

/** A folded section (closed by default) with its heading as the summary. */
function _folded(
  r: ExperimentReport,
  part: string,
  title: string,
  note: string,
  body: string[],
): string {
  return `<details class="section" id="${
    esc(_sectionId(r, part))
  }"><summary><h3>${esc(title)}</h3>${
    note ? `<span class="meta">${esc(note)}</span>` : ""
  }</summary>\n${body.join("\n")}\n</details>`;
}

/** The sections of an experiment: id part and title (the table of contents). */
const SECTIONS: readonly (readonly [string, string])[] = [
  ["results", "Results"],
  ["curves", "Learning curves"],
  ["trajectories", "Configuration trajectories"],
  ["failures", "Failure cases"],
  ["graph", "Graph"],
];

/** One experiment's section: results open, the other sections folded. */
export function experimentHtml(r: ExperimentReport): string {
  const out: string[] = [];
  out.push(
    `<section class="experiment" id="${esc(_id(r.name))}" data-experiment="${
      esc(r.name)
    }">`,
  );
  out.push(`<h2>${esc(r.name)}<span class="file">${esc(r.file)}</span></h2>`);
  out.push(
    `<nav class="toc">${
      SECTIONS.map(([part, title]) =>
        `<a href="#${esc(_sectionId(r, part))}">${esc(title)}</a>`
      ).join("")
    }</nav>`,
  );
  if (r.description) out.push(`<p class="desc">${esc(r.description)}</p>`);
  _metaAndMissing(r, out);
  for (const w of r.warnings) {
    out.push(
      `<div class="callout warning"><strong>Warning:</strong> ${esc(w)}</div>`,
    );
  }
  out.push(`<h3 id="${esc(_sectionId(r, "results"))}">Results</h3>`);
  if (r.tables.length === 0) {
    out.push(`<p class="empty">This experiment declares no tables.</p>`);
  }
  for (const t of r.tables) out.push(tableHtml(t));
  const curves: string[] = [];
  if (r.curves.length === 0) {
    curves.push(`<p class="empty">No stages with train nodes.</p>`);
  }
  for (const c of r.curves) curves.push(curvesHtml(c));
  out.push(
    _folded(
      r,
      "curves",
      "Learning curves",
      r.curves.some((c) => c.heldoutNode)
        ? "training and held-out success per stage"
        : "training success per stage",
      curves,
    ),
  );
  const traj: string[] = [];
  _trajectoriesHtml(r, traj);
  out.push(
    _folded(
      r,
      "trajectories",
      "Configuration trajectories",
      r.trajectories.length ? "what each engineer chose, across seeds" : "",
      traj,
    ),
  );
  const fail: string[] = [];
  _failuresHtml(r, fail);
  out.push(
    _folded(
      r,
      "failures",
      "Failure cases",
      r.failures.length ? `${r.failures.length} shown` : "",
      fail,
    ),
  );
  out.push(
    _folded(r, "graph", "Graph", `${r.graph.nodes.length} boxes`, [
      `<figure class="graph">${
        dagSvg(r.graph)
      }<figcaption>The experiment's nodes collapsed by stage and variant: one box per node of the file (its kind and how many copies the matrix and the stages make), a dashed frame around the nodes of a stages node, dashed arcs from one stage to the next. <code>./envsmith plan ${
        esc(r.file)
      } --format dot</code> prints the same graph for Graphviz (or <code>--format mermaid</code>).</figcaption></figure>`,
    ]),
  );
  out.push(`</section>`);
  return out.join("\n");
}

/** The axes, when the entries were computed, and the nodes the cache lacks. */
function _metaAndMissing(r: ExperimentReport, out: string[]): void {
  const meta: string[] = [];
  for (const a of r.axes) {
    meta.push(
      `<span class="chip">${esc(a.name)}: ${esc(a.values.join(", "))}</span>`,
    );
  }
  if (r.computed) {
    // One stamp: when the newest of the results was computed.
    meta.push(
      `<span class="computed" title="${
        esc(`first ${r.computed.first}, last ${r.computed.last}`)
      }">${r.computed.of} computed ${
        esc(r.computed.last.slice(0, 16).replace("T", " "))
      } UTC</span>`,
    );
  }
  if (meta.length) out.push(`<p class="meta">${meta.join(" ")}</p>`);
  if (r.missing.length) {
    const li = (id: string) =>
      `<li class="mono" data-missing="${esc(id)}">${esc(id)}</li>`;
    const head = r.missing.slice(0, 12);
    const rest = r.missing.slice(12);
    out.push(
      `<div class="callout missing-nodes"><strong>Incomplete: ${r.missing.length} node${
        r.missing.length > 1 ? "s are" : " is"
      } not in the cache.</strong><ul>${head.map(li).join("")}</ul>${
        rest.length
          ? `<details><summary>and ${rest.length} more</summary><ul>${
            rest.map(li).join("")
          }</ul></details>`
          : ""
      }Compute ${
        r.missing.length > 1 ? "them" : "it"
      } with: <code class="command">${esc(r.command ?? "")}</code></div>`,
    );
  }
}

/** Each engineer's configuration trajectory (skipped and absent variants as notes). */
function _trajectoriesHtml(r: ExperimentReport, out: string[]): void {
  if (r.trajectories.length === 0) {
    out.push(`<p class="empty">No stages with redesign nodes.</p>`);
    return;
  }
  _schedulesHtml(r, out);
  out.push(
    `<h4>Per seed</h4><p class="legend-note">Per variant and stage: the engineer, the configuration id before and after its redesign (the next stage trains on the latter), the dimensions it changed, and its rationale. Folded; open one to read it.</p>`,
  );
  const notRun: { label: string; why: string }[] = [];
  const groups = new Set(r.trajectories.map((t) => t.group)).size;
  let absent = 0;
  for (const t of r.trajectories) {
    if (t.rows.length && t.rows.every((x) => x.status === "skipped")) {
      notRun.push({ label: t.label, why: t.rows[0]!.why ?? "" });
      continue;
    }
    if (
      r.trajectories.length > 3 && t.rows.length &&
      t.rows.every((x) => x.status === "missing")
    ) {
      absent++;
      continue;
    }
    const open = r.trajectories.length === 1;
    out.push(trajectoryHtml(t, open, groups > 1));
  }
  if (absent) {
    out.push(
      `<p class="meta missing-note">${absent} variant${
        absent > 1 ? "s have" : " has"
      } no redesign in the cache yet.</p>`,
    );
  }
  for (const n of _skippedNotes(notRun)) {
    out.push(`<p class="meta skipped-note">${esc(n)}.</p>`);
  }
}

/** The variants' schedules across seeds: one compact table per variant with the reasons and their counts. */
function _schedulesHtml(r: ExperimentReport, out: string[]): void {
  const byVariant = new Map<string, ConfigTrajectory[]>();
  for (const t of r.trajectories) {
    if (!t.rows.some((x) => x.status === "ok")) continue;
    const v = Object.entries(t.variant).filter(([k]) => k !== r.over)
      .map(([k, x]) => `${k}=${x}`).join(", ");
    const key = `${t.group}\u0000${t.name}\u0000${v}`;
    byVariant.set(key, [...(byVariant.get(key) ?? []), t]);
  }
  if (byVariant.size === 0) return;
  const groups = new Set(r.trajectories.map((t) => t.group)).size;
  out.push(
    `<p class="legend-note">Per variant: each configuration dimension its engineer changed, from the start configuration through each redesign (what the next stage trains on), with how many ${
      esc(r.over ?? "run")
    }s took each value (the most frequent in bold); then the engineer's stated reasons with how often each was given (numbers masked as #, so one rule's firings count together).</p>`,
  );
  for (const [key, list] of byVariant) {
    const label = key.split("\u0000")[2] ?? "";
    const shown = label.replace(/^[^=,]+=/, "").includes(",")
      ? label
      : label.replace(/^[^=]+=/, "");
    const view = scheduleView(list, shown);
    out.push(_scheduleHtml(view, groups > 1));
  }
}

function _scheduleHtml(v: ScheduleView, withGroup: boolean): string {
  const name = withGroup
    ? `${v.group} · ${v.label || "all"}`
    : v.label || "all";
  const head = `<tr><th>dimension</th>${
    v.columns.map((c) => `<th>${esc(c)}</th>`).join("")
  }</tr>`;
  const rows = v.dimensions.map((d) =>
    `<tr data-dimension="${esc(d.path)}"><th>${esc(d.path)}</th>${
      d.cells.map((cell) =>
        `<td>${
          cell.map((x, i) =>
            `<span class="vc${i === 0 ? " top" : ""}">${
              esc(x.value)
            }<span class="k">×${x.count}</span></span>`
          ).join("")
        }</td>`
      ).join("")
    }</tr>`
  ).join("");
  const reasons = v.reasons.slice(0, 8).map((x) =>
    `<li><span class="k">×${x.count}</span>${esc(x.text)}</li>`
  ).join("");
  const more = v.reasons.length > 8
    ? `<li class="meta">and ${v.reasons.length - 8} other reasons</li>`
    : "";
  return `<div class="sched" data-variant="${esc(v.label)}"><h4>${
    esc(name)
  } <span class="meta">${v.runs} run${v.runs > 1 ? "s" : ""}${
    v.runs > 1
      ? ` · ${v.commonSchedule.count} of ${v.runs} chose the same schedule`
      : ""
  }</span></h4>${
    v.dimensions.length
      ? `<div class="scroll"><table class="sched-table"><thead>${head}</thead><tbody>${rows}</tbody></table></div>`
      : `<p class="same">No dimension changed.</p>`
  }${reasons ? `<ul class="reasons">${reasons}${more}</ul>` : ""}</div>`;
}

/** The failure cases, training and evaluation, with the legend of their pictures. */
function _failuresHtml(r: ExperimentReport, out: string[]): void {
  const sources: [FailureFigure["source"], string][] = [
    [
      "training",
      "Training, last stage: the diagnosis' most informative failures",
    ],
    ["evaluation", "Benchmark evaluation"],
  ];
  let any = false;
  for (const [src, title] of sources) {
    const list = r.failures.filter((f) => f.source === src);
    if (list.length === 0) continue;
    any = true;
    out.push(`<h4>${esc(title)}</h4>`);
    out.push(`<div class="cases">${list.map(_case).join("\n")}</div>`);
  }
  if (r.failuresAbsent) {
    const n = r.failuresAbsent.nodes.length;
    out.push(
      `<p class="empty absent">${
        any ? "More failure cases" : "Failure cases"
      } are drawn from recorded trajectories, which this cache holds without their data for ${n} node${
        n > 1 ? "s" : ""
      } (results imported without it); compute ${
        n > 1 ? "them" : "it"
      } with: <code class="command">${
        esc(r.failuresAbsent.command)
      }</code></p>`,
    );
  }
  if (!any && !r.failuresAbsent) {
    out.push(`<p class="empty">No failure case in the cache.</p>`);
  } else if (any) {
    out.push(
      `<p class="legend-note">Each agent has a colour: filled circle = where it stood at the failure step, square outline = its goal, line = its path from its start (small ring) up to the failure; dark cells are holes, grey cells walls; a dark ring marks the failure (the cell of a fall or of a vertex collision; a dark bar joins the cells of an edge collision; dashed rings: agents still off their goal at the horizon).</p>`,
    );
  }
  for (const n of r.failureNotes) {
    // "shown for seed=1 only" matters only when something is shown.
    if (any || !/ only \(/.test(n)) out.push(`<p class="meta">${esc(n)}</p>`);
  }
}

/** The whole page. */
export function renderReportHtml(
  reports: readonly ExperimentReport[],
  options: RenderHtmlOptions = {},
): string {
  const title = options.title ?? "envsmith report";
  const missing = reports.reduce((n, r) => n + r.missing.length, 0);
  const nav = reports.map((r) =>
    `<a href="#${esc(_id(r.name))}">${esc(r.name)}</a>`
  ).join("");
  let html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="envsmith report">
<title>${esc(title)}</title>
<style>
${CSS}
</style>
</head>
<body>
<header class="top"><div class="wrap">
<h1>${esc(title)}</h1>
<p class="sub">${reports.length} experiment${
    reports.length === 1 ? "" : "s"
  } · built from the cache alone (nothing was run)${
    missing ? ` · ${missing} node${missing > 1 ? "s" : ""} missing` : ""
  }</p>
<nav>${nav}</nav>
</div></header>
<main class="wrap">
${reports.map(experimentHtml).join("\n")}
</main>
<footer class="wrap">Generated by <code>./envsmith report</code> from cached results. Tables use the numbers of <code>./envsmith tables</code>; rerun the report after <code>./envsmith run</code> to update it.</footer>
</body>
</html>
`;
  for (const s of options.redact ?? []) {
    if (s.length < 6) continue;
    for (const form of new Set([s, esc(s)])) {
      html = html.split(form).join("[redacted]");
    }
  }
  return html;
}
