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

/**
 * A pin of a reference (`$node[axis=label]`, `$node[seed=+1]`): which
 * variant of the referenced node to read. `label` fixes the axis to a value;
 * `shift` takes the value that many places after (or before) this
 * variant's own value in the axis's order, wrapping around.
 */
export interface Pin {
  /** The axis. */
  readonly axis: string;
  /** A fixed value (its label). */
  readonly label?: string;
  /** A relative position in the axis's order. */
  readonly shift?: number;
}

/** `$node.a.b` resolved to a plain (pre-matrix) node id and a field path. */
export class NodeRef {
  /** Creates the reference. */
  constructor(
    readonly node: string,
    readonly path: FieldPath,
    readonly raw: string,
    readonly pins: readonly Pin[] = [],
  ) {}
}
/**
 * `$matrix.AXIS.a.b`: the current variant's value of an axis. Where that
 * value holds references (strings starting with `$`), `embedded` has them
 * parsed, per value label, in the scope of the node that reads it.
 */
export class MatrixRef {
  /** Creates the reference. */
  constructor(
    readonly axis: string,
    readonly path: FieldPath,
    readonly raw: string,
    readonly at: readonly (string | number)[],
    readonly embedded: ReadonlyMap<string, Template> = new Map(),
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

/** A pin as written: `axis=label` or `axis=+k` / `axis=-k`. */
export interface PinText {
  /** The axis name. */
  readonly axis: string;
  /** The value as written. */
  readonly value: string;
}

/**
 * The segments of a reference string and its pins (`$a.b[axis=value,...]`),
 * or a string explaining why it is not a reference.
 */
export function parseReference(
  s: string,
): { segments: string[]; pins: PinText[] } | { error: string } {
  let body = s.slice(1);
  const pins: PinText[] = [];
  const bracket = body.indexOf("[");
  if (bracket >= 0) {
    const inner = /^\[([^\[\]]*)\]$/.exec(body.slice(bracket));
    const items = inner ? inner[1]!.split(",").map((x) => x.trim()) : [];
    const parsed = items.map((x) =>
      /^([A-Za-z0-9_-]+)=([A-Za-z0-9_.+-]+)$/.exec(x)
    );
    if (!inner || parsed.length === 0 || parsed.some((m) => m === null)) {
      return {
        error:
          `"${s}" has malformed pins: write $node[axis=value] or $node[axis=+1] (comma-separated, at the end)`,
      };
    }
    for (const m of parsed) pins.push({ axis: m![1]!, value: m![2]! });
    body = body.slice(0, bracket);
  }
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
  return { segments, pins };
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
