/**
 * Cache bundles: a self-contained file of cache entries, blobs and aux files
 * that `cache import` adds to another cache, so a result set can be shared and
 * its tables rebuilt offline.
 *
 * Format (binary-safe, streamable, self-checking):
 *
 * ```
 * envsmith-bundle 1\n
 * {"type":"entry","name":KEY,"size":N,"sha256":H}\n <N bytes: the entry file> \n
 * {"type":"blob","name":HASH,"size":N,"sha256":HASH}\n <N bytes> \n
 * {"type":"aux","name":"KIND/relative/path","size":N,"sha256":H}\n <N bytes> \n
 * {"type":"end","count":RECORDS}\n
 * ```
 *
 * An entry record of an entry that was itself imported carries
 * `"imported": true`.
 *
 * Every record is checked before anything is written (its sha256; an
 * entry's own header hash, its key against the hash of its key
 * components; names and paths), so a damaged bundle imports nothing.
 * Existing entries and files are kept (write-once). An imported entry is
 * trusted only as far as it can be checked: its file is intact and its
 * key matches its components, but its value was computed elsewhere. So it
 * is marked imported (`Store.importMark`): `tables` and `status` show it
 * as such, `run` never uses it as a cached result, and a result computed
 * here replaces it. `--trust` (for bundles from your own machines) imports
 * complete entries as if computed here, and the aux files (LLM reply
 * caches, which a computation would replay). A bundle whose file name ends
 * in `.gz` is written gzip-compressed; import recognises compressed bundles
 * by their magic bytes, whatever their name.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { basename, dirname, join, relative, resolve } from "node:path";
import { hashJson, sha256Hex } from "../canonical.ts";
import { CorruptEntryError, UserError } from "../errors.ts";
import { asFileSystemError, FileSystemError, onDisk } from "../fs_errors.ts";
import { processAlive } from "./lock.ts";
import {
  decodeCompact,
  encodeCompact,
  isCompactBundle,
} from "./compact_bundle.ts";
import { writeAtomic } from "./atomic_write.ts";
import { NotRegularFileError, openRegularFile } from "../regular_file.ts";
import {
  type Entry,
  ENTRY_HEADER,
  EXPORT_NOTE,
  MAX_BLOB_BYTES,
  MAX_ENTRY_BYTES,
  type Store,
  tmpName,
  tmpOwner,
} from "./store.ts";

/** First line of a bundle. */
export const BUNDLE_HEADER = "envsmith-bundle 1";

/**
 * The most bytes a bundle may hold uncompressed (4 GiB), the same for
 * export (which refuses to write more) and import (which refuses to read
 * more, so a gzip bomb cannot fill the disk).
 */
export const BUNDLE_MAX_BYTES = 4 * 2 ** 30;

/** The largest aux file a bundle carries (LLM reply caches are small). */
export const MAX_AUX_BYTES = 256 * 2 ** 20;

const _CHUNK = 2 ** 20;

/** Options of {@linkcode exportBundle}. */
export interface ExportOptions {
  /** Entries only (no blobs, no aux files): enough for `tables`. @default false */
  readonly jsonOnly?: boolean;
  /** Only entries whose node id or kind matches one of these (`*` globs). */
  readonly filter?: readonly string[];
  /** Only these keys (e.g. the current keys of an experiment). */
  readonly keys?: ReadonlySet<string>;
  /** Refuse to write more than this many bytes (uncompressed). @default BUNDLE_MAX_BYTES */
  readonly maxBytes?: number;
  /**
   * Entries whose blobs go along even with `jsonOnly` (a chosen few, e.g.
   * the rollouts a report's failure cases are drawn from): see
   * {@linkcode selectBlobKeys}.
   */
  readonly blobsOf?: ReadonlySet<string>;
  /**
   * Write the compact format (columns, brotli; see
   * {@link ./compact_bundle.ts}) instead of the plain one, whatever the
   * file's name. The same records give the same bytes.
   * @default false
   */
  readonly compact?: boolean;
  /**
   * Fields left out of the entries of a kind, each `KIND:field.path`
   * (e.g. `train:value.level_scores`, which only engineers read while
   * running, never `tables` or `report`). Such an entry is rewritten
   * without the field (a new header hash over the new JSON; its key still
   * matches its components) and exported marked imported, so no import,
   * trusted or not, uses it as a cached result.
   */
  readonly omit?: readonly string[];
}

