/**
 * The `compare:` block of a table: every row against a baseline row, paired
 * over the table's `over` axis (seeds), per column. Every seed is scored on
 * the same instances, so seeds and instances are crossed: intervals come
 * from the crossed bootstrap ({@linkcode resampleTable}; seeds only, said
 * so, where a node has no per-instance outcomes). For each cell:
 *
 * - the mean paired difference with its interval (percentile, or BCa with
 *   `interval: bca`; 10,000 resamples by default);
 * - p: the larger of the exact sign-flip p over the seeds (valid whatever
 *   the instances, conditional on them) and the crossed-bootstrap p (the
 *   smallest α whose interval excludes 0): a cell is significant only when
 *   both the seed-level exact test and the crossed resampling reject;
 * - Holm's adjustment over the declared family: `family: table` (default)
 *   every cell of the comparison, `family: column` the rows of each column,
 *   with the per-suite cells then labelled exploratory (no claim);
 * - with `equivalence: M`, two one-sided tests (TOST) of |Δ| < M on the
 *   same resamples and seeds, Holm-adjusted over the same family:
 *   "equivalent within ±M" only when both reject;
 * - with `probability_of_improvement: true`, P(row > baseline) over the
 *   suites (rliable), with its interval;
 * - an `iqm` aggregate column is compared like the others (its difference
 *   of IQMs resampled the same way).
 *
 * @module
 */
import type {
  TableCompare,
  TableInstances,
} from "../compile/experiment_schema.ts";
import type { Experiment, GraphNode } from "../compile/experiment.ts";
import {
  holm,
  minSignFlipP,
  signFlipOneSided,
  signFlipP,
} from "./paired_stats.ts";
import { bootstrapP, tostFromResamples } from "./bootstrap_interval.ts";
import {
  type IntervalMethod,
  type ProfileResult,
  resampleTable,
} from "./table_resampling.ts";
import { getField } from "../refs.ts";
import { DEFAULT_RESAMPLES, MIN_RESAMPLES } from "../compile/table_spec.ts";

export { DEFAULT_RESAMPLES, MIN_RESAMPLES };
import type { Json } from "../types.ts";

/** The thresholds τ of performance profiles: 0, 0.02, ..., 1. */
export const PROFILE_TAUS: readonly number[] = Array.from(
  { length: 51 },
  (_, i) => i / 50,
);

/** Equivalence of one cell (`equivalence:`). */
export interface EquivalenceResult {
  /** The margin M. */
  readonly margin: number;
  /** TOST p: the larger of the one-sided p-values (each the larger of sign-flip and bootstrap). */
  readonly p: number;
  /** Holm-adjusted over the family. */
  readonly pHolm: number;
  /** Both one-sided tests reject after the family's correction (and the cell is confirmatory). */
  readonly equivalent: boolean;
}

/** One compared cell: a row against the baseline in one column. */
export interface CompareCell {
  /** Row label. */
  readonly row: string;
  /** Column label. */
  readonly column: string;
  /** Pairs (values of the `over` axis both rows have). */
  readonly n: number;
  /** Mean paired difference, row - baseline (null without pairs; an IQM column: the difference of IQMs). */
  readonly diff: number | null;
  /** Interval, low end. */
  readonly lo: number | null;
  /** Interval, high end. */
  readonly hi: number | null;
  /** The cell's p: the larger of `pSignFlip` and `pBootstrap`. */
  readonly p: number | null;
  /** Holm-adjusted over the cell's family. */
  readonly pHolm: number | null;
  /** Whether the sign-flip p is exact (all sign assignments). */
  readonly exact: boolean;
  /** Whether the interval also resampled instances (crossed with seeds). */
  readonly instanceLevel: boolean;
  /** Whether the interval excludes 0. */
  readonly excludesZero: boolean;
  /** Exact (or Monte Carlo) sign-flip p over the seeds. */
  readonly pSignFlip?: number | null;
  /** Two-sided crossed-bootstrap p. */
  readonly pBootstrap?: number | null;
  /** Holm-adjusted p below 1 − level and the cell is not exploratory. */
  readonly significant?: boolean;
  /** A per-suite cell of a `family: column` comparison: shown, not a claim. */
  readonly exploratory?: boolean;
  /** The equivalence test, with `equivalence:`. */
  readonly equivalence?: EquivalenceResult;
}

