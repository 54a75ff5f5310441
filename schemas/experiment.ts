/**
 * Valibot schemas of the experiment file's structure (the parts the engine
 * owns: name, seed, matrix, executor, nodes, stages, tables). Node parameters
 * (`with:`) are checked by each kind's own schema.
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

/** `matrix:` axes (name -> values) plus optional `exclude:` combinations. */
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
  v.pipe(
    v.array(MatrixValueSchema),
    v.minLength(1, "an axis needs at least one value"),
  ),
);

/**
 * A Slurm time limit: minutes as a number, or a string in one of Slurm's
 * formats (`MM`, `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM`, `D-HH:MM:SS`).
 */
export const SlurmTimeSchema = v.union([
  v.pipe(
    v.number(),
    v.integer(),
    v.minValue(1, "a time limit is at least 1 minute"),
  ),
  v.pipe(
    v.string(),
    v.regex(
      /^(\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d{1,2}|\d+-\d{1,2}:\d{1,2}|\d+-\d{1,2}:\d{1,2}:\d{1,2})$/,
      'a Slurm time limit: minutes, "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM" or "D-HH:MM:SS"',
    ),
  ),
]);

/** Memory of one job: megabytes as a number, or a string like `512M`, `4G`, `1T`. */
export const SlurmMemSchema = v.union([
  v.pipe(v.number(), v.integer(), v.minValue(1, "memory is at least 1 (MB)")),
  v.pipe(
    v.string(),
    v.regex(
      /^[1-9]\d*[KMGT]?$/i,
      'memory as megabytes or a number with a unit: K, M, G or T (e.g. "4G")',
    ),
  ),
]);

/** Extra sbatch flags: each a `--flag` or `--flag=value` string. */
export const SbatchFlagsSchema = v.array(
  v.pipe(
    v.string(),
    v.regex(
      /^-/,
      'an sbatch flag starts with "-" (e.g. "--qos=normal", "--gres=gpu:1")',
    ),
  ),
);

/** Resources of one Slurm job (every field optional: the site's defaults apply). */
export const SlurmResourcesSchema = v.strictObject({
  cpus: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  mem: v.optional(SlurmMemSchema),
  time: v.optional(SlurmTimeSchema),
  partition: v.optional(v.pipe(v.string(), v.minLength(1))),
  sbatch: v.optional(SbatchFlagsSchema),
});

/** `executor: {type: local}`: workers on this machine (the default). */
export const LocalExecutorSchema = v.strictObject({
  type: v.literal("local"),
  jobs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
});

/**
 * `executor: {type: slurm}`: every node an sbatch job on a cluster that
 * shares the cache directory. `resources` apply to every node, `kinds`
 * overrides them per node kind.
 */
export const SlurmExecutorSchema = v.strictObject({
  type: v.literal("slurm"),
  /** Nodes submitted at once. */
  jobs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  partition: v.optional(v.pipe(v.string(), v.minLength(1))),
  account: v.optional(v.pipe(v.string(), v.minLength(1))),
  qos: v.optional(v.pipe(v.string(), v.minLength(1))),
  /** Deno binary on the compute nodes (default: the submitting process's). */
  deno: v.optional(v.pipe(v.string(), v.minLength(1))),
  /** Nodes that become ready together go out as one job array. */
  array: v.optional(v.boolean()),
  /** Seconds between queue polls. */
  poll_seconds: v.optional(
    v.pipe(v.number(), v.minValue(0.1), v.maxValue(600)),
  ),
  /** Seconds a finished or vanished job's files may take to appear on the shared file system. */
  grace_seconds: v.optional(
    v.pipe(v.number(), v.minValue(0), v.maxValue(3600)),
  ),
  resources: v.optional(SlurmResourcesSchema),
  kinds: v.optional(v.record(v.string(), SlurmResourcesSchema)),
  sbatch: v.optional(SbatchFlagsSchema),
});

/**
 * `executor:` where nodes run: `local` (the default; workers on this
 * machine) or `slurm` (one sbatch job per node over a shared cache).
 */
export const ExecutorSchema = v.variant("type", [
  LocalExecutorSchema,
  SlurmExecutorSchema,
]);

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
      v.literal("mean"),
      v.strictObject({ label: v.string(), of: v.literal("mean") }),
    ]),
  ),
  where: v.optional(
    v.record(v.string(), v.union([v.string(), v.number(), v.boolean()])),
  ),
  digits: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(12)),
  ),
});

/** The top level of an experiment file (nodes checked separately). */
export const ExperimentFileSchema = v.strictObject({
  experiment: IdSchema,
  seed: v.pipe(v.number(), v.integer()),
  description: v.optional(v.string()),
  matrix: v.optional(MatrixSchema),
  executor: v.optional(ExecutorSchema),
  nodes: v.record(v.string(), v.unknown()),
  tables: v.optional(v.array(v.unknown())),
});

/** A parsed table entry. */
export type TableSpec = v.InferOutput<typeof TableSchema>;
/** A parsed executor entry. */
export type ExecutorSpec = v.InferOutput<typeof ExecutorSchema>;
/** A parsed `executor: {type: slurm}` entry. */
export type SlurmExecutorSpec = v.InferOutput<typeof SlurmExecutorSchema>;
/** Resources of a Slurm job as written. */
export type SlurmResources = v.InferOutput<typeof SlurmResourcesSchema>;
/** A matrix value as written. */
export type MatrixValue = v.InferOutput<typeof MatrixValueSchema>;
