/**
 * The `executor: {type: slurm}` block: its schema, and the checks beyond it
 * (sbatch flags envsmith sets itself or that have a field of their own,
 * resources of kinds that do not exist).
 *
 * @module
 */
import * as v from "valibot";
import type { BlockIssues, ExecutorKind } from "../executor.ts";
import type { DocPath } from "../../compile/source.ts";
import { didYouMean } from "../../suggest.ts";
import { remoteSpecEntries } from "./remote_spec.ts";

/** Resources of a Slurm job as written (omitted fields: the site's defaults). */
export interface SlurmResources {
  /** `--cpus-per-task`. */
  readonly cpus?: number | undefined;
  /** `--mem`: megabytes, or a number with a unit (`4G`). */
  readonly mem?: number | string | undefined;
  /** `--time`: minutes, or one of Slurm's formats. */
  readonly time?: number | string | undefined;
  /** `--partition`. */
  readonly partition?: string | undefined;
  /** `--gres`: generic resources, e.g. `gpu:1` for a node kind that trains on a GPU. */
  readonly gres?: string | undefined;
  /** Extra sbatch flags. */
  readonly sbatch?: readonly string[] | undefined;
}

/**
 * A parsed `executor: {type: slurm}` block (see docs/cluster.md).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { SlurmExecutorSpec } from "./slurm_spec.ts";
 * import { SlurmExecutorSchema } from "./slurm_spec.ts";
 * const spec: SlurmExecutorSpec = v.parse(SlurmExecutorSchema, { type: "slurm", jobs: 50, partition: "cpu" });
 * assert.equal(spec.partition, "cpu");
 * ```
 */
export interface SlurmExecutorSpec {
  /** `slurm`. */
  readonly type: "slurm";
  /** Nodes queued or running at once. */
  readonly jobs?: number | undefined;
  /** `--partition`. */
  readonly partition?: string | undefined;
  /** `--account`. */
  readonly account?: string | undefined;
  /** `--qos`. */
  readonly qos?: string | undefined;
  /** Deno binary on the compute nodes. */
  readonly deno?: string | undefined;
  /** Nodes ready together with equal resources go out as one job array. */
  readonly array?: boolean | undefined;
  /** Seconds between queue polls. */
  readonly poll_seconds?: number | undefined;
  /** Seconds a finished job's files may take to appear on the shared file system. */
  readonly grace_seconds?: number | undefined;
  /** Resources of every node. */
  readonly resources?: SlurmResources | undefined;
  /** Resources per node kind, over `resources`. */
  readonly kinds?: Readonly<Record<string, SlurmResources>> | undefined;
  /** Extra sbatch flags of every job. */
  readonly sbatch?: readonly string[] | undefined;
  /** No other fields. */
  readonly [field: string]: unknown;
}

/**
 * A Slurm time limit: minutes as a number, or a string in one of Slurm's
 * formats (`MM`, `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM`, `D-HH:MM:SS`).
 */
const SlurmTimeSchema = v.union([
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
const SlurmMemSchema = v.union([
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
const SbatchFlagsSchema = v.array(
  v.pipe(
    v.string(),
    v.regex(
      /^-/,
      'an sbatch flag starts with "-" (e.g. "--qos=normal", "--gres=gpu:1")',
    ),
  ),
);

/** Resources of one Slurm job (every field optional: the site's defaults apply). */
export const SlurmResourcesSchema:
  & v.GenericSchema<unknown, SlurmResources>
  & { readonly entries: Readonly<Record<string, unknown>> } = v.strictObject({
    cpus: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
    mem: v.optional(SlurmMemSchema),
    time: v.optional(SlurmTimeSchema),
    partition: v.optional(v.pipe(v.string(), v.minLength(1))),
    gres: v.optional(
      v.pipe(
        v.string(),
        v.regex(
          /^[A-Za-z0-9_.:,-]+$/,
          'generic resources as sbatch --gres takes them, e.g. "gpu:1" or "gpu:a100:2"',
        ),
      ),
    ),
    sbatch: v.optional(SbatchFlagsSchema),
  });

/**
 * `executor: {type: slurm}`: every node an sbatch job on a cluster that
 * shares the cache directory. `resources` apply to every node, `kinds`
 * overrides them per node kind.
 */
export const SlurmExecutorSchema: ExecutorKind<SlurmExecutorSpec>["spec"] = v
  .strictObject({
    type: v.literal("slurm"),
    // jobs, deno, poll_seconds, grace_seconds: every remote executor's
    ...remoteSpecEntries,
    partition: v.optional(v.pipe(v.string(), v.minLength(1))),
    account: v.optional(v.pipe(v.string(), v.minLength(1))),
    qos: v.optional(v.pipe(v.string(), v.minLength(1))),
    /** Nodes that become ready together go out as one job array. */
    array: v.optional(v.boolean()),
    resources: v.optional(SlurmResourcesSchema),
    kinds: v.optional(v.record(v.string(), SlurmResourcesSchema)),
    sbatch: v.optional(SbatchFlagsSchema),
  });

/** sbatch flags envsmith sets itself ("") or that have their own field. */
const _SBATCH_FIELDS: Record<string, string> = {
  array: "",
  a: "",
  output: "",
  o: "",
  error: "",
  e: "",
  "job-name": "",
  J: "",
  parsable: "",
  wrap: "",
  chdir: "",
  D: "",
  "open-mode": "",
  partition: "partition",
  p: "partition",
  account: "account",
  A: "account",
  qos: "qos",
  q: "qos",
  "cpus-per-task": "cpus",
  c: "cpus",
  mem: "mem",
  time: "time",
  t: "time",
};

function _isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** The checks of a slurm block beyond its schema (see the module documentation). */
export function checkSlurmBlock(
  block: Readonly<Record<string, unknown>>,
  issues: BlockIssues,
  kinds: readonly string[],
): void {
  _checkResources(block.resources, ["resources"], issues);
  _checkSbatchFlags(block.sbatch, ["sbatch"], issues);
  if (!_isRecord(block.kinds)) return;
  for (const [k, r] of Object.entries(block.kinds)) {
    if (!kinds.includes(k)) {
      issues.report(
        ["kinds", k],
        `unknown kind "${k}" in executor.kinds${didYouMean(k, kinds)}`,
        true,
      );
    }
    _checkResources(r, ["kinds", k], issues);
  }
}

function _checkResources(r: unknown, at: DocPath, issues: BlockIssues): void {
  if (!_isRecord(r)) return;
  issues.unknownKeys(
    r,
    Object.keys(SlurmResourcesSchema.entries),
    at,
    "resource",
  );
  _checkSbatchFlags(r.sbatch, [...at, "sbatch"], issues);
}

function _checkSbatchFlags(
  raw: unknown,
  at: DocPath,
  issues: BlockIssues,
): void {
  if (!Array.isArray(raw)) return;
  raw.forEach((f, i) => {
    if (typeof f !== "string") return;
    const m = /^(?:--([A-Za-z][A-Za-z0-9-]*)|-([A-Za-z]))/.exec(f);
    if (!m) return; // the schema reports it
    const own = _SBATCH_FIELDS[m[1] ?? m[2]!];
    if (own === undefined) return;
    issues.report(
      [...at, i],
      own === ""
        ? `sbatch flag "${f}" is set by envsmith itself (job names, logs, arrays and working directory are managed per node); remove it`
        : `sbatch flag "${f}": use the executor's "${own}:" field instead`,
    );
  });
}
