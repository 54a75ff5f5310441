/**
 * YAML source with positions: every value of the document can be located
 * (file:line:col) by its path.
 *
 * @module
 */
import {
  Composer,
  type CST,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  Parser,
  visit,
  YAMLParseError,
} from "yaml";
import type { Document, Node as YamlNode } from "yaml";
import {
  type Diagnostic,
  type DiagnosticCode,
  ExperimentError,
  ExperimentSyntaxError,
} from "../errors.ts";
import { DEFAULT_LIMITS, type Limits, raiseHint } from "../limits.ts";

/** A path inside the document: object keys and array indices. */
export type DocPath = readonly (string | number)[];

/** A loaded YAML document that can locate its values. */
export class Source {
  /** File name as given (used in messages). */
  readonly file: string;
  /** The plain JavaScript value of the document. */
  readonly data: unknown;
  #doc: Document.Parsed;
  #lines: LineCounter;
  #mapped: _MappedPath[] = [];

  /**
   * Parses `text`; throws {@linkcode ExperimentSyntaxError} listing every
   * syntax error (duplicate keys included), or {@linkcode ExperimentError}
   * listing every value JSON cannot carry exactly (NaN, infinities, -0,
   * integers beyond 2^53), every `__proto__` key, and every limit exceeded
   * (size, depth, string length, alias expansion: see `limits.ts`), each
   * at its file:line:col. Nesting depth is checked on the token tree before
   * the document is composed, so a deeply nested file is refused at a
   * stable position instead of overflowing the parser's stack.
   */
  constructor(file: string, text: string, limits: Limits = DEFAULT_LIMITS) {
    this.file = file;
    this.#lines = new LineCounter();
    if (text.length > limits.fileBytes) {
      throw new ExperimentError([
        this.#at(0, "limit", tooLargeMessage(text.length, limits)),
      ]);
    }
    const tokens = [...new Parser(this.#lines.addNewLine).parse(text)];
    const deep = _tooDeep(tokens, limits.depth);
    if (deep !== null) {
      throw new ExperimentError([
        this.#at(
          deep,
          "limit",
          `nested deeper than ${limits.depth} levels of mappings and lists; ${
            raiseHint("depth")
          }`,
        ),
      ]);
    }
    // Duplicate keys are found below in one pass: the parser's own check
    // (uniqueKeys) is quadratic in the size of a mapping.
    this.#doc = _compose(tokens, text.length);
    const diags: Diagnostic[] = this.#doc.errors.map((e) => {
      const first = e.message.split("\n")[0] ?? e.message;
      return this.#at(
        e.pos[0],
        "yaml",
        first.replace(/ at line \d+, column \d+.*$/, ""),
      );
    });
    const { values, firstAlias } = this.#scan(diags, limits);
    if (diags.length > 0) {
      diags.push(...values);
      diags.sort((a, b) => a.line - b.line || a.col - b.col);
      throw new ExperimentSyntaxError(diags);
    }
    if (values.length > 0) throw new ExperimentError(values);
    this.data = this.#toData(firstAlias, limits);
  }

  /**
   * One pass over the composed document: repeated keys (into `diags`),
   * `__proto__` keys and scalars JSON cannot carry exactly (returned as
   * `values`), and where the first alias is.
   */
  #scan(
    diags: Diagnostic[],
    limits: Limits,
  ): { values: Diagnostic[]; firstAlias: number | null } {
    const values: Diagnostic[] = [];
    let firstAlias: number | null = null;
    visit(this.#doc, {
      Map: (_, map) => {
        const seen = new Set<string>();
        for (const pair of map.items) {
          if (!isScalar(pair.key)) continue;
          const k = String(pair.key.value);
          if (k === "<<") continue;
          const offset = pair.key.range?.[0] ?? 0;
          if (seen.has(k)) {
            diags.push(
              this.#at(
                offset,
                "yaml",
                `Map keys must be unique; "${k}" is repeated`,
              ),
            );
          }
          if (k === "__proto__") {
            values.push(this.#at(offset, "value", _PROTO_MESSAGE));
          }
          seen.add(k);
        }
      },
      Scalar: (_, node) => {
        const problem = scalarProblem(node.value, node.source, limits);
        if (problem !== null) {
          values.push(
            this.#at(
              node.range?.[0] ?? 0,
              problem.startsWith("a string") ? "limit" : "value",
              problem,
            ),
          );
        }
      },
      Alias: (_, node) => {
        firstAlias ??= node.range?.[0] ?? 0;
      },
    });
    return { values, firstAlias };
  }

  /** The document as plain data, with aliases expanded within the limits. */
  #toData(firstAlias: number | null, limits: Limits): unknown {
    let data: unknown;
    try {
      data = this.#doc.toJS({ maxAliasCount: limits.yamlAliases });
    } catch (e) {
      const message = (e as Error)?.message ?? String(e);
      throw new ExperimentError([
        this.#at(
          firstAlias ?? 0,
          /Excessive alias count/.test(message) ? "limit" : "yaml",
          /Excessive alias count/.test(message)
            ? `YAML aliases (*name) are expanded more than ${limits.yamlAliases} times (an alias bomb?); ${
              raiseHint("yamlAliases")
            }`
            : message,
        ),
      ]);
    }
    const shape = expandedShape(data, limits);
    if (shape !== null) {
      throw new ExperimentError([
        this.#at(
          firstAlias ?? 0,
          "limit",
          shape === "depth"
            ? `nested deeper than ${limits.depth} levels once YAML aliases are expanded; ${
              raiseHint("depth")
            }`
            : `more than ${limits.yamlValues} values once YAML aliases are expanded; ${
              raiseHint("yamlValues")
            }`,
        ),
      ]);
    }
    return data;
  }

  /** A diagnostic at a character offset (no document path). */
  #at(offset: number, code: DiagnosticCode, message: string): Diagnostic {
    const { line, col } = this.#lines.linePos(offset);
    return {
      code,
      file: this.file,
      line: Math.max(1, line),
      col: Math.max(1, col),
      path: "",
      message,
    };
  }

  /** 1-based line and column of the value (or, with `key`, of the key) at `path`. */
  locate(path: DocPath, key = false): { line: number; col: number } {
    let node: unknown = this.#doc.contents;
    let keyNode: unknown = null;
    for (const seg of path) {
      if (isMap(node)) {
        const pair = node.items.find((p) =>
          isPair(p) &&
          (isScalar(p.key)
            ? String(p.key.value) === String(seg)
            : String(p.key) === String(seg))
        );
        if (!pair) break;
        keyNode = pair.key;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === "number") {
        keyNode = null;
        node = node.items[seg];
      } else break;
      if (node === null || node === undefined) {
        node = keyNode;
        break;
      }
    }
    const target = (key && keyNode ? keyNode : node) as YamlNode | null;
    const offset = target?.range?.[0] ?? 0;
    return this.#lines.linePos(offset);
  }

  /**
   * Places the values under `path` elsewhere (a `--set` override replaced
   * them): diagnostics at or below `path` are located by `locate`, given the
   * rest of the path. A later call for the same or a deeper path wins.
   */
  mapPath(
    path: DocPath,
    locate: (sub: DocPath, key: boolean) => {
      file: string;
      line: number;
      col: number;
    },
  ): void {
    this.#mapped.push({ path, locate });
  }

  /** A diagnostic located at `path`. */
  diag(
    code: DiagnosticCode,
    path: DocPath,
    message: string,
    key = false,
  ): Diagnostic {
    let best: _MappedPath | undefined;
    for (const m of this.#mapped) {
      if (
        m.path.length <= path.length &&
        m.path.every((s, i) => String(s) === String(path[i])) &&
        (best === undefined || m.path.length >= best.path.length)
      ) best = m;
    }
    if (best !== undefined) {
      const at = best.locate(path.slice(best.path.length), key);
      return { code, ...at, path: formatPath(path), message };
    }
    const { line, col } = this.locate(path, key);
    return {
      code,
      file: this.file,
      line,
      col,
      path: formatPath(path),
      message,
    };
  }
}

