/**
 * Tables: a table is a query over the cache. For a node of an experiment it
 * lays out one matrix axis as rows and either another axis or field paths of
 * the node's result as columns, aggregates an `over` axis (usually `seed`) as
 * mean ± std (n), and can add a mean column. Built from cached entries only;
 * what is missing is listed with the command that computes it.
 *
 * @module
 */
import type {
  TableAggregate,
  TableSpec,
} from "../compile/experiment_schema.ts";
import type { Experiment, GraphNode } from "../compile/experiment.ts";
import { getField } from "../refs.ts";
import { type ComparisonMemo, memoizedCompareRows } from "./comparison_memo.ts";
import {
  type Comparison,
  comparisonMarkdown,
  comparisonSummary,
} from "./table_compare.ts";
import { interquartileMean } from "./rliable_aggregates.ts";
import { columnPlains } from "../compile/table_spec.ts";
import { didYouMean } from "../suggest.ts";
import { DEFAULT_RESAMPLES } from "../compile/table_spec.ts";
import type { Json } from "../types.ts";
import {
  overridesText,
  type Trial,
  trialName,
  trialOf,
  trialTitle,
} from "./trial.ts";

/** What the cache has for one node (`imported`: its entry came from a bundle, not computed here). */
export type Lookup = (node: GraphNode) =>
  | {
    status: "ok";
    value: Json;
    report?: Json;
    imported?: boolean;
    /** The entry's content key: with it a comparison can be remembered. */
    key?: string;
    /** When the entry was computed (ISO time). */
    created?: string;
  }
  | { status: "missing"; why?: string }
  | { status: "skipped"; why: string };

/** One sample of a cell: the value for one `over` value. */
export interface Sample {
  /** Label of the `over` axis value (or `""` without `over`). */
  readonly over: string;
  /** The node id. */
  readonly id: string;
  /** The number, when available. */
  readonly value: number | null;
  /** The value comes from an entry imported from a bundle (not computed here). */
  readonly imported?: true;
}

/** One cell. */
export interface Cell {
  /** Row label. */
  readonly row: string;
  /** Column label. */
  readonly column: string;
  /** Mean of the available samples (null when none). */
  readonly mean: number | null;
  /** Sample standard deviation (n-1; 0 when n = 1; null when none). */
  readonly std: number | null;
  /** Number of samples. */
  readonly n: number;
  /** The samples. */
  readonly samples: readonly Sample[];
  /** Node ids whose entries are missing. */
  readonly missing: readonly string[];
  /** Some of its samples come from entries imported from a bundle (not computed here; which: `samples[].imported`); shown marked. Absent otherwise. */
  readonly imported?: boolean;
  /** Why not run, when every node is skipped (e.g. `OPENAI_API_KEY not set`). */
  readonly skipped?: string;
  /** Problems (e.g. a field that is not a number). */
  readonly notes: readonly string[];
  /** The cell's value with its interval, from a comparison's resampling (a mean over seeds; an IQM column: the IQM). */
  readonly interval?: { readonly lo: number; readonly hi: number };
}

/** A built table. */
export interface Table {
  /** `name`. */
  readonly name: string;
  /** `title` (or the name). */
  readonly title: string;
  /** Experiment name. */
  readonly experiment: string;
  /** Experiment file. */
  readonly file: string;
  /** Rows axis name. */
  readonly rowsAxis: string;
  /** Row labels. */
  readonly rows: readonly string[];
  /** Column labels (the aggregate column last, if any). */
  readonly columns: readonly string[];
  /** The mean aggregate column's label, if any. */
  readonly aggregate?: string;
  /** The IQM aggregate column's label, if any (`aggregate: iqm`). */
  readonly iqm?: string;
  /** The `over` axis and its labels. */
  readonly over?: { readonly axis: string; readonly values: readonly string[] };
  /** Cells, row-major. */
  readonly cells: readonly Cell[];
  /** Ids of nodes whose entries are missing. */
  readonly missing: readonly string[];
  /** The command that computes the missing nodes. */
  readonly command?: string;
  /** Digits after the point. */
  readonly digits: number;
  /** Paired comparisons against a baseline row (`compare:`). */
  readonly comparison?: Comparison;
  /** Columns read from another node: label -> the node as written (e.g. `curriculum.*.config`). */
  readonly sources?: Readonly<Record<string, string>>;
  /** `*` column paths that matched nothing in the available results, each with why and a suggestion. */
  readonly unmatched?: readonly string[];
  /** Group mean columns (`groups.mean`): label -> the labels of the columns averaged. */
  readonly groupMeans?: Readonly<Record<string, readonly string[]>>;
  /**
   * Set when the experiment was loaded with `--set` overrides: the table is
   * a trial, named `NAME.trial-DIGEST` and titled with its overrides, never
   * written over the committed file's table.
   */
  readonly trial?: Trial;
  /** When the entries of the table's node were computed: the first and the last (ISO times), when known. */
  readonly computed?: { readonly first: string; readonly last: string };
}

