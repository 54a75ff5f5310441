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
}

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
 * @throws {GbnfSchemaError} for constructs it cannot express exactly.
 */
export function jsonSchemaToGbnf(
  schema: JsonSchema,
  options: GbnfOptions = {},
): string {
  const rules = new Map<string, string>();
  const byBody = new Map<string, string>();
  const decimals = options.decimals ?? 3;
  const maxString = options.maxStringLength ?? 200;
  const maxItems = options.maxItems ?? 16;
  const rule = (hint: string, body: string): string => {
    const known = byBody.get(body);
    if (known !== undefined) return known;
    let name = hint.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(
      /^-+|-+$/g,
      "",
    ) || "r";
    if (rules.has(name) || name === "root" || name === "ws") {
      let i = 2;
      while (rules.has(`${name}-${i}`)) i++;
      name = `${name}-${i}`;
    }
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

  const visit = (s: JsonSchema, path: string, hint: string): string => {
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
          `the keyword "${key}" is not supported`,
          path,
        );
      }
    }
    if (s.const !== undefined) {
      return rule(hint, gbnfLiteral(JSON.stringify(s.const)));
    }
    if (s.enum !== undefined) {
      return rule(
        hint,
        s.enum.map((x) => gbnfLiteral(JSON.stringify(x))).join(" | "),
      );
    }
    const alts = s.anyOf ?? s.oneOf;
    if (alts !== undefined) {
      const names = alts.map((a, i) =>
        visit(a, `${path}.${s.anyOf ? "anyOf" : "oneOf"}.${i}`, `${hint}-${i}`)
      );
      return rule(hint, names.join(" | "));
    }
    const type = s.type;
    if (Array.isArray(type)) {
      return rule(
        hint,
        type.map((t, i) => visit({ ...s, type: t }, path, `${hint}-${i}`))
          .join(" | "),
      );
    }
    switch (type) {
      case "object": {
        const props = Object.entries(s.properties ?? {});
        const required = new Set(s.required ?? []);
        const members = props.map(([k, p]) => {
          const value = visit(p, `${path}.properties.${k}`, `${hint}-${k}`);
          return `${gbnfLiteral(JSON.stringify(k))} ws ":" ws ${value}`;
        });
        // Rule r(i, c): members i.. in order, optional ones may be absent;
        // `c` says whether a member was already written (so a comma comes
        // first). One rule per (i, c): linear in the number of members.
        const rest = (i: number, comma: boolean): string => {
          if (i === props.length) return "";
          const here = `${comma ? '"," ws ' : ""}${members[i]}`;
          const next = rest(i + 1, true);
          const withIt = next === "" ? here : `${here} ${next}`;
          const body = required.has(props[i]![0])
            ? withIt
            : `( ${withIt} )${
              rest(i + 1, comma) === "" ? "?" : ` | ${rest(i + 1, comma)}`
            }`;
          return rule(`${hint}-m${i}${comma ? "c" : ""}`, body);
        };
        const inner = rest(0, false);
        const body = `"{" ws ${inner === "" ? "" : inner + " ws "}"}"`;
        return rule(hint, body);
      }
      case "array": {
        if (s.items === undefined) {
          throw new GbnfSchemaError("an array needs `items`", path);
        }
        const item = visit(s.items, `${path}.items`, `${hint}-item`);
        const min = s.minItems ?? 0;
        const max = s.maxItems ?? Math.max(min, maxItems);
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
        const min = s.minLength ?? 0;
        const max = s.maxLength ?? Math.max(min, maxString);
        return rule(hint, `"\\"" ${repeat(char, min, max)} "\\""`);
      }
      case "boolean":
        return rule("boolean", `"true" | "false"`);
      case "null":
        return rule("null", `"null"`);
      case "integer":
      case "number": {
        const integer = type === "integer";
        let min = s.minimum ?? -1e9;
        let max = s.maximum ?? 1e9;
        const step = integer ? 1 : 10 ** -Math.max(decimals, 1);
        if (typeof s.exclusiveMinimum === "number") {
          min = Math.max(min, s.exclusiveMinimum + step);
        }
        if (typeof s.exclusiveMaximum === "number") {
          max = Math.min(max, s.exclusiveMaximum - step);
        }
        if (typeof s.exclusiveMinimum === "boolean" && s.exclusiveMinimum) {
          min += step;
        }
        if (typeof s.exclusiveMaximum === "boolean" && s.exclusiveMaximum) {
          max -= step;
        }
        const d = Math.max(decimals, _decimalsOf(min), _decimalsOf(max));
        return rule(hint, numberRangeGbnf(min, max, { integer, decimals: d }));
      }
      default:
        throw new GbnfSchemaError(
          `a schema without a supported type (${JSON.stringify(type)})`,
          path,
        );
    }
  };
  const root = visit(schema, "", "value");
  const lines = [`root ::= ${root}`, `ws ::= " "?`];
  for (const [name, body] of rules) lines.push(`${name} ::= ${body}`);
  return lines.join("\n") + "\n";
}