/** `omit` patterns by kind: the field paths to delete. */
function _omissions(omit: readonly string[]): Map<string, string[][]> {
  const out = new Map<string, string[][]>();
  for (const o of omit) {
    const m = /^([^:]+):([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)$/.exec(o);
    if (!m) {
      throw new UserError(
        `--omit ${o}: give KIND:field.path, e.g. train:value.level_scores`,
      );
    }
    const list = out.get(m[1]!) ?? [];
    list.push(m[2]!.split("."));
    out.set(m[1]!, list);
  }
  return out;
}

/** The entry file of `entry` without the omitted fields of its kind, or null when none is present. */
function _omitFields(
  entry: Entry,
  omit: Map<string, string[][]>,
): Uint8Array | null {
  const paths = omit.get(entry.kind);
  if (!paths) return null;
  const copy = structuredClone(entry) as unknown as Record<string, unknown>;
  let cut = false;
  for (const path of paths) {
    let at: unknown = copy;
    for (const k of path.slice(0, -1)) {
      at = at !== null && typeof at === "object" && !Array.isArray(at)
        ? (at as Record<string, unknown>)[k]
        : undefined;
    }
    const last = path[path.length - 1]!;
    if (
      at !== null && typeof at === "object" && !Array.isArray(at) &&
      Object.hasOwn(at, last)
    ) {
      delete (at as Record<string, unknown>)[last];
      cut = true;
    }
  }
  if (!cut) return null;
  const enc = new TextEncoder();
  const body = enc.encode(JSON.stringify(copy));
  const head = enc.encode(
    `${ENTRY_HEADER} ${sha256Hex(body)}${
      entry.blobs.length ? " " + entry.blobs.join(" ") : ""
    }\n`,
  );
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}

/** At most this many bytes of blobs go along with a JSON-only bundle (`--blobs-of`). @default 16 MiB */
export const SELECTED_BLOB_BYTES = 16 * 1024 * 1024;

/**
 * The keys among `candidates` (in order) whose blobs fit, together, within
 * `maxBytes`: the blobs a JSON-only bundle carries for them (`--blobs-of`).
 * A blob shared by several entries counts once. Returns the keys taken and
 * those left out for the bound.
 */
export function selectBlobKeys(
  store: Store,
  candidates: readonly string[],
  maxBytes: number = SELECTED_BLOB_BYTES,
): { keys: Set<string>; left: string[]; bytes: number } {
  const keys = new Set<string>();
  const left: string[] = [];
  const counted = new Set<string>();
  let bytes = 0;
  for (const key of candidates) {
    const entry = store.readEntry(key);
    if (!entry) continue;
    let add = 0;
    for (const b of entry.blobs) {
      if (counted.has(b)) continue;
      try {
        add += Deno.statSync(store.blobPath(b)).size;
      } catch {
        add = Infinity; // not here: cannot go along
      }
    }
    if (bytes + add > maxBytes) {
      left.push(key);
      continue;
    }
    for (const b of entry.blobs) counted.add(b);
    bytes += add;
    keys.add(key);
  }
  return { keys, left, bytes };
}

/** What {@linkcode exportBundle} wrote. */
export interface ExportResult {
  /** Entry records. */
  readonly entries: number;
  /** Blob records. */
  readonly blobs: number;
  /** Aux records. */
  readonly aux: number;
  /** Bytes of the bundle file. */
  readonly bytes: number;
  /** Entries exported without (some of) their blobs: imported results-only here. */
  readonly resultsOnly: number;
  /** Entries computed here whose blobs are missing (exported results-only; `cache verify` finds them). */
  readonly missingBlobs: readonly string[];
  /** Entries exported without the fields of `omit` (marked imported). */
  readonly omitted?: number;
}

// ---------------------------------------------------------------------------
// Which entries a bundle carries.

function _glob(p: string): RegExp {
  return new RegExp(
    "^" +
      p.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(
        ".*",
      ) + "$",
  );
}

/** One entry chosen for a bundle. */
export interface SelectedEntry {
  /** Its key. */
  readonly key: string;
  /** Its entry file's bytes (verified). */
  readonly bytes: Uint8Array;
  /** The parsed entry. */
  readonly entry: Entry;
  /** It was itself imported from a bundle. */
  readonly imported: boolean;
}

/**
 * The entries a bundle carries, in key order: every entry, or those of
 * `keys`, or those whose node id or kind matches `filter`. This is the only
 * place that decides what a bundle holds.
 */
export function* selectEntries(
  store: Store,
  options: Pick<ExportOptions, "filter" | "keys"> = {},
): Generator<SelectedEntry> {
  const filters = options.filter?.map(_glob);
  for (const key of [...store.keys()].sort()) {
    if (options.keys && !options.keys.has(key)) continue;
    const bytes = store.entryBytes(key);
    const entry = store.parseEntry(key, store.entryPath(key), bytes);
    if (
      filters &&
      !filters.some((re) => re.test(entry.id) || re.test(entry.kind))
    ) continue;
    yield { key, bytes, entry, imported: store.importMark(key) !== null };
  }
}

// ---------------------------------------------------------------------------
// Writing.

function* _walk(dir: string): Generator<string> {
  let list: Deno.DirEntry[];
  try {
    list = [...Deno.readDirSync(dir)];
  } catch {
    return;
  }
  for (const e of list.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, e.name);
    if (e.isDirectory) yield* _walk(p);
    else if (e.isFile) yield p;
  }
}

/** Name prefix of the temporary files of exports to `file` (beside it). */
function _exportTmpPrefix(file: string): string {
  return `.${basename(file)}.export`;
}

/** Whether a temporary file name belongs to an export that is over (its process gone, or a day old). */
function _staleExportTmp(path: string): boolean {
  const owner = tmpOwner(basename(path));
  if (owner !== null && owner.host === _HOSTNAME) {
    return owner.pid !== Deno.pid && !processAlive(owner.pid);
  }
  try {
    const st = Deno.lstatSync(path);
    return Date.now() - (st.mtime?.getTime() ?? Date.now()) > 86_400_000;
  } catch {
    return false;
  }
}

const _HOSTNAME = (() => {
  const t = tmpOwner(tmpName("x"));
  return t?.host ?? "";
})();

/** Removes what killed exports to `file` left beside it. */
function _cleanExportLeftovers(file: string): number {
  const dir = dirname(resolve(file));
  const prefix = _exportTmpPrefix(file) + "@";
  let n = 0;
  try {
    for (const e of Deno.readDirSync(dir)) {
      if (!e.name.startsWith(prefix) || !e.isFile) continue;
      const p = join(dir, e.name);
      if (!_staleExportTmp(p)) continue;
      try {
        Deno.removeSync(p);
        n++;
      } catch { /* removed meanwhile */ }
    }
  } catch { /* no directory yet: reported when writing */ }
  return n;
}

/** A sink that counts, optionally gzips, and bounds what it is given. */
class _BundleSink {
  readonly #writer: WritableStreamDefaultWriter<BufferSource>;
  readonly #done: Promise<void>;
  readonly #max: number;
  readonly #file: string;
  written = 0;

