/**
 * JSON Schema to GBNF (llama.cpp's grammar format), numeric bounds included.
 *
 * llama.cpp's own JSON-schema grammars (and node-llama-cpp's
 * `createGrammarForJsonSchema`) fix the shape of a reply but not its ranges:
 * a random-weight model answered `"agents": -8888888888888888E+888888`
 * through one. The grammar written here spells the ranges out digit by digit,
 * so every number the model can produce lies within `minimum..maximum`
 * (integers exactly; other numbers with at most `decimals` places), every
 * string is at most `maxLength` characters, every array within
 * `minItems..maxItems`: the language is finite, so generation ends.
 *
 * Supported: `type` object (properties in declared order, `required`; no
 * other properties), array (`items`, `minItems`, `maxItems`), string
 * (`enum`, `const`, `maxLength`), integer and number (`minimum`, `maximum`,
 * `exclusiveMinimum`, `exclusiveMaximum` as numbers), boolean, null;
 * `anyOf`/`oneOf`, `enum`, `const`. Anything else throws
 * {@linkcode GbnfSchemaError} naming the path, rather than produce a grammar
 * that allows more than the schema.
 *
 * A schema may come from anyone (the model server turns a request's
 * `json_schema` into a grammar), so its size is bounded while it is read,
 * before any grammar is built ({@linkcode SCHEMA_LIMITS}): subschemas,
 * nesting depth, values of one enum, literal characters, decimal places and
 * magnitude of numeric bounds, string lengths and item counts, and the
 * grammar's own size. Over a limit throws {@linkcode SchemaLimitError}
 * naming it.
 *
 * @example
 * ```ts
 * import { jsonSchemaToGbnf } from "./gbnf.ts";
 * import assert from "node:assert/strict";
 * const g = jsonSchemaToGbnf({
 *   type: "object",
 *   properties: { n: { type: "integer", minimum: 2, maximum: 64 } },
 *   required: ["n"],
 * });
 * assert.match(g, /^root ::= /m);
 * assert.match(g, /\[2-9\]/); // 2..9
 * ```
 *
 * @module
 */

/** A JSON Schema, as far as this converter reads it. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number | boolean;
  exclusiveMaximum?: number | boolean;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  [key: string]: unknown;
}

/** Options of {@linkcode jsonSchemaToGbnf}. */
export interface GbnfOptions {
  /**
   * Decimal places allowed in a non-integer number (more when a bound needs
   * them, e.g. 6 for a minimum of 0.000001).
   * @default {3}
   */
  decimals?: number;
  /**
   * Length limit of strings without `maxLength` (keeps the language finite).
   * @default {200}
   */
  maxStringLength?: number;
  /**
   * Length limit of arrays without `maxItems`.
   * @default {16}
   */
  maxItems?: number;
  /** Limits on the schema, over {@linkcode SCHEMA_LIMITS}. */
  limits?: Partial<SchemaLimits>;
}

/** Bounds on a schema, checked while it is read, before a grammar is built. */
export interface SchemaLimits {
  /** Subschemas (every schema object, alternatives and items included). */
  readonly nodes: number;
  /** Nesting depth of subschemas. */
  readonly depth: number;
  /** Values of one `enum`, alternatives of one `anyOf`/`oneOf` or `type` list, properties of one object. */
  readonly enumValues: number;
  /** Characters of every `enum`/`const` value and property name, together. */
  readonly literalChars: number;
  /** Decimal places a numeric bound may need (`minimum: 1e-300` needs 300). */
  readonly decimals: number;
  /** Magnitude of a numeric bound. */
  readonly magnitude: number;
  /** `minLength`/`maxLength` of a string (llama.cpp refuses a repetition past 2,000 symbols). */
  readonly stringLength: number;
  /** `minItems`/`maxItems` of an array (each item repeats 3 symbols: 500 stays within llama.cpp's 2,000). */
  readonly items: number;
  /** String lengths and item counts of every string and array, together (llama.cpp expands each repetition). */
  readonly repeats: number;
  /** Characters of the grammar written. */
  readonly grammarChars: number;
}

