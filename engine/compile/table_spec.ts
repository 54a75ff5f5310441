/**
 * `tables:` entries, checked against the experiment before anything runs:
 * the node exists, `rows`/`columns`/`over`/`where` name axes the node varies
 * with (or field paths), and every axis of the node is used or fixed.
 *
 * @module
 */
import * as v from "valibot";
import { TableSchema, type TableSpec } from "./experiment_schema.ts";
import type { DocPath } from "./source.ts";
import { didYouMean } from "../suggest.ts";
import { isRecord } from "./diagnostics.ts";
import type { Compilation } from "./plain_node.ts";

/** Resamples when `compare.resamples` is not given. */
export const DEFAULT_RESAMPLES = 10_000;

/** The fewest resamples a table may ask for (fewer leave visible Monte Carlo error at the interval ends). */
export const MIN_RESAMPLES = 1_000;

/** Checks `tables:` and returns the valid entries. */
export function checkTables(c: Compilation, raw: unknown): TableSpec[] {
  if (!Array.isArray(raw)) return [];
  const out: TableSpec[] = [];
  const names = new Set<string>();
  raw.forEach((t, i) => {
    const spec = _parse(c, t, ["tables", i]);
    if (!spec) return;
    const errorsBefore = c.diags.list.length;
    if (names.has(spec.name)) {
      c.diags.report(
        "table",
        ["tables", i, "name"],
        `duplicate table name "${spec.name}"`,
      );
    }
    names.add(spec.name);
    if (_check(c, spec, ["tables", i], errorsBefore)) out.push(spec);
  });
  return out;
}

function _parse(c: Compilation, t: unknown, at: DocPath): TableSpec | null {
  if (!isRecord(t)) {
    c.diags.report(
      "table",
      at,
      "a table is a mapping with name, node, rows and columns",
    );
    return null;
  }
  c.diags.unknownKeys(
    t,
    Object.keys(TableSchema.entries),
    at,
    "key of a table",
    "table",
  );
  const r = v.safeParse(TableSchema, t);
  if (!r.success) {
    c.diags.issues(r.issues, at, "table");
    return null;
  }
  return r.output;
}

/** What one table check needs. */
interface _Table {
  readonly c: Compilation;
  readonly spec: TableSpec;
  readonly at: DocPath;
  /** The axes the table's node varies with. */
  readonly axes: readonly string[];
  /** Every axis of the matrix. */
  readonly allAxes: readonly string[];
}

/** Checks one parsed entry (`errorsBefore`: the diagnostics before it); false when its node does not exist (the entry is dropped). */
function _check(
  c: Compilation,
  spec: TableSpec,
  at: DocPath,
  errorsBefore: number,
): boolean {
  const plain = c.names.get(spec.node);
  if (plain === undefined) {
    c.diags.report(
      "table",
      [...at, "node"],
      `table ${spec.name}: no node named "${spec.node}"${
        didYouMean(
          spec.node,
          [...c.names.keys()].filter((n) => !/\.\d+\./.test(n)),
        )
      }`,
    );
    return false;
  }
  const t: _Table = {
    c,
    spec,
    at,
    axes: c.plains.get(plain)?.axes ?? [],
    allAxes: c.axes.map((a) => a.name),
  };
  _checkAxis(t, "rows", spec.rows);
  _checkAxis(t, "over", spec.over);
  _checkColumns(t);
  if (
    spec.value !== undefined &&
    !/^(value|report)(\.[A-Za-z0-9_-]+)*$/.test(spec.value)
  ) {
    c.diags.report(
      "table",
      [...at, "value"],
      `table ${spec.name}: value "${spec.value}" is not a field path like value.success`,
    );
  }
  _checkWhere(t);
  _checkGroups(t);
  _checkCompare(t);
  _checkFreeAxes(t, errorsBefore);
  return true;
}

function _checkAxis(
  t: _Table,
  field: "rows" | "over",
  name: string | undefined,
): void {
  if (name === undefined) return;
  const { c, spec } = t;
  if (!t.allAxes.includes(name)) {
    c.diags.report(
      "table",
      [...t.at, field],
      `table ${spec.name}: ${field} names unknown axis "${name}"${
        didYouMean(name, t.allAxes)
      }`,
    );
  } else if (!t.axes.includes(name)) {
    c.diags.report(
      "table",
      [...t.at, field],
      `table ${spec.name}: node ${spec.node} does not vary with axis ${name} (it varies with: ${
        t.axes.join(", ") || "nothing"
      })`,
    );
  }
}