function _split(path: string): string[] {
  return path.split(".");
}

function _num(x: Json | undefined): number | null | undefined {
  if (typeof x === "number" && Number.isFinite(x)) return x;
  if (typeof x === "boolean") return x ? 1 : 0;
  if (x === undefined) return undefined;
  return null;
}

function _stats(
  xs: readonly number[],
): { mean: number | null; std: number | null } {
  if (xs.length === 0) return { mean: null, std: null };
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  if (xs.length === 1) return { mean, std: 0 };
  const v = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1);
  return { mean, std: Math.sqrt(v) };
}

/** Like getField, but a null on the way (e.g. `report.llm: null`) is null: "not applicable". */
function _fieldOrNull(value: Json, path: readonly string[]): Json | undefined {
  for (let i = 0; i < path.length; i++) {
    const at = getField(value, path.slice(0, i));
    if (at === null) return null;
  }
  return getField(value, path);
}

function _labelOf(path: string): string {
  return path.replace(/^(value|report)\./, "");
}

/** A column of a table: its label and the field path of its value. */
interface _Column {
  readonly label: string;
  readonly path: string[];
  /** The value of the columns axis, for axis columns. */
  readonly axisValue: string | null;
  /** The plain nodes the column reads instead of the table's node (`node:`). */
  readonly plains?: readonly string[];
  /** A `*` column: the index of its entry in `columns` and its key. */
  readonly star?: { readonly entry: number; readonly key: string };
  /** A group's mean column: the labels of the columns it averages. */
  readonly members?: readonly string[];
}

/** What building one table needs. */
interface _Build {
  readonly exp: Experiment;
  readonly spec: TableSpec;
  /** The table node's variants (filtered by `where`). */
  readonly nodes: readonly GraphNode[];
  readonly isAxisColumns: boolean;
  /** The lookup, memoised per node. */
  readonly look: (n: GraphNode) => ReturnType<Lookup>;
  /** Labels of an axis that the nodes have, in axis order. */
  readonly present: (axis: string) => string[];
  /** Indices of the nodes a node depends on, directly or not. */
  readonly ancestors: (n: GraphNode) => ReadonlySet<number>;
  /** `*` column paths that matched nothing, with why (see `Table.unmatched`). */
  readonly unmatched: string[];
}

/** Options of {@linkcode buildTable}. */
export interface BuildTableOptions {
  /**
   * Where comparisons are remembered by their inputs (the values' content
   * keys, the spec, the statistics code); none: computed every time.
   */
  readonly memo?: ComparisonMemo;
  /** Called before a comparison is computed (not served from `memo`): it may take seconds. */
  readonly onCompare?: (table: string, resamples: number) => void;
}

/**
 * Builds one table of `exp` from what `lookup` finds; `runCommand` gives
 * the command that computes missing nodes.
 *
 * Long by design: the cells, the missing list and the comparison come from one pass over shared lookups, in the order of the table.
 */
