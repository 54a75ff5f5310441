/**
 * The compact bundle format: the same records as a plain bundle
 * ({@link ./bundle.ts}), stored as columns and compressed with brotli, so a
 * result set of per-instance outcomes and training records is a fraction
 * of its gzip size, and every entry file comes back byte for byte.
 *
 * ```
 * envsmith-compact 2\n <brotli(payload)>
 * payload = JSON line: [records...]\n               (key references packed)
 *           JSON line: [[name, tokens, bytes, form?]...]\n
 *           column texts, in the order named (tokens joined by "\n"; key
 *           references packed, continuing the records line's)
 *           raw bodies (blobs, aux files, entries kept as they are), in record order
 * ```
 *
 * Format 2 stores its columns through the reversible rewrites of
 * {@link ./compact_text.ts} (zipped numeric fields, integer differences,
 * references to 64-hex keys seen before). Format 1, the same without them
 * (one JSON line `{"records":[...], "columns":[[name, tokens, bytes]...]}`),
 * is still read.
 *
 * An entry's JSON is split by path (`evaluate.value.per_instance[].id`): each
 * object contributes its key list (a list seen before in that column: its
 * number) and each array its length to the column of its path, each scalar its JSON text; object keys that are not
 * plain names (hashes, file paths) share one path (`.*`). Decoding walks
 * the same paths and writes the JSON text back; the entry's header line is
 * derived from it. Encoding checks that every entry decodes to its exact
 * bytes and keeps any entry that would not (JSON not written by
 * `JSON.stringify`) as raw bytes, so no entry changes. The same records
 * give the same file (columns sorted by name, fixed brotli parameters).
 *
 * @module
 */
import { brotliCompressSync, brotliDecompressSync, constants } from "node:zlib";
import { sha256Hex } from "../canonical.ts";
import { UserError } from "../errors.ts";
import {
  type ColumnForm,
  KeyReferences,
  packColumns,
  unpackColumns,
} from "./compact_text.ts";

/** First line of a compact bundle as written (format 2). */
export const COMPACT_HEADER = "envsmith-compact 2";
/** First line of a format 1 compact bundle (read, no longer written). */
const _COMPACT_HEADER_1 = "envsmith-compact 1";

const _ENTRY_HEADER = "envsmith-entry 1";
const _enc = new TextEncoder();
const _dec = new TextDecoder();
const _NAME = /^[A-Za-z_][A-Za-z0-9_]{0,40}$/;

/** Whether `bytes` start like a compact bundle. */
export function isCompactBundle(bytes: Uint8Array): boolean {
  return _version(bytes) !== 0;
}

/** The compact format of `bytes` (1 or 2), or 0 when not compact. */
function _version(bytes: Uint8Array): 0 | 1 | 2 {
  for (
    const [header, v] of [[COMPACT_HEADER, 2], [_COMPACT_HEADER_1, 1]] as const
  ) {
    const head = _enc.encode(header + "\n");
    if (bytes.length < head.length) continue;
    let same = true;
    for (let i = 0; i < head.length && same; i++) same = bytes[i] === head[i];
    if (same) return v;
  }
  return 0;
}

/** One record of a plain bundle, as the compact form lists it. */
type _Rec =
  | ["e", string, 0 | 1, string[]] // entry encoded in columns: key, imported, blobs
  | ["r", string, 0 | 1, number] // entry kept raw: key, imported, size
  | ["b", string, number] // blob: name, size
  | ["a", string, number, string]; // aux: name, size, sha256