/**
 * The default schema limits: far above the shapes of real reply schemas
 * (envsmith's engineer reply: 47 subschemas, 9 deep, enums of 2, bounds
 * with 3 decimals, an 8 KB grammar), and low enough that the worst schema
 * they admit is turned into a grammar in milliseconds.
 */
export const SCHEMA_LIMITS: Readonly<SchemaLimits> = Object.freeze({
  nodes: 2_000,
  depth: 32,
  enumValues: 1_000,
  literalChars: 65_536,
  decimals: 6,
  magnitude: 1e15,
  stringLength: 1_000,
  items: 500,
  repeats: 50_000,
  grammarChars: 1 << 20,
});

/** The name of each limit in messages (`schema-depth`). */
export const SCHEMA_LIMIT_NAMES: Readonly<Record<keyof SchemaLimits, string>> =
  Object.freeze({
    nodes: "schema-nodes",
    depth: "schema-depth",
    enumValues: "schema-enum",
    literalChars: "schema-literal-chars",
    decimals: "schema-decimals",
    magnitude: "schema-magnitude",
    stringLength: "schema-string-length",
    items: "schema-items",
    repeats: "schema-repeats",
    grammarChars: "schema-grammar-chars",
  });

/** A schema construct the converter cannot express exactly. */
export class GbnfSchemaError extends TypeError {
  /** JSON path of the construct, e.g. `properties.config.anyOf.0`. */
  readonly path: string;
  /** Build the error. */
  constructor(message: string, path: string) {
    super(`${message} (at ${path || "the root"})`);
    this.name = "GbnfSchemaError";
    this.path = path;
  }
}

/** A schema over one of the {@linkcode SchemaLimits}. */
export class SchemaLimitError extends GbnfSchemaError {
  /** Which limit, e.g. `depth`. */
  readonly limit: keyof SchemaLimits;
  /** Its value. */
  readonly max: number;
  /** Build the error: `message`, then the limit's name and value. */
  constructor(
    message: string,
    path: string,
    limit: keyof SchemaLimits,
    max: number,
  ) {
    super(`${message}; the limit ${SCHEMA_LIMIT_NAMES[limit]} is ${max}`, path);
    this.name = "SchemaLimitError";
    this.limit = limit;
    this.max = max;
  }
}

const _IGNORED = new Set([
  "$schema",
  "$id",
  "title",
  "description",
  "additionalProperties",
  "default",
  "examples",
  "$comment",
]);

/** A GBNF literal for a text. */
export function gbnfLiteral(text: string): string {
  return `"${
    text.replace(/[\\"]/g, (c) => "\\" + c).replace(/\n/g, "\\n").replace(
      /\r/g,
      "\\r",
    ).replace(/\t/g, "\\t")
  }"`;
}

function _cls(a: number, b: number): string {
  return a === b ? `"${a}"` : `[${a}-${b}]`;
}

/**
 * Digit-class sequences matching exactly the decimal strings of length
 * `a.length` from `a` to `b` (equal lengths, leading zeros included).
 */
function _digitRange(a: string, b: string): string[][] {
  if (a.length === 0) return [[]];
  const rest = a.length - 1;
  const a0 = Number(a[0]), b0 = Number(b[0]);
  const aRest = a.slice(1), bRest = b.slice(1);
  if (a0 === b0) return _digitRange(aRest, bRest).map((s) => [`"${a0}"`, ...s]);
  const any = new Array<string>(rest).fill("[0-9]");
  const out: string[][] = [];
  let lo = a0, hi = b0;
  if (!/^0*$/.test(aRest)) {
    out.push(
      ..._digitRange(aRest, "9".repeat(rest)).map((s) => [`"${a0}"`, ...s]),
    );
    lo = a0 + 1;
  }
  const upper: string[][] = [];
  if (!/^9*$/.test(bRest)) {
    upper.push(
      ..._digitRange("0".repeat(rest), bRest).map((s) => [`"${b0}"`, ...s]),
    );
    hi = b0 - 1;
  }
  if (lo <= hi) out.push([_cls(lo, hi), ...any]);
  out.push(...upper);
  return out;
}