/** Values placed elsewhere (see {@linkcode Source.mapPath}). */
interface _MappedPath {
  readonly path: DocPath;
  readonly locate: (sub: DocPath, key: boolean) => {
    file: string;
    line: number;
    col: number;
  };
}

/** `nodes.train.with.envs[2]` */
export function formatPath(path: DocPath): string {
  let s = "";
  for (const seg of path) {
    if (typeof seg === "number") s += `[${seg}]`;
    else s += s ? `.${seg}` : seg;
  }
  return s;
}

const _PROTO_MESSAGE =
  'a key named "__proto__" cannot be used: JavaScript objects reserve it (it would replace the object\'s prototype instead of adding a key); rename the key';

/** The message of a file over the size limit. */
export function tooLargeMessage(bytes: number, limits: Limits): string {
  const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `the file is ${mb(bytes)}; experiment files are limited to ${
    mb(limits.fileBytes)
  } (is this the right file?); ${raiseHint("fileBytes")}`;
}

/**
 * Why a scalar cannot be carried exactly as JSON (or is over the string
 * limit), or `null`. Parameters travel as JSON (keys, job specs, the `exec`
 * kind's `input.json`), and JSON has no NaN, no infinities and no negative
 * zero, and JavaScript numbers hold integers exactly only up to 2^53: such
 * values would silently become `null`, `0` or another number.
 *
 * @param source The scalar as written (`node.source` of the yaml library).
 */