class _Columns {
  readonly cols = new Map<string, string[]>();
  /** Per column, the key lists seen: a repeated one is written as its number. */
  readonly #shapes = new Map<string, Map<string, number>>();
  put(col: string, token: string): void {
    let c = this.cols.get(col);
    if (!c) this.cols.set(col, c = []);
    c.push(token);
  }
  encode(col: string, v: unknown): void {
    if (v === null || typeof v !== "object") {
      this.put(col, JSON.stringify(v));
    } else if (Array.isArray(v)) {
      this.put(col, "[" + v.length);
      for (const x of v) this.encode(col + "[]", x);
    } else {
      const keys = Object.keys(v);
      const json = JSON.stringify(keys);
      let shapes = this.#shapes.get(col);
      if (!shapes) this.#shapes.set(col, shapes = new Map());
      const seen = shapes.get(json);
      if (seen === undefined) shapes.set(json, shapes.size);
      this.put(col, "{" + (seen ?? json));
      for (const k of keys) {
        this.encode(
          col + "." + (_NAME.test(k) ? k : "*"),
          (v as Record<string, unknown>)[k],
        );
      }
    }
  }
}

/** One column being read: its text, where the next token starts, its children and the object shapes seen. */
interface _Col {
  readonly name: string;
  readonly text: string;
  at: number;
  readonly children: Map<string, _Col>;
  readonly shapes: { keys: string[]; cols: _Col[] }[];
  /** Every token is a scalar (no array, no object): a run of them is copied whole. */
  readonly scalars: boolean;
}

class _Cursor {
  readonly #cols: Map<string, _Col> = new Map();
  constructor(cols: Map<string, { text: string; at: number }>) {
    for (const [name, c] of cols) {
      this.#cols.set(name, {
        name,
        text: c.text,
        at: c.at,
        children: new Map(),
        shapes: [],
        scalars: !/(?:^|\n)[[{]/.test(c.text),
      });
    }
  }
  #col(name: string): _Col {
    let c = this.#cols.get(name);
    if (!c) {
      // A path no entry has: reading it fails with the column's name.
      c = {
        name,
        text: "",
        at: 1,
        children: new Map(),
        shapes: [],
        scalars: false,
      };
      this.#cols.set(name, c);
    }
    return c;
  }
  #child(c: _Col, suffix: string): _Col {
    let k = c.children.get(suffix);
    if (!k) c.children.set(suffix, k = this.#col(c.name + suffix));
    return k;
  }
  /** The next `n` scalar tokens of `c`, joined by commas. */
  #run(c: _Col, n: number): string {
    let end = c.at - 1;
    for (let i = 0; i < n; i++) {
      end = c.text.indexOf("\n", end + 1);
      if (end < 0) {
        if (i === n - 1 && c.at <= c.text.length) end = c.text.length;
        else throw new RangeError(`column ${c.name} ends early`);
      }
    }
    const out = c.text.slice(c.at, end).replaceAll("\n", ",");
    c.at = end + 1;
    return out;
  }
  /** The JSON text of the next value of column `col`. */
  decode(col: string): string {
    return this.#decode(this.#col(col));
  }
  #decode(c: _Col): string {
    if (c.at > c.text.length) {
      throw new RangeError(`column ${c.name} ends early`);
    }
    let nl = c.text.indexOf("\n", c.at);
    if (nl < 0) nl = c.text.length;
    const t = c.text.slice(c.at, nl);
    c.at = nl + 1;
    const first = t.charCodeAt(0);
    if (first === 91) { // [
      const n = Number(t.slice(1));
      if (n === 0) return "[]";
      const item = this.#child(c, "[]");
      if (item.scalars) return "[" + this.#run(item, n) + "]";
      let out = "[" + this.#decode(item);
      for (let i = 1; i < n; i++) out += "," + this.#decode(item);
      return out + "]";
    }
    if (first === 123) { // {
      let shape;
      if (t.charCodeAt(1) === 91) { // a key list seen here first
        const keys = JSON.parse(t.slice(1)) as string[];
        shape = {
          keys: keys.map((k, i) => (i ? "," : "{") + JSON.stringify(k) + ":"),
          cols: keys.map((k) =>
            this.#child(c, "." + (_NAME.test(k) ? k : "*"))
          ),
        };
        c.shapes.push(shape);
      } else {
        shape = c.shapes[Number(t.slice(1))];
        if (!shape) throw new RangeError(`column ${c.name}: no key list ${t}`);
      }
      if (shape.keys.length === 0) return "{}";
      let out = "";
      for (let i = 0; i < shape.keys.length; i++) {
        out += shape.keys[i]! + this.#decode(shape.cols[i]!);
      }
      return out + "}";
    }
    return t;
  }
}