function _checkColumns(t: _Table): void {
  const { c, spec, at } = t;
  const columns = spec.columns;
  if (
    typeof columns === "string" && !columns.includes(".") &&
    columns !== "value" && columns !== "report"
  ) {
    if (!t.allAxes.includes(columns)) {
      c.diags.report(
        "table",
        [...at, "columns"],
        `table ${spec.name}: columns is neither an axis nor a field path (value.… or report.…): "${columns}"${
          didYouMean(columns, t.allAxes)
        }`,
      );
    } else if (!t.axes.includes(columns)) {
      c.diags.report(
        "table",
        [...at, "columns"],
        `table ${spec.name}: node ${spec.node} does not vary with axis ${columns}`,
      );
    }
    return;
  }
  if (Array.isArray(columns)) {
    columns.forEach((x, j) => {
      if (typeof x !== "string" && x.node !== undefined) {
        _checkColumnNode(t, x.label, x.node, [...at, "columns", j, "node"]);
      }
    });
  }
  const paths = typeof columns === "string"
    ? [columns]
    : columns.map((x) => typeof x === "string" ? x : x.path);
  paths.forEach((path, j) => {
    if (
      !/^(value|report)(\.[A-Za-z0-9_*-]+)*$/.test(path) ||
      (path.split("*").length > 2)
    ) {
      c.diags.report(
        "table",
        typeof columns === "string"
          ? [...at, "columns"]
          : [...at, "columns", j],
        `table ${spec.name}: "${path}" is not a field path: value.a.b or report.a.b, with at most one * for "every key"`,
      );
    }
  });
}

/** `groups:` compiles as a regular expression and groups `*` columns. */
function _checkGroups(t: _Table): void {
  const { c, spec, at } = t;
  const g = spec.groups;
  if (g === undefined) return;
  try {
    new RegExp(g.by);
  } catch (e) {
    c.diags.report(
      "table",
      [...at, "groups", "by"],
      `table ${spec.name}: groups.by is not a regular expression: ${
        (e as Error).message
      }`,
    );
  }
  const paths = typeof spec.columns === "string"
    ? [spec.columns]
    : spec.columns.map((x) => typeof x === "string" ? x : x.path);
  if (!paths.some((p) => p.includes("*"))) {
    c.diags.report(
      "table",
      [...at, "groups"],
      `table ${spec.name}: groups group the columns a * path expands to, and no column has a * (e.g. value.cells.*.valid_rate)`,
    );
  }
}

/** A column's `node:` names a node (or stages of one) that varies with no axis the table's node lacks. */
function _checkColumnNode(
  t: _Table,
  label: string,
  node: string,
  where: DocPath,
): void {
  const { c, spec } = t;
  const plains = columnPlains(c.plains.keys(), c.names, node);
  if (plains.length === 0) {
    c.diags.report(
      "table",
      where,
      `table ${spec.name}: column ${label} reads node "${node}", which does not exist (write a node id, or a stage node with * for its stage, e.g. curriculum.*.config)${
        didYouMean(node, [...c.names.keys()].filter((n) => !/\.\d+\./.test(n)))
      }`,
    );
    return;
  }
  const own = new Set(t.axes);
  const extra = (c.plains.get(plains[0]!)?.axes ?? []).filter((a) =>
    !own.has(a)
  );
  if (extra.length > 0) {
    c.diags.report(
      "table",
      where,
      `table ${spec.name}: column ${label} reads ${node}, which varies with ${
        extra.join(", ")
      } and ${spec.node} does not, so a row has several values`,
    );
  }
}

