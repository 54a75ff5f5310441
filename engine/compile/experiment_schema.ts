/**
 * Valibot schemas of the experiment file's structure (the parts the engine
 * owns: name, seed, matrix, nodes, stages, tables). Node parameters
 * (`with:`) are checked by each kind's own schema, the `executor:` block by
 * the executor it names.
 *
 * @module
 */
import * as v from "valibot";

/** A node id, axis name or table name: letters, digits, `_` and `-`, not starting with a digit. */
export const IdSchema = v.pipe(
  v.string(),
  v.regex(
    /^[A-Za-z_][A-Za-z0-9_-]*$/,
    "must be letters, digits, _ or - and start with a letter or _",
  ),
);

/** A scalar matrix value. */
export const MatrixScalarSchema = v.union([
  v.string(),
  v.number(),
  v.boolean(),
]);

/** An object matrix value: `name` labels it; `requires_env` skips it when a variable is unset. */
export const MatrixObjectSchema = v.looseObject({
  name: v.union([v.string(), v.number()]),
  requires_env: v.optional(
    v.array(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/))),
  ),
});

/** One value of a matrix axis. */
export const MatrixValueSchema = v.union([
  MatrixScalarSchema,
  MatrixObjectSchema,
]);

const _Range = v.pipe(
  v.array(v.number()),
  v.length(2, "a range is [low, high]"),
  v.check((r) => r[0]! < r[1]!, "a range is [low, high] with low < high"),
);

/**
 * A sampled matrix axis: `samples` values drawn from a declared range
 * (`uniform`, `log_uniform` with a positive low end, or `int_uniform`,
 * both ends included), at random or by Latin-hypercube sampling, from
 * `seed` (default: the experiment's `seed`). Sampled axes with the same
 * method, samples and seed are drawn jointly: their i-th values form one
 * point, so they vary together instead of being crossed.
 */
export const SampledAxisSchema = v.pipe(
  v.strictObject({
    uniform: v.optional(_Range),
    log_uniform: v.optional(
      v.pipe(
        _Range,
        v.check((r) => r[0]! > 0, "log_uniform needs a positive low end"),
      ),
    ),
    int_uniform: v.optional(
      v.pipe(
        _Range,
        v.check(
          (r) => r.every((x) => Number.isInteger(x)),
          "int_uniform takes integer ends",
        ),
      ),
    ),
    samples: v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.maxValue(10_000),
    ),
    method: v.optional(v.picklist(["random", "lhs"])),
    seed: v.optional(v.pipe(v.number(), v.integer())),
    digits: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(15)),
    ),
  }),
  v.check(
    (x) =>
      [x.uniform, x.log_uniform, x.int_uniform].filter((r) => r !== undefined)
        .length === 1,
    "a sampled axis names one range: uniform, log_uniform or int_uniform",
  ),
);

/** `matrix:` axes (name -> values, or a sampled range) plus optional `exclude:` combinations. */
export const MatrixSchema = v.objectWithRest(
  {
    exclude: v.optional(
      v.array(
        v.record(
          v.string(),
          v.union([MatrixScalarSchema, v.record(v.string(), v.unknown())]),
        ),
      ),
    ),
  },
  v.union([
    v.pipe(
      v.array(MatrixValueSchema),
      v.minLength(1, "an axis needs at least one value"),
    ),
    SampledAxisSchema,
  ]),
);

/** A plain node: `{kind, with, description}`. */
export const PlainNodeSchema = v.strictObject({
  kind: v.string(),
  with: v.optional(v.record(v.string(), v.unknown())),
  description: v.optional(v.string()),
});

/** `kind: stages`: `count` stages of the `each` nodes, seeded by `from`. */
export const StagesNodeSchema = v.strictObject({
  kind: v.literal("stages"),
  count: v.pipe(v.number(), v.integer(), v.minValue(1)),
  from: v.optional(v.record(v.string(), v.unknown())),
  each: v.record(v.string(), v.unknown()),
  description: v.optional(v.string()),
});

/**
 * A column given as a field path, optionally with a label. `node` reads the
 * path from another node of the same variant (e.g. the redesign reports of
 * a curriculum next to the score); a `*` in place of a stage index
 * (`curriculum.*.config`) takes the mean over the stages the table's node
 * depends on (all of them if it depends on none).
 */