/** A cell's own value with its interval (the same resampling). */
export interface CellInterval {
  readonly row: string;
  readonly column: string;
  /** Seeds. */
  readonly n: number;
  /** The value (a mean over seeds, or an IQM). */
  readonly estimate: number;
  readonly lo: number;
  readonly hi: number;
}

/** P(row > baseline) over the suites, with its interval. */
export interface ImprovementResult {
  readonly row: string;
  readonly n: number;
  readonly estimate: number;
  readonly lo: number;
  readonly hi: number;
  /** Two-sided bootstrap p of P = 0.5. */
  readonly p: number;
}

/** The multiple-testing family of a comparison. */
export interface CompareFamily {
  /** `table`: every cell; `column`: the rows of each column. */
  readonly kind: "table" | "column";
  /** The number of tests Holm ran over (per column for `column`: the largest). */
  readonly tests: number;
  /** Labels of exploratory columns (`column` family). */
  readonly exploratory: readonly string[];
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
  /** Interval method. */
  readonly interval?: IntervalMethod;
  /** The declared family and its size. */
  readonly family?: CompareFamily;
  /** What was resampled, e.g. "seeds and instances, crossed". */
  readonly resampling?: string;
  /** Columns whose intervals resample seeds only, and why. */
  readonly seedsOnly?: string;
  /** The equivalence margin, with `equivalence:`. */
  readonly equivalenceMargin?: number;
  /** Every cell's value with its interval (compared rows and the baseline). */
  readonly cellIntervals?: readonly CellInterval[];
  /** P(row > baseline), with `probability_of_improvement: true`. */
  readonly improvement?: readonly ImprovementResult[];
  /** Performance profiles of every row, when the table has an IQM column. */
  readonly profiles?: {
    readonly taus: readonly number[];
    readonly rows: readonly ProfileResult[];
  };
}