  constructor(out: Deno.FsFile, gzip: boolean, max: number, file: string) {
    this.#max = max;
    this.#file = file;
    if (gzip) {
      const cs = new CompressionStream("gzip");
      this.#done = cs.readable.pipeTo(out.writable);
      this.#writer = cs.writable.getWriter();
    } else {
      const ts = new TransformStream<BufferSource, Uint8Array>();
      this.#done = ts.readable.pipeTo(out.writable);
      this.#writer = ts.writable.getWriter();
    }
    this.#done.catch(() => {});
  }
  /** Queues `b`; the caller may reuse `b`'s buffer once this resolves. */
  async write(b: Uint8Array): Promise<void> {
    this.written += b.length;
    if (this.written > this.#max) {
      throw new UserError(
        `${this.#file}: the bundle would hold more than ${this.#max} bytes, the most \`cache import\` accepts; export the cache in parts (cache export --experiment ... / --filter ...)`,
      );
    }
    await this.#writer.ready;
    // A copy: the stream holds the chunk until the file takes it, and the
    // caller reuses its buffer for the next one (a blob over one read chunk
    // was written with its later bytes over its first ones).
    await this.#writer.write(b.slice() as Uint8Array<ArrayBuffer>);
  }
  async close(): Promise<void> {
    await this.#writer.close();
    await this.#done;
  }
  async abort(): Promise<void> {
    try {
      await this.#writer.abort();
    } catch { /* closed */ }
    try {
      await this.#done;
    } catch { /* aborted */ }
  }
}

/** Streams the regular file `path` (at most `max` bytes); returns its sha256. */
async function _streamFile(
  path: string,
  max: number,
  each: ((chunk: Uint8Array) => Promise<void>) | null,
): Promise<{ sha256: string; size: number }> {
  const { file } = openRegularFile(path, max);
  const hash = createHash("sha256");
  let size = 0;
  try {
    const buf = new Uint8Array(_CHUNK);
    for (;;) {
      const n = await file.read(buf);
      if (n === null) break;
      const chunk = buf.subarray(0, n);
      hash.update(chunk);
      size += n;
      if (size > max) {
        throw new NotRegularFileError(path, `larger than ${max} bytes`);
      }
      if (each) await each(chunk);
    }
  } finally {
    file.close();
  }
  return { sha256: hash.digest("hex"), size };
}

/**
 * Writes a bundle of `store` to `file` (gzip-compressed when its name ends
 * in `.gz`), streaming; returns record counts. Entries imported
 * results-only (without blobs) are exported results-only, still marked
 * imported.
 *
 * Long by design: one streaming pass writes entries, blobs and aux files, with their counts and the leftover note for `cache gc`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import { compileExperiment } from "../compile/experiment.ts";
 * import { makePlan } from "../run/plan.ts";
 * import { runPlan } from "../run/scheduler.ts";
 * import { SilentReporter } from "../run/progress.ts";
 * import { Store } from "./store.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const exp = compileExperiment("e.yaml", "experiment: e\nseed: 1\nnodes:\n  a: { kind: one, with: { x: 4 } }\n", {
 *   kinds: [one as NodeKind],
 * });
 * const dir = await Deno.makeTempDir();
 * const store = new Store(dir);
 * await runPlan(makePlan(exp, store), store, { reporter: new SilentReporter() });
 * import { exportBundle } from "./bundle.ts";
 * const counts = await exportBundle(store, `${dir}/results.bundle.gz`);
 * assert.equal(counts.entries, 1);
 * assert.ok(Deno.statSync(`${dir}/results.bundle.gz`).size > 0);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function exportBundle(
  store: Store,
  file: string,
  options: ExportOptions = {},
): Promise<ExportResult> {
  if (options.compact) return await _exportCompact(store, file, options);
  const enc = new TextEncoder();
  const where = (problem: string) =>
    problem === "full"
      ? "Free some space, or write the bundle to another disk."
      : "Write the bundle to a directory you can write.";
  _cleanExportLeftovers(file);
  const tmp = join(dirname(resolve(file)), tmpName(_exportTmpPrefix(file)));
  // A note in the cache names the temporary file, so `cache gc` can remove
  // it if this process is killed (Store.cleanLeftovers).
  const note = store.tmpPath(EXPORT_NOTE);
  onDisk(note, "write", () => Deno.writeTextFileSync(note, tmp));
  const out = onDisk(
    file,
    "write",
    () => Deno.openSync(tmp, { write: true, createNew: true }),
    where,
  );
  const sink = new _BundleSink(
    out,
    file.endsWith(".gz"),
    options.maxBytes ?? BUNDLE_MAX_BYTES,
    file,
  );
  const header = (
    type: string,
    name: string,
    size: number,
    sha: string,
    extra: Record<string, unknown> = {},
  ) =>
    sink.write(
      enc.encode(
        JSON.stringify({ type, name, size, sha256: sha, ...extra }) + "\n",
      ),
    );
  const nl = enc.encode("\n");
  let entries = 0, blobs = 0, aux = 0, resultsOnly = 0, omitted = 0;
  const missingBlobs: string[] = [];
  const blobSet = new Set<string>();
  let ok = false;
  try {
    await sink.write(enc.encode(BUNDLE_HEADER + "\n"));
    const omit = _omissions(options.omit ?? []);
    for (const sel of selectEntries(store, options)) {
      const cut = _omitFields(sel.entry, omit);
      const bytes = cut ?? sel.bytes;
      await header(
        "entry",
        sel.key,
        bytes.length,
        sha256Hex(bytes),
        sel.imported || cut ? { imported: true } : {},
      );
      if (cut) omitted++;
      await sink.write(bytes);
      await sink.write(nl);
      entries++;
      if (options.jsonOnly && !options.blobsOf?.has(sel.key)) continue;
      const absent = sel.entry.blobs.filter((b) => !store.hasBlob(b));
      if (absent.length > 0) {
        resultsOnly++;
        if (!sel.imported) missingBlobs.push(`${sel.key} (blob ${absent[0]})`);
      }
      for (const b of sel.entry.blobs) if (!absent.includes(b)) blobSet.add(b);
    }
    for (const b of [...blobSet].sort()) {
      const path = store.blobPath(b);
      let size: number;
      try {
        size = openRegularFile(path, MAX_BLOB_BYTES).size;
      } catch (e) {
        if (!(e instanceof NotRegularFileError)) throw e;
        store.quarantine(path);
        throw new CorruptEntryError(b, path, `${e.what}, not a blob file`);
      }
      await header("blob", b, size, b);
      const got = await _streamFile(path, size, (c) => sink.write(c));
      if (got.sha256 !== b || got.size !== size) {
        store.quarantine(path);
        throw new CorruptEntryError(
          b,
          path,
          "sha256 of the bytes does not match the blob's name (the export was stopped; run `cache verify`)",
        );
      }
      await sink.write(nl);
      blobs++;
    }
    if (!options.jsonOnly && !options.keys && !options.filter) {
      const auxRoot = join(store.root, "aux");
      for (const p of _walk(auxRoot)) {
        const first = await _streamFile(p, MAX_AUX_BYTES, null);
        await header("aux", relative(auxRoot, p), first.size, first.sha256);
        const again = await _streamFile(p, first.size, (c) => sink.write(c));
        if (again.sha256 !== first.sha256) {
          throw new UserError(
            `aux file ${p} changed while it was exported; export again`,
          );
        }
        await sink.write(nl);
        aux++;
      }
    }
    await sink.write(
      enc.encode(
        JSON.stringify({ type: "end", count: entries + blobs + aux }) + "\n",
      ),
    );
    await sink.close();
    ok = true;
  } catch (e) {
    await sink.abort();
    throw asFileSystemError(e, file, "write", where) ?? e;
  } finally {
    try {
      out.close();
    } catch { /* closed by the stream */ }
    if (!ok) _rmQuiet(tmp);
    _rmQuiet(note);
  }
  const bytes = Deno.statSync(tmp).size;
  onDisk(file, "write", () => {
    try {
      Deno.renameSync(tmp, file);
    } catch (e) {
      _rmQuiet(tmp);
      throw e;
    }
  }, where);
  return { entries, blobs, aux, bytes, resultsOnly, missingBlobs, omitted };
}