export function buildTable(
  exp: Experiment,
  spec: TableSpec,
  lookup: Lookup,
  runCommand: (ids: string[]) => string,
  options: BuildTableOptions = {},
): Table {
  const b = _build(exp, spec, lookup);
  const rows = b.present(spec.rows);
  const overValues = spec.over ? b.present(spec.over) : [""];
  const columns = _columns(b);
  const cells: Cell[] = [];
  const missing: string[] = [];
  const aggs = aggregatesOf(spec);
  const aggLabel = aggs.find((a) => a.of === "mean")?.label;
  const iqmLabel = aggs.find((a) => a.of === "iqm")?.label;
  // Every missing node of the table is listed, also when no column could be
  // laid out (a `*` column whose nodes are all missing has no keys yet).
  for (const n of b.nodes) {
    if (
      rows.includes(n.variant[spec.rows]!) && b.look(n).status === "missing"
    ) missing.push(n.id);
  }
  for (const row of rows) {
    const perOver = new Map<string, (number | null)[]>();
    for (const col of columns) {
      cells.push(
        col.members
          ? _groupMeanCell(row, col, overValues, cells)
          : _cell(b, row, col, overValues, perOver, missing),
      );
    }
    const rowNodes = b.nodes.filter((n) => n.variant[spec.rows] === row);
    const rowState = {
      missing: rowNodes.filter((n) => b.look(n).status === "missing")
        .map((n) => n.id),
      skipped: rowNodes.length > 0 &&
          rowNodes.every((n) => b.look(n).status === "skipped")
        ? (b.look(rowNodes[0]!) as { why: string }).why
        : undefined,
    };
    for (const a of aggs) {
      cells.push(
        _aggregateCell(
          row,
          a,
          columns.filter((c) => !c.plains && !c.members).length,
          overValues,
          perOver,
          cells,
          rowState,
        ),
      );
    }
  }
  const columnLabels = [
    ...columns.map((c) => c.label),
    ...aggs.map((a) => a.label),
  ];
  const keyOf = (id: string) => {
    const n = exp.nodes[exp.byId.get(id) ?? -1];
    const r = n ? b.look(n) : undefined;
    return r?.status === "ok" ? r.key : undefined;
  };
  const comparison = spec.compare && spec.over
    ? memoizedCompareRows(
      exp,
      {
        rows,
        // columns read from other nodes (e.g. fallback rates) are not
        // compared, nor group means beside an aggregate (which would count
        // their columns twice)
        columns: columnLabels.filter((l) =>
          !columns.some((c) =>
            c.label === l && (c.plains || (c.members && aggs.length > 0))
          )
        ),
        ...(aggLabel !== undefined ? { aggregate: aggLabel } : {}),
        ...(iqmLabel !== undefined ? { iqm: iqmLabel } : {}),
        over: overValues,
        cells,
      },
      spec.compare,
      spec.over,
      (n) => {
        const r = b.look(n);
        return r.status === "ok" ? r.value : undefined;
      },
      keyOf,
      options.memo,
      () =>
        options.onCompare?.(
          spec.name,
          spec.compare!.resamples ?? DEFAULT_RESAMPLES,
        ),
    )
    : undefined;
  // each cell's interval, from the comparison's resampling
  const intervals = new Map(
    (comparison?.cellIntervals ?? []).map((
      c,
    ) => [`${c.row}\t${c.column}`, c]),
  );
  const withIntervals = intervals.size === 0 ? cells : cells.map((c) => {
    const x = intervals.get(`${c.row}\t${c.column}`);
    return x ? { ...c, interval: { lo: x.lo, hi: x.hi } } : c;
  });
  const created = b.nodes.flatMap((n) => {
    const r = b.look(n);
    return r.status === "ok" && r.created !== undefined ? [r.created] : [];
  }).sort();
  const trial = trialOf(spec.name, exp.overrides);
  const title = spec.title ?? spec.name;
  return {
    name: trial ? trialName(trial) : spec.name,
    title: trial ? trialTitle(title, trial) : title,
    ...(trial ? { trial } : {}),
    experiment: exp.name,
    file: exp.file,
    rowsAxis: spec.rows,
    rows,
    columns: columnLabels,
    ...(aggLabel !== undefined ? { aggregate: aggLabel } : {}),
    ...(iqmLabel !== undefined ? { iqm: iqmLabel } : {}),
    ...(spec.over ? { over: { axis: spec.over, values: overValues } } : {}),
    cells: withIntervals,
    missing,
    ...(missing.length ? { command: runCommand(missing) } : {}),
    digits: spec.digits ?? 3,
    ...(columns.some((c) => c.plains) ? { sources: _sources(spec) } : {}),
    ...(columns.some((c) => c.members)
      ? {
        groupMeans: Object.fromEntries(
          columns.filter((c) => c.members).map((c) => [c.label, c.members!]),
        ),
      }
      : {}),
    ...(b.unmatched.length ? { unmatched: b.unmatched } : {}),
    ...(comparison ? { comparison } : {}),
    ...(created.length
      ? { computed: { first: created[0]!, last: created.at(-1)! } }
      : {}),
  };
}

/** The aggregate columns of a table spec, in the order written, each with its label. */
export function aggregatesOf(
  spec: Pick<TableSpec, "aggregate">,
): { label: string; of: "mean" | "iqm" }[] {
  const a = spec.aggregate;
  if (a === undefined) return [];
  const list: readonly TableAggregate[] = Array.isArray(a)
    ? a
    : [a as TableAggregate];
  return list.map((x) => typeof x === "string" ? { label: x, of: x } : x);
}

/** The `node:` of each column that reads another node, by label. */
function _sources(spec: TableSpec): Record<string, string> {
  return Object.fromEntries(
    (Array.isArray(spec.columns) ? spec.columns : []).flatMap((c) =>
      typeof c !== "string" && c.node !== undefined ? [[c.label, c.node]] : []
    ),
  );
}

function _build(exp: Experiment, spec: TableSpec, lookup: Lookup): _Build {
  const plain = exp.names.get(spec.node)!;
  const axisLabels = (name: string) =>
    exp.axes.find((a) => a.name === name)?.values.map((v) => v.label) ?? [];
  let nodes = exp.nodes.filter((n) => n.plain === plain);
  for (const [a, val] of Object.entries(spec.where ?? {})) {
    const keep = (Array.isArray(val) ? val : [val]).map(String);
    nodes = nodes.filter((n) => keep.includes(n.variant[a]!));
  }
  const results = new Map<string, ReturnType<Lookup>>();
  const ups = new Map<number, Set<number>>();
  return {
    exp,
    spec,
    nodes,
    unmatched: [],
    isAxisColumns: typeof spec.columns === "string" &&
      exp.axes.some((a) => a.name === spec.columns),
    look: (n) => {
      let r = results.get(n.id);
      if (!r) {
        r = lookup(n);
        results.set(n.id, r);
      }
      return r;
    },
    present: (axis) => {
      const have = new Set(nodes.map((n) => n.variant[axis]));
      return axisLabels(axis).filter((l) => have.has(l));
    },
    ancestors: (n) => {
      let set = ups.get(n.index);
      if (set === undefined) {
        set = new Set<number>();
        const stack = [...n.deps];
        while (stack.length > 0) {
          const i = stack.pop()!;
          if (set.has(i)) continue;
          set.add(i);
          stack.push(...exp.nodes[i]!.deps);
        }
        ups.set(n.index, set);
      }
      return set;
    },
  };
}