/** What a comparison reads of a built table. */
export interface ComparedTable {
  readonly rows: readonly string[];
  readonly columns: readonly string[];
  /** The `mean` aggregate column's label. */
  readonly aggregate?: string;
  /** The `iqm` aggregate column's label. */
  readonly iqm?: string;
  /** The values of the `over` axis, in order. */
  readonly over?: readonly string[];
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
 * Compares every row of `table` with the row `spec.against`. The steps:
 * resample the table ({@linkcode resampleTable}), test each cell
 * ({@linkcode _testCells}), adjust over the family ({@linkcode _holmOver}),
 * then assemble the cells and the notes that say what was resampled.
 *
 * Long by design: its steps are the named functions below it; what remains is the comparison's fields, assembled once.
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
  const resamples = spec.resamples ?? DEFAULT_RESAMPLES;
  const level = 0.95, alpha = 1 - level;
  const interval: IntervalMethod = spec.interval ?? "percentile";
  const familyKind = spec.family ?? "table";
  const margin = spec.equivalence;
  const rows = table.rows.filter((r) => r !== against);
  const aggLabels = [table.aggregate, table.iqm].filter((x): x is string =>
    x !== undefined
  );
  const groups = table.columns.filter((c) => !aggLabels.includes(c));
  const over = table.over ??
    [...new Set(table.cells.flatMap((c) => c.samples.map((s) => s.over)))];
  const hasAgainst = table.rows.includes(against);
  const res = resampleTable({
    rows: table.rows,
    seeds: over,
    groups,
    entry: _entryOf(table, _recordsOf(exp, spec, valueOf)),
    meanLabel: table.aggregate,
    iqmLabel: table.iqm,
    against: hasAgainst ? against : "",
    resamples,
    seed: spec.seed ?? 1,
    level,
    interval,
    improvement: spec.probability_of_improvement === true,
    ...(table.iqm !== undefined && groups.length > 0
      ? { profileTaus: PROFILE_TAUS }
      : {}),
  });
  const instanceLevel = new Map(
    groups.map((g, i) => [g, res.instanceLevel[i] ?? false]),
  );
  const columnInstanceLevel = (col: string) =>
    aggLabels.includes(col)
      ? groups.length > 0 && groups.every((g) => instanceLevel.get(g))
      : instanceLevel.get(col) ?? false;
  const exploratoryColumns = familyKind === "column" && aggLabels.length > 0
    ? groups
    : [];
  const raw = _testCells(rows, table.columns, res, spec.seed ?? 1, margin);
  const { pHolm, tostHolm, tests } = _holmOver(
    raw,
    familyKind,
    table.columns,
    margin,
  );
  const cells: CompareCell[] = raw.map((r, i) =>
    _compareCell(r, {
      exploratory: exploratoryColumns.includes(r.column),
      instanceLevel: columnInstanceLevel(r.column),
      pHolm: pHolm[i]!,
      tostHolm: tostHolm[i]!,
      alpha,
      margin,
    })
  );
  const withPairs = cells.filter((c) => c.n > 0).map((c) => c.n);
  const minPairs = withPairs.length ? Math.min(...withPairs) : 0;
  const maxPairs = withPairs.length ? Math.max(...withPairs) : 0;
  const compared = new Set([against, ...rows]);
  const imported = table.cells.some((c) =>
    compared.has(c.row) && c.samples.some((x) => x.imported)
  );
  const fallback = groups.filter((g) => !instanceLevel.get(g));
  const seedsOnly = _seedsOnlyNote(spec, pairedBy, fallback, groups);
  const tooFewPairs = _tooFewPairsNote(maxPairs, tests, pairedBy, alpha);
  return {
    ...(imported ? { imported: true as const } : {}),
    against,
    pairedBy,
    level,
    resamples,
    rows,
    cells,
    minPairs,
    ...(tooFewPairs ? { tooFewPairs } : {}),
    interval,
    family: { kind: familyKind, tests, exploratory: exploratoryColumns },
    resampling: fallback.length === groups.length
      ? `${pairedBy}s`
      : `${pairedBy}s and instances, crossed`,
    ...(seedsOnly ? { seedsOnly } : {}),
    ...(margin !== undefined ? { equivalenceMargin: margin } : {}),
    ..._intervalsOf(res, spec.probability_of_improvement === true),
  };
}

/**
 * The resampling's view of a cell: per seed, the instance values (sorted by
 * instance id) when the node has per-instance records with the group's
 * instance list, else the cell's value (seeds only), or null without one.
 */
function _entryOf(
  table: ComparedTable,
  records: _Records,
): (row: string, group: string, seed: string) => number | Float64Array | null {
  const cellOf = new Map(table.cells.map((c) => [`${c.row}\t${c.column}`, c]));
  // the instance list of each group: every node must have the same one
  const reference = new Map<string, string>();
  return (row, group, seed) => {
    const sample = cellOf.get(`${row}\t${group}`)?.samples.find((s) =>
      s.over === seed
    );
    if (!sample || sample.value === null) return null;
    const rec = sample.id ? records(sample.id)?.get(group) : undefined;
    if (!rec || rec.x.length === 0) return sample.value;
    const ref = reference.get(group);
    if (ref === undefined) reference.set(group, rec.ids);
    else if (ref !== rec.ids) return sample.value; // other instances: seeds only
    return rec.x;
  };
}

/** One tested cell before the family's adjustment. */
interface _Raw {
  row: string;
  column: string;
  n: number;
  diff: number;
  lo: number;
  hi: number;
  pSign: number;
  exact: boolean;
  pBoot: number;
  p: number;
  pTost: number | null;
}

/** A cell without pairs. */
type _RawCell = _Raw | { row: string; column: string; n: 0 };