/**
 * GBNF alternatives for the non-negative numbers `lo / 10^k .. hi / 10^k`
 * written with exactly `k` decimals (integer part without leading zeros).
 */
function _scaledRange(lo: bigint, hi: bigint, k: number): string[] {
  const out: string[] = [];
  if (lo > hi) return out;
  const maxLen = Math.max(hi.toString().length, k + 1);
  for (let len = k + 1; len <= maxLen; len++) {
    const first = len === k + 1 ? 0n : 10n ** BigInt(len - 1);
    const last = 10n ** BigInt(len) - 1n;
    const a = lo > first ? lo : first;
    const b = hi < last ? hi : last;
    if (a > b) continue;
    const as = a.toString().padStart(len, "0");
    const bs = b.toString().padStart(len, "0");
    for (const seq of _digitRange(as, bs)) {
      const s = [...seq];
      if (k > 0) s.splice(len - k, 0, `"."`);
      out.push(s.join(" "));
    }
  }
  return out;
}

function _snap(x: number, round: (x: number) => number): number {
  const r = Math.round(x);
  return Math.abs(x - r) <= 1e-9 * Math.max(1, Math.abs(x)) ? r : round(x);
}

function _decimalsOf(x: number): number {
  if (Number.isInteger(x)) return 0;
  const s = x.toString();
  const m = /e-(\d+)$/.exec(s);
  if (m) {
    const mant = s.split("e")[0]!;
    return Number(m[1]) + (mant.split(".")[1]?.length ?? 0);
  }
  return s.split(".")[1]?.length ?? 0;
}

/**
 * GBNF alternatives for the numbers in `[min, max]` with at most `decimals`
 * places (`integer`: no decimal point). Bounds are inclusive.
 *
 * @example
 * ```ts
 * import { numberRangeGbnf } from "./gbnf.ts";
 * import assert from "node:assert/strict";
 * assert.equal(numberRangeGbnf(0, 12, { integer: true }), '[0-9] | "1" [0-2]');
 * ```
 */
export function numberRangeGbnf(
  min: number,
  max: number,
  options: { integer?: boolean; decimals?: number } = {},
): string {
  if (!Number.isFinite(min) || !Number.isFinite(max) || min > max) {
    throw new RangeError(`cannot write the range ${min}..${max}`);
  }
  const alts: string[] = [];
  const ks = options.integer
    ? [0]
    : Array.from({ length: (options.decimals ?? 3) + 1 }, (_, i) => i);
  for (const k of ks) {
    const scale = 10 ** k;
    // The smallest/largest k-decimal numbers inside [min, max] (a product
    // within rounding error of an integer is that integer: 0.6 * 10).
    const lo = _snap(min * scale, Math.ceil);
    const hi = _snap(max * scale, Math.floor);
    if (lo > hi) continue;
    // k > 0 repeats numbers of fewer places with trailing zeros: harmless
    // (e.g. "0.50"), and it keeps each alternative a plain digit pattern.
    if (hi >= 0) {
      for (const a of _scaledRange(BigInt(Math.max(lo, 0)), BigInt(hi), k)) {
        alts.push(a);
      }
    }
    if (lo < 0) {
      const nlo = BigInt(Math.max(-hi, 1)), nhi = BigInt(-lo);
      for (const a of _scaledRange(nlo, nhi, k)) alts.push(`"-" ${a}`);
    }
  }
  return [...new Set(alts)].join(" | ");
}

/**
 * The GBNF grammar of the JSON texts valid under `schema` (root rule
 * `root`), compact: at most one space between tokens.
 *
 * @throws {SchemaLimitError} for a schema over one of the limits (checked
 * while it is read, before the grammar grows past them).
 * @throws {GbnfSchemaError} for constructs it cannot express exactly, and
 * for keywords of the wrong type (`enum: "a"`, `minItems: -1`).
 */
