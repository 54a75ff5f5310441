/**
 * Performance profiles in the report (rliable's run-score distributions):
 * for a compared table with an IQM column, the share of a row's seed ×
 * suite scores above τ, for τ from 0 to 1, one line per row with its 95 %
 * band from the table's crossed bootstrap. A row whose line lies above
 * another's everywhere is better at every threshold (stochastic dominance).
 *
 * @module
 */
import type { Table } from "@envsmith/engine/tables";
import { escapeHtml } from "./escape.ts";
import { type ChartSeries, lineChart, PALETTE } from "./svg_charts.ts";

/** The profiles of a table as a figure block; empty when the table has none. */
export function profilesHtml(t: Table): string {
  const p = t.comparison?.profiles;
  if (!p || p.rows.length === 0) return "";
  const series: ChartSeries[] = p.rows.map((r, i) => {
    const color = PALETTE[i % PALETTE.length]!;
    return {
      group: r.row,
      label: r.row,
      color,
      points: p.taus.map((tau, k) => [tau, r.y[k] ?? null] as const),
      band: p.taus.map((tau, k) => [tau, r.lo[k]!, r.hi[k]!] as const),
      data: { row: r.row },
    };
  });
  const chart = lineChart(series, {
    title: `Performance profiles: ${t.title}`,
    xLabel: "threshold τ (score)",
    yLabel: "share of runs above τ",
    xDomain: [0, 1],
  });
  return [
    `<div class="profiles" data-profiles="${escapeHtml(t.name)}">`,
    `<p class="cmp-caption">Performance profiles (rliable): the share of ${
      escapeHtml(t.over?.axis ?? "run")
    } × suite scores above τ, per ${
      escapeHtml(t.rowsAxis)
    }, with 95 % bands from the crossed bootstrap (${
      (t.comparison?.resamples ?? 0).toLocaleString("en")
    } resamples). A line above another at every τ is better at every threshold.</p>`,
    chart,
    "</div>",
  ].join("\n");
}