export const TableColumnSchema = v.union([
  v.string(),
  v.strictObject({
    label: v.string(),
    path: v.string(),
    node: v.optional(v.string()),
  }),
]);

/**
 * Per-instance records of a compared table's node: the list at `path`;
 * records whose `column` field equals a column's label belong to that
 * column (with `label`, a template: `* valid` makes a record of cell
 * `3ag_3x3` belong to column `3ag_3x3 valid`); their `value` field is the
 * number.
 */
export const TableInstancesSchema = v.strictObject({
  path: v.string(),
  column: v.string(),
  value: v.string(),
  label: v.optional(v.string()),
});

/**
 * `compare:` of a table: every row against the row `against`, paired over
 * the `over` axis (`paired_by`, default `over`); `instances` names
 * per-instance records in the node's value so the interval also resamples
 * instances (records whose `column` field equals a column's label belong to
 * that column; their `value` field is the number).
 */
export const TableCompareSchema = v.strictObject({
  against: v.union([v.string(), v.number(), v.boolean()]),
  paired_by: v.optional(v.string()),
  instances: v.optional(v.union([
    TableInstancesSchema,
    v.pipe(v.array(TableInstancesSchema), v.minLength(1)),
  ])),
  resamples: v.optional(
    v.pipe(v.number(), v.integer(), v.maxValue(1_000_000)),
  ),
  seed: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(0x7fffffff)),
  ),
  interval: v.optional(v.picklist(["percentile", "bca"])),
  family: v.optional(v.picklist(["table", "column"])),
  equivalence: v.optional(v.number()),
  probability_of_improvement: v.optional(v.boolean()),
});

/** An aggregate column: the mean or the interquartile mean over the columns, optionally labelled. */
export const TableAggregateSchema = v.union([
  v.picklist(["mean", "iqm"]),
  v.strictObject({ label: v.string(), of: v.picklist(["mean", "iqm"]) }),
]);

/**
 * `groups:` of a table: the columns a `*` path expands to, grouped by a
 * pattern over their keys (`by`, a regular expression; its first capture
 * group, or the whole match, names the group), side by side in group order,
 * with an optional mean column per group (`mean`, a label with `$1` for the
 * group's name) after each group.
 */
export const TableGroupsSchema = v.strictObject({
  by: v.pipe(v.string(), v.minLength(1)),
  mean: v.optional(v.pipe(v.string(), v.minLength(1))),
});

/** One entry of `tables:`. */
export const TableSchema = v.strictObject({
  name: IdSchema,
  title: v.optional(v.string()),
  node: v.string(),
  rows: v.string(),
  columns: v.union([v.string(), v.array(TableColumnSchema)]),
  value: v.optional(v.string()),
  over: v.optional(v.string()),
  aggregate: v.optional(
    v.union([
      TableAggregateSchema,
      v.pipe(v.array(TableAggregateSchema), v.minLength(1), v.maxLength(2)),
    ]),
  ),
  where: v.optional(
    v.record(
      v.string(),
      v.union([
        v.string(),
        v.number(),
        v.boolean(),
        v.array(v.union([v.string(), v.number(), v.boolean()])),
      ]),
    ),
  ),
  compare: v.optional(TableCompareSchema),
  groups: v.optional(TableGroupsSchema),
  digits: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(12)),
  ),
});

/** The top level of an experiment file (nodes checked separately). */
export const ExperimentFileSchema = v.strictObject({
  experiment: IdSchema,
  seed: v.pipe(v.number(), v.integer()),
  description: v.optional(v.string()),
  /** Plugin modules (relative to the file), loaded before it is compiled (see `plugins.ts`). */
  plugins: v.optional(v.pipe(
    v.array(v.pipe(v.string(), v.minLength(1))),
    v.description(
      "TypeScript modules (relative to this file) that export kinds, executors or engineers to register",
    ),
  )),
  matrix: v.optional(MatrixSchema),
  /** Checked by the executor its `type` names (see `executor.ts`). */
  executor: v.optional(v.unknown()),
  nodes: v.record(v.string(), v.unknown()),
  tables: v.optional(v.array(v.unknown())),
});

/** A column of a table given as a field path, optionally labelled, optionally read from another node (`node`). */
export type TableColumn = string | {
  readonly label: string;
  readonly path: string;
  readonly node?: string | undefined;
};