/** The columns: the values of the columns axis, or the field paths (a `*` expanded over the keys found). */
function _columns(b: _Build): _Column[] {
  const { spec } = b;
  if (b.isAxisColumns) {
    return b.present(spec.columns as string).map((l) => ({
      label: l,
      path: _split(spec.value ?? "value"),
      axisValue: l,
    }));
  }
  const columns: _Column[] = [];
  const list = typeof spec.columns === "string" ? [spec.columns] : spec.columns;
  for (const [entry, c] of list.entries()) {
    const path = typeof c === "string" ? c : c.path;
    const label = typeof c === "string" ? undefined : c.label;
    const segs = _split(path);
    const star = segs.indexOf("*");
    if (typeof c !== "string" && c.node !== undefined) {
      columns.push({
        label: label ?? _labelOf(path),
        path: segs,
        axisValue: null,
        plains: columnPlains(
          b.exp.nodes.map((n) => n.plain),
          b.exp.names,
          c.node,
        ),
      });
      continue;
    }
    if (star < 0) {
      columns.push({
        label: label ?? _labelOf(path),
        path: segs,
        axisValue: null,
      });
      continue;
    }
    const keys = _starKeys(b, segs.slice(0, star));
    if (keys.length === 0) {
      const why = _unmatched(b, path, segs.slice(0, star));
      if (why) b.unmatched.push(why);
    }
    for (const k of keys) {
      columns.push({
        label: label?.includes("*") ? label.replaceAll("*", k) : k,
        path: [...segs.slice(0, star), k, ...segs.slice(star + 1)],
        axisValue: null,
        star: { entry, key: k },
      });
    }
  }
  return spec.groups ? _grouped(b, columns, list) : columns;
}

/**
 * The columns with the `*` columns grouped by `groups.by` over their keys:
 * groups in the order their first key was found, within a group every key's
 * columns side by side (in the order of `columns:`), then the group's mean
 * columns (one per `*` entry) when `groups.mean` is set. Keys that match no
 * group follow, ungrouped. The `*` block takes the place of the first `*`
 * column.
 */
function _grouped(
  b: _Build,
  columns: readonly _Column[],
  list: readonly (string | { label: string; path: string })[],
): _Column[] {
  const g = b.spec.groups!;
  const re = new RegExp(g.by);
  const stars = columns.filter((c) => c.star);
  if (stars.length === 0) return [...columns];
  const keys = [...new Set(stars.map((c) => c.star!.key))];
  const entries = [...new Set(stars.map((c) => c.star!.entry))];
  const groupOf = (k: string) => {
    const m = re.exec(k);
    return m ? (m[1] ?? m[0]) : null;
  };
  const groups = [
    ...new Set(keys.map(groupOf).filter((x): x is string => x !== null)),
  ];
  const find = (entry: number, key: string) =>
    stars.find((c) => c.star!.entry === entry && c.star!.key === key);
  const block: _Column[] = [];
  const template = (entry: number) => {
    const c = list[entry]!;
    const label = typeof c === "string" ? undefined : c.label;
    return label?.includes("*") ? label : "*";
  };
  for (const group of groups) {
    const inGroup = keys.filter((k) => groupOf(k) === group);
    for (const k of inGroup) {
      for (const e of entries) {
        const c = find(e, k);
        if (c) block.push(c);
      }
    }
    if (g.mean === undefined) continue;
    const name = g.mean.replaceAll("$1", group);
    for (const e of entries) {
      const members = inGroup.map((k) => find(e, k)?.label).filter((
        x,
      ): x is string => x !== undefined);
      if (members.length === 0) continue;
      block.push({
        label: template(e).replaceAll("*", name),
        path: [],
        axisValue: null,
        members,
      });
    }
  }
  const loose = keys.filter((k) => groupOf(k) === null);
  if (loose.length > 0) {
    b.unmatched.push(
      `groups.by ${g.by} matches no key of ${loose.slice(0, 4).join(", ")}${
        loose.length > 4 ? ", …" : ""
      } (shown ungrouped)`,
    );
    for (const k of loose) {
      for (const e of entries) {
        const c = find(e, k);
        if (c) block.push(c);
      }
    }
  }
  const first = columns.findIndex((c) => c.star);
  return [
    ...columns.slice(0, first).filter((c) => !c.star),
    ...block,
    ...columns.slice(first).filter((c) => !c.star),
  ];
}