/** Each row's cell in each column: sign-flip, bootstrap and (with a margin) TOST p. */
function _testCells(
  rows: readonly string[],
  columns: readonly string[],
  res: ReturnType<typeof resampleTable>,
  seed: number,
  margin: number | undefined,
): _RawCell[] {
  const raw: _RawCell[] = [];
  for (const row of rows) {
    for (const column of columns) {
      const d = res.diffs.get(`${row}\t${column}`);
      if (!d) {
        raw.push({ row, column, n: 0 });
        continue;
      }
      const sign = signFlipP(d.perSeed, { seed });
      const pBoot = bootstrapP(d.sorted, 0);
      let pTost: number | null = null;
      if (margin !== undefined) {
        const t = tostFromResamples(d.sorted, margin);
        const lower = signFlipOneSided(d.perSeed.map((x) => x + margin));
        const upper = signFlipOneSided(d.perSeed.map((x) => margin - x));
        pTost = Math.max(t.p, lower.p, upper.p);
      }
      raw.push({
        row,
        column,
        n: d.n,
        diff: d.estimate,
        lo: d.lo,
        hi: d.hi,
        pSign: sign.p,
        exact: sign.exact,
        pBoot,
        p: Math.max(sign.p, pBoot),
        pTost,
      });
    }
  }
  return raw;
}

/** Holm over the family (every cell, or the rows of each column), for p and the TOST p. */
function _holmOver(
  raw: readonly _RawCell[],
  familyKind: "table" | "column",
  columns: readonly string[],
  margin: number | undefined,
): { pHolm: (number | null)[]; tostHolm: (number | null)[]; tests: number } {
  const families: number[][] = familyKind === "table"
    ? [raw.map((_, i) => i)]
    : columns.map((col) =>
      raw.flatMap((r, i) => (r.column === col ? [i] : []))
    );
  const pHolm: (number | null)[] = raw.map(() => null);
  const tostHolm: (number | null)[] = raw.map(() => null);
  let tests = 0;
  for (const fam of families) {
    const ps = fam.map((i) => (raw[i]!.n > 0 ? (raw[i] as _Raw).p : null));
    const adj = holm(ps);
    tests = Math.max(tests, ps.filter((p) => p !== null).length);
    fam.forEach((i, k) => (pHolm[i] = adj[k] ?? null));
    if (margin !== undefined) {
      const tadj = holm(
        fam.map((i) => (raw[i]!.n > 0 ? (raw[i] as _Raw).pTost : null)),
      );
      fam.forEach((i, k) => (tostHolm[i] = tadj[k] ?? null));
    }
  }
  return { pHolm, tostHolm, tests };
}

/** A tested cell with its adjusted p-values and verdicts. */
function _compareCell(
  r: _RawCell,
  o: {
    exploratory: boolean;
    instanceLevel: boolean;
    pHolm: number | null;
    tostHolm: number | null;
    alpha: number;
    margin: number | undefined;
  },
): CompareCell {
  const { exploratory, alpha, margin } = o;
  if (r.n === 0) {
    return {
      row: r.row,
      column: r.column,
      n: 0,
      diff: null,
      lo: null,
      hi: null,
      p: null,
      pHolm: null,
      exact: true,
      instanceLevel: o.instanceLevel,
      excludesZero: false,
      pSignFlip: null,
      pBootstrap: null,
      significant: false,
      ...(exploratory ? { exploratory: true } : {}),
    };
  }
  const c = r as _Raw;
  const adj = o.pHolm!;
  return {
    row: c.row,
    column: c.column,
    n: c.n,
    diff: c.diff,
    lo: c.lo,
    hi: c.hi,
    p: _round(c.p),
    pHolm: adj,
    exact: c.exact,
    instanceLevel: o.instanceLevel,
    excludesZero: c.lo > 0 || c.hi < 0,
    pSignFlip: _round(c.pSign),
    pBootstrap: _round(c.pBoot),
    significant: !exploratory && adj < alpha,
    ...(exploratory ? { exploratory: true } : {}),
    ...(margin !== undefined && c.pTost !== null
      ? {
        equivalence: {
          margin,
          p: _round(c.pTost),
          pHolm: o.tostHolm!,
          equivalent: !exploratory && o.tostHolm! < alpha,
        },
      }
      : {}),
  };
}