/** {@linkcode exportBundle} in the compact format: a plain bundle in the cache's tmp/, encoded. */
async function _exportCompact(
  store: Store,
  file: string,
  options: ExportOptions,
): Promise<ExportResult> {
  const plain = store.tmpPath("compact-export");
  try {
    const r = await exportBundle(store, plain, { ...options, compact: false });
    const bytes = encodeCompact(Deno.readFileSync(plain));
    writeAtomic(
      file,
      join(dirname(resolve(file)), tmpName(_exportTmpPrefix(file))),
      bytes,
      "write the bundle",
    );
    return { ...r, bytes: bytes.length };
  } finally {
    _rmQuiet(plain);
  }
}

function _rmQuiet(p: string): void {
  try {
    Deno.removeSync(p);
  } catch { /* gone */ }
}

// ---------------------------------------------------------------------------
// Reading.

/** One record of a bundle. */
interface _Record {
  readonly type: "entry" | "blob" | "aux";
  readonly name: string;
  readonly size: number;
  readonly sha256: string;
  /** An entry that was itself imported where the bundle was made. */
  readonly imported?: boolean;
}

/** The reason a bundle cannot be imported; says that nothing was. */
function _bad(file: string, why: string): UserError {
  return new UserError(
    `${file}: ${why}; the bundle is damaged or was edited, nothing was imported (export it again)`,
  );
}

function _tooLarge(file: string, what: string, maxBytes: number): UserError {
  return new UserError(
    `${file}: ${what} more than ${maxBytes} bytes, the most a bundle may hold; export the cache in parts (cache export --experiment ... / --filter ...)`,
  );
}

/** Largest a record's size may be, by type. */
const _MAX_RECORD: Record<_Record["type"], number> = {
  entry: MAX_ENTRY_BYTES,
  blob: MAX_BLOB_BYTES,
  aux: MAX_AUX_BYTES,
};

/** A record header, checked field by field. */
function _head(file: string, line: string, at: number): _Record | number {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    throw _bad(file, `the record header at byte ${at} is not JSON`);
  }
  const h = raw as Record<string, unknown>;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw _bad(file, `the record header at byte ${at} is not an object`);
  }
  if (h.type === "end") {
    if (!Number.isSafeInteger(h.count)) {
      throw _bad(file, `the end record at byte ${at} has no record count`);
    }
    return h.count as number;
  }
  if (h.type !== "entry" && h.type !== "blob" && h.type !== "aux") {
    throw _bad(
      file,
      `the record at byte ${at} has ${
        typeof h.type === "string"
          ? `unknown type "${h.type.slice(0, 40)}"`
          : "no type"
      } (expected entry, blob, aux or end)`,
    );
  }
  const what = `the ${h.type} record at byte ${at}`;
  if (typeof h.name !== "string" || h.name === "") {
    throw _bad(file, `${what} has no name`);
  }
  if (!Number.isSafeInteger(h.size) || (h.size as number) < 0) {
    throw _bad(file, `${what} has no valid size`);
  }
  if ((h.size as number) > _MAX_RECORD[h.type]) {
    throw _bad(
      file,
      `${what} says ${h.size} bytes, more than a ${h.type} may hold (${
        _MAX_RECORD[h.type]
      })`,
    );
  }
  if (typeof h.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(h.sha256)) {
    throw _bad(file, `${what} has no valid sha256`);
  }
  return {
    type: h.type,
    name: h.name,
    size: h.size as number,
    sha256: h.sha256,
    ...(h.imported === true ? { imported: true } : {}),
  };
}