export function jsonSchemaToGbnf(
  schema: JsonSchema,
  options: GbnfOptions = {},
): string {
  const limits: SchemaLimits = { ...SCHEMA_LIMITS, ...options.limits };
  const rules = new Map<string, string>();
  const byBody = new Map<string, string>();
  const decimals = options.decimals ?? 3;
  const maxString = options.maxStringLength ?? 200;
  const maxItems = options.maxItems ?? 16;
  let nodes = 0, literalChars = 0, repeats = 0, grammarChars = 0;
  const over = (
    limit: keyof SchemaLimits,
    value: number,
    what: string,
    path: string,
  ): void => {
    if (value > limits[limit]) {
      throw new SchemaLimitError(what, path, limit, limits[limit]);
    }
  };
  const rule = (hint: string, body: string): string => {
    const known = byBody.get(body);
    if (known !== undefined) return known;
    let name = hint.toLowerCase().replace(/[^a-z0-9]+/g, "-").slice(0, 200)
      .replace(/^-+|-+$/g, "") || "r";
    if (rules.has(name) || name === "root" || name === "ws") {
      let i = 2;
      while (rules.has(`${name}-${i}`)) i++;
      name = `${name}-${i}`;
    }
    grammarChars += name.length + body.length + 6;
    over(
      "grammarChars",
      grammarChars,
      `the grammar grows past ${limits.grammarChars} characters`,
      "",
    );
    rules.set(name, body);
    byBody.set(body, name);
    return name;
  };
  const char = rule(
    "char",
    String.raw`[^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})`,
  );
  const repeat = (item: string, min: number, max: number): string =>
    max === min
      ? (min === 0 ? '""' : `${item}{${min}}`)
      : `${item}{${min},${max}}`;
  const literal = (x: unknown, path: string): string => {
    let text: string | undefined;
    try {
      text = JSON.stringify(x);
    } catch { /* a BigInt, a cycle: not JSON */ }
    if (text === undefined) {
      throw new GbnfSchemaError("a value that is not JSON", path);
    }
    literalChars += text.length;
    over(
      "literalChars",
      literalChars,
      `enum and const values and property names add up to more than ${limits.literalChars} characters`,
      path,
    );
    return gbnfLiteral(text);
  };
  /** A count keyword: a non-negative integer within `limit`. */
  const count = (
    s: JsonSchema,
    key: "minItems" | "maxItems" | "minLength" | "maxLength",
    limit: "items" | "stringLength",
    path: string,
  ): number | undefined => {
    const x = s[key];
    if (x === undefined) return undefined;
    if (typeof x !== "number" || !Number.isInteger(x) || x < 0) {
      throw new GbnfSchemaError(
        `${key} must be a non-negative integer (got ${
          JSON.stringify(x)?.slice(0, 40)
        })`,
        path,
      );
    }
    over(limit, x, `${key} ${x} is too large`, path);
    return x;
  };
  /** A length range (items or characters): checked, its top added to the repeats. */
  const lengths = (
    s: JsonSchema,
    keys:
      | readonly ["minItems", "maxItems"]
      | readonly ["minLength", "maxLength"],
    limit: "items" | "stringLength",
    fallback: number,
    path: string,
  ): { min: number; max: number } => {
    const [lo, hi] = keys;
    const min = count(s, lo, limit, path) ?? 0;
    const max = count(s, hi, limit, path) ?? Math.max(min, fallback);
    if (min > max) {
      throw new GbnfSchemaError(`${lo} ${min} is above ${hi} ${max}`, path);
    }
    repeats += max;
    over(
      "repeats",
      repeats,
      `string lengths and item counts add up to more than ${limits.repeats}`,
      path,
    );
    return { min, max };
  };
  /** A numeric bound: a finite number within the magnitude and decimals limits. */
  const bound = (
    s: JsonSchema,
    key: "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum",
    path: string,
  ): number | boolean | undefined => {
    const x = s[key];
    if (x === undefined) return undefined;
    if (typeof x === "boolean" && key.startsWith("exclusive")) return x;
    if (typeof x !== "number" || !Number.isFinite(x)) {
      throw new GbnfSchemaError(
        `${key} must be a finite number (got ${
          JSON.stringify(x)?.slice(0, 40)
        })`,
        path,
      );
    }
    over("magnitude", Math.abs(x), `${key} ${x} is too large`, path);
    over(
      "decimals",
      _decimalsOf(x),
      `${key} ${x} needs ${_decimalsOf(x)} decimal places`,
      path,
    );
    return x;
  };
  const list = (x: unknown, key: string, path: string): unknown[] => {
    if (!Array.isArray(x)) {
      throw new GbnfSchemaError(`${key} must be a list`, path);
    }
    over("enumValues", x.length, `${key} has ${x.length} entries`, path);
    return x;
  };

  const visit = (
    s: JsonSchema,
    path: string,
    hint: string,
    depth: number,
  ): string => {
    if (s === null || typeof s !== "object" || Array.isArray(s)) {
      throw new GbnfSchemaError("a schema must be an object", path);
    }
    over("depth", depth, `the schema nests deeper than ${limits.depth}`, path);
    nodes++;
    over(
      "nodes",
      nodes,
      `the schema has more than ${limits.nodes} subschemas`,
      path,
    );
    for (const key of Object.keys(s)) {
      if (
        !_IGNORED.has(key) &&
        ![
          "type",
          "properties",
          "required",
          "items",
          "minItems",
          "maxItems",
          "minLength",
          "maxLength",
          "minimum",
          "maximum",
          "exclusiveMinimum",
          "exclusiveMaximum",
          "enum",
          "const",
          "anyOf",
          "oneOf",
        ].includes(key)
      ) {
        throw new GbnfSchemaError(
          `the keyword "${key.slice(0, 80)}" is not supported`,
          path,
        );
      }
    }
    if (s.const !== undefined) {
      return rule(hint, literal(s.const, `${path}.const`));
    }
    if (s.enum !== undefined) {
      const values = list(s.enum, "enum", `${path}.enum`);
      if (values.length === 0) {
        throw new GbnfSchemaError("enum must list at least one value", path);
      }
      return rule(
        hint,
        values.map((x, i) => literal(x, `${path}.enum.${i}`)).join(" | "),
      );
    }
    const altsKey = s.anyOf !== undefined ? "anyOf" : "oneOf";
    if (s[altsKey] !== undefined) {
      const alts = list(s[altsKey], altsKey, `${path}.${altsKey}`);
      if (alts.length === 0) {
        throw new GbnfSchemaError(`${altsKey} must not be empty`, path);
      }
      const names = alts.map((a, i) =>
        visit(
          a as JsonSchema,
          `${path}.${altsKey}.${i}`,
          `${hint}-${i}`,
          depth + 1,
        )
      );
      return rule(hint, names.join(" | "));
    }
    const type = s.type;
    if (Array.isArray(type)) {
      list(type, "type", `${path}.type`);
      return rule(
        hint,
        type.map((t, i) => {
          if (typeof t !== "string") {
            throw new GbnfSchemaError("type must name types", `${path}.type`);
          }
          return visit({ ...s, type: t }, path, `${hint}-${i}`, depth + 1);
        }).join(" | "),
      );
    }
    switch (type) {
      case "object": {
        const raw = s.properties === undefined ? {} : s.properties;
        if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
          throw new GbnfSchemaError("properties must be an object", path);
        }
        const props = Object.entries(raw);
        over(
          "enumValues",
          props.length,
          `properties has ${props.length} entries`,
          path,
        );
        const req = s.required === undefined ? [] : s.required;
        if (!Array.isArray(req) || req.some((r) => typeof r !== "string")) {
          throw new GbnfSchemaError(
            "required must be a list of property names",
            path,
          );
        }
        const required = new Set(req);
        const members = props.map(([k, p]) => {
          const value = visit(
            p,
            `${path}.properties.${k.slice(0, 80)}`,
            `${hint}-${k}`,
            depth + 1,
          );
          return `${literal(k, path)} ws ":" ws ${value}`;
        });
        // Rule r(i, c): members i.. in order, optional ones may be absent;
        // `c` says whether a member was already written (so a comma comes
        // first). One rule per (i, c), each computed once: linear in the
        // number of members.
        const memo = new Map<string, string>();
        const rest = (i: number, comma: boolean): string => {
          if (i === props.length) return "";
          const at = `${i}${comma ? "c" : ""}`;
          const known = memo.get(at);
          if (known !== undefined) return known;
          const here = `${comma ? '"," ws ' : ""}${members[i]}`;
          const next = rest(i + 1, true);
          const withIt = next === "" ? here : `${here} ${next}`;
          let body = withIt;
          if (!required.has(props[i]![0])) {
            const without = rest(i + 1, comma);
            body = `( ${withIt} )${without === "" ? "?" : ` | ${without}`}`;
          }
          const name = rule(`${hint}-m${at}`, body);
          memo.set(at, name);
          return name;
        };
        const inner = rest(0, false);
        const body = `"{" ws ${inner === "" ? "" : inner + " ws "}"}"`;
        return rule(hint, body);
      }
      case "array": {
        if (s.items === undefined) {
          throw new GbnfSchemaError("an array needs `items`", path);
        }
        const item = visit(
          s.items,
          `${path}.items`,
          `${hint}-item`,
          depth + 1,
        );
        const { min, max } = lengths(
          s,
          ["minItems", "maxItems"],
          "items",
          maxItems,
          path,
        );
        const tail = max <= 1
          ? '""'
          : repeat(`("," ws ${item})`, Math.max(min - 1, 0), max - 1);
        const nonEmpty = `${item} ${tail}`;
        const body = min === 0
          ? `"[" ws ( ${nonEmpty} ws )? "]"`
          : `"[" ws ${nonEmpty} ws "]"`;
        return rule(hint, body);
      }
      case "string": {
        const { min, max } = lengths(
          s,
          ["minLength", "maxLength"],
          "stringLength",
          maxString,
          path,
        );
        return rule(hint, `"\\"" ${repeat(char, min, max)} "\\""`);
      }
      case "boolean":
        return rule("boolean", `"true" | "false"`);
      case "null":
        return rule("null", `"null"`);
      case "integer":
      case "number": {
        const integer = type === "integer";
        const lo = bound(s, "minimum", path);
        const hi = bound(s, "maximum", path);
        const xlo = bound(s, "exclusiveMinimum", path);
        const xhi = bound(s, "exclusiveMaximum", path);
        let min = typeof lo === "number" ? lo : -1e9;
        let max = typeof hi === "number" ? hi : 1e9;
        const step = integer ? 1 : 10 ** -Math.max(decimals, 1);
        if (typeof xlo === "number") min = Math.max(min, xlo + step);
        if (typeof xhi === "number") max = Math.min(max, xhi - step);
        if (xlo === true) min += step;
        if (xhi === true) max -= step;
        if (!(min <= max)) {
          throw new GbnfSchemaError(
            `the range ${min}..${max} holds no number`,
            path,
          );
        }
        // (a bound moved by an exclusive step may pick up float noise,
        // 0.1 + 0.2: the places stay within the limit)
        const d = Math.min(
          Math.max(decimals, _decimalsOf(min), _decimalsOf(max)),
          Math.max(decimals, limits.decimals),
        );
        const body = numberRangeGbnf(min, max, { integer, decimals: d });
        if (body === "") {
          throw new GbnfSchemaError(
            `the range ${min}..${max} holds no ${type}`,
            path,
          );
        }
        return rule(hint, body);
      }
      default:
        throw new GbnfSchemaError(
          `a schema without a supported type (${
            JSON.stringify(type)?.slice(0, 80)
          })`,
          path,
        );
    }
  };
  const root = visit(schema, "", "value", 1);
  const lines = [`root ::= ${root}`, `ws ::= " "?`];
  for (const [name, body] of rules) lines.push(`${name} ::= ${body}`);
  return lines.join("\n") + "\n";
}
