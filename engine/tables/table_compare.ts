/**
 * The `compare:` block of a table: every row against a baseline row, paired
 * over the table's `over` axis (usually seeds), per column. For each cell:
 * the mean paired difference, a 95 % bootstrap interval (pairs, and
 * instances within pairs when the node's value carries per-instance
 * records), an exact sign-flip p-value, and Holm's adjustment over the rows
 * of the column (the family of comparisons one column makes). The maths is
 * in {@linkcode comparePaired}.
 *
 * @module
 */
import type { TableCompare } from "../compile/experiment_schema.ts";
import type { Experiment, GraphNode } from "../compile/experiment.ts";
import {
  comparePaired,
  holm,
  minSignFlipP,
  type Pair,
} from "./paired_stats.ts";
import { getField } from "../refs.ts";
import type { Json } from "../types.ts";

/** One compared cell: a row against the baseline in one column. */
export interface CompareCell {
  /** Row label. */
  readonly row: string;
  /** Column label. */
  readonly column: string;
  /** Pairs (values of the `over` axis both rows have). */
  readonly n: number;
  /** Mean paired difference, row - baseline (null without pairs). */
  readonly diff: number | null;
  /** 95 % interval, low end. */
  readonly lo: number | null;
  /** 95 % interval, high end. */
  readonly hi: number | null;
  /** Two-sided sign-flip p-value. */
  readonly p: number | null;
  /** Holm-adjusted over the rows of this column. */
  readonly pHolm: number | null;
  /** Whether `p` is exact (all sign assignments). */
  readonly exact: boolean;
  /** Whether the interval also resampled instances within pairs. */
  readonly instanceLevel: boolean;
  /** Whether the interval excludes 0. */
  readonly excludesZero: boolean;
}

/** The comparison part of a table. */
export interface Comparison {
  /** The baseline row. */
  readonly against: string;
  /** The pairing axis. */
  readonly pairedBy: string;
  /** Confidence level of the intervals. */
  readonly level: number;
  /** Bootstrap resamples. */
  readonly resamples: number;
  /** The rows compared (all but the baseline), in table order. */
  readonly rows: readonly string[];
  /** Cells, row-major over `rows` and the table's columns. */
  readonly cells: readonly CompareCell[];
  /** The smallest n over the cells. */
  readonly minPairs: number;
  /** Set when no cell has enough pairs for any test to reach p < 0.05. */
  readonly tooFewPairs?: string;
  /** Some compared values come from entries imported from a bundle (not computed here). */
  readonly imported?: true;
}

/** What a comparison reads of a built table. */
export interface ComparedTable {
  readonly rows: readonly string[];
  readonly columns: readonly string[];
  readonly aggregate?: string;
  readonly cells: readonly {
    readonly row: string;
    readonly column: string;
    readonly samples: readonly {
      readonly over: string;
      readonly id: string;
      readonly value: number | null;
      readonly imported?: true;
    }[];
  }[];
}

/** The value of a graph node, or undefined when it is not available. */
export type ValueOf = (node: GraphNode) => Json | undefined;

/**
 * Compares every row of `table` with the row `spec.against`.
 *
 * @param valueOf The value of a node (for per-instance records).
 */
