/**
 * Command-line overrides of an experiment file: `--set PATH=VALUE`. The value
 * is parsed as YAML (so it is typed exactly as in the file: `60000` is a
 * number, `[1, 2]` a list, `{preset: easy}` a mapping), put into the document
 * at PATH, and the document is then validated as a whole. Every problem of an
 * override is reported at its own file-like position, `--set PATH=VALUE:1:COL`,
 * where COL counts characters of the argument.
 *
 * PATH is dotted: `seed`, `matrix.seed`, `bench.with.per_suite`,
 * `curriculum.each.policy.with.samples`, `tables.0.title` or `tables[0].title`.
 * A first segment that is not a top-level key of the file names a node (a
 * `nodes.` prefix is implied). Where the file holds a list, a value without
 * brackets is a comma-separated list (`--set matrix.seed=1,2`).
 *
 * @module
 */
import {
  type Diagnostic,
  ExperimentError,
  ExperimentSyntaxError,
} from "../errors.ts";
import type { DocPath, Source } from "./source.ts";
import { didYouMean } from "../suggest.ts";

/** One `--set PATH=VALUE` as given. */
export interface Override {
  /** The argument as written (`PATH=VALUE`), also the "file" of its diagnostics. */
  readonly text: string;
  /** Its document path (with `nodes` prepended when implied). */
  readonly path: DocPath;
  /** The column (1-based) where each written path segment starts, in `text`. */
  readonly segmentCols: readonly number[];
  /** Whether `nodes` was implied (the written path starts one segment later). */
  readonly implied: boolean;
  /** The value text (after `=`). */
  readonly value: string;
  /** 1-based column of the value in `text`. */
  readonly valueCol: number;
}

/** Longest `PATH=VALUE` shown whole in messages. */
const _LABEL_CHARS = 160;

/**
 * The label of an override in messages: `--set PATH=VALUE`, a long one cut
 * (`--set PATH=[&a [x,x,…] (6,012 characters)`) so a message stays a line.
 */
export function overrideLabel(text: string): string {
  if (text.length <= _LABEL_CHARS) return `--set ${text}`;
  return `--set ${text.slice(0, _LABEL_CHARS - 40)}… (${
    text.length.toLocaleString("en-US")
  } characters)`;
}

/** A diagnostic at column `col` of an override. */
function _at(text: string, col: number, message: string): Diagnostic {
  return {
    code: "structure",
    file: overrideLabel(text),
    line: 1,
    col,
    path: "",
    message,
  };
}

/**
 * Splits `PATH=VALUE` into its written path segments (with their columns)
 * and value.
 *
 * @throws {ExperimentError} when there is no `=` or the path is malformed.
 */
export function parseOverride(
  text: string,
  topKeys: readonly string[],
): Override {
  const eq = text.indexOf("=");
  if (eq <= 0) {
    throw new ExperimentError([
      _at(
        text,
        1,
        `an override is PATH=VALUE (e.g. --set curriculum.each.policy.with.samples=60000); "${text}" has no ${
          eq === 0 ? "path" : "="
        }`,
      ),
    ]);
  }
  const pathText = text.slice(0, eq);
  const segs: (string | number)[] = [];
  const cols: number[] = [];
  const re = /([^.[\]]+)|\[(\d+)\]/y;
  let i = 0;
  while (i < pathText.length) {
    if (pathText[i] === "." && segs.length > 0) i++;
    re.lastIndex = i;
    const m = re.exec(pathText);
    if (!m) {
      throw new ExperimentError([
        _at(
          text,
          i + 1,
          `malformed path "${pathText}": segments are names or list indices, separated by dots (e.g. tables.0.title or tables[0].title)`,
        ),
      ]);
    }
    cols.push(i + 1);
    segs.push(
      m[2] !== undefined
        ? Number(m[2])
        : /^\d+$/.test(m[1]!)
        ? Number(m[1])
        : m[1]!,
    );
    i = re.lastIndex;
  }
  const implied = typeof segs[0] === "string" && !topKeys.includes(segs[0]);
  return {
    text,
    path: implied ? ["nodes", ...segs] : segs,
    segmentCols: cols,
    implied,
    value: text.slice(eq + 1),
    valueCol: eq + 2,
  };
}

/** Column of path segment `i` (of the document path) in the override. */
function _segmentCol(o: Override, i: number): number {
  const written = o.implied ? i - 1 : i;
  return o.segmentCols[Math.max(0, written)] ?? 1;
}

function _isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/**
 * Applies `--set` arguments to a parsed experiment document, in order. Each
 * value is parsed by `parseValue` (YAML with the file's limits); its
 * diagnostics are moved to the override's columns.
 *
 * @returns the problems of the overrides that could not be applied (a path
 * that does not exist, with "did you mean"; a value that is not YAML); the
 * others are applied, so the file's own validation reports theirs too.
 */
