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
 * Every record is verified on import (its sha256, and an entry's own header
 * hash); existing entries and files are kept (write-once). A bundle whose
 * file name ends in `.gz` is written gzip-compressed; import recognises
 * compressed bundles by their magic bytes, whatever their name.
 *
 * @module
 */
import { dirname, join, relative } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { sha256Hex } from "./canonical.ts";
import type { CommandContext } from "./commands.ts";
import { load } from "./commands.ts";
import { UserError } from "./errors.ts";
import { computeKeys } from "./keys.ts";
import { matchesPattern } from "./plan.ts";
import { type Entry, Store } from "./store.ts";

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
  const out = Deno.openSync(tmp, { write: true, create: true, truncate: true });
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
  ) => {
    write(
      enc.encode(
        JSON.stringify({ type, name, size: data.length, sha256: sha }) + "\n",
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
      record("entry", key, data);
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
  } finally {
    out.close();
  }
  if (file.endsWith(".gz")) {
    const packed = gzipSync(Deno.readFileSync(tmp), { level: 9 });
    Deno.writeFileSync(tmp, packed);
    bytes = packed.length;
  }
  Deno.renameSync(tmp, file);
  return { entries, blobs, aux, bytes };
}

/** The bytes of a bundle file, gunzipped when compressed. */
function _bundleBytes(file: string): Uint8Array {
  const raw = Deno.readFileSync(file);
  if (raw[0] !== 0x1f || raw[1] !== 0x8b) return raw;
  try {
    return gunzipSync(raw);
  } catch (e) {
    throw new UserError(
      `${file}: not a readable gzip-compressed bundle (${
        (e as Error).message
      }); export it again`,
    );
  }
}

/** One record of a bundle. */
interface _Record {
  readonly type: string;
  readonly name: string;
  readonly size: number;
  readonly sha256: string;
  readonly count?: number;
}

/** Reads the records of a bundle, each verified against its sha256. */
function* _records(
  file: string,
  data: Uint8Array,
): Generator<{ head: _Record; body: Uint8Array }> {
  const dec = new TextDecoder();
  let pos = 0;
  const line = (): string => {
    const nl = data.indexOf(10, pos);
    if (nl < 0) {
      throw new UserError(
        `${file}: truncated bundle (no line end at byte ${pos})`,
      );
    }
    const s = dec.decode(data.subarray(pos, nl));
    pos = nl + 1;
    return s;
  };
  if (line() !== BUNDLE_HEADER) {
    throw new UserError(
      `${file} is not an envsmith bundle (first line must be "${BUNDLE_HEADER}")`,
    );
  }
  for (let records = 0;; records++) {
    const at = pos;
    let head: _Record;
    try {
      head = JSON.parse(line());
    } catch {
      throw new UserError(`${file}: bad record header at byte ${at}`);
    }
    if (head.type === "end") {
      if (head.count !== records) {
        throw new UserError(
          `${file}: bundle says ${head.count} records, read ${records}`,
        );
      }
      return;
    }
    if (pos + head.size + 1 > data.length) {
      throw new UserError(
        `${file}: truncated record ${head.type} ${head.name}`,
      );
    }
    const body = data.subarray(pos, pos + head.size);
    pos += head.size + 1;
    if (sha256Hex(body) !== head.sha256) {
      throw new UserError(
        `${file}: ${head.type} ${head.name} is corrupt (sha256 mismatch at byte ${at})`,
      );
    }
    yield { head, body };
  }
}

/** Adds an aux file unless present; false when kept. */
function _importAux(
  store: Store,
  file: string,
  name: string,
  body: Uint8Array,
): boolean {
  const dest = join(store.root, "aux", name);
  if (relative(join(store.root, "aux"), dest).startsWith("..")) {
    throw new UserError(`${file}: aux path ${name} escapes the cache`);
  }
  try {
    Deno.statSync(dest);
    return false;
  } catch {
    Deno.mkdirSync(dirname(dest), { recursive: true });
    const tmp = `${dest}.${crypto.randomUUID().slice(0, 8)}.tmp`;
    Deno.writeFileSync(tmp, body);
    Deno.renameSync(tmp, dest);
    return true;
  }
}

/** Adds a bundle's records to `store` (verified; nothing existing is overwritten). */
export function importBundle(
  store: Store,
  file: string,
): { entries: number; blobs: number; aux: number; kept: number } {
  let entries = 0, blobs = 0, aux = 0, kept = 0;
  for (const { head, body } of _records(file, _bundleBytes(file))) {
    if (head.type === "entry") {
      if (!/^[0-9a-f]{64}$/.test(head.name)) {
        throw new UserError(`${file}: bad entry name ${head.name}`);
      }
      if (store.importEntryBytes(head.name, body)) entries++;
      else kept++;
    } else if (head.type === "blob") {
      if (head.name !== head.sha256) {
        throw new UserError(
          `${file}: blob ${head.name} does not match its content`,
        );
      }
      if (store.hasBlob(head.name)) kept++;
      else {
        store.writeBlob(body, "application/octet-stream");
        blobs++;
      }
    } else if (head.type === "aux") {
      if (_importAux(store, file, head.name, body)) aux++;
      else kept++;
    } else throw new UserError(`${file}: unknown record type ${head.type}`);
  }
  return { entries, blobs, aux, kept };
}

/** `cache export FILE` */
export async function cacheExportCommand(
  ctx: CommandContext,
  file: string,
  options: {
    jsonOnly?: boolean;
    filter?: readonly string[];
    experiments?: readonly string[];
  },
): Promise<number> {
  const store = new Store(ctx.cache);
  let keys: Set<string> | undefined;
  if (options.experiments) {
    keys = new Set();
    for (const f of options.experiments) {
      const exp = await load(ctx, f);
      const ks = computeKeys(exp);
      for (const n of exp.nodes) {
        if (
          options.filter && !options.filter.some((p) => matchesPattern(n, p))
        ) continue;
        const k = ks[n.index]!;
        if (k.cacheable && store.hasEntry(k.key)) keys.add(k.key);
      }
    }
  }
  const r = exportBundle(store, file, {
    jsonOnly: options.jsonOnly === true,
    ...(options.filter && !options.experiments
      ? { filter: options.filter }
      : {}),
    ...(keys ? { keys } : {}),
  });
  ctx.output.err(
    `wrote ${file}: ${r.entries} entries, ${r.blobs} blobs, ${r.aux} aux files (${r.bytes} bytes)`,
  );
  return 0;
}

/** `cache import FILE` */
export function cacheImportCommand(
  ctx: CommandContext,
  file: string,
): Promise<number> {
  const store = new Store(ctx.cache);
  const r = importBundle(store, file);
  ctx.output.err(
    `imported ${file} into ${store.root}: ${r.entries} entries, ${r.blobs} blobs, ${r.aux} aux files (${r.kept} already present)`,
  );
  return Promise.resolve(0);
}