/**
 * A group's mean cell: per `over` value the mean of the group's columns
 * (complete groups only), then mean ± std over the `over` values.
 */
function _groupMeanCell(
  row: string,
  col: _Column,
  overValues: readonly string[],
  cells: readonly Cell[],
): Cell {
  const members = col.members!.map((l) =>
    cells.find((c) => c.row === row && c.column === l)
  ).filter((c): c is Cell => c !== undefined);
  const samples: Sample[] = [];
  for (const over of overValues) {
    const xs = members.map((c) =>
      c.samples.find((s) => s.over === over)?.value ?? null
    );
    if (xs.length !== col.members!.length || xs.some((x) => x === null)) {
      continue;
    }
    samples.push({
      over,
      id: "",
      value: (xs as number[]).reduce((a, x) => a + x, 0) / xs.length,
    });
  }
  const values = samples.map((x) => x.value as number);
  const skipped = members.length > 0 && members.every((c) => c.skipped)
    ? members[0]!.skipped
    : undefined;
  return {
    row,
    column: col.label,
    ..._stats(values),
    n: values.length,
    samples,
    missing: [...new Set(members.flatMap((c) => c.missing))],
    ...(members.some((c) => c.imported) ? { imported: true } : {}),
    ...(skipped ? { skipped } : {}),
    notes: [],
  };
}

/**
 * Why a `*` column path matched nothing although results are available:
 * the deepest part of its prefix found, and the keys there, with a
 * suggestion. Null when no result is available yet (nothing to match).
 */
function _unmatched(b: _Build, path: string, prefix: string[]): string | null {
  const results = b.nodes.map((n) => b.look(n)).filter((r) =>
    r.status === "ok"
  ) as { value: Json; report?: Json }[];
  if (results.length === 0) return null;
  for (let depth = prefix.length - 1; depth >= 0; depth--) {
    const keys = new Set<string>();
    for (const r of results) {
      const obj = getField(
        { value: r.value, report: r.report ?? null },
        prefix.slice(0, depth),
      );
      if (obj && typeof obj === "object" && !Array.isArray(obj)) {
        for (const k of Object.keys(obj)) keys.add(k);
      }
    }
    if (keys.size === 0) continue;
    const missing = prefix[depth]!;
    const at = prefix.slice(0, depth).join(".");
    return `column path ${path} matched nothing: ${
      at ? `${at} has` : "results have"
    } no ${depth === prefix.length - 1 ? "object" : "field"} ${
      JSON.stringify(missing)
    }${
      didYouMean(missing, keys) ||
      `; it has ${[...keys].slice(0, 8).join(", ")}`
    }`;
  }
  return `column path ${path} matched nothing in ${results.length} results`;
}

/** The keys of the object at `prefix` in any available result, in the order found. */
function _starKeys(b: _Build, prefix: string[]): string[] {
  const keys: string[] = [];
  for (const n of b.nodes) {
    const r = b.look(n);
    if (r.status !== "ok") continue;
    const obj = getField({ value: r.value, report: r.report ?? null }, prefix);
    if (obj && typeof obj === "object" && !Array.isArray(obj)) {
      for (const k of Object.keys(obj)) if (!keys.includes(k)) keys.push(k);
    }
  }
  return keys;
}

/** One cell: its samples over the `over` values; records per-`over` values for the aggregate and missing ids. */
function _cell(
  b: _Build,
  row: string,
  col: _Column,
  overValues: readonly string[],
  perOver: Map<string, (number | null)[]>,
  missing: string[],
): Cell {
  const { spec } = b;
  const samples: Sample[] = [];
  const miss: string[] = [];
  const notes: string[] = [];
  let skipped: string | undefined;
  for (const over of overValues) {
    const n = b.nodes.find((x) =>
      x.variant[spec.rows] === row &&
      (col.axisValue === null || !b.isAxisColumns ||
        x.variant[spec.columns as string] === col.axisValue) &&
      (!spec.over || x.variant[spec.over] === over)
    );
    if (!n) continue;
    const reads = _reads(b, n, col);
    const results = reads.map((m) => ({ m, r: b.look(m) }));
    const skip = results.find((x) => x.r.status === "skipped");
    if (skip !== undefined && skip.r.status === "skipped") {
      skipped = skip.r.why;
      continue;
    }
    const absent = results.filter((x) => x.r.status === "missing");
    if (absent.length > 0 || reads.length === 0) {
      for (const { m } of absent) {
        miss.push(m.id);
        if (!missing.includes(m.id)) missing.push(m.id);
      }
      samples.push({ over, id: n.id, value: null });
      continue;
    }
    const x = _meanOf(results, col.path, notes);
    const imported = results.some((y) => y.r.status === "ok" && y.r.imported);
    samples.push({
      over,
      id: n.id,
      value: x,
      ...(imported ? { imported: true as const } : {}),
    });
    if (col.plains !== undefined) continue; // not part of the aggregate
    const list = perOver.get(over) ?? [];
    list.push(x);
    perOver.set(over, list);
  }
  const xs = samples.map((s) => s.value).filter((x): x is number => x !== null);
  const allSkipped = skipped !== undefined && samples.length === 0;
  return {
    row,
    column: col.label,
    ..._stats(xs),
    n: xs.length,
    samples,
    missing: miss,
    ...(samples.some((s) => s.imported) ? { imported: true } : {}),
    ...(allSkipped && skipped ? { skipped } : {}),
    notes,
  };
}

