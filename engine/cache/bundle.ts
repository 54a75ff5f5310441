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
import { dirname, join, relative } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { basename } from "node:path";
import { writeAtomic } from "./atomic_write.ts";
import { hashJson, sha256Hex } from "../canonical.ts";
import { CorruptEntryError, UserError } from "../errors.ts";
import { asFileSystemError, FileSystemError, onDisk } from "../fs_errors.ts";
import type { Entry, Store } from "./store.ts";

/** First line of a bundle. */
export const BUNDLE_HEADER = "envsmith-bundle 1";

/** Options of {@linkcode exportBundle}. */
export interface ExportOptions {
  /** Entries only (no blobs, no aux files): enough for `tables`. @default false */
  readonly jsonOnly?: boolean;
  /** Only entries whose node id or kind matches one of these (`*` globs). */
  readonly filter?: readonly string[];
  /** Only these keys (e.g. the current keys of an experiment). */
  readonly keys?: ReadonlySet<string>;
}

function _glob(p: string): RegExp {
  return new RegExp(
    "^" +
      p.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(
        ".*",
      ) + "$",
  );
}

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

/** Writes a bundle of `store` to `file`; returns record counts. */
export function exportBundle(
  store: Store,
  file: string,
  options: ExportOptions = {},
): { entries: number; blobs: number; aux: number; bytes: number } {
  const enc = new TextEncoder();
  const tmp = `${file}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  const where = (problem: string) =>
    problem === "full"
      ? "Free some space, or write the bundle to another disk."
      : "Write the bundle to a directory you can write.";
  const out = onDisk(
    file,
    "write",
    () => Deno.openSync(tmp, { write: true, create: true, truncate: true }),
    where,
  );
  let bytes = 0;
  const write = (b: Uint8Array) => {
    let off = 0;
    while (off < b.length) off += out.writeSync(b.subarray(off));
    bytes += b.length;
  };
  const record = (
    type: string,
    name: string,
    data: Uint8Array,
    sha = sha256Hex(data),
    extra: Record<string, unknown> = {},
  ) => {
    write(
      enc.encode(
        JSON.stringify({
          type,
          name,
          size: data.length,
          sha256: sha,
          ...extra,
        }) +
          "\n",
      ),
    );
    write(data);
    write(enc.encode("\n"));
  };
  const filters = options.filter?.map(_glob);
  let entries = 0, blobs = 0, aux = 0;
  const blobSet = new Set<string>();
  try {
    write(enc.encode(BUNDLE_HEADER + "\n"));
    for (const key of [...store.keys()].sort()) {
      if (options.keys && !options.keys.has(key)) continue;
      const data = store.entryBytes(key);
      const entry = store.parseEntry(key, store.entryPath(key), data) as Entry;
      if (
        filters &&
        !filters.some((re) => re.test(entry.id) || re.test(entry.kind))
      ) continue;
      record(
        "entry",
        key,
        data,
        undefined,
        store.importMark(key) ? { imported: true } : {},
      );
      entries++;
      if (!options.jsonOnly) { for (const b of entry.blobs) blobSet.add(b); }
    }
    for (const b of [...blobSet].sort()) {
      record("blob", b, store.readBlob({ $blob: b }), b);
      blobs++;
    }
    if (!options.jsonOnly && !options.keys && !filters) {
      const auxRoot = join(store.root, "aux");
      for (const p of _walk(auxRoot)) {
        record("aux", relative(auxRoot, p), Deno.readFileSync(p));
        aux++;
      }
    }
    write(
      enc.encode(
        JSON.stringify({ type: "end", count: entries + blobs + aux }) + "\n",
      ),
    );
  } catch (e) {
    out.close();
    try {
      Deno.removeSync(tmp);
    } catch { /* never written */ }
    throw asFileSystemError(e, file, "write", where) ?? e;
  }
  out.close();
  onDisk(file, "write", () => {
    try {
      if (file.endsWith(".gz")) {
        const packed = gzipSync(Deno.readFileSync(tmp), { level: 9 });
        Deno.writeFileSync(tmp, packed);
        bytes = packed.length;
      }
      Deno.renameSync(tmp, file);
    } catch (e) {
      try {
        Deno.removeSync(tmp);
      } catch { /* never written */ }
      throw e;
    }
  }, where);
  return { entries, blobs, aux, bytes };
}

/** The bytes of a bundle file, gunzipped when compressed. */
function _bundleBytes(file: string, maxBytes: number): Uint8Array {
  const tooLarge = (what: string) =>
    new UserError(
      `${file}: ${what} more than ${maxBytes} bytes, the most a bundle may hold (it is read whole into memory); export the cache in parts (cache export --experiment ... / --filter ...)`,
    );
  if (Deno.statSync(file).size > maxBytes) throw tooLarge("holds");
  const raw = Deno.readFileSync(file);
  if (raw[0] !== 0x1f || raw[1] !== 0x8b) return raw;
  try {
    return gunzipSync(raw, { maxOutputLength: maxBytes });
  } catch (e) {
    if ((e as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
      throw tooLarge("expands to");
    }
    throw new UserError(
      `${file}: not a readable gzip-compressed bundle (${
        (e as Error).message
      }); export it again`,
    );
  }
}

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

/** Reads the records of a bundle, each checked against its sha256, and the end record's count. */
function _records(
  file: string,
  data: Uint8Array,
): { head: _Record; body: Uint8Array }[] {
  const dec = new TextDecoder();
  let pos = 0;
  const line = (): string => {
    const nl = data.indexOf(10, pos);
    if (nl < 0) throw _bad(file, `truncated (no line end at byte ${pos})`);
    const s = dec.decode(data.subarray(pos, nl));
    pos = nl + 1;
    return s;
  };
  if (data.indexOf(10) < 0 || line() !== BUNDLE_HEADER) {
    throw new UserError(
      `${file} is not an envsmith bundle (first line must be "${BUNDLE_HEADER}")`,
    );
  }
  const out: { head: _Record; body: Uint8Array }[] = [];
  for (;;) {
    const at = pos;
    const head = _head(file, line(), at);
    if (typeof head === "number") {
      if (head !== out.length) {
        throw _bad(file, `it says ${head} records, but holds ${out.length}`);
      }
      return out;
    }
    if (pos + head.size + 1 > data.length) {
      throw _bad(file, `truncated in ${head.type} ${head.name.slice(0, 80)}`);
    }
    const body = data.subarray(pos, pos + head.size);
    pos += head.size + 1;
    if (sha256Hex(body) !== head.sha256) {
      throw _bad(
        file,
        `${head.type} ${
          head.name.slice(0, 80)
        } is corrupt (sha256 mismatch at byte ${at})`,
      );
    }
    out.push({ head, body });
  }
}

/** Where an aux record goes; refuses a path that leaves `aux/`. */
function _auxDest(store: Store, file: string, name: string): string {
  const dest = join(store.root, "aux", name);
  const rel = relative(join(store.root, "aux"), dest);
  if (rel === "" || rel.startsWith("..")) {
    throw _bad(file, `aux path ${name.slice(0, 80)} escapes the cache`);
  }
  return dest;
}

/** Adds an aux file unless present; false when kept. */
function _importAux(store: Store, dest: string, body: Uint8Array): boolean {
  try {
    Deno.statSync(dest);
    return false;
  } catch {
    onDisk(
      dest,
      "write",
      () => Deno.mkdirSync(dirname(dest), { recursive: true }),
    );
    writeAtomic(dest, store.tmpPath("aux"), body, "write");
    return true;
  }
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
  /**
   * Bytes a bundle may hold, as a file and once gunzipped (a bundle is read
   * whole into memory). Larger bundles are refused before they are read or
   * expanded, so a gzip bomb cannot exhaust memory; export a large cache in
   * parts (`--experiment`, `--filter`) instead.
   * @default BUNDLE_MAX_BYTES (1 GiB)
   */
  readonly maxBytes?: number;
}

/** The default of {@linkcode ImportOptions.maxBytes}: 1 GiB. */
export const BUNDLE_MAX_BYTES = 2 ** 30;

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
}

/**
 * Adds a bundle's records to `store`: every record is checked first (a
 * bundle that fails a check imports nothing), then blobs, entries (marked
 * imported unless trusted and complete) and, with `trust`, aux files are
 * written; nothing existing is overwritten. When writing fails (a full
 * disk), what was written is complete and kept, and the error says so.
 */
export function importBundle(
  store: Store,
  file: string,
  options: ImportOptions = {},
): ImportResult {
  const records = _records(
    file,
    _bundleBytes(file, options.maxBytes ?? BUNDLE_MAX_BYTES),
  );
  const inBundle = new Set(
    records.filter((r) => r.head.type === "blob").map((r) => r.head.name),
  );
  const entries: { head: _Record; body: Uint8Array; complete: boolean }[] = [];
  const blobs: { head: _Record; body: Uint8Array }[] = [];
  const aux: { dest: string; body: Uint8Array }[] = [];
  for (const r of records) {
    const { head, body } = r;
    if (head.type === "entry") {
      if (!/^[0-9a-f]{64}$/.test(head.name)) {
        throw _bad(file, `entry name ${head.name.slice(0, 80)} is not a key`);
      }
      let entry: Entry;
      try {
        entry = store.parseEntry(head.name, `(entry ${head.name})`, body);
      } catch (e) {
        if (e instanceof CorruptEntryError) {
          throw _bad(file, e.message.replace(/^Corrupt cache /, "corrupt "));
        }
        throw e;
      }
      let keyOk = false;
      try {
        keyOk = hashJson(entry.components) === head.name;
      } catch { /* not hashable: not a key's components */ }
      if (!keyOk) {
        throw _bad(
          file,
          `entry ${head.name} is not the result of its key (the key is not the hash of its components)`,
        );
      }
      entries.push({
        ...r,
        complete: entry.blobs.every((b) => inBundle.has(b) || store.hasBlob(b)),
      });
    } else if (head.type === "blob") {
      if (head.name !== head.sha256) {
        throw _bad(
          file,
          `blob ${head.name.slice(0, 80)} does not match its content`,
        );
      }
      blobs.push(r);
    } else aux.push({ dest: _auxDest(store, file, head.name), body });
  }
  let nEntries = 0, marked = 0, resultsOnly = 0, nBlobs = 0, nAux = 0;
  let kept = 0;
  const mark = {
    bundle: basename(file),
    imported: new Date().toISOString(),
  };
  try {
    // Blobs first: an entry is complete when it appears.
    for (const { head, body } of blobs) {
      if (store.hasBlob(head.name)) kept++;
      else {
        store.writeBlob(body, "application/octet-stream");
        nBlobs++;
      }
    }
    for (const { head, body, complete } of entries) {
      if (store.hasEntry(head.name)) {
        kept++;
        continue;
      }
      const trusted = options.trust === true && complete && !head.imported;
      if (!trusted) {
        store.markImported(head.name, { ...mark, resultsOnly: !complete });
      }
      if (store.importEntryBytes(head.name, body)) {
        nEntries++;
        if (!trusted) marked++;
        if (!complete) resultsOnly++;
      } else {
        kept++; // stored meanwhile by another process: theirs stays, unmarked
        if (!trusted) store.unmarkImported(head.name);
      }
    }
    if (options.trust) {
      for (const { dest, body } of aux) {
        if (_importAux(store, dest, body)) nAux++;
        else kept++;
      }
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
  }
  return {
    entries: nEntries,
    marked,
    resultsOnly,
    blobs: nBlobs,
    aux: nAux,
    kept,
    skippedAux: options.trust ? 0 : aux.length,
  };
}