/** The entry file of this JSON text: the header line the store writes, then the text. */
function _entryFile(json: string, blobs: readonly string[]): Uint8Array {
  const body = _enc.encode(json);
  const head = _enc.encode(
    `${_ENTRY_HEADER} ${sha256Hex(body)}${
      blobs.length ? " " + blobs.join(" ") : ""
    }\n`,
  );
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}

function _equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A plain bundle's records, parsed from its uncompressed bytes. */
function* _plainRecords(
  plain: Uint8Array,
): Generator<{ head: Record<string, unknown>; body: Uint8Array }> {
  let at = plain.indexOf(10) + 1;
  if (_dec.decode(plain.subarray(0, at - 1)) !== "envsmith-bundle 1") {
    throw new UserError("not an envsmith bundle (first line)");
  }
  for (;;) {
    const nl = plain.indexOf(10, at);
    if (nl < 0) throw new UserError("truncated bundle (no end record)");
    const head = JSON.parse(_dec.decode(plain.subarray(at, nl)));
    if (head.type === "end") return;
    const body = plain.subarray(nl + 1, nl + 1 + head.size);
    at = nl + 1 + head.size + 1;
    yield { head, body };
  }
}

/** Options of {@linkcode encodeCompact}. */
export interface CompactOptions {
  /** Brotli quality, 0-11 (10 is 19 % smaller than 9 on the shipped bundle, at twice the time). @default 10 */
  readonly quality?: number;
}

/**
 * The compact form of a plain (uncompressed) bundle's bytes. Every entry
 * is checked to decode to its exact bytes; one that would not is kept raw.
 *
 * @example
 * ```ts
 * import { decodeCompact, encodeCompact } from "./compact_bundle.ts";
 * const plain = new TextEncoder().encode(
 *   'envsmith-bundle 1\n{"type":"end","count":0}\n',
 * );
 * const back = [...decodeCompact(encodeCompact(plain), 1 << 20)];
 * const text = back.map((b) => new TextDecoder().decode(b)).join("");
 * if (text !== new TextDecoder().decode(plain)) throw new Error("not exact");
 * ```
 */
export function encodeCompact(
  plain: Uint8Array,
  options: CompactOptions = {},
): Uint8Array {
  const records: _Rec[] = [];
  const raw: Uint8Array[] = [];
  const columns = new _Columns();
  for (const { head, body } of _plainRecords(plain)) {
    const name = String(head.name);
    const imported = head.imported === true ? 1 : 0;
    if (head.type === "entry") {
      const nl = body.indexOf(10);
      const json = _dec.decode(body.subarray(nl + 1));
      let entry: { kind?: unknown; blobs?: unknown } | null = null;
      try {
        entry = JSON.parse(json);
      } catch { /* kept raw */ }
      const kind = typeof entry?.kind === "string" ? entry.kind : "";
      const blobs = Array.isArray(entry?.blobs) ? entry.blobs as string[] : [];
      let ok = entry !== null && typeof entry === "object" &&
        !Array.isArray(entry);
      if (ok) {
        // The entry must come back exactly: check it on its own columns.
        const own = new _Columns();
        own.encode(kind, entry);
        const cursor = new _Cursor(
          new Map(
            [...own.cols].map(([k, v]) => [k, { text: v.join("\n"), at: 0 }]),
          ),
        );
        let back: string | null = null;
        try {
          back = cursor.decode(kind);
        } catch { /* kept raw */ }
        ok = back !== null && _equal(_entryFile(back, blobs), body);
      }
      if (ok) {
        records.push(["e", name, imported, blobs]);
        columns.put("\0kind", JSON.stringify(kind));
        columns.encode(kind, entry);
      } else {
        records.push(["r", name, imported, body.length]);
        raw.push(body);
      }
    } else if (head.type === "blob") {
      records.push(["b", name, body.length]);
      raw.push(body);
    } else {
      records.push(["a", name, body.length, String(head.sha256)]);
      raw.push(body);
    }
  }
  const payload = _payload(records, columns.cols, raw);
  const packed = brotliCompressSync(payload, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: options.quality ?? 10,
      [constants.BROTLI_PARAM_LGWIN]: 24,
      [constants.BROTLI_PARAM_SIZE_HINT]: payload.length,
    },
  });
  const head = _enc.encode(COMPACT_HEADER + "\n");
  const out = new Uint8Array(head.length + packed.length);
  out.set(head);
  out.set(packed, head.length);
  return out;
}