/**
 * The node(s) a column reads for the table's node `n`: `n` itself, or the
 * column's own node(s) of the same variant; for a stage wildcard, the stages
 * `n` depends on (a score depends on the redesigns that shaped its policy,
 * not on the last, unused one).
 */
function _reads(b: _Build, n: GraphNode, col: _Column): GraphNode[] {
  if (col.plains === undefined) return [n];
  const reads = col.plains.map((p) =>
    b.exp.nodes.find((m) =>
      m.plain === p &&
      Object.entries(m.variant).every(([a, l]) => n.variant[a] === l)
    )
  ).filter((m): m is GraphNode => m !== undefined);
  if (col.plains.length <= 1) return reads;
  const up = b.ancestors(n);
  const used = reads.filter((m) => up.has(m.index));
  return used.length > 0 ? used : reads;
}

/** The mean of a field over results (null when any is absent or not a number; an explicit null means "not applicable" and is not noted). */
function _meanOf(
  results: readonly { m: GraphNode; r: ReturnType<Lookup> }[],
  path: readonly string[],
  notes: string[],
): number | null {
  const values: number[] = [];
  let bad = false;
  for (const { m, r } of results) {
    if (r.status !== "ok") continue;
    const raw = _fieldOrNull(
      { value: r.value, report: r.report ?? null },
      path,
    );
    const x = _num(raw);
    if (x === undefined) {
      notes.push(`${m.id} has no ${path.join(".")}`);
      bad = true;
    } else if (x === null) {
      if (raw !== null) {
        notes.push(`${m.id}: ${path.join(".")} is not a number`);
      }
      bad = true;
    } else values.push(x);
  }
  return bad || values.length === 0
    ? null
    : values.reduce((a, b) => a + b, 0) / values.length;
}

/**
 * An aggregate cell of a row: per `over` value the mean (or IQM) over the
 * columns (complete rows only); a mean column is then mean ± std over the
 * `over` values, an IQM column the IQM of the `over` × column scores
 * pooled (rliable), its std that of the per-`over` IQMs.
 */
function _aggregateCell(
  row: string,
  agg: { label: string; of: "mean" | "iqm" },
  columnCount: number,
  overValues: readonly string[],
  perOver: ReadonlyMap<string, (number | null)[]>,
  cells: readonly Cell[],
  rowState: { missing: readonly string[]; skipped: string | undefined },
): Cell {
  const samples: Sample[] = [];
  for (const over of overValues) {
    const list = perOver.get(over);
    if (
      !list || list.length !== columnCount || list.some((x) => x === null)
    ) continue;
    samples.push({
      over,
      id: "",
      value: agg.of === "mean"
        ? (list as number[]).reduce((a, b) => a + b, 0) / list.length
        : interquartileMean(Float64Array.from(list as number[])),
    });
  }
  const xs = samples.map((s) => s.value as number);
  const stats = _stats(xs);
  if (agg.of === "iqm" && xs.length > 0) {
    const pooled = samples.flatMap((s) => perOver.get(s.over) as number[]);
    stats.mean = interquartileMean(Float64Array.from(pooled));
  }
  const rowCells = cells.filter((c) => c.row === row);
  // With no column laid out yet (a `*` column whose nodes are all missing or
  // skipped), the row's own nodes say whether it is missing or not run.
  const skipped = rowCells.length > 0
    ? rowCells.every((c) => c.skipped) ? rowCells[0]!.skipped : undefined
    : rowState.skipped;
  return {
    row,
    column: agg.label,
    ...stats,
    n: xs.length,
    samples,
    missing: xs.length < overValues.length && !skipped
      ? [...rowState.missing]
      : [],
    ...(rowCells.some((c) => c.imported) ? { imported: true } : {}),
    ...(skipped ? { skipped } : {}),
    notes: [],
  };
}

/** `0.812 ± 0.031`, with ` (n=2)` when fewer samples than `over` values. */
export function formatCell(t: Table, c: Cell): string {
  if (c.skipped) return `not run: ${c.skipped}`;
  if (c.mean === null) return c.missing.length ? "missing" : "—";
  const d = t.digits;
  const expected = t.over?.values.length ?? 1;
  let s = c.mean.toFixed(d);
  if (c.column === t.iqm && c.interval) {
    s += ` [${c.interval.lo.toFixed(d)}, ${c.interval.hi.toFixed(d)}]`;
  } else if (t.over) s += ` ± ${(c.std ?? 0).toFixed(d)}`;
  if (c.n < expected) s += ` (n=${c.n})`;
  return s;
}

