/**
 * Resource limits of experiment files: how large a file may be, how deep it
 * may nest, and how far it may expand (stages, variants, nodes). Each is
 * checked before the work it bounds is done, so a typo (`count: 100000000`)
 * or a hostile file (an alias bomb, a 50 MB YAML) gets a clear error in
 * milliseconds instead of a hang or an out-of-memory crash.
 *
 * The defaults are far above what real experiments use (the shipped ones are
 * a few KB, nest 8 levels deep and expand to at most a few hundred nodes),
 * and keep the worst file they admit within seconds and a few hundred MB
 * (a 1 MiB file of 14,000 nodes written out one by one plans in about 3 s
 * and 370 MB through the CLI);
 * `--limit NAME=N` (repeatable) or `ENVSMITH_LIMITS="NAME=N,..."` raises one.
 *
 * @module
 */
import { UserError } from "./errors.ts";

/** The limits (see {@linkcode LIMITS} for their command-line names and meaning). */
export interface Limits {
  /** Bytes of an experiment file. @default 1 MiB */
  readonly fileBytes: number;
  /** YAML alias expansions (each `*alias` times the aliases inside what it names). @default 10000 */
  readonly yamlAliases: number;
  /** Values (scalars, mappings, lists) of the file once aliases are expanded. @default 2000000 */
  readonly yamlValues: number;
  /** Nesting depth of mappings and lists. @default 64 */
  readonly depth: number;
  /** Characters of one string (a value or a key). @default 100000 */
  readonly stringLength: number;
  /** Stages of one `stages` node. @default 10000 */
  readonly stages: number;
  /** Variants of the matrix (the product of the axis lengths, before `exclude`). @default 100000 */
  readonly variants: number;
  /** Nodes of the file before matrix expansion (stages unrolled), and after it. @default 100000 */
  readonly nodes: number;
  /**
   * References between nodes once stages and the matrix are expanded
   * (`$earlier.x` at stage k counts k). @default 200000
   */
  readonly references: number;
  /**
   * Bytes of the files one node declares in `inputs:` (the `exec` kind's
   * and the `exec` engineer's), hashed at every plan. @default 256 MiB
   */
  readonly inputBytes: number;
}

/** One limit: its command-line name, what it bounds, its default. */
export interface LimitInfo {
  /** Field of {@linkcode Limits}. */
  readonly field: keyof Limits;
  /** Name in `--limit NAME=N` and `ENVSMITH_LIMITS`. */
  readonly name: string;
  /** What it bounds (for messages and docs). */
  readonly what: string;
  /** Default value. */
  readonly default: number;
}

/**
 * Every limit, in the order the docs list them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { LIMITS } from "./limits.ts";
 * const file = LIMITS.find((l) => l.name === "file-bytes");
 * assert.equal(file?.field, "fileBytes");
 * assert.equal(file?.default, 1024 * 1024);
 * ```
 */
export const LIMITS: readonly LimitInfo[] = [
  {
    field: "fileBytes",
    name: "file-bytes",
    what: "bytes of an experiment file",
    default: 1024 * 1024,
  },
  {
    field: "yamlAliases",
    name: "yaml-aliases",
    what: "YAML alias expansions",
    default: 10_000,
  },
  {
    field: "yamlValues",
    name: "yaml-values",
    what: "values of the file once YAML aliases are expanded",
    default: 2_000_000,
  },
  {
    field: "depth",
    name: "depth",
    what: "nesting depth of mappings and lists",
    default: 64,
  },
  {
    field: "stringLength",
    name: "string-length",
    what: "characters of one string",
    default: 100_000,
  },
  {
    field: "stages",
    name: "stages",
    what: "stages of one stages node",
    default: 10_000,
  },
  {
    field: "variants",
    name: "variants",
    what: "matrix variants (product of the axis lengths)",
    default: 100_000,
  },
  {
    field: "nodes",
    name: "nodes",
    what: "nodes of an experiment",
    default: 100_000,
  },
  {
    field: "references",
    name: "references",
    what:
      "references between nodes once stages and the matrix are expanded ($earlier.x at stage k counts k)",
    default: 200_000,
  },
  {
    field: "inputBytes",
    name: "input-bytes",
    what: "bytes of the files one node declares in inputs: (hashed at plan)",
    default: 256 * 1024 * 1024,
  },
];

/**
 * The default limits.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DEFAULT_LIMITS, LIMITS } from "./limits.ts";
 * assert.equal(DEFAULT_LIMITS.fileBytes, 1024 * 1024);
 * for (const l of LIMITS) assert.equal(DEFAULT_LIMITS[l.field], l.default);
 * assert.ok(Object.isFrozen(DEFAULT_LIMITS));
 * ```
 */
export const DEFAULT_LIMITS: Limits = Object.freeze(
  Object.fromEntries(LIMITS.map((l) => [l.field, l.default])),
) as unknown as Limits;

/** The limits with `overrides` applied over the defaults. */
export function resolveLimits(overrides: Partial<Limits> = {}): Limits {
  return { ...DEFAULT_LIMITS, ...overrides };
}

/** How to raise a limit, for the end of a message: `raise it with --limit stages=N`. */
export function raiseHint(field: keyof Limits): string {
  const info = LIMITS.find((l) => l.field === field)!;
  return `raise it with --limit ${info.name}=N (or ENVSMITH_LIMITS=${info.name}=N)`;
}

/**
 * Parses `NAME=N[,NAME=N...]` (the value of `--limit` or `ENVSMITH_LIMITS`);
 * `N` is a positive integer, optionally with a `k`, `M` or `G` suffix
 * (powers of 1024 for `file-bytes` and `input-bytes`, of 1000 otherwise).
 *
 * @throws {UserError} naming the bad part and the valid names.
 *
 * @example
 * ```ts
 * import { parseLimits } from "./limits.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseLimits("stages=50000,file-bytes=16M"), {
 *   stages: 50000,
 *   fileBytes: 16 * 1024 * 1024,
 * });
 * ```
 */
export function parseLimits(text: string): Partial<Limits> {
  const out: Record<string, number> = {};
  for (const part of text.split(",").map((s) => s.trim()).filter((s) => s)) {
    const m = /^([a-z-]+)=(\d+)([kKmMgG]?)$/.exec(part);
    const info = m ? LIMITS.find((l) => l.name === m[1]) : undefined;
    if (!m || !info) {
      throw new UserError(
        `--limit ${part}: expected NAME=N with NAME one of ${
          LIMITS.map((l) => l.name).join(", ")
        } (e.g. --limit stages=50000)`,
      );
    }
    const unit = info.field.endsWith("Bytes") ? 1024 : 1000;
    const scale = { "": 1, k: unit, m: unit ** 2, g: unit ** 3 }[
      m[3]!.toLowerCase() as "" | "k" | "m" | "g"
    ];
    const n = Number(m[2]) * scale;
    if (!Number.isSafeInteger(n) || n < 1) {
      throw new UserError(
        `--limit ${part}: ${info.name} must be a positive integer`,
      );
    }
    out[info.field] = n;
  }
  return out as Partial<Limits>;
}