/**
 * Format 2's payload: the records line and the column texts with key
 * references packed, the column list, then the raw bodies. Checked to
 * unpack to the same records and columns (an error here is a bug).
 */
function _payload(
  records: readonly _Rec[],
  cols: ReadonlyMap<string, readonly string[]>,
  raw: readonly Uint8Array[],
): Uint8Array {
  const refs = new KeyReferences();
  const recordsLine = refs.pack(JSON.stringify(records));
  const packed = packColumns(cols);
  const texts = packed.map((c) => _enc.encode(refs.pack(c.tokens.join("\n"))));
  const list = JSON.stringify(
    packed.map((c, i) => [
      c.name,
      c.tokens.length,
      texts[i]!.length,
      ...(c.form.length ? [c.form] : []),
    ]),
  );
  const parts = [
    _enc.encode(recordsLine + "\n" + list + "\n"),
    ...texts,
    ...raw,
  ];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  const back = _readPayload(out, 2);
  const same = JSON.stringify(back.records) === JSON.stringify(records) &&
    back.cols.size === cols.size &&
    [...cols].every(([name, tokens]) =>
      back.cols.get(name)?.text === tokens.join("\n")
    );
  if (!same) throw new Error("compact bundle: columns do not unpack exactly");
  return out;
}

/** A payload's records, column texts and where its raw bodies start. */
function _readPayload(
  payload: Uint8Array,
  version: 1 | 2,
): {
  records: _Rec[];
  cols: Map<string, { text: string; at: number }>;
  at: number;
} {
  const cols = new Map<string, { text: string; at: number }>();
  let nl = payload.indexOf(10);
  if (version === 1) {
    const meta = JSON.parse(_dec.decode(payload.subarray(0, nl))) as {
      records: _Rec[];
      columns: [string, number, number][];
    };
    let at = nl + 1;
    for (const [name, , bytes] of meta.columns) {
      cols.set(name, {
        text: _dec.decode(payload.subarray(at, at + bytes)),
        at: 0,
      });
      at += bytes;
    }
    return { records: meta.records, cols, at };
  }
  const refs = new KeyReferences();
  const records = JSON.parse(
    refs.unpack(_dec.decode(payload.subarray(0, nl))),
  ) as _Rec[];
  const start = nl + 1;
  nl = payload.indexOf(10, start);
  const list = JSON.parse(_dec.decode(payload.subarray(start, nl))) as [
    string,
    number,
    number,
    ColumnForm?,
  ][];
  let at = nl + 1;
  const formed = [];
  for (const [name, , bytes, form] of list) {
    const text = refs.unpack(_dec.decode(payload.subarray(at, at + bytes)));
    at += bytes;
    // Most columns are stored as they are: their text is read as it is.
    if (form) formed.push({ name, form, tokens: text.split("\n") });
    else cols.set(name, { text, at: 0 });
  }
  for (const [name, tokens] of unpackColumns(formed)) {
    cols.set(name, { text: tokens.join("\n"), at: 0 });
  }
  return { records, cols, at };
}