/** What a table's numbers are: the aggregation over `over` and the aggregate column. */
export function tableNotes(t: Table): string[] {
  const notes: string[] = [...(t.unmatched ?? [])];
  if (t.over) {
    notes.push(
      `mean ± std over ${t.over.axis} (n=${t.over.values.length}: ${
        t.over.values.join(", ")
      })`,
    );
  }
  const bySource = new Map<string, string[]>();
  for (const [label, node] of Object.entries(t.sources ?? {})) {
    bySource.set(node, [...(bySource.get(node) ?? []), label]);
  }
  for (const [node, labels] of bySource) {
    notes.push(
      `${labels.join(", ")}: from ${node}${
        node.includes("*") ? ", mean over the stages the row depends on" : ""
      }`,
    );
  }
  const means = Object.keys(t.groupMeans ?? {});
  if (means.length > 0) {
    notes.push(
      `${means.join(", ")}: mean over ${
        means.length > 1 ? "each group's" : "the group's"
      } columns per ${t.over?.axis ?? "run"}, then aggregated`,
    );
  }
  if (t.aggregate) {
    notes.push(
      `${t.aggregate}: mean over the columns per ${
        t.over?.axis ?? "run"
      }, then aggregated`,
    );
  }
  if (t.iqm) {
    const ci = t.cells.some((c) => c.column === t.iqm && c.interval);
    notes.push(
      `${t.iqm}: interquartile mean of the ${
        t.over?.axis ?? "run"
      } × column scores pooled (rliable)${
        ci ? ", [95 % interval] from the comparison's resampling" : ""
      }`,
    );
  }
  return notes;
}

/** Options of {@linkcode tableMarkdown}. */
export interface TableMarkdownOptions {
  /**
   * Every column and the full comparison grids (per-suite cells, p-values,
   * equivalence). With `false` (the terminal view), a table with an
   * aggregate column whose full rendering is wider than 120 columns shows
   * the aggregates (and columns read from other nodes) and each comparison
   * as a compact summary that fits; the per-suite numbers are in the CSV.
   * Prose is wrapped at 120 columns. @default {true}
   */
  wide?: boolean;
  /** Where the CSV files are written, for the compact view's pointer. */
  csvDir?: string;
}

/** The table as markdown (title, table, a note on aggregation and on what is missing). */
export function tableMarkdown(
  t: Table,
  options: TableMarkdownOptions = {},
): string {
  const aggs = [t.aggregate, t.iqm].filter((x): x is string => x !== undefined);
  if (options.wide === false && aggs.length > 0) {
    // compact only when the full tables would not fit the terminal
    const wide = _tableMarkdown(t, { ...options, wide: true }, false);
    const widest = Math.max(
      ...wide.split("\n").filter((l) => l.startsWith("|")).map((l) => l.length),
    );
    return _tableMarkdown(t, options, widest > _WIDTH);
  }
  return _tableMarkdown(t, options, false);
}