export function compareRows(
  exp: Experiment,
  table: ComparedTable,
  spec: TableCompare,
  pairedBy: string,
  valueOf: ValueOf,
): Comparison {
  const against = String(spec.against);
  const resamples = spec.resamples ?? 2000;
  const rows = table.rows.filter((r) => r !== against);
  const records = _recordsOf(exp, spec, valueOf);
  const perColumn = table.columns.map((column) =>
    rows.map((row) => {
      const pairs = _pairs(table, row, against, column, records);
      const c = comparePaired(pairs, {
        resamples,
        seed: spec.seed ?? 1,
      });
      return { row, column, c };
    })
  );
  const cells: CompareCell[] = [];
  rows.forEach((row, i) => {
    table.columns.forEach((_, j) => {
      const family = perColumn[j]!;
      const adjusted = holm(family.map((x) => (x.c.n > 0 ? x.c.p : null)));
      const { column, c } = family[i]!;
      const ok = c.n > 0;
      cells.push({
        row,
        column,
        n: c.n,
        diff: ok ? c.diff : null,
        lo: ok ? c.lo : null,
        hi: ok ? c.hi : null,
        p: ok ? c.p : null,
        pHolm: adjusted[i] ?? null,
        exact: c.exact,
        instanceLevel: c.instanceLevel,
        excludesZero: ok && (c.lo > 0 || c.hi < 0),
      });
    });
  });
  const withPairs = cells.filter((c) => c.n > 0).map((c) => c.n);
  const minPairs = withPairs.length ? Math.min(...withPairs) : 0;
  const maxPairs = withPairs.length ? Math.max(...withPairs) : 0;
  const compared = new Set([against, ...rows]);
  const imported = table.cells.some((c) =>
    compared.has(c.row) && c.samples.some((x) => x.imported)
  );
  return {
    ...(imported ? { imported: true as const } : {}),
    against,
    pairedBy,
    level: 0.95,
    resamples,
    rows,
    cells,
    minPairs,
    ...(minSignFlipP(maxPairs) >= 0.05
      ? {
        tooFewPairs: `with n = ${maxPairs} pair${
          maxPairs === 1 ? "" : "s"
        } no sign-flip test can reach p < 0.05 (the smallest possible p is ${
          _fmtP(minSignFlipP(maxPairs))
        }); 6 or more pairs are needed`,
      }
      : {}),
  };
}

/** Per node id: per column label, the instance values sorted by instance id. */
type _Records = (id: string) => Map<string, number[]> | undefined;

function _recordsOf(
  exp: Experiment,
  spec: TableCompare,
  valueOf: ValueOf,
): _Records {
  const inst = spec.instances;
  const memo = new Map<string, Map<string, number[]> | undefined>();
  return (id) => {
    if (inst === undefined || id === "") return undefined;
    if (memo.has(id)) return memo.get(id);
    const node = exp.nodes[exp.byId.get(id) ?? -1];
    const value = node ? valueOf(node) : undefined;
    const path = inst.path.split(".");
    const list = value === undefined
      ? undefined
      : getField({ value, report: null }, path);
    let out: Map<string, number[]> | undefined;
    if (Array.isArray(list)) {
      const groups = new Map<string, { id: string; x: number }[]>();
      list.forEach((r, k) => {
        if (r === null || typeof r !== "object" || Array.isArray(r)) return;
        const col = r[inst.column], x = r[inst.value];
        if (col === undefined || typeof x !== "number") return;
        const g = groups.get(String(col)) ?? [];
        g.push({ id: typeof r.id === "string" ? r.id : String(k), x });
        groups.set(String(col), g);
      });
      out = new Map(
        [...groups].map((
          [k, g],
        ) => [
          k,
          g.sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0).map((e) =>
            e.x
          ),
        ]),
      );
    }
    memo.set(id, out);
    return out;
  };
}

/** The pairs of one cell: the `over` values where both rows have a number. */
function _pairs(
  table: ComparedTable,
  row: string,
  against: string,
  column: string,
  records: _Records,
): Pair[] {
  const cellOf = (r: string) =>
    table.cells.find((c) => c.row === r && c.column === column);
  const a = cellOf(row), b = cellOf(against);
  if (!a || !b) return [];
  const cols = column === table.aggregate
    ? table.columns.filter((c) => c !== table.aggregate)
    : [column];
  // per column, the instance values of the node behind the row's cell
  const groupsFor = (r: string, over: string) => {
    const groups: number[][] = [];
    for (const col of cols) {
      const id = table.cells.find((c) => c.row === r && c.column === col)
        ?.samples.find((s) => s.over === over)?.id;
      const g = id ? records(id)?.get(col) : undefined;
      if (g === undefined || g.length === 0) return undefined;
      groups.push(g);
    }
    return groups;
  };
  const pairs: Pair[] = [];
  for (const sa of a.samples) {
    const sb = b.samples.find((s) => s.over === sa.over);
    if (sa.value === null || !sb || sb.value === null) continue;
    const ga = groupsFor(row, sa.over), gb = groupsFor(against, sa.over);
    pairs.push({
      a: sa.value,
      b: sb.value,
      ...(ga && gb && ga.length === gb.length
        ? { instances: { a: ga, b: gb } }
        : {}),
    });
  }
  return pairs;
}