/** Why some columns resample seeds only (undefined when none does). */
function _seedsOnlyNote(
  spec: TableCompare,
  pairedBy: string,
  fallback: readonly string[],
  groups: readonly string[],
): string | undefined {
  return fallback.length === 0
    ? undefined
    : spec.instances === undefined
    ? `compare.instances is not set, so the intervals resample ${pairedBy}s only (the instances each ${pairedBy} was scored on are held fixed)`
    : `no per-instance outcomes (${
      [...new Set(_instanceSpecs(spec).map((x) => x.path))].join(", ")
    }) for ${
      fallback.length === groups.length ? "any column" : fallback.join(", ")
    }: ${
      fallback.length === groups.length ? "the" : "their"
    } intervals resample ${pairedBy}s only`;
}

/** Why no cell can reach p < α with this many pairs and tests (undefined when one can). */
function _tooFewPairsNote(
  maxPairs: number,
  tests: number,
  pairedBy: string,
  alpha: number,
): string | undefined {
  const smallest = minSignFlipP(maxPairs);
  return smallest >= alpha
    ? `with n = ${maxPairs} pair${
      maxPairs === 1 ? "" : "s"
    } no sign-flip test can reach p < 0.05 (the smallest possible p is ${
      fmtP(smallest)
    }); 6 or more pairs are needed`
    : smallest * tests >= alpha
    ? `with n = ${maxPairs} pairs the smallest possible p is ${
      fmtP(smallest)
    }, so after Holm over ${tests} tests no cell can reach p < 0.05; more ${pairedBy}s or a smaller family (family: column) are needed`
    : undefined;
}

/** Every cell's own interval, P(row > baseline) when asked, and the profiles. */
function _intervalsOf(
  res: ReturnType<typeof resampleTable>,
  improvement: boolean,
): Pick<Comparison, "cellIntervals" | "improvement" | "profiles"> {
  return {
    cellIntervals: [...res.cells].map(([key, s]) => {
      const [row, column] = key.split("\t") as [string, string];
      return { row, column, n: s.n, estimate: s.estimate, lo: s.lo, hi: s.hi };
    }),
    ...(improvement
      ? {
        improvement: [...res.improvement].map(([row, s]) => ({
          row,
          n: s.n,
          estimate: s.estimate,
          lo: s.lo,
          hi: s.hi,
          p: _round(bootstrapP(s.sorted, 0.5)),
        })),
      }
      : {}),
    ...(res.profiles ? { profiles: res.profiles } : {}),
  };
}

function _round(x: number): number {
  return Math.round(x * 1e12) / 1e12;
}

/** Per node id: per column label, the instance values sorted by instance id and the ids' signature. */
type _Records = (
  id: string,
) => Map<string, { ids: string; x: Float64Array }> | undefined;

/** The per-instance record specs of a compare block, as a list. */
function _instanceSpecs(spec: TableCompare): readonly TableInstances[] {
  const inst = spec.instances;
  if (inst === undefined) return [];
  return "path" in inst
    ? [inst as TableInstances]
    : inst as readonly TableInstances[];
}

function _recordsOf(
  exp: Experiment,
  spec: TableCompare,
  valueOf: ValueOf,
): _Records {
  const specs = _instanceSpecs(spec);
  const memo = new Map<
    string,
    Map<string, { ids: string; x: Float64Array }> | undefined
  >();
  return (id) => {
    if (specs.length === 0 || id === "") return undefined;
    if (memo.has(id)) return memo.get(id);
    const node = exp.nodes[exp.byId.get(id) ?? -1];
    const value = node ? valueOf(node) : undefined;
    let out: Map<string, { ids: string; x: Float64Array }> | undefined;
    const groups = new Map<string, { id: string; x: number }[]>();
    let found = false;
    for (const inst of specs) {
      const list = value === undefined
        ? undefined
        : getField({ value, report: null }, inst.path.split("."));
      if (!Array.isArray(list)) continue;
      found = true;
      list.forEach((r, k) => {
        if (r === null || typeof r !== "object" || Array.isArray(r)) return;
        const col = r[inst.column], x = r[inst.value];
        if (col === undefined || typeof x !== "number") return;
        const label = inst.label === undefined
          ? String(col)
          : inst.label.replaceAll("*", String(col));
        const g = groups.get(label) ?? [];
        g.push({ id: typeof r.id === "string" ? r.id : String(k), x });
        groups.set(label, g);
      });
    }
    if (found) {
      out = new Map(
        [...groups].map(([k, g]) => {
          g.sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
          return [k, {
            ids: g.map((e) => e.id).join("\n"),
            x: Float64Array.from(g, (e) => e.x),
          }];
        }),
      );
    }
    memo.set(id, out);
    return out;
  };
}

