/**
 * Canonical JSON and sha256: the byte-level basis of every key.
 *
 * @module
 */
import { createHash } from "node:crypto";

/** Raised when a value cannot be written as canonical JSON (non-finite number, function, cycle...). */
export class UnhashableError extends TypeError {
  /** Path (dotted) of the offending value inside the hashed object. */
  readonly path: string;
  /** Creates the error. */
  constructor(path: string, what: string) {
    super(`Cannot hash ${what} at ${path || "(root)"}`);
    this.name = "UnhashableError";
    this.path = path;
  }
}

/**
 * Writes `value` as canonical JSON: object keys sorted by code unit, no
 * whitespace, numbers as `JSON.stringify` writes them. Throws
 * {@linkcode UnhashableError} on anything that is not plain JSON.
 *
 * @example
 * ```ts
 * import { canonicalJson } from "./canonical.ts";
 * import assert from "node:assert/strict";
 * assert.equal(canonicalJson({ b: 1, a: [true, null] }), '{"a":[true,null],"b":1}');
 * ```
 */
export function canonicalJson(value: unknown): string {
  return _write(value, "", new Set());
}

function _write(value: unknown, path: string, seen: Set<object>): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) {
        throw new UnhashableError(path, `the number ${value}`);
      }
      return JSON.stringify(value);
    case "string":
      return JSON.stringify(value);
    case "object": {
      if (seen.has(value)) throw new UnhashableError(path, "a cyclic value");
      seen.add(value);
      let out: string;
      if (Array.isArray(value)) {
        out = "[";
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ",";
          out += _write(value[i], `${path}[${i}]`, seen);
        }
        out += "]";
      } else {
        const proto = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null) {
          throw new UnhashableError(
            path,
            `an object of class ${proto?.constructor?.name ?? "?"}`,
          );
        }
        const rec = value as Record<string, unknown>;
        const keys = Object.keys(rec).sort();
        out = "{";
        let first = true;
        for (const k of keys) {
          const v = rec[k];
          if (v === undefined) continue;
          if (!first) out += ",";
          first = false;
          out += JSON.stringify(k) + ":" +
            _write(v, path ? `${path}.${k}` : k, seen);
        }
        out += "}";
      }
      seen.delete(value);
      return out;
    }
    default:
      throw new UnhashableError(path, `a ${typeof value}`);
  }
}

/**
 * sha256 of a string (UTF-8) or bytes, as lowercase hex.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sha256Hex } from "./canonical.ts";
 * assert.equal(
 *   sha256Hex("abc"),
 *   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
 * );
 * assert.equal(sha256Hex(new TextEncoder().encode("abc")), sha256Hex("abc"));
 * ```
 */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * sha256 of the canonical JSON of `value`: equal for values equal as JSON,
 * whatever the order of their keys.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hashJson, sha256Hex } from "./canonical.ts";
 * assert.equal(hashJson({ b: 1, a: [2, 3] }), hashJson({ a: [2, 3], b: 1 }));
 * assert.equal(hashJson({ a: 1 }), sha256Hex('{"a":1}'));
 * assert.notEqual(hashJson({ a: 1 }), hashJson({ a: 2 }));
 * ```
 */
export function hashJson(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