/** `compare:` names a row of the table, pairs over `over`, and reads field paths. */
// Long by design: one check per `compare:` field, each a one-line error, in the order the docs list the fields.
function _checkCompare(t: _Table): void {
  const { c, spec, at } = t;
  const cmp = spec.compare;
  if (cmp === undefined) return;
  const where = [...at, "compare"];
  const rows = c.axes.find((a) => a.name === spec.rows);
  const labels = rows?.values.map((x) => x.label) ?? [];
  const kept = spec.where?.[spec.rows];
  const tableRows = Array.isArray(kept)
    ? labels.filter((l) => kept.map(String).includes(l))
    : kept !== undefined
    ? labels.filter((l) => l === String(kept))
    : labels;
  if (rows && !labels.includes(String(cmp.against))) {
    c.diags.report(
      "table",
      [...where, "against"],
      `table ${spec.name}: compare.against must be a row (a value of axis ${spec.rows}): "${cmp.against}"${
        didYouMean(String(cmp.against), labels)
      }`,
    );
  } else if (rows && !tableRows.includes(String(cmp.against))) {
    c.diags.report(
      "table",
      [...where, "against"],
      `table ${spec.name}: compare.against "${cmp.against}" is not a row of this table (where: { ${spec.rows}: [...] } keeps ${
        tableRows.join(", ") || "none"
      }); add it to where or compare against one of those`,
    );
  }
  if (cmp.resamples !== undefined && cmp.resamples < MIN_RESAMPLES) {
    c.diags.report(
      "table",
      [...where, "resamples"],
      `table ${spec.name}: compare.resamples is ${cmp.resamples}; use at least ${
        MIN_RESAMPLES.toLocaleString("en")
      } (fewer leave visible Monte Carlo error at the interval ends; the default is ${
        DEFAULT_RESAMPLES.toLocaleString("en")
      })`,
    );
  }
  if (cmp.equivalence !== undefined && !(cmp.equivalence > 0)) {
    c.diags.report(
      "table",
      [...where, "equivalence"],
      `table ${spec.name}: compare.equivalence is the margin M of |Δ| < M and must be above 0 (got ${cmp.equivalence}), e.g. equivalence: 0.02`,
    );
  }
  if (
    cmp.family !== undefined && rows &&
    (spec.over === undefined || tableRows.length < 2)
  ) {
    c.diags.report(
      "table",
      [...where, "family"],
      `table ${spec.name}: compare.family ${cmp.family} is a family of paired tests, but this table has no pairs (${
        spec.over === undefined
          ? "no over axis to pair by"
          : `its only row is ${tableRows[0] ?? "none"}`
      }); ${
        spec.over === undefined
          ? "add over: seed"
          : `keep a second row in where: { ${spec.rows}: [...] }`
      } or remove compare`,
    );
  }
  if (spec.over === undefined) {
    c.diags.report(
      "table",
      where,
      `table ${spec.name}: compare needs \`over\` (the axis the rows are paired by, e.g. over: seed)`,
    );
  } else if (cmp.paired_by !== undefined && cmp.paired_by !== spec.over) {
    c.diags.report(
      "table",
      [...where, "paired_by"],
      `table ${spec.name}: compare.paired_by must be the table's over axis (${spec.over}), got "${cmp.paired_by}"`,
    );
  }
  const list = cmp.instances === undefined
    ? []
    : Array.isArray(cmp.instances)
    ? cmp.instances
    : [cmp.instances];
  list.forEach((inst, j) => {
    if (!/^(value|report)(\.[A-Za-z0-9_-]+)*$/.test(inst.path)) {
      c.diags.report(
        "table",
        Array.isArray(cmp.instances)
          ? [...where, "instances", j, "path"]
          : [...where, "instances", "path"],
        `table ${spec.name}: compare.instances.path "${inst.path}" is not a field path like value.per_instance`,
      );
    }
  });
}

function _checkWhere(t: _Table): void {
  const { c, spec, at } = t;
  for (const [a, val] of Object.entries(spec.where ?? {})) {
    const axis = c.axes.find((x) => x.name === a);
    if (!axis) {
      c.diags.report(
        "table",
        [...at, "where", a],
        `table ${spec.name}: where names unknown axis "${a}"${
          didYouMean(a, t.allAxes)
        }`,
        true,
      );
    } else if (Array.isArray(val) && a !== spec.rows) {
      c.diags.report(
        "table",
        [...at, "where", a],
        `table ${spec.name}: a list in where selects rows, so it is for the rows axis (${spec.rows}) only; fix ${a} to one value`,
      );
    } else {
      for (const one of Array.isArray(val) ? val : [val]) {
        if (axis.values.some((x) => x.label === String(one))) continue;
        c.diags.report(
          "table",
          [...at, "where", a],
          `table ${spec.name}: axis ${a} has no value "${one}"${
            didYouMean(String(one), axis.values.map((x) => x.label))
          }`,
        );
      }
    }
  }
}

/**
 * Whether `axis` is drawn jointly (a sampled axis of a `lhs`/`random`
 * group) with an axis the table already uses: one value of a group's axis
 * picks a point, so the group's other axes are fixed with it.
 */
function _zippedWithUsed(
  c: Compilation,
  axis: string,
  used: ReadonlySet<string | undefined>,
): boolean {
  const zip = c.axes.find((a) => a.name === axis)?.zip;
  return zip !== undefined &&
    c.axes.some((a) => a.zip === zip && a.name !== axis && used.has(a.name));
}

/** Every axis of the node must be rows, columns, over or fixed by where (reported only when the entry is otherwise valid). */
function _checkFreeAxes(t: _Table, errorsBefore: number): void {
  const { c, spec } = t;
  const used = new Set([
    spec.rows,
    spec.over,
    typeof spec.columns === "string" ? spec.columns : "",
    ...Object.keys(spec.where ?? {}),
  ]);
  const free = t.axes.filter((a) =>
    !used.has(a) && !_zippedWithUsed(c, a, used)
  );
  if (free.length > 0 && c.diags.list.length === errorsBefore) {
    c.diags.report(
      "table",
      t.at,
      `table ${spec.name}: node ${spec.node} also varies with ${
        free.join(", ")
      }; fix ${free.length === 1 ? "it" : "them"} with where: { ${
        free.map((a) => `${a}: …`).join(", ")
      } } or aggregate with over: ${free[0]}`,
    );
  }
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