/** A parsed `tables:` entry (see docs/experiments.md, Tables). */
export interface TableSpec {
  /** File name of the CSV/JSON output. */
  readonly name: string;
  /** Markdown heading (default: name). */
  readonly title?: string | undefined;
  /** A node id before expansion (or a stages alias). */
  readonly node: string;
  /** A matrix axis. */
  readonly rows: string;
  /** An axis, a field path, or a list of paths / {label, path}. */
  readonly columns: string | readonly TableColumn[];
  /** With axis columns: the field shown. */
  readonly value?: string | undefined;
  /** The axis aggregated as mean ± std. */
  readonly over?: string | undefined;
  /** Adds a mean and/or an IQM column. */
  readonly aggregate?:
    | TableAggregate
    | readonly TableAggregate[]
    | undefined;
  /** Fixes other axes the node varies with; a list on the rows axis keeps those rows. */
  readonly where?:
    | Readonly<
      Record<
        string,
        string | number | boolean | readonly (string | number | boolean)[]
      >
    >
    | undefined;
  /** Digits after the point. */
  readonly digits?: number | undefined;
  /** Paired comparisons against a baseline row. */
  readonly compare?: TableCompare | undefined;
  /** Groups of the `*` columns by a pattern over their keys, with a mean per group. */
  readonly groups?: TableGroups | undefined;
}

/** A parsed `groups:` block. */
export interface TableGroups {
  /** A regular expression over a `*` column's key; its first capture group (or the match) names the group. */
  readonly by: string;
  /** The label of each group's mean column; `$1` is the group's name. */
  readonly mean?: string | undefined;
}

/** A parsed `compare:` block. */
export interface TableCompare {
  /** The baseline row's label. */
  readonly against: string | number | boolean;
  /** The pairing axis (the table's `over`). */
  readonly paired_by?: string | undefined;
  /** Per-instance records of the node's value (one spec, or one per column family). */
  readonly instances?: TableInstances | readonly TableInstances[] | undefined;
  /** Bootstrap resamples (at least 1,000). @default {10000} */
  readonly resamples?: number | undefined;
  /** Seed of the bootstrap. @default {1} */
  readonly seed?: number | undefined;
  /** Interval method of means and mean differences. @default {"percentile"} */
  readonly interval?: "percentile" | "bca" | undefined;
  /** The multiple-testing family Holm runs over. @default {"table"} */
  readonly family?: "table" | "column" | undefined;
  /** Margin M of an equivalence test (TOST) of |Δ| < M; above 0. */
  readonly equivalence?: number | undefined;
  /** Adds P(row > baseline) over the suites with its interval. */
  readonly probability_of_improvement?: boolean | undefined;
}

/** Where a compared table finds per-instance records (see `TableInstancesSchema`). */
export interface TableInstances {
  /** Field path of the list of records. */
  readonly path: string;
  /** The record field that names the column. */
  readonly column: string;
  /** The record field holding the number. */
  readonly value: string;
  /** A label template: `*` is the record's `column` field. */
  readonly label?: string | undefined;
}

/** An aggregate column as written: `mean`, `iqm`, or `{ label, of }`. */
export type TableAggregate =
  | "mean"
  | "iqm"
  | { readonly label: string; readonly of: "mean" | "iqm" };

/**
 * The top-level keys of an experiment file.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EXPERIMENT_KEYS } from "./experiment_schema.ts";
 * for (const k of ["experiment", "seed", "matrix", "nodes", "tables"]) {
 *   assert.ok(EXPERIMENT_KEYS.includes(k), k);
 * }
 * ```
 */
export const EXPERIMENT_KEYS: readonly string[] = Object.keys(
  ExperimentFileSchema.entries,
);

/**
 * The keys of a `tables:` entry.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TABLE_KEYS } from "./experiment_schema.ts";
 * assert.ok(TABLE_KEYS.includes("rows"));
 * assert.ok(!TABLE_KEYS.includes("nodes"));
 * ```
 */
export const TABLE_KEYS: readonly string[] = Object.keys(TableSchema.entries);
/** A parsed `executor:` block: its `type` names a registered executor, which checks the rest. */
export interface ExecutorSpec {
  /** The executor's name. */
  readonly type: string;
  /** The executor's own fields. */
  readonly [field: string]: unknown;
}
/** A matrix value as written. */
export type MatrixValue = v.InferOutput<typeof MatrixValueSchema>;