/** Reads a byte stream as lines and sized bodies, counting (and bounding) what it reads. */
class _Reader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #file: string;
  readonly #max: number;
  readonly #compressed: boolean;
  #buf: Uint8Array = new Uint8Array(0);
  #pos = 0;
  /** Bytes consumed so far (the position in the uncompressed bundle). */
  offset = 0;
  #read = 0;

  constructor(
    stream: ReadableStream<Uint8Array>,
    file: string,
    max: number,
    compressed: boolean,
  ) {
    this.#reader = stream.getReader();
    this.#file = file;
    this.#max = max;
    this.#compressed = compressed;
  }

  async #fill(): Promise<boolean> {
    let r: ReadableStreamReadResult<Uint8Array>;
    try {
      r = await this.#reader.read();
    } catch (e) {
      if (e instanceof UserError) throw e;
      throw new UserError(
        `${this.#file}: not a readable gzip-compressed bundle (${
          (e as Error).message
        }); export it again`,
      );
    }
    if (r.done) return false;
    this.#read += r.value.length;
    if (this.#read > this.#max) {
      throw _tooLarge(
        this.#file,
        this.#compressed ? "expands to" : "holds",
        this.#max,
      );
    }
    const rest = this.#buf.subarray(this.#pos);
    if (rest.length === 0) this.#buf = r.value;
    else {
      const b = new Uint8Array(rest.length + r.value.length);
      b.set(rest);
      b.set(r.value, rest.length);
      this.#buf = b;
    }
    this.#pos = 0;
    return true;
  }

  /** The next line (without its newline), at most `max` bytes; null at the end. */
  async line(max: number): Promise<string | null> {
    let from = this.#pos;
    for (;;) {
      const nl = this.#buf.indexOf(10, from);
      if (nl >= 0) {
        const s = new TextDecoder().decode(this.#buf.subarray(this.#pos, nl));
        this.offset += nl + 1 - this.#pos;
        this.#pos = nl + 1;
        return s;
      }
      const unread = this.#buf.length - this.#pos;
      if (unread > max) {
        throw _bad(
          this.#file,
          `a record header at byte ${this.offset} is longer than ${max} bytes`,
        );
      }
      if (!(await this.#fill())) {
        if (unread === 0) return null;
        throw _bad(
          this.#file,
          `truncated (no line end at byte ${this.offset})`,
        );
      }
      from = unread; // #fill keeps the unread rest at the start
    }
  }

  /** Passes the next `n` bytes to `each` in chunks; false when the stream ends first. */
  async body(
    n: number,
    each: (chunk: Uint8Array) => Promise<void> | void,
  ): Promise<boolean> {
    let left = n;
    while (left > 0) {
      if (this.#pos >= this.#buf.length && !(await this.#fill())) return false;
      const take = Math.min(left, this.#buf.length - this.#pos);
      await each(this.#buf.subarray(this.#pos, this.#pos + take));
      this.#pos += take;
      this.offset += take;
      left -= take;
    }
    return true;
  }

  async cancel(): Promise<void> {
    try {
      await this.#reader.cancel();
    } catch { /* done */ }
  }
}

/** Opens a bundle for one pass: a regular file, gunzipped when compressed. */
async function _open(
  file: string,
  maxBytes: number,
): Promise<{ reader: _Reader; close: () => Promise<void> }> {
  let opened: { file: Deno.FsFile; size: number };
  try {
    opened = openRegularFile(file);
  } catch (e) {
    if (e instanceof NotRegularFileError) {
      throw new UserError(`${e.message}: give a bundle file`);
    }
    if (e instanceof Deno.errors.NotFound) {
      throw new UserError(`${file}: no such bundle file`);
    }
    throw e;
  }
  if (opened.size > maxBytes) {
    opened.file.close();
    throw _tooLarge(file, "holds", maxBytes);
  }
  const magic = new Uint8Array(32);
  let n = await opened.file.read(magic);
  await opened.file.seek(0, Deno.SeekMode.Start);
  if (n !== null && isCompactBundle(magic.subarray(0, n))) {
    // Decoded once per import into a plain bundle in a temporary file,
    // which the checking and writing passes read (bounded memory).
    const stamp = `${resolve(file)}\0${opened.size}\0${
      Deno.statSync(file).mtime?.getTime()
    }`;
    if (_decoded?.stamp !== stamp) {
      const bytes = _readAll(opened.file, opened.size);
      opened.file.close();
      _dropDecoded();
      const plain = Deno.makeTempFileSync({ prefix: "envsmith-bundle-" });
      _decoded = { stamp, plain };
      const out = Deno.openSync(plain, { write: true, truncate: true });
      try {
        for (const c of decodeCompact(bytes, maxBytes)) {
          let off = 0;
          while (off < c.length) off += out.writeSync(c.subarray(off));
        }
      } catch (e) {
        _dropDecoded();
        if (
          e instanceof UserError || e instanceof SyntaxError ||
          e instanceof RangeError
        ) throw _bad(file, e.message);
        throw e;
      } finally {
        out.close();
      }
    } else opened.file.close();
    opened = openRegularFile(_decoded!.plain);
    n = 0;
  }
  const gz = n !== null && n >= 2 && magic[0] === 0x1f && magic[1] === 0x8b;
  // node:zlib's gunzip gives bounded chunks (DecompressionStream hands out
  // all a compressed chunk expands to at once: 64 MB for 64 KB of a bomb).
  let gunzip: ReturnType<typeof createGunzip> | undefined;
  if (gz) {
    gunzip = createGunzip({ chunkSize: 64 * 1024 });
    Readable.fromWeb(
      opened.file.readable as unknown as Parameters<typeof Readable.fromWeb>[0],
    ).on("error", (e) => gunzip!.destroy(e)).pipe(gunzip);
  }
  const stream: ReadableStream<Uint8Array> = gunzip
    ? ReadableStream.from(gunzip as AsyncIterable<Uint8Array>)
    : opened.file.readable;
  const reader = new _Reader(stream, file, maxBytes, gz);
  return {
    reader,
    close: async () => {
      await reader.cancel();
      gunzip?.destroy();
      try {
        opened.file.close();
      } catch { /* closed by the stream */ }
    },
  };
}

/** The compact bundle being imported, decoded into a plain one (see `_open`). */
let _decoded: { stamp: string; plain: string } | null = null;

/** Removes the decoded copy of a compact bundle. */
function _dropDecoded(): void {
  if (_decoded) _rmQuiet(_decoded.plain);
  _decoded = null;
}

/** The rest of an open file (`size` bytes at most). */
function _readAll(file: Deno.FsFile, size: number): Uint8Array {
  const out = new Uint8Array(size);
  let o = 0;
  while (o < size) {
    const n = file.readSync(out.subarray(o));
    if (n === null) break;
    o += n;
  }
  return out.subarray(0, o);
}

/** An aux name that is a plain relative path (no NUL, no control characters, no `..`). */
function _auxName(file: string, name: string): void {
  const shown = JSON.stringify(name.slice(0, 80));
  // deno-lint-ignore no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) {
    throw _bad(file, `aux path ${shown} holds a control character`);
  }
  if (name.length > 1024 || name.split("/").some((s) => s.length > 255)) {
    throw _bad(file, `aux path ${shown} is too long`);
  }
  const parts = name.split("/");
  if (
    name.startsWith("/") ||
    parts.some((s) => s === "" || s === "." || s === "..")
  ) {
    throw _bad(file, `aux path ${name.slice(0, 80)} escapes the cache`);
  }
}

/** Where an aux record goes; refuses a path that leaves `aux/`. */
function _auxDest(store: Store, file: string, name: string): string {
  _auxName(file, name);
  const dest = join(store.root, "aux", name);
  const rel = relative(join(store.root, "aux"), dest);
  if (rel === "" || rel.startsWith("..")) {
    throw _bad(file, `aux path ${name.slice(0, 80)} escapes the cache`);
  }
  return dest;
}

/** What the checking pass learned about an entry record. */
interface _CheckedEntry {
  readonly blobs: readonly string[];
  readonly imported: boolean;
}

/**
 * The checking pass: reads every record, checks it and remembers what the
 * writing pass needs (entries' blob lists, the blobs present). Writes
 * nothing.
 *
 * Long by design: the checking pass mirrors the writing pass's loop, record by record.
 */
async function _check(
  store: Store,
  file: string,
  maxBytes: number,
): Promise<
  { entries: Map<string, _CheckedEntry>; blobs: Set<string>; aux: number }
> {
  const { reader, close } = await _open(file, maxBytes);
  const entries = new Map<string, _CheckedEntry>();
  const blobs = new Set<string>();
  const auxNames = new Set<string>();
  try {
    const first = await reader.line(64).catch((e) => {
      // A first line too long is "not a bundle"; a size or gzip error says itself.
      if (e instanceof UserError && !/is longer than/.test(e.message)) throw e;
      return null;
    });
    if (first !== BUNDLE_HEADER) {
      throw new UserError(
        `${file} is not an envsmith bundle (first line must be "${BUNDLE_HEADER}")`,
      );
    }
    let count = 0;
    for (;;) {
      const at = reader.offset;
      const line = await reader.line(64 * 1024);
      if (line === null) throw _bad(file, "truncated (no end record)");
      const head = _head(file, line, at);
      if (typeof head === "number") {
        if (head !== count) {
          throw _bad(file, `it says ${head} records, but holds ${count}`);
        }
        break;
      }
      const label = `${head.type} ${head.name.slice(0, 80)}`;
      if (head.type === "entry" && !/^[0-9a-f]{64}$/.test(head.name)) {
        throw _bad(file, `entry name ${head.name.slice(0, 80)} is not a key`);
      }
      if (head.type === "blob" && head.name !== head.sha256) {
        throw _bad(
          file,
          `blob ${head.name.slice(0, 80)} does not match its content`,
        );
      }
      if (head.type === "aux") _auxDest(store, file, head.name);
      const seen = head.type === "entry"
        ? entries.has(head.name)
        : head.type === "blob"
        ? blobs.has(head.name)
        : auxNames.has(head.name);
      if (seen) throw _bad(file, `${label} appears twice`);
      const hash = createHash("sha256");
      const kept: Uint8Array[] = [];
      const complete = await reader.body(head.size, (c) => {
        hash.update(c);
        if (head.type === "entry") kept.push(c.slice());
      });
      const end = new Uint8Array(1);
      if (!complete || !(await reader.body(1, (c) => end.set(c)))) {
        throw _bad(file, `truncated in ${label}`);
      }
      if (hash.digest("hex") !== head.sha256) {
        throw _bad(file, `${label} is corrupt (sha256 mismatch at byte ${at})`);
      }
      if (end[0] !== 10) {
        throw _bad(file, `${label} is not followed by a line end`);
      }
      count++;
      if (head.type === "blob") blobs.add(head.name);
      else if (head.type === "aux") auxNames.add(head.name);
      else {
        const body = _concat(kept, head.size);
        const entry = _checkEntry(store, file, head.name, body);
        entries.set(head.name, {
          blobs: entry.blobs,
          imported: head.imported === true,
        });
      }
    }
  } finally {
    await close();
  }
  return { entries, blobs, aux: auxNames.size };
}

function _concat(parts: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** An entry record's bytes: a valid entry file whose key is the hash of its components. */
function _checkEntry(
  store: Store,
  file: string,
  key: string,
  body: Uint8Array,
): Entry {
  let entry: Entry;
  try {
    entry = store.parseEntry(key, `(entry ${key})`, body);
  } catch (e) {
    if (e instanceof CorruptEntryError) {
      throw _bad(file, e.message.replace(/^Corrupt cache /, "corrupt "));
    }
    throw e;
  }
  let keyOk = false;
  try {
    keyOk = hashJson(entry.components) === key;
  } catch { /* not hashable: not a key's components */ }
  if (!keyOk) {
    throw _bad(
      file,
      `entry ${key} is not the result of its key (the key is not the hash of its components)`,
    );
  }
  return entry;
}

/** Options of {@linkcode importBundle}. */
export interface ImportOptions {
  /**
   * Use the bundle's complete entries as if computed here (cached results
   * for `run`) and import its aux files (LLM reply caches, which runs
   * replay). Only for bundles from a source you trust: their values cannot
   * be checked here.
   * @default false
   */
  readonly trust?: boolean;
  /** Told what a long import is doing (checking, then writing), one line each. */
  readonly onProgress?: (line: string) => void;
  /**
   * Bytes a bundle may hold, as a file and once gunzipped (the same limit
   * as export's). Larger bundles are refused while they are checked,
   * before anything is written, so a gzip bomb cannot fill the disk.
   * @default BUNDLE_MAX_BYTES (4 GiB)
   */
  readonly maxBytes?: number;
}

/** What {@linkcode importBundle} added. */
export interface ImportResult {
  /** New entries. */
  readonly entries: number;
  /** Of those, marked imported (shown as such; recomputed by `run`). */
  readonly marked: number;
  /** Of those, without their blobs (results only: enough for tables). */
  readonly resultsOnly: number;
  /** New blobs. */
  readonly blobs: number;
  /** New aux files. */
  readonly aux: number;
  /** Records already present (kept). */
  readonly kept: number;
  /** Aux files not imported (without `trust`). */
  readonly skippedAux: number;
  /**
   * When the same bundle (by the sha256 of its bytes) was imported before
   * and every record of it is still here: when (ISO time). Nothing was read.
   */
  readonly remembered?: string;
}

/**
 * Adds a bundle's records to `store`: every record is checked first, in a
 * pass that writes nothing (a bundle that fails a check imports nothing,
 * with `trust` too), then blobs, entries (marked imported unless trusted
 * and complete) and, with `trust`, aux files are written; nothing existing
 * is overwritten. When writing fails (a full disk), what was written is
 * complete and kept, and the error says so.
 */
export async function importBundle(
  store: Store,
  file: string,
  options: ImportOptions = {},
): Promise<ImportResult> {
  const maxBytes = options.maxBytes ?? BUNDLE_MAX_BYTES;
  // A bundle imported before (the same bytes, by sha256) whose records are
  // all still here is not read and checked again: `tables --import` on
  // every call costs a hash of the file.
  const sha = await _fileSha256(file);
  const before = sha === null ? null : _importRecord(store, sha);
  if (
    before && (before.trust || options.trust !== true) &&
    before.entries.every((k) => store.hasEntry(k)) &&
    before.blobs.every((b) => store.hasBlob(b))
  ) {
    return {
      entries: 0,
      marked: 0,
      resultsOnly: 0,
      blobs: 0,
      aux: 0,
      kept: before.entries.length + before.blobs.length,
      skippedAux: options.trust ? 0 : before.aux,
      remembered: before.imported,
    };
  }
  let size = 0;
  try {
    size = Deno.statSync(file).size;
  } catch { /* _check reports it */ }
  if (size > 1e6) {
    options.onProgress?.(
      `checking every record of ${file} (${
        (size / 1e6).toFixed(0)
      } MB) before anything is written…`,
    );
  }
  let checked: Awaited<ReturnType<typeof _check>>;
  try {
    checked = await _check(store, file, maxBytes);
  } catch (e) {
    _dropDecoded();
    throw e;
  }
  if (size > 1e6) {
    options.onProgress?.(
      `writing ${checked.entries.size} entries and ${checked.blobs.size} blobs into ${store.root}…`,
    );
  }
  // Recorded while it writes: `cache gc` removes nothing meanwhile, since
  // the blobs written first are referenced only by entries still to come.
  const inProgress = store.beginImport(resolve(file));
  let result: ImportResult;
  try {
    result = await _importChecked(store, file, options, maxBytes, checked);
  } finally {
    inProgress.release();
    _dropDecoded();
  }
  if (sha !== null) {
    const record: _ImportRecord = {
      format: 1,
      bundle: basename(file),
      sha256: sha,
      imported: new Date().toISOString(),
      trust: options.trust === true,
      aux: checked.aux,
      entries: [...checked.entries.keys()],
      blobs: [...checked.blobs],
    };
    try {
      Deno.mkdirSync(join(store.root, "imports"), { recursive: true });
      writeAtomic(
        join(store.root, "imports", `${sha}.json`),
        store.tmpPath("import-record"),
        JSON.stringify(record),
        "remember an imported bundle",
      );
    } catch { /* not remembered: the next import checks it again */ }
  }
  return result;
}

/** What `ROOT/imports/<sha256>.json` remembers of a bundle imported whole. */
interface _ImportRecord {
  readonly format: 1;
  readonly bundle: string;
  readonly sha256: string;
  readonly imported: string;
  readonly trust: boolean;
  readonly aux: number;
  readonly entries: readonly string[];
  readonly blobs: readonly string[];
}

/** The record of the bundle with this sha256, or null (none, or unreadable). */
function _importRecord(store: Store, sha: string): _ImportRecord | null {
  try {
    const r = JSON.parse(
      Deno.readTextFileSync(join(store.root, "imports", `${sha}.json`)),
    ) as _ImportRecord;
    return r.format === 1 && r.sha256 === sha && Array.isArray(r.entries) &&
        Array.isArray(r.blobs)
      ? r
      : null;
  } catch {
    return null;
  }
}

/** The sha256 of a file's bytes, or null when it cannot be read. */
async function _fileSha256(file: string): Promise<string | null> {
  let f: Deno.FsFile;
  try {
    f = await Deno.open(file);
  } catch {
    return null;
  }
  const hash = createHash("sha256");
  const buf = new Uint8Array(1 << 20);
  try {
    for (;;) {
      const n = await f.read(buf);
      if (n === null) break;
      hash.update(buf.subarray(0, n));
    }
  } catch {
    return null;
  } finally {
    f.close();
  }
  return hash.digest("hex");
}

type _Head = Exclude<ReturnType<typeof _head>, number>;

/**
 * A blob record streamed into tmp/, its hash checked, then linked into
 * place; false when the store had it meanwhile.
 */
async function _streamBlob(
  store: Store,
  reader: _Reader,
  head: _Head,
  changed: () => Error,
): Promise<boolean> {
  const tmp = store.tmpPath("blob");
  const out = onDisk(
    tmp,
    "write",
    () => Deno.openSync(tmp, { write: true, createNew: true }),
  );
  const hash = createHash("sha256");
  try {
    await reader.body(head.size, (c) => {
      hash.update(c);
      let off = 0;
      while (off < c.length) {
        off += onDisk(
          tmp,
          "write",
          () => out.writeSync(c.subarray(off)),
        );
      }
    });
  } catch (e) {
    out.close();
    _rmQuiet(tmp);
    throw e;
  }
  out.close();
  if (hash.digest("hex") !== head.name) {
    _rmQuiet(tmp);
    throw changed();
  }
  return store.adoptBlob(tmp, head.name);
}

/** An aux record written to `dest` (hash checked); false, and skipped, when `dest` exists. */
async function _writeAux(
  store: Store,
  reader: _Reader,
  head: _Head,
  dest: string,
  changed: () => Error,
): Promise<boolean> {
  let exists = true;
  try {
    Deno.lstatSync(dest);
  } catch {
    exists = false;
  }
  if (exists) {
    await reader.body(head.size, () => {});
    return false;
  } else {
    const parts: Uint8Array[] = [];
    await reader.body(head.size, (c) => void parts.push(c.slice()));
    const body = _concat(parts, head.size);
    if (sha256Hex(body) !== head.sha256) throw changed();
    onDisk(dest, "write", () => {
      Deno.mkdirSync(dirname(dest), { recursive: true });
      const tmp = store.tmpPath("aux");
      try {
        Deno.writeFileSync(tmp, body);
        Deno.renameSync(tmp, dest);
      } catch (e) {
        _rmQuiet(tmp);
        throw e;
      }
    });
    return true;
  }
}

/**
 * The writing passes of {@linkcode importBundle}, after the check. Long for
 * a reason: one loop over the bundle's records per pass, with the counts
 * and the stop message kept in one place; each record's write is its own
 * function.
 */
async function _importChecked(
  store: Store,
  file: string,
  options: ImportOptions,
  maxBytes: number,
  checked: Awaited<ReturnType<typeof _check>>,
): Promise<ImportResult> {
  const completeOf = (key: string) =>
    checked.entries.get(key)!.blobs.every((b) =>
      checked.blobs.has(b) || store.hasBlob(b)
    );
  let nEntries = 0, marked = 0, resultsOnly = 0, nBlobs = 0, nAux = 0;
  let kept = 0;
  const mark = {
    bundle: basename(file),
    imported: new Date().toISOString(),
  };
  // Blobs (and aux files) first, entries in a second pass: an entry is
  // complete when it appears, whatever the order of the bundle's records.
  for (const phase of ["blobs", "entries"] as const) {
    const { reader, close } = await _open(file, maxBytes);
    try {
      await reader.line(64);
      for (;;) {
        const at = reader.offset;
        const head = _head(file, (await reader.line(64 * 1024)) ?? "", at);
        if (typeof head === "number") break;
        const label = `${head.type} ${head.name.slice(0, 80)}`;
        const changed = () =>
          new UserError(
            `${file} changed while it was imported (${label}); what was written before is complete and was kept: import again`,
          );
        const mine = phase === "entries"
          ? head.type === "entry"
          : head.type !== "entry";
        if (!mine) {
          await reader.body(head.size, () => {});
        } else if (head.type === "blob" && !store.hasBlob(head.name)) {
          if (await _streamBlob(store, reader, head, changed)) nBlobs++;
          else kept++;
        } else if (head.type === "entry") {
          const parts: Uint8Array[] = [];
          await reader.body(head.size, (c) => void parts.push(c.slice()));
          const body = _concat(parts, head.size);
          if (
            sha256Hex(body) !== head.sha256 || !checked.entries.has(head.name)
          ) {
            throw changed();
          }
          const trusted = options.trust === true && !head.imported &&
            completeOf(head.name);
          if (store.hasEntry(head.name)) {
            kept++;
            // the same bytes, imported before without trust: now taken as computed
            if (trusted && store.importMark(head.name)) {
              store.unmarkImported(head.name);
            }
          } else {
            const complete = trusted || completeOf(head.name);
            if (!trusted) {
              store.markImported(head.name, {
                ...mark,
                resultsOnly: !complete,
              });
            }
            // Parsed and checked by _check: the same bytes (sha256 above).
            if (store.importEntryBytes(head.name, body, true)) {
              nEntries++;
              if (!trusted) marked++;
              if (!complete) resultsOnly++;
            } else {
              kept++; // stored meanwhile by another process: theirs stays, unmarked
              if (!trusted) store.unmarkImported(head.name);
            }
          }
        } else if (head.type === "aux" && options.trust) {
          if (
            await _writeAux(
              store,
              reader,
              head,
              _auxDest(store, file, head.name),
              changed,
            )
          ) {
            nAux++;
          } else kept++;
        } else {
          if (head.type === "blob") kept++;
          await reader.body(head.size, () => {});
        }
        await reader.body(1, () => {});
      }
    } catch (e) {
      if (!(e instanceof FileSystemError)) throw e;
      throw new FileSystemError(
        e.path,
        e.problem,
        e.code,
        e.action,
        `${e.advice} The import of ${file} stopped there; what it wrote before (${nEntries} entries, ${nBlobs} blobs, ${nAux} aux files) is complete and was kept: import again once fixed (records already present are skipped).`,
        { cause: e },
      );
    } finally {
      await close();
    }
  }
  return {
    entries: nEntries,
    marked,
    resultsOnly,
    blobs: nBlobs,
    aux: nAux,
    kept,
    skippedAux: options.trust ? 0 : checked.aux,
  };
}
