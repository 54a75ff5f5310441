/**
 * Tables: a table is a query over the cache. For a node of an experiment it
 * lays out one matrix axis as rows and either another axis or field paths of
 * the node's result as columns, aggregates an `over` axis (usually `seed`) as
 * mean ± std (n), and can add a mean column. Built from cached entries only;
 * what is missing is listed with the command that computes it.
 *
 * @module
 */
import type { TableSpec } from "../schemas/experiment.ts";
import type { Experiment, GraphNode } from "./experiment.ts";
import { getField } from "./refs.ts";
import type { Json } from "./types.ts";

/** What the cache has for one node. */
export type Lookup = (node: GraphNode) =>
  | { status: "ok"; value: Json; report?: Json }
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
  /** Why not run, when every node is skipped (e.g. `OPENAI_API_KEY not set`). */
  readonly skipped?: string;
  /** Problems (e.g. a field that is not a number). */
  readonly notes: readonly string[];
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
  /** The aggregate column's label, if any. */
  readonly aggregate?: string;
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
  /** Columns read from another node: label -> the node as written (e.g. `curriculum.*.config`). */
  readonly sources?: Readonly<Record<string, string>>;
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

/**
 * The plain nodes a column's `node` names: one node (an id or a stage alias
 * such as `curriculum.config`), or, with a `*` in place of a stage index,
 * every stage of it in stage order.
 *
 * @param plains Every plain node id of the experiment.
 * @param names Reference names -> plain id ({@linkcode Experiment.names}).
 */