/**
 * The columns of a compact bundle (either format) as format 1 stores them
 * (tokens joined by newlines), its record list and its raw bodies: what
 * `bench/compact_columns.ts` measures.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sha256Hex } from "../canonical.ts";
 * import { compactColumns, encodeCompact } from "./compact_bundle.ts";
 * const json = '{"kind":"x","value":[1,2]}';
 * const body = `envsmith-entry 1 ${sha256Hex(new TextEncoder().encode(json))}\n${json}`;
 * const head = { type: "entry", name: "a".repeat(64), size: body.length, sha256: "0" };
 * const plain = `envsmith-bundle 1\n${JSON.stringify(head)}\n${body}\n` +
 *   '{"type":"end","count":1}\n';
 * const c = compactColumns(encodeCompact(new TextEncoder().encode(plain)), 1 << 20);
 * assert.equal(c.columns.get("x.value[]"), "1\n2");
 * assert.equal(c.records.length, 1);
 * ```
 */
export function compactColumns(
  compact: Uint8Array,
  maxBytes: number,
): { records: unknown[]; columns: Map<string, string>; raw: Uint8Array } {
  const { payload, records, cols, at } = _open(compact, maxBytes);
  return {
    records,
    columns: new Map([...cols].map(([name, c]) => [name, c.text])),
    raw: payload.subarray(at),
  };
}

/** A compact bundle's payload, read: records, columns, start of the raw bodies. */
function _open(compact: Uint8Array, maxBytes: number) {
  const version = _version(compact);
  if (version === 0) {
    throw new UserError("not a compact envsmith bundle (first line)");
  }
  const packed = compact.subarray(
    (version === 2 ? COMPACT_HEADER : _COMPACT_HEADER_1).length + 1,
  );
  let payload: Uint8Array;
  try {
    payload = brotliDecompressSync(packed, { maxOutputLength: maxBytes });
  } catch (e) {
    throw new UserError(
      `not a readable brotli-compressed bundle (${(e as Error).message})`,
    );
  }
  return { payload, ..._readPayload(payload, version) };
}

/**
 * The records of a compact bundle as the chunks of the plain bundle they
 * stand for (header line, then each record's header line, body and line
 * end, then the end record), one record at a time. `maxBytes` bounds the
 * decompressed payload.
 */
export function* decodeCompact(
  compact: Uint8Array,
  maxBytes: number,
): Generator<Uint8Array> {
  const { payload, records, cols, at: rawStart } = _open(compact, maxBytes);
  let at = rawStart;
  const cursor = new _Cursor(cols);
  yield _enc.encode("envsmith-bundle 1\n");
  const nlByte = Uint8Array.of(10);
  for (const rec of records) {
    let type: string, body: Uint8Array, extra: Record<string, unknown> = {};
    if (rec[0] === "e") {
      const kind = JSON.parse(cursor.decode("\0kind")) as string;
      body = _entryFile(cursor.decode(kind), rec[3]);
      type = "entry";
      if (rec[2]) extra = { imported: true };
    } else {
      const size = rec[0] === "a" ? rec[2] : rec[0] === "b" ? rec[2] : rec[3];
      body = payload.subarray(at, at + size);
      at += size;
      type = rec[0] === "r" ? "entry" : rec[0] === "b" ? "blob" : "aux";
      if (rec[0] === "r" && rec[2]) extra = { imported: true };
    }
    const sha = rec[0] === "b"
      ? rec[1]
      : rec[0] === "a"
      ? rec[3]
      : sha256Hex(body);
    yield _enc.encode(
      JSON.stringify({
        type,
        name: rec[1],
        size: body.length,
        sha256: sha,
        ...extra,
      }) +
        "\n",
    );
    yield body;
    yield nlByte;
  }
  yield _enc.encode(
    JSON.stringify({ type: "end", count: records.length }) + "\n",
  );
}
