/**
 * References inside `with:`: strings that start with `$`. They are data, never
 * code: a reference names a node (and a field path into its value), a matrix
 * axis, the seed, or (inside `stages`) this/previous/earlier stage nodes.
 *
 * @module
 */
import type { Json } from "./types.ts";

/** A field path into a value: object keys or array indices (as strings). */
export type FieldPath = readonly string[];

/** `$node.a.b` resolved to a plain (pre-matrix) node id and a field path. */
export class NodeRef {
  /** Creates the reference. */
  constructor(
    readonly node: string,
    readonly path: FieldPath,
    readonly raw: string,
  ) {}
}
/** `$matrix.AXIS.a.b`: the current variant's value of an axis. */
export class MatrixRef {
  /** Creates the reference. */
  constructor(
    readonly axis: string,
    readonly path: FieldPath,
    readonly raw: string,
    readonly at: readonly (string | number)[],
  ) {}
}
/** `$seed`: the base seed, or the `seed` axis when the matrix has one. */
export class SeedRef {
  /** Creates the reference. */
  constructor(readonly raw: string) {}
}
/** After expansion: a reference to a graph node (by index) and a field path. */
export class InputRef {
  /** Creates the reference. */
  constructor(readonly index: number, readonly path: FieldPath) {}
}

/** A `with:` tree before matrix expansion. */
export type Template =
  | Json
  | NodeRef
  | MatrixRef
  | SeedRef
  | Template[]
  | { [key: string]: Template };

/** A `with:` tree after expansion: only node inputs remain unresolved. */
export type Resolvable = Json | InputRef | Resolvable[] | {
  [key: string]: Resolvable;
};

/** The segments of a reference string, or a string explaining why it is not one. */
export function parseReference(
  s: string,
): { segments: string[] } | { error: string } {
  const body = s.slice(1);
  if (body.length === 0) {
    return {
      error: `"$" alone is not a reference; write "$$" for a literal "$"`,
    };
  }
  const segments = body.split(".");
  for (const seg of segments) {
    if (!/^[A-Za-z0-9_-]+$/.test(seg)) {
      return {
        error:
          `"${s}" is not a valid reference (segments are letters, digits, _ or -, separated by "."); ` +
          `write "$${s}" for a literal string starting with "$"`,
      };
    }
  }
  return { segments };
}

/** Follows a field path into a JSON value; `undefined` when it does not exist. */
export function getField(
  value: Json | undefined,
  path: FieldPath,
): Json | undefined {
  let cur: Json | undefined = value;
  for (const seg of path) {
    if (cur === null || cur === undefined || typeof cur !== "object") {
      return undefined;
    }
    if (Array.isArray(cur)) {
      if (!/^\d+$/.test(seg)) return undefined;
      cur = cur[Number(seg)];
    } else {
      if (!Object.hasOwn(cur, seg)) return undefined;
      cur = cur[seg];
    }
  }
  return cur;
}

/** Replaces every {@linkcode InputRef} of a resolvable tree by a value. */
export function resolveInputs(
  t: Resolvable,
  valueOf: (ref: InputRef) => Json,
): Json {
  if (t instanceof InputRef) return valueOf(t);
  if (t === null || typeof t !== "object") return t;
  if (Array.isArray(t)) return t.map((x) => resolveInputs(x, valueOf));
  const out: { [k: string]: Json } = {};
  for (const [k, x] of Object.entries(t)) out[k] = resolveInputs(x, valueOf);
  return out;
}