function _fmtP(p: number): string {
  return p >= 0.001 ? p.toFixed(3) : p.toExponential(1);
}

/** A difference with its interval: `+0.044 [+0.010, +0.080]*` (`*`: the interval excludes 0). */
export function formatDifference(c: CompareCell, digits: number): string {
  if (c.diff === null) return "—";
  const f = (x: number) => (x >= 0 ? "+" : "−") + Math.abs(x).toFixed(digits);
  return `${f(c.diff)} [${f(c.lo!)}, ${f(c.hi!)}]${c.excludesZero ? "*" : ""}`;
}

/** The p-values of a cell: `0.002 / 0.010` (exact / Holm). */
export function formatPValues(c: CompareCell): string {
  if (c.p === null) return "—";
  return `${_fmtP(c.p)}${c.exact ? "" : "~"} / ${
    c.pHolm === null ? "—" : _fmtP(c.pHolm)
  }`;
}

/** The comparison as markdown: differences with intervals, then p-values, then notes. */
export function comparisonMarkdown(
  cmp: Comparison,
  columns: readonly string[],
  rowsAxis: string,
  digits: number,
): string {
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  const grid = (fmt: (c: CompareCell) => string) => {
    const lines = [
      `| ${esc(rowsAxis)} | n | ${columns.map(esc).join(" | ")} |`,
      `|${["---", "---:", ...columns.map(() => "---:")].join("|")}|`,
    ];
    for (const r of compared) {
      const cells = cmp.cells.filter((c) => c.row === r);
      const ns = cells.map((c) => c.n);
      const n = Math.min(...ns) === Math.max(...ns)
        ? String(ns[0] ?? 0)
        : `${Math.min(...ns)}-${Math.max(...ns)}`;
      lines.push(
        `| ${esc(r)} − ${esc(cmp.against)} | ${n} | ${
          columns.map((col) => {
            const c = cells.find((x) => x.column === col);
            return c ? esc(fmt(c)) : "—";
          }).join(" | ")
        } |`,
      );
    }
    return lines;
  };
  // rows without any pair (not run, or missing) are named once below
  const compared = cmp.rows.filter((r) =>
    cmp.cells.some((c) => c.row === r && c.n > 0)
  );
  const unpaired = cmp.rows.filter((r) => !compared.includes(r));
  const instance = cmp.cells.some((c) => c.instanceLevel);
  const out = [
    `Paired differences against ${cmp.against} (${cmp.pairedBy}-paired), mean [95 % bootstrap interval${
      instance ? " over " + cmp.pairedBy + "s and instances" : ""
    }]; * the interval excludes 0:`,
    "",
    ...grid((c) => formatDifference(c, digits)),
    "",
    `Sign-flip p-values, exact / Holm-adjusted over the ${cmp.rows.length} rows of each column${
      cmp.cells.some((c) => !c.exact) ? " (~: Monte Carlo)" : ""
    }:`,
    "",
    ...grid(formatPValues),
    "",
  ];
  if (unpaired.length) {
    out.push(
      `_No pairs (not run or not computed): ${unpaired.join(", ")}._`,
      "",
    );
  }
  if (cmp.tooFewPairs) out.push(`_Note: ${cmp.tooFewPairs}._`, "");
  if (cmp.imported) {
    out.push(
      "_Compared values include results imported from a bundle (cache import), not computed here._",
      "",
    );
  }
  return out.join("\n");
}

/** The comparison as CSV: one line per compared cell. */
export function comparisonCsv(cmp: Comparison): string {
  const q = (s: string) => /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  const r = (x: number | null) => x === null ? "" : Math.round(x * 1e12) / 1e12;
  const lines = [
    "row,against,column,n,diff,lo,hi,p,p_holm,exact,instance_level,excludes_zero",
  ];
  for (const c of cmp.cells) {
    lines.push([
      q(c.row),
      q(cmp.against),
      q(c.column),
      c.n,
      r(c.diff),
      r(c.lo),
      r(c.hi),
      r(c.p),
      r(c.pHolm),
      c.exact,
      c.instanceLevel,
      c.excludesZero,
    ].join(","));
  }
  return lines.join("\n") + "\n";
}