// Long by design: the markdown of one table, section by section in output order.
function _tableMarkdown(
  t: Table,
  options: TableMarkdownOptions,
  compact: boolean,
): string {
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  const aggs = [t.aggregate, t.iqm].filter((x): x is string => x !== undefined);
  const sourced = new Set(Object.keys(t.sources ?? {}));
  const shown = compact
    ? t.columns.filter((c) => aggs.includes(c) || sourced.has(c))
    : t.columns;
  const lines = [`### ${t.title}`, ""];
  if (t.trial) {
    lines.push(
      `_A trial, not ${t.file} as committed: written as ${t.name}; table ${t.trial.of} is untouched._`,
      "",
    );
  }
  lines.push(`| ${esc(t.rowsAxis)} | ${shown.map(esc).join(" | ")} |`);
  lines.push(`|${["---", ...shown.map(() => "---:")].join("|")}|`);
  for (const r of t.rows) {
    const row = shown.map((col) =>
      t.cells.find((x) => x.row === r && x.column === col)
    );
    // a row not run at all says so once, not in every column
    const why = row[0]?.skipped;
    const cells = why && row.every((c) => c?.skipped === why)
      ? [esc(formatCell(t, row[0]!)), ...row.slice(1).map(() => "")]
      : row.map((c) => c ? esc(formatCell(t, c)) : "—");
    lines.push(`| ${esc(r)} | ${cells.join(" | ")} |`);
  }
  lines.push("");
  const notes = tableNotes(t);
  if (notes.length) {
    lines.push(
      `_${notes.join("; ")}. Experiment ${t.experiment} (${t.file})._`,
      "",
    );
  }
  if (compact) {
    const hidden = t.columns.length - shown.length;
    if (hidden > 0) {
      lines.push(
        `_${hidden} per-column value${hidden > 1 ? "s" : ""} per row (${
          t.columns.filter((c) => !shown.includes(c)).slice(0, 8).join(", ")
        }${hidden > 8 ? ", …" : ""}): \`tables --wide\`, or ${
          options.csvDir ? `${options.csvDir}/` : ""
        }${t.name}.csv${t.comparison ? ` and ${t.name}.compare.csv` : ""}._`,
        "",
      );
    }
  }
  if (t.comparison) {
    const compared = t.columns.filter((col) =>
      t.comparison!.cells.some((c) => c.column === col)
    );
    lines.push(
      compact
        ? _compactComparison(t, aggs.filter((a) => compared.includes(a)))
        : comparisonMarkdown(t.comparison, compared, t.rowsAxis, t.digits),
    );
  }
  if (t.missing.length) {
    const shownIds = t.missing.slice(0, 20);
    lines.push(
      `**Incomplete: ${t.missing.length} node${
        t.missing.length > 1 ? "s are" : " is"
      } not in the cache:** ${shownIds.join(", ")}${
        t.missing.length > 20 ? ", …" : ""
      }`,
      "",
      `Compute ${t.missing.length > 1 ? "them" : "it"} with: \`${t.command}\``,
      "",
    );
  }
  const imported = new Set(
    t.cells.flatMap((c) =>
      c.samples.filter((x) => x.imported).map((x) => x.id)
    ),
  );
  if (imported.size) {
    const all = t.cells.every((c) =>
      c.samples.every((x) => x.imported || x.id === "")
    );
    lines.push(
      `(imported): ${
        all
          ? "every value of this table comes"
          : `${imported.size} node${
            imported.size > 1 ? "s" : ""
          } of this table come`
      } from a bundle (cache import), not computed here; \`./envsmith run ${t.file}\` computes ${
        imported.size > 1 ? "them" : "it"
      } here${all ? "" : " (the CSV lists them per cell)"}.`,
      "",
    );
  }
  const probs = t.cells.flatMap((c) => c.notes);
  if (probs.length) {
    lines.push(`Problems: ${[...new Set(probs)].slice(0, 10).join("; ")}`, "");
  }
  // the terminal view wraps prose at the width its tables keep to
  return options.wide === false
    ? lines.flatMap((l) => l.split("\n")).flatMap(_wrapProse).join("\n")
    : lines.join("\n");
}

/** Terminal width the compact view keeps to. */
const _WIDTH = 120;

/** A prose line longer than the terminal width, wrapped at spaces (markdown renders it the same); table rows and headings stay. */
function _wrapProse(line: string): string[] {
  if (line.length <= _WIDTH || /^(\||#)/.test(line)) return [line];
  const out: string[] = [];
  let cur = "";
  for (const word of line.split(" ")) {
    if (cur && cur.length + 1 + word.length > _WIDTH) {
      out.push(cur);
      cur = word;
    } else cur = cur ? `${cur} ${word}` : word;
  }
  if (cur) out.push(cur);
  return out;
}

/** The compact comparison: the caption, one summary per headline column, the notes. */
function _compactComparison(t: Table, headline: readonly string[]): string {
  const cmp = t.comparison!;
  const md = comparisonMarkdown(cmp, [], t.rowsAxis, t.digits);
  // keep the caption and the notes of the full rendering, not its grids
  const caption = md.split("\n")[0]!;
  const notes = md.split("\n").filter((l) => l.startsWith("_"));
  return [
    caption,
    "",
    comparisonSummary(cmp, headline, t.rowsAxis, t.digits),
    ...notes.flatMap((n) => [n, ""]),
  ].join("\n");
}

function _csv(s: string | number | null): string {
  if (s === null) return "";
  const str = String(s);
  return /[",\n]/.test(str) ? `"${str.replace(/"/g, '""')}"` : str;
}

/** Long-form CSV: one line per cell (a trial's with an `overrides` column). */
export function tableCsv(t: Table): string {
  // A trial's rows each carry its overrides, so a row copied elsewhere
  // still says it is not the committed file's.
  const trial = t.trial ? [overridesText(t.trial.overrides)] : [];
  const lines = [
    "row,column,mean,std,n,missing,skipped,samples,imported,lo,hi" +
    (t.trial ? ",overrides" : ""),
  ];
  for (const c of t.cells) {
    lines.push(
      [
        c.row,
        c.column,
        c.mean,
        c.std,
        c.n,
        c.missing.join(" "),
        c.skipped ?? "",
        c.samples.map((s) => `${s.over}=${s.value ?? ""}`).join(" "),
        c.samples.filter((x) => x.imported).map((x) => x.id).join(" "),
        c.interval?.lo ?? null,
        c.interval?.hi ?? null,
        ...trial,
      ].map((x) => _csv(x as string | number | null)).join(","),
    );
  }
  return lines.join("\n") + "\n";
}