export function scalarProblem(
  value: unknown,
  source: string | undefined,
  limits: Pick<Limits, "stringLength">,
): string | null {
  if (typeof value === "string") {
    return value.length > limits.stringLength
      ? `a string of ${value.length} characters; strings are limited to ${limits.stringLength} characters; ${
        raiseHint("stringLength")
      }`
      : null;
  }
  if (typeof value !== "number") return null;
  const raw = (source ?? String(value)).trim();
  const quote = `quote it ("${raw}") if you mean the text`;
  if (Number.isNaN(value)) {
    return `${raw} is NaN, which JSON cannot carry (it would become null); write a number, or ${quote}`;
  }
  if (!Number.isFinite(value)) {
    return `${raw} is ${
      value > 0 ? "" : "minus "
    }infinity, which JSON cannot carry (it would become null); write a finite number (e.g. 1e300), or ${quote}`;
  }
  if (Object.is(value, -0)) {
    return `${raw} is negative zero, which JSON carries as 0; write 0`;
  }
  if (
    /^[-+]?(?:0x[0-9a-fA-F]+|0o[0-7]+|[0-9]+)$/.test(raw) &&
    !Number.isSafeInteger(value)
  ) {
    return `the integer ${raw} is beyond 2^53 (9007199254740991), so it would be carried as ${
      JSON.stringify(value)
    }; write it as a string ("${raw}") or use a smaller number`;
  }
  if (value === 0 && /^[-+]?[0-9.]*[1-9]/.test(raw)) {
    return `${raw} is too small for a 64-bit number and would be carried as 0; write 0 or a larger number`;
  }
  return null;
}

/** Composes the document of `tokens` as the yaml library's `parseDocument` does (one document; more are an error). */
function _compose(tokens: CST.Token[], length: number): Document.Parsed {
  const composer = new Composer({ uniqueKeys: false, merge: true });
  let doc: Document.Parsed | null = null;
  for (const d of composer.compose(tokens, true, length)) {
    if (!doc) doc = d;
    else {
      doc.errors.push(
        new YAMLParseError(
          [d.range[0], d.range[1]],
          "MULTIPLE_DOCS",
          "Source contains multiple documents; an experiment file is one document",
        ),
      );
      break;
    }
  }
  return doc!;
}

/** Offset of the first mapping or list of the token tree nested deeper than `limit`, or null (iterative: no recursion). */
function _tooDeep(tokens: readonly CST.Token[], limit: number): number | null {
  const stack: [CST.Token, number][] = [];
  for (const t of tokens) {
    if (t.type === "document" && t.value) stack.push([t.value, 0]);
  }
  let found: number | null = null;
  while (stack.length > 0) {
    const [t, depth] = stack.pop()!;
    if (
      t.type !== "block-map" && t.type !== "block-seq" &&
      t.type !== "flow-collection"
    ) continue;
    const d = depth + 1;
    if (d > limit) {
      if (found === null || t.offset < found) found = t.offset;
      continue;
    }
    for (const item of t.items) {
      if (item.key) stack.push([item.key, d]);
      if (item.value) stack.push([item.value, d]);
    }
  }
  return found;
}

/**
 * `"depth"` or `"values"` when the value (after YAML aliases are expanded)
 * nests deeper than the depth limit or holds more values than the values
 * limit, else null. Shared (aliased) subtrees are measured once, and the
 * recursion stops at the depth limit.
 */
export function expandedShape(
  data: unknown,
  limits: Pick<Limits, "depth" | "yamlValues">,
): "depth" | "values" | null {
  const memo = new Map<object, [height: number, size: number]>();
  const measure = (x: unknown, depth: number): [number, number] => {
    if (x === null || typeof x !== "object") return [0, 1];
    const hit = memo.get(x);
    if (hit) return hit;
    if (depth >= limits.depth) throw _DEPTH;
    let height = 0, size = 1;
    for (const y of Array.isArray(x) ? x : Object.values(x)) {
      const [h, n] = measure(y, depth + 1);
      if (h > height) height = h;
      size += n;
      if (size > limits.yamlValues) throw _VALUES;
    }
    const r: [number, number] = [height + 1, size];
    memo.set(x, r);
    return r;
  };
  try {
    return measure(data, 0)[0] > limits.depth ? "depth" : null;
  } catch (e) {
    if (e === _DEPTH) return "depth";
    if (e === _VALUES) return "values";
    throw e;
  }
}
const _DEPTH = new Error("depth");
const _VALUES = new Error("values");