export function columnPlains(
  plains: Iterable<string>,
  names: ReadonlyMap<string, string>,
  node: string,
): string[] {
  if (!node.includes("*")) {
    const p = names.get(node);
    return p === undefined ? [] : [p];
  }
  const esc = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const re = new RegExp(`^${node.split("*").map(esc).join("(\\d+)")}$`);
  const found = new Map<string, number>();
  for (const p of plains) {
    const m = re.exec(p);
    if (m) found.set(p, Number(m[1]));
  }
  return [...found.entries()].sort((a, b) => a[1] - b[1]).map(([p]) => p);
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

/** Builds one table of `exp` from what `lookup` finds. */
export function buildTable(
  exp: Experiment,
  spec: TableSpec,
  lookup: Lookup,
  runCommand: (ids: string[]) => string,
): Table {
  const plain = exp.names.get(spec.node)!;
  const axisLabels = (name: string) =>
    exp.axes.find((a) => a.name === name)?.values.map((v) => v.label) ?? [];
  let nodes = exp.nodes.filter((n) => n.plain === plain);
  for (const [a, val] of Object.entries(spec.where ?? {})) {
    nodes = nodes.filter((n) => n.variant[a] === String(val));
  }
  const present = (axis: string) => {
    const have = new Set(nodes.map((n) => n.variant[axis]));
    return axisLabels(axis).filter((l) => have.has(l));
  };
  const rows = present(spec.rows);
  const overValues = spec.over ? present(spec.over) : [""];
  const isAxisColumns = typeof spec.columns === "string" &&
    exp.axes.some((a) => a.name === spec.columns);
  const results = new Map<string, ReturnType<Lookup>>();
  const look = (n: GraphNode) => {
    let r = results.get(n.id);
    if (!r) {
      r = lookup(n);
      results.set(n.id, r);
    }
    return r;
  };
  const ups = new Map<number, Set<number>>();
  const ancestors = (n: GraphNode): Set<number> => {
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
  };
  const find = (row: string, col: string | null, over: string) =>
    nodes.find((n) =>
      n.variant[spec.rows] === row &&
      (col === null || !isAxisColumns ||
        n.variant[spec.columns as string] === col) &&
      (!spec.over || n.variant[spec.over] === over)
    );
  // Column definitions: label -> path (and the other node it reads, if any).
  const columns: {
    label: string;
    path: string[];
    axisValue: string | null;
    plains?: string[];
  }[] = [];
  if (isAxisColumns) {
    for (const l of present(spec.columns as string)) {
      columns.push({
        label: l,
        path: _split(spec.value ?? "value"),
        axisValue: l,
      });
    }
  } else {
    const list = typeof spec.columns === "string"
      ? [spec.columns]
      : spec.columns;
    for (const c of list) {
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
            exp.nodes.map((n) => n.plain),
            exp.names,
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
      const keys: string[] = [];
      for (const n of nodes) {
        const r = look(n);
        if (r.status !== "ok") continue;
        const obj = getField(
          { value: r.value, report: r.report ?? null },
          segs.slice(0, star),
        );
        if (obj && typeof obj === "object" && !Array.isArray(obj)) {
          for (const k of Object.keys(obj)) {
            if (!keys.includes(k)) keys.push(k);
          }
        }
      }
      for (const k of keys) {
        columns.push({
          label: k,
          path: [...segs.slice(0, star), k, ...segs.slice(star + 1)],
          axisValue: null,
        });
      }
    }
  }
  const cells: Cell[] = [];
  const missing: string[] = [];
  // Every missing node of the table is listed, also when no column could be
  // laid out (a `*` column whose nodes are all missing has no keys yet).
  for (const n of nodes) {
    if (
      rows.includes(n.variant[spec.rows]!) && look(n).status === "missing"
    ) missing.push(n.id);
  }
  const aggLabel = spec.aggregate === undefined
    ? undefined
    : spec.aggregate === "mean"
    ? "mean"
    : spec.aggregate.label;
  for (const row of rows) {
    const perOver = new Map<string, (number | null)[]>();
    for (const col of columns) {
      const samples: Sample[] = [];
      const miss: string[] = [];
      const notes: string[] = [];
      let skipped: string | undefined;
      for (const over of overValues) {
        const n = find(row, col.axisValue, over);
        if (!n) continue;
        // The node(s) the column reads: the table's node, or the column's
        // own node(s) of the same variant (a mean over stages).
        let reads = col.plains === undefined
          ? [n]
          : col.plains.map((p) =>
            exp.nodes.find((m) =>
              m.plain === p &&
              Object.entries(m.variant).every(([a, l]) => n.variant[a] === l)
            )
          ).filter((m): m is GraphNode => m !== undefined);
        if (col.plains !== undefined && col.plains.length > 1) {
          // Stages: those the row's node depends on (a score depends on the
          // redesigns that shaped its policy, not on the last, unused one).
          const up = ancestors(n);
          const used = reads.filter((m) => up.has(m.index));
          if (used.length > 0) reads = used;
        }
        const results = reads.map((m) => ({ m, r: look(m) }));
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
        const values: number[] = [];
        let bad = false;
        for (const { m, r } of results) {
          if (r.status !== "ok") continue;
          const raw = _fieldOrNull(
            { value: r.value, report: r.report ?? null },
            col.path,
          );
          const x = _num(raw);
          if (x === undefined) {
            notes.push(`${m.id} has no ${col.path.join(".")}`);
            bad = true;
          } else if (x === null) {
            // An explicit JSON null means "not applicable": no note.
            if (raw !== null) {
              notes.push(`${m.id}: ${col.path.join(".")} is not a number`);
            }
            bad = true;
          } else values.push(x);
        }
        const x = bad || values.length === 0
          ? null
          : values.reduce((a, b) => a + b, 0) / values.length;
        samples.push({ over, id: n.id, value: x });
        if (col.plains !== undefined) continue; // not part of the aggregate
        const list = perOver.get(over) ?? [];
        list.push(x);
        perOver.set(over, list);
      }
      const xs = samples.map((s) => s.value).filter((x): x is number =>
        x !== null
      );
      const allSkipped = skipped !== undefined && samples.length === 0;
      cells.push({
        row,
        column: col.label,
        ..._stats(xs),
        n: xs.length,
        samples,
        missing: miss,
        ...(allSkipped && skipped ? { skipped } : {}),
        notes,
      });
    }
    if (aggLabel !== undefined) {
      const samples: Sample[] = [];
      for (const over of overValues) {
        const list = perOver.get(over);
        if (
          !list ||
          list.length !== columns.filter((c) => !c.plains).length ||
          list.some((x) => x === null)
        ) continue;
        samples.push({
          over,
          id: "",
          value: (list as number[]).reduce((a, b) => a + b, 0) / list.length,
        });
      }
      const xs = samples.map((s) => s.value as number);
      const rowCells = cells.filter((c) => c.row === row);
      const skipped = rowCells.length > 0 && rowCells.every((c) => c.skipped)
        ? rowCells[0]!.skipped
        : undefined;
      cells.push({
        row,
        column: aggLabel,
        ..._stats(xs),
        n: xs.length,
        samples,
        missing: [],
        ...(skipped ? { skipped } : {}),
        notes: [],
      });
    }
  }
  return {
    name: spec.name,
    title: spec.title ?? spec.name,
    experiment: exp.name,
    file: exp.file,
    rowsAxis: spec.rows,
    rows,
    columns: [
      ...columns.map((c) => c.label),
      ...(aggLabel !== undefined ? [aggLabel] : []),
    ],
    ...(aggLabel !== undefined ? { aggregate: aggLabel } : {}),
    ...(spec.over ? { over: { axis: spec.over, values: overValues } } : {}),
    cells,
    missing,
    ...(missing.length ? { command: runCommand(missing) } : {}),
    digits: spec.digits ?? 3,
    ...(columns.some((c) => c.plains)
      ? {
        sources: Object.fromEntries(
          (Array.isArray(spec.columns) ? spec.columns : []).flatMap((c) =>
            typeof c !== "string" && c.node !== undefined
              ? [[c.label, c.node]]
              : []
          ),
        ),
      }
      : {}),
  };
}

/** `0.812 ± 0.031`, with ` (n=2)` when fewer samples than `over` values. */
export function formatCell(t: Table, c: Cell): string {
  if (c.skipped) return `not run: ${c.skipped}`;
  if (c.mean === null) return c.missing.length ? "missing" : "—";
  const d = t.digits;
  const expected = t.over?.values.length ?? 1;
  let s = c.mean.toFixed(d);
  if (t.over) s += ` ± ${(c.std ?? 0).toFixed(d)}`;
  if (c.n < expected) s += ` (n=${c.n})`;
  return s;
}

/** What a table's numbers are: the aggregation over `over` and the aggregate column. */
export function tableNotes(t: Table): string[] {
  const notes: string[] = [];
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
  if (t.aggregate) {
    notes.push(
      `${t.aggregate}: mean over the columns per ${
        t.over?.axis ?? "run"
      }, then aggregated`,
    );
  }
  return notes;
}

/** The table as markdown (title, table, a note on aggregation and on what is missing). */
export function tableMarkdown(t: Table): string {
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  const lines = [`### ${t.title}`, ""];
  lines.push(`| ${esc(t.rowsAxis)} | ${t.columns.map(esc).join(" | ")} |`);
  lines.push(`|${["---", ...t.columns.map(() => "---:")].join("|")}|`);
  for (const r of t.rows) {
    const cells = t.columns.map((col) => {
      const c = t.cells.find((x) => x.row === r && x.column === col);
      return c ? esc(formatCell(t, c)) : "—";
    });
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
  if (t.missing.length) {
    const shown = t.missing.slice(0, 20);
    lines.push(
      `**Incomplete: ${t.missing.length} node${
        t.missing.length > 1 ? "s are" : " is"
      } not in the cache:** ${shown.join(", ")}${
        t.missing.length > 20 ? ", …" : ""
      }`,
      "",
      `Compute ${t.missing.length > 1 ? "them" : "it"} with: \`${t.command}\``,
      "",
    );
  }
  const probs = t.cells.flatMap((c) => c.notes);
  if (probs.length) {
    lines.push(`Problems: ${[...new Set(probs)].slice(0, 10).join("; ")}`, "");
  }
  return lines.join("\n");
}

function _csv(s: string | number | null): string {
  if (s === null) return "";
  const str = String(s);
  return /[",\n]/.test(str) ? `"${str.replace(/"/g, '""')}"` : str;
}

/** Long-form CSV: one line per cell. */
export function tableCsv(t: Table): string {
  const lines = ["row,column,mean,std,n,missing,skipped,samples"];
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
      ].map((x) => _csv(x as string | number | null)).join(","),
    );
  }
  return lines.join("\n") + "\n";
}