/** A p-value for display: 3 decimals, or 1 significant digit below 0.001. */
export function fmtP(p: number): string {
  return p >= 0.001 ? p.toFixed(3) : p.toExponential(1);
}

function _signed(x: number, digits: number): string {
  return (x >= 0 ? "+" : "−") + Math.abs(x).toFixed(digits);
}

/**
 * A difference with its interval: `+0.044 [+0.010, +0.080]*` (`*`:
 * significant after the family's Holm correction; for a comparison built
 * without families, the interval excludes 0).
 */
export function formatDifference(c: CompareCell, digits: number): string {
  if (c.diff === null) return "—";
  const star = c.significant ?? c.excludesZero;
  return `${_signed(c.diff, digits)} [${_signed(c.lo!, digits)}, ${
    _signed(c.hi!, digits)
  }]${star ? "*" : ""}`;
}

/** The p-values of a cell: `0.002 / 0.010` (p / Holm-adjusted; `~` when the sign-flip part is Monte Carlo). */
export function formatPValues(c: CompareCell): string {
  if (c.p === null) return "—";
  return `${fmtP(c.p)}${c.exact ? "" : "~"} / ${
    c.pHolm === null ? "—" : fmtP(c.pHolm)
  }`;
}

/** The equivalence verdict of a cell with its Holm-adjusted TOST p: `equivalent within ±0.02 (0.012)`, `not shown (0.31)`, or `exploratory (0.012)` for a per-suite cell of a `family: column` table; empty without a test. */
export function formatEquivalence(c: CompareCell): string {
  const e = c.equivalence;
  if (!e) return "";
  if (c.exploratory) return `exploratory (${fmtP(e.pHolm)})`;
  return e.equivalent
    ? `equivalent within ±${e.margin} (${fmtP(e.pHolm)})`
    : `not shown (${fmtP(e.pHolm)})`;
}

/** What a comparison's numbers are, in one paragraph (markdown, CSV readers, the report). */
export function comparisonCaption(cmp: Comparison): string {
  const pct = Math.round(cmp.level * 100);
  const method = cmp.interval === "bca" ? "BCa" : "percentile";
  const over = cmp.resampling ??
    (cmp.cells.some((c) => c.instanceLevel)
      ? `${cmp.pairedBy}s and instances`
      : `${cmp.pairedBy}s`);
  const parts = [
    `Paired differences against ${cmp.against} (${cmp.pairedBy}-paired): mean [${pct} % ${method} bootstrap interval over ${over}, ${
      cmp.resamples.toLocaleString("en")
    } seeded resamples]`,
  ];
  const f = cmp.family;
  if (f) {
    parts.push(
      `p is the larger of the exact sign-flip p over the ${cmp.pairedBy}s and the bootstrap p; ${
        f.kind === "table"
          ? `Holm over all ${f.tests} tests of the table (family: table)`
          : `Holm within each column over its ${f.tests} row${
            f.tests === 1 ? "" : "s"
          } (family: column)${
            f.exploratory.length
              ? `; per-suite columns are exploratory (no claim): ${
                f.exploratory.join(", ")
              }`
              : ""
          }`
      }; * Holm-adjusted p < ${fmtP(1 - cmp.level)}`,
    );
  } else {
    parts.push(`* the interval excludes 0`);
  }
  if (cmp.equivalenceMargin !== undefined) {
    parts.push(
      `equivalence: two one-sided tests of |Δ| < ${cmp.equivalenceMargin} on the same resamples and sign flips, Holm over the same family; "equivalent within ±${cmp.equivalenceMargin}" only when both reject`,
    );
  }
  if (cmp.seedsOnly) parts.push(cmp.seedsOnly);
  return parts.join("; ");
}

