/**
 * Reversible rewrites of a compact bundle's column texts (format 2, see
 * {@link ./compact_bundle.ts}), each chosen for what the shipped results
 * repeat:
 *
 * - **zip**: sibling numeric fields of the objects of one array path with
 *   few distinct values (an instance's `valid`, `success_rate`,
 *   `optimal_makespan`, ...) become one column of tab-joined rows, so a
 *   row's joint values compress as one token;
 * - **delta**: a column of integers becomes its first value and the
 *   differences (counters, sizes, steps), when that is shorter;
 * - **key references**: a 64-hex run (a cache key, a sha256) seen earlier in
 *   the payload becomes `\x02N\x03`, N its index in order of first
 *   occurrence. Column texts are JSON tokens, which escape control
 *   characters, so `\x02` never occurs in them.
 *
 * Each function has its inverse; the encoder checks the round trip.
 *
 * @module
 */

/** How a column of format 2 is stored: plain, as differences, or zipped. */
export type ColumnForm =
  | readonly []
  | readonly ["d"]
  | readonly ["z", readonly string[]];

/** A column as format 2 stores it: name, form and tokens. */
export interface PackedColumn {
  readonly name: string;
  readonly form: ColumnForm;
  readonly tokens: readonly string[];
}

const _INT = /^-?(?:0|[1-9][0-9]*)$/;
const _NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?$/;
/** At most this many distinct values per zipped field. */
const _ZIP_DISTINCT = 16;

/**
 * Groups, per array path `P[]`, its fields `P[].f` (plain names) whose
 * tokens are all JSON numbers with at most 16 distinct values and whose
 * token count is that of `P[]`, into one column `P[]` + tab + the field
 * names joined by commas (column names are JSON paths, which hold no tab);
 * other columns pass through, integer columns as differences when that is
 * shorter. The result is sorted by name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { packColumns, unpackColumns } from "./compact_text.ts";
 * const cols = new Map([
 *   ["k.v.a[]", ["{0", "{0"]],
 *   ["k.v.a[].ok", ["1", "0"]],
 *   ["k.v.a[].n", ["3", "3"]],
 * ]);
 * const packed = packColumns(cols);
 * assert.deepEqual(packed.map((c) => c.name), ["k.v.a[]", "k.v.a[]\tn,ok"]);
 * assert.deepEqual(unpackColumns(packed), cols);
 * ```
 */
export function packColumns(
  cols: ReadonlyMap<string, readonly string[]>,
): PackedColumn[] {
  const zipped = new Map<string, string[]>();
  for (const [name, tokens] of cols) {
    const at = name.lastIndexOf("[].");
    if (at < 0) continue;
    const parent = name.slice(0, at + 2);
    const field = name.slice(at + 3);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(field)) continue;
    if (cols.get(parent)?.length !== tokens.length) continue;
    if (!_fewNumbers(tokens)) continue;
    let fields = zipped.get(parent);
    if (!fields) zipped.set(parent, fields = []);
    fields.push(field);
  }
  const out: PackedColumn[] = [];
  const taken = new Set<string>();
  for (const [parent, fields] of zipped) {
    if (fields.length < 2) continue;
    fields.sort();
    const parts = fields.map((f) => cols.get(parent + "." + f)!);
    const rows = parts[0]!.map((_, i) => parts.map((p) => p[i]).join("\t"));
    out.push({
      name: parent + "\t" + fields.join(","),
      form: ["z", fields],
      tokens: rows,
    });
    for (const f of fields) taken.add(parent + "." + f);
  }
  for (const [name, tokens] of cols) {
    if (taken.has(name)) continue;
    const delta = _delta(tokens);
    out.push(
      delta === null
        ? { name, form: [], tokens }
        : { name, form: ["d"], tokens: delta },
    );
  }
  return out.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/** The columns {@linkcode packColumns} was given (zipped columns split, differences summed). */
export function unpackColumns(
  packed: readonly PackedColumn[],
): Map<string, readonly string[]> {
  const out = new Map<string, readonly string[]>();
  for (const { name, form, tokens } of packed) {
    if (form[0] === "z") {
      const parent = name.slice(0, name.lastIndexOf("\t"));
      const fields = form[1].map(() => [] as string[]);
      for (const row of tokens) {
        const values = row.split("\t");
        if (values.length !== fields.length) {
          throw new RangeError(
            `column ${name}: a row of ${values.length} values`,
          );
        }
        for (let i = 0; i < fields.length; i++) fields[i]!.push(values[i]!);
      }
      form[1].forEach((f, i) => out.set(parent + "." + f, fields[i]!));
    } else if (form[0] === "d") {
      let sum = 0;
      out.set(name, tokens.map((t) => String(sum += Number(t))));
    } else out.set(name, tokens);
  }
  return out;
}

function _fewNumbers(tokens: readonly string[]): boolean {
  const seen = new Set<string>();
  for (const t of tokens) {
    if (!_NUMBER.test(t)) return false;
    seen.add(t);
    if (seen.size > _ZIP_DISTINCT) return false;
  }
  return tokens.length > 0;
}

/** The differences of an integer column, or null when not all integers or not shorter. */
function _delta(tokens: readonly string[]): string[] | null {
  if (tokens.length < 2) return null;
  const out = new Array<string>(tokens.length);
  let prev = 0, before = 0, after = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (!_INT.test(t)) return null;
    const v = Number(t);
    const d = v - prev;
    if (!Number.isSafeInteger(v) || !Number.isSafeInteger(d)) return null;
    out[i] = String(d);
    before += t.length;
    after += out[i]!.length;
    prev = v;
  }
  return after < before ? out : null;
}

const _HEX = /[0-9a-f]{64}/g;
// A reference is delimited by control characters no JSON token holds.
// deno-lint-ignore no-control-regex
const _HEX_OR_REF = /[0-9a-f]{64}|\x02([0-9]+)\x03/g;

/**
 * Key references across the texts of one payload, in payload order: the
 * same instance must pack (or unpack) every text, first to last.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KeyReferences } from "./compact_text.ts";
 * const key = "ab".repeat(32);
 * const pack = new KeyReferences();
 * const a = pack.pack(`x ${key}`), b = pack.pack(`${key}!`);
 * assert.equal(b, "\x020\x03!");
 * const unpack = new KeyReferences();
 * assert.deepEqual([unpack.unpack(a), unpack.unpack(b)], [`x ${key}`, `${key}!`]);
 * ```
 */
export class KeyReferences {
  readonly #index = new Map<string, number>();
  readonly #keys: string[] = [];

  /** `text` with each 64-hex run seen before as its reference. */
  pack(text: string): string {
    return text.replace(_HEX, (h) => {
      const i = this.#index.get(h);
      if (i !== undefined) return `\x02${i}\x03`;
      this.#index.set(h, this.#index.size);
      return h;
    });
  }

  /** The text {@linkcode KeyReferences.pack} was given. */
  unpack(text: string): string {
    return text.replace(_HEX_OR_REF, (m, ref?: string) => {
      if (ref === undefined) {
        this.#keys.push(m);
        return m;
      }
      const key = this.#keys[Number(ref)];
      if (key === undefined) throw new RangeError(`no key number ${ref}`);
      return key;
    });
  }
}
