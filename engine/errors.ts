/**
 * Errors of experiment files: every one names file:line:col.
 *
 * @module
 */

/** What class of mistake a diagnostic reports (tests and tools match on it). */
export type DiagnosticCode =
  | "yaml"
  | "structure"
  | "unknown-kind"
  | "unknown-param"
  | "invalid-param"
  | "reference"
  | "cycle"
  | "matrix"
  | "stages"
  | "table"
  | "executor"
  | "file"
  | "limit"
  | "value";

/** One problem found in an experiment file. */
export interface Diagnostic {
  /** What class of mistake. */
  readonly code: DiagnosticCode;
  /** File path as given by the user. */
  readonly file: string;
  /** 1-based line. */
  readonly line: number;
  /** 1-based column. */
  readonly col: number;
  /** Location inside the document, e.g. `nodes.train.with.envs`. */
  readonly path: string;
  /** What is wrong and how to fix it (without the location prefix). */
  readonly message: string;
}

/** `file:line:col` of a diagnostic. */
export function formatLocation(
  d: Pick<Diagnostic, "file" | "line" | "col">,
): string {
  return `${d.file}:${d.line}:${d.col}`;
}

/** One line per diagnostic: `message (file:line:col)`. */
export function formatDiagnostic(d: Diagnostic): string {
  return `${formatLocation(d)}: ${d.message}`;
}

/**
 * Every problem of an experiment file, found in one pass. A `SyntaxError`
 * when the YAML itself is malformed, otherwise thrown as this class (a
 * `TypeError`: the document is well-formed but does not type-check).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ExperimentError } from "./errors.ts";
 * const e = new ExperimentError([
 *   { code: "unknown-kind", file: "x.yaml", line: 7, col: 9, path: "nodes.b.kind", message: "unknown kind" },
 *   { code: "unknown-kind", file: "x.yaml", line: 3, col: 9, path: "nodes.a.kind", message: "unknown kind" },
 * ]);
 * assert.ok(e instanceof TypeError);
 * assert.deepEqual(e.diagnostics.map((d) => d.line), [3, 7]); // document order
 * assert.match(e.message, /^2 errors in x\.yaml:/);
 * ```
 */
export class ExperimentError extends TypeError {
  /** All problems, in document order. */
  readonly diagnostics: readonly Diagnostic[];
  /** Creates the error from its diagnostics. */
  constructor(diagnostics: readonly Diagnostic[]) {
    const sorted = [...diagnostics].sort((a, b) =>
      a.file === b.file
        ? a.line - b.line || a.col - b.col
        : a.file < b.file
        ? -1
        : 1
    );
    const n = sorted.length;
    super(
      `${n} error${n === 1 ? "" : "s"} in ${
        sorted[0]?.file ?? "experiment"
      }:\n` +
        sorted.map((d) => "  " + formatDiagnostic(d)).join("\n"),
    );
    this.name = "ExperimentError";
    this.diagnostics = sorted;
  }
}

/**
 * A malformed YAML document (syntax), with its diagnostics.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ExperimentSyntaxError } from "./errors.ts";
 * const e = new ExperimentSyntaxError([{
 *   code: "yaml", file: "x.yaml", line: 2, col: 5, path: "",
 *   message: "unexpected end of flow mapping",
 * }]);
 * assert.ok(e instanceof SyntaxError);
 * assert.equal(e.diagnostics.length, 1);
 * assert.match(e.message, /x\.yaml:2:5/);
 * ```
 */
export class ExperimentSyntaxError extends SyntaxError {
  /** All syntax problems. */
  readonly diagnostics: readonly Diagnostic[];
  /** Creates the error from its diagnostics. */
  constructor(diagnostics: readonly Diagnostic[]) {
    super(
      `YAML syntax error${diagnostics.length === 1 ? "" : "s"}:\n` +
        diagnostics.map((d) => "  " + formatDiagnostic(d)).join("\n"),
    );
    this.name = "ExperimentSyntaxError";
    this.diagnostics = diagnostics;
  }
}

/**
 * A user mistake at the command line or in the cache: printed without a stack trace.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { UserError } from "./errors.ts";
 * const e = new UserError("--jobs must be a positive integer, got 0");
 * assert.ok(e instanceof Error);
 * assert.equal(e.name, "UserError");
 * assert.equal(e.message, "--jobs must be a positive integer, got 0");
 * ```
 */
export class UserError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "UserError";
  }
}

/**
 * A cache entry or blob whose bytes do not match its hash (or cannot be parsed).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CorruptEntryError } from "./errors.ts";
 * const e = new CorruptEntryError("ab12", "/cache/entries/ab12.json", "hash mismatch");
 * assert.ok(e instanceof RangeError);
 * assert.equal(e.key, "ab12");
 * assert.equal(e.file, "/cache/entries/ab12.json");
 * ```
 */
export class CorruptEntryError extends RangeError {
  /** The entry key or blob hash. */
  readonly key: string;
  /** The file that holds the bad bytes. */
  readonly file: string;
  /** Creates the error. */
  constructor(key: string, file: string, why: string) {
    super(
      `Corrupt cache ${
        file.includes("/blobs/") ? "blob" : "entry"
      } ${key} (${file}): ${why}`,
    );
    this.name = "CorruptEntryError";
    this.key = key;
    this.file = file;
  }
}