function _esc(s: string): string {
  return s.replace(/\|/g, "\\|");
}

/** The comparison as markdown: differences with intervals, then p-values, equivalence and P(improvement), then notes. */
export function comparisonMarkdown(
  cmp: Comparison,
  columns: readonly string[],
  rowsAxis: string,
  digits: number,
): string {
  const expl = new Set(cmp.family?.exploratory ?? []);
  const head = (col: string) => _esc(col) + (expl.has(col) ? " (expl.)" : "");
  const grid = (fmt: (c: CompareCell) => string) => {
    const lines = [
      `| ${_esc(rowsAxis)} | n | ${columns.map(head).join(" | ")} |`,
      `|${["---", "---:", ...columns.map(() => "---:")].join("|")}|`,
    ];
    for (const r of compared) {
      const cells = cmp.cells.filter((c) => c.row === r);
      lines.push(
        `| ${_esc(r)} − ${_esc(cmp.against)} | ${_nRange(cells)} | ${
          columns.map((col) => {
            const c = cells.find((x) => x.column === col);
            return c ? _esc(fmt(c)) || "—" : "—";
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
  const out = [
    `${comparisonCaption(cmp)}:`,
    "",
    ...grid((c) => formatDifference(c, digits)),
    "",
    `p / Holm-adjusted${
      cmp.cells.some((c) => c.n > 0 && !c.exact)
        ? " (~: Monte Carlo sign-flip)"
        : ""
    }:`,
    "",
    ...grid(formatPValues),
    "",
  ];
  if (cmp.equivalenceMargin !== undefined) {
    out.push(
      `Equivalence within ±${cmp.equivalenceMargin} (TOST, Holm-adjusted p):`,
      "",
      ...grid(formatEquivalence),
      "",
    );
  }
  if (cmp.improvement?.length) {
    out.push(..._improvementLines(cmp, digits), "");
  }
  if (unpaired.length) {
    out.push(
      `_No pairs (not run or not computed): ${unpaired.join(", ")}._`,
      "",
    );
  }
  if (cmp.tooFewPairs) out.push(`_Note: ${cmp.tooFewPairs}._`, "");
  // imported values are said once per table, by the table's own note
  return out.join("\n");
}

function _nRange(cells: readonly CompareCell[]): string {
  const ns = cells.map((c) => c.n);
  return Math.min(...ns) === Math.max(...ns)
    ? String(ns[0] ?? 0)
    : `${Math.min(...ns)}-${Math.max(...ns)}`;
}

function _improvementLines(cmp: Comparison, digits: number): string[] {
  const d = Math.min(digits, 2);
  return [
    `P(row > ${cmp.against}) over the suites (probability of improvement, rliable), [${
      Math.round(cmp.level * 100)
    } % percentile interval]; p of P = 0.5:`,
    "",
    "| row | n | P(improvement) | p |",
    "|---|---:|---:|---:|",
    ...cmp.improvement!.map((x) =>
      `| ${_esc(x.row)} | ${x.n} | ${x.estimate.toFixed(d)} [${
        x.lo.toFixed(d)
      }, ${x.hi.toFixed(d)}] | ${fmtP(x.p)} |`
    ),
  ];
}

/**
 * The compact summary of a comparison for a terminal: per compared row, for
 * each headline column (the aggregates; the only column of a one-column
 * table), the row's value [interval], Δ [interval], p / Holm, and the
 * equivalence and P(improvement) when asked; at most about 110 characters
 * wide for row labels up to 14 characters.
 */
export function comparisonSummary(
  cmp: Comparison,
  headline: readonly string[],
  rowsAxis: string,
  digits: number,
): string {
  const cells = new Map(cmp.cells.map((c) => [`${c.row}\t${c.column}`, c]));
  const values = new Map(
    (cmp.cellIntervals ?? []).map((c) => [`${c.row}\t${c.column}`, c]),
  );
  const poi = new Map((cmp.improvement ?? []).map((x) => [x.row, x]));
  const out: string[] = [];
  const value = (row: string, col: string) => {
    const v = values.get(`${row}\t${col}`);
    return v
      ? `${v.estimate.toFixed(digits)} [${v.lo.toFixed(digits)}, ${
        v.hi.toFixed(digits)
      }]`
      : "—";
  };
  headline.forEach((col, h) => {
    // P(improvement) is one number per row (over the suites): first block only
    const withPoi = poi.size > 0 && h === 0;
    const extra = [
      ...(cmp.equivalenceMargin !== undefined
        ? [`±${cmp.equivalenceMargin}`]
        : []),
      ...(withPoi ? ["P(>)"] : []),
    ];
    out.push(
      `| ${_esc(rowsAxis)} | ${_esc(col)} [CI] | Δ vs ${
        _esc(cmp.against)
      } [CI] | p / Holm |${extra.map((e) => ` ${e} |`).join("")}`,
      `|---|---:|---:|---:|${extra.map(() => "---:|").join("")}`,
      `| ${_esc(cmp.against)} | ${value(cmp.against, col)} | | |${
        extra.map(() => " |").join("")
      }`,
    );
    for (const r of cmp.rows) {
      const c = cells.get(`${r}\t${col}`);
      if (!c || c.n === 0) continue;
      const eq = c.equivalence
        ? [
          c.equivalence.equivalent
            ? `≡ (${fmtP(c.equivalence.pHolm)})`
            : `no (${fmtP(c.equivalence.pHolm)})`,
        ]
        : cmp.equivalenceMargin !== undefined
        ? [""]
        : [];
      const x = poi.get(r);
      const pi = withPoi
        ? [
          x
            ? `${x.estimate.toFixed(2)} [${x.lo.toFixed(2)}, ${
              x.hi.toFixed(2)
            }]`
            : "—",
        ]
        : [];
      out.push(
        `| ${_esc(r)} | ${value(r, col)} | ${
          _esc(formatDifference(c, digits))
        } | ${formatPValues(c)} |${
          [...eq, ...pi].map((e) => ` ${e} |`).join("")
        }`,
      );
    }
    out.push("");
  });
  return out.join("\n");
}

/** The comparison as CSV: one line per compared cell. */
export function comparisonCsv(cmp: Comparison): string {
  const q = (s: string) => /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  const r = (x: number | null | undefined) =>
    x === null || x === undefined ? "" : Math.round(x * 1e12) / 1e12;
  const f = cmp.family;
  const lines = [
    "row,against,column,n,diff,lo,hi,p,p_holm,exact,instance_level,excludes_zero,p_sign_flip,p_bootstrap,significant,exploratory,family,family_tests,interval,resamples,tost_margin,tost_p,tost_p_holm,equivalent",
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
      r(c.pSignFlip),
      r(c.pBootstrap),
      c.significant ?? "",
      c.exploratory ?? false,
      f?.kind ?? "",
      f?.tests ?? "",
      cmp.interval ?? "",
      cmp.resamples,
      cmp.equivalenceMargin ?? "",
      r(c.equivalence?.p),
      r(c.equivalence?.pHolm),
      c.equivalence ? c.equivalence.equivalent : "",
    ].join(","));
  }
  return lines.join("\n") + "\n";
}

/** P(row > baseline) as CSV (`NAME.improvement.csv`): one line per compared row. */
export function improvementCsv(cmp: Comparison): string {
  const q = (s: string) => /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  const r = (x: number) => Math.round(x * 1e12) / 1e12;
  return [
    "row,against,n,probability_of_improvement,lo,hi,p",
    ...(cmp.improvement ?? []).map((x) =>
      [q(x.row), q(cmp.against), x.n, r(x.estimate), r(x.lo), r(x.hi), r(x.p)]
        .join(",")
    ),
  ].join("\n") + "\n";
}