export function applyOverrides(
  source: Source,
  texts: readonly string[],
  topKeys: readonly string[],
  parseValue: (label: string, text: string) => Source,
): Diagnostic[] {
  const diags: Diagnostic[] = [];
  for (const text of texts) {
    try {
      _applyOne(source, parseOverride(text, topKeys), topKeys, parseValue);
    } catch (e) {
      if (e instanceof ExperimentError || e instanceof ExperimentSyntaxError) {
        diags.push(...e.diagnostics);
      } else throw e;
    }
  }
  return diags;
}

function _applyOne(
  source: Source,
  o: Override,
  topKeys: readonly string[],
  parseValue: (label: string, text: string) => Source,
): void {
  const path = o.path;
  let container: unknown = source.data;
  for (let i = 0; i < path.length - 1; i++) {
    const seg = path[i]!;
    let next = _child(container, seg);
    // A missing top-level block (`matrix`) or `with` is created empty.
    if (
      next === undefined && _isRecord(container) &&
      ((i === 0 && topKeys.includes(String(seg))) || seg === "with")
    ) {
      next = container[String(seg)] = {};
    }
    if (next === undefined || next === null || typeof next !== "object") {
      throw new ExperimentError([
        _missing(o, i, container, seg, next, topKeys),
      ]);
    }
    container = next;
  }
  const last = path[path.length - 1]!;
  if (Array.isArray(container)) {
    if (typeof last !== "number" || last >= container.length) {
      throw new ExperimentError([
        _missing(o, path.length - 1, container, last, undefined, topKeys),
      ]);
    }
  } else if (!_isRecord(container)) {
    throw new ExperimentError([
      _missing(o, path.length - 1, container, last, undefined, topKeys),
    ]);
  }
  const current = _child(container, last);
  // Where the file holds a list, `a,b` means the list [a, b].
  const isAxis = path.length === 2 && path[0] === "matrix";
  const asList = (Array.isArray(current) || isAxis) &&
    !/^\s*\[/.test(o.value);
  const label = overrideLabel(o.text);
  let parsed: Source;
  const shift = o.valueCol - 1 - (asList ? 1 : 0);
  try {
    parsed = parseValue(label, asList ? `[${o.value}]` : o.value);
  } catch (e) {
    if (e instanceof ExperimentError) {
      throw new ExperimentError(_shift(e.diagnostics, shift));
    }
    if (e instanceof ExperimentSyntaxError) {
      throw new ExperimentSyntaxError(_shift(e.diagnostics, shift));
    }
    throw e;
  }
  if (parsed.data === null && o.value.trim() === "") {
    throw new ExperimentError([
      _at(
        o.text,
        o.valueCol,
        `no value after "="; write one (a value as in YAML: 60000, easy, [1, 2], {preset: easy})`,
      ),
    ]);
  }
  (container as Record<string | number, unknown>)[last] = parsed.data;
  source.mapPath(path, (sub, key) => {
    if (sub.length === 0 && key) {
      return { file: label, line: 1, col: _segmentCol(o, path.length - 1) };
    }
    const { line, col } = parsed.locate(sub, key);
    return { file: label, line, col: line === 1 ? col + shift : col };
  });
}

function _child(container: unknown, seg: string | number): unknown {
  if (Array.isArray(container)) {
    return typeof seg === "number" ? container[seg] : undefined;
  }
  if (_isRecord(container)) {
    return Object.hasOwn(container, String(seg))
      ? container[String(seg)]
      : undefined;
  }
  return undefined;
}

/** The diagnostic of path segment `i` that does not lead anywhere. */
function _missing(
  o: Override,
  i: number,
  container: unknown,
  seg: string | number,
  found: unknown,
  topKeys: readonly string[],
): Diagnostic {
  const col = _segmentCol(o, i);
  const where = i === 0 ? "the file" : o.path.slice(0, i).map(String).join(".");
  if (found !== undefined && found !== null) {
    return _at(
      o.text,
      col,
      `${o.path.slice(0, i + 1).join(".")} is a value (${
        JSON.stringify(found)
      }), not a mapping or list: set it whole (--set ${
        o.path.slice(o.implied ? 1 : 0, i + 1).join(".")
      }=VALUE)`,
    );
  }
  if (Array.isArray(container)) {
    return _at(
      o.text,
      col,
      `${where} is a list of ${container.length}; "${seg}" is not an index of it (0 to ${
        container.length - 1
      })`,
    );
  }
  if (!_isRecord(container)) {
    return _at(o.text, col, `${where} is not a mapping or list`);
  }
  const keys = Object.keys(container);
  const candidates = i === 1 && o.implied ? [...keys, ...topKeys] : keys;
  const what = i === 1 && o.path[0] === "nodes"
    ? "node or top-level key"
    : "key";
  return _at(
    o.text,
    col,
    `no ${what} "${seg}" in ${where}${didYouMean(String(seg), candidates)}${
      keys.length
        ? ` (there: ${keys.slice(0, 12).join(", ")}${
          keys.length > 12 ? ", …" : ""
        })`
        : ""
    }`,
  );
}

function _shift(diags: readonly Diagnostic[], by: number): Diagnostic[] {
  return diags.map((d) => d.line === 1 ? { ...d, col: d.col + by } : d);
}
