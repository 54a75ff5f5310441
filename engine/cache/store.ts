/**
 * The content-addressed cache: JSON entries (one per key, write-once), blobs
 * (named by the sha256 of their bytes), per-kind aux directories, node logs,
 * job specs, lock files and run manifests, all under one directory.
 *
 * Layout (`ROOT` defaults to `.envsmith/cache`):
 *
 * ```
 * ROOT/entries/ab/<key>.json   "envsmith-entry 1 <sha256 of the JSON>\n<JSON>"
 * ROOT/entries/ab/<key>.imported  the entry came from a bundle (ImportMark)
 * ROOT/blobs/ab/<sha256>       raw bytes
 * ROOT/aux/<kind>/             NodeContext.auxDir
 * ROOT/logs/<key>.log          the log of the last execution of a node
 * ROOT/jobs/<key>.json         what `run-node KEY` needs to run a node
 * ROOT/locks/<key>.lock        held while a process computes a key
 * ROOT/locks/gc.lock           held while `cache gc` runs
 * ROOT/live/<run>.lock        held by a run (announces it to `cache gc`)
 * ROOT/imports/*.lock          held while a `cache import` writes
 * ROOT/runs/<experiment>/*.json run manifests
 * ROOT/runs/<experiment>/<run>/ a run's executor files (Slurm scripts, logs)
 * ROOT/tmp/                    temporary files (same file system, for renames)
 * ROOT/corrupt/                entries and blobs that failed verification
 * ROOT/imports/<sha256>.json   bundles imported whole, by the hash of their bytes
 * ```
 *
 * Every write goes to a temporary file in `tmp/` and is then hard-linked (or,
 * where links are unsupported, renamed) into place: a file that exists is
 * complete, and an existing entry is never overwritten, except an entry
 * imported from a bundle, which a result computed here replaces (imported
 * entries are shown by `tables` and `status` as imported, and never used
 * as a cached result by `run`: their values cannot be checked here). Every read verifies
 * the hash; a mismatch raises {@linkcode CorruptEntryError}, and the bad file
 * is moved to `corrupt/` so the next run recomputes it.
 *
 * @module
 */
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { writeAtomic } from "./atomic_write.ts";
import { sha256Hex } from "../canonical.ts";
import { CorruptEntryError, UserError } from "../errors.ts";
import { asFileSystemError, onDisk } from "../fs_errors.ts";
import type { KeyComponents } from "./keys.ts";
import {
  type Lock,
  lockHolder,
  type LockInfo,
  type LockOptions,
  processAlive,
  tryLock,
} from "./lock.ts";
import {
  NotRegularFileError,
  readRegularFile,
  readRegularText,
} from "../regular_file.ts";
import type { BlobRef, Json } from "../types.ts";

/** Largest entry file read (JSON values; big data belongs in blobs). */
export const MAX_ENTRY_BYTES = 512 * 1024 * 1024;
/** Largest blob file read. */
export const MAX_BLOB_BYTES = 4 * 1024 * 1024 * 1024;

/** Format tag on the first line of an entry file. */
export const ENTRY_HEADER = "envsmith-entry 1";

/**
 * What the cache holds for one key.
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
 * import { computeKeys } from "./keys.ts";
 * import type { Entry } from "./store.ts";
 * const entry: Entry | null = store.loadVerified(computeKeys(exp)[0]!.key);
 * assert.equal(entry?.value, 4);
 * assert.equal(entry?.kind, "one");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export interface Entry {
  /** The key. */
  readonly key: string;
  /** Node id that computed it (informational: keys are shared across ids and experiments). */
  readonly id: string;
  /** Kind name. */
  readonly kind: string;
  /** What the key is the hash of. */
  readonly components: KeyComponents;
  /** Key -> node id of its inputs. */
  readonly inputs: Readonly<Record<string, string>>;
  /** Files of the kind's code (path -> sha256), to explain code changes. */
  readonly codeFiles: Readonly<Record<string, string>>;
  /** What dependents receive. */
  readonly value: Json;
  /** Extra information for tables and reports. */
  readonly report?: Json;
  /** sha256 of every blob the value or report refers to. */
  readonly blobs: readonly string[];
  /** ISO time it was stored. */
  readonly created: string;
  /** Compute time in milliseconds. */
  readonly ms: number;
  /** Versions of the runtime and envsmith that computed it. */
  readonly versions: Readonly<Record<string, string>>;
}

/** Where an imported entry came from (the `.imported` file beside it). */
export interface ImportMark {
  /** File name of the bundle. */
  readonly bundle: string;
  /** ISO time of the import. */
  readonly imported: string;
  /** The bundle did not carry the entry's blobs (a JSON-only bundle): enough for tables, not for inputs. */
  readonly resultsOnly: boolean;
}

/**
 * Prefix of the note a bundle export leaves in `tmp/`: it names the
 * export's temporary file (beside the bundle, outside the cache), which
 * {@linkcode Store.cleanLeftovers} removes with the note when the export's
 * process is gone.
 */
export const EXPORT_NOTE = "export-note";

/** Default cache directory (relative to the working directory). */
export const DEFAULT_CACHE = ".envsmith/cache";

/**
 * The cache directory: `--cache`, else `$ENVSMITH_CACHE`, else
 * {@linkcode DEFAULT_CACHE}; checked first.
 *
 * @throws {UserError} when it is empty, a file, a device, or a path
 * inside a file: one line naming it and the source of the setting.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cacheDir } from "./store.ts";
 * const dir = await Deno.makeTempDir();
 * assert.equal(cacheDir(`${dir}/cache`), `${dir}/cache`);
 * Deno.writeTextFileSync(`${dir}/file`, "");
 * assert.throws(() => cacheDir(`${dir}/file`), /--cache/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function cacheDir(flag?: string): string {
  const env = Deno.env.get("ENVSMITH_CACHE");
  const dir = flag ?? env ?? DEFAULT_CACHE;
  const source = flag !== undefined
    ? "--cache"
    : env !== undefined
    ? "ENVSMITH_CACHE"
    : "the default cache";
  const problem = cacheDirProblem(dir);
  if (problem !== null) {
    throw new UserError(
      `Cannot use ${source} ${JSON.stringify(dir)} as the cache: ${problem}`,
    );
  }
  return dir;
}

/**
 * Why `dir` cannot be a cache directory (empty, not a directory, inside a
 * file), or null when it is one or can be made.
 */
export function cacheDirProblem(dir: string): string | null {
  if (dir.trim() === "") {
    return "it is empty; give a directory, or leave it out for .envsmith/cache";
  }
  if (dir.includes("\0")) return "it holds a NUL byte";
  // The path itself, or else its nearest existing ancestor.
  let p = dir;
  for (let depth = 0; depth < 4096; depth++) {
    let st: Deno.FileInfo;
    try {
      st = Deno.statSync(p);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) {
        const up = dirname(p);
        if (up === p) return null;
        p = up;
        continue;
      }
      if (e instanceof Deno.errors.NotADirectory) {
        const up = dirname(p);
        if (up === p) return null;
        p = up;
        continue;
      }
      return null; // permission and the like: reported where it is used
    }
    if (st.isDirectory) return null;
    const what = st.isFile
      ? "a file"
      : st.isCharDevice || st.isBlockDevice
      ? "a device"
      : st.isFifo
      ? "a FIFO"
      : "not a directory";
    return p === dir
      ? `it is ${what}, not a directory; give a directory`
      : `${p} is ${what}, so nothing can be made inside it; give a directory`;
  }
  return null;
}

const _HOST = hostname();

/**
 * A name for a temporary file or directory of this process,
 * `PREFIX@HOST~PID~RANDOM`: a process killed before removing it leaves a
 * name that says whose it was, so the next run on this host removes it at
 * once when that process is gone ({@linkcode Store.cleanLeftovers}).
 */
export function tmpName(prefix: string): string {
  return `${prefix}@${_HOST}~${Deno.pid}~${crypto.randomUUID().slice(0, 8)}`;
}

/** Host and pid of a {@linkcode tmpName}, or null for another name. */
export function tmpOwner(name: string): { host: string; pid: number } | null {
  const m = /@([A-Za-z0-9._-]+)~(\d+)~[0-9a-f]{8}$/.exec(name);
  return m ? { host: m[1]!, pid: Number(m[2]) } : null;
}

/**
 * Removes the temporary file of a killed export named in the note `note`
 * (only a name of that form: `.BUNDLE.export@HOST~PID~RANDOM`).
 */
function _removeNotedExport(note: string): void {
  let target: string;
  try {
    target = readRegularText(note, 4096).trim();
  } catch {
    return;
  }
  const name = target.split("/").pop() ?? "";
  const owner = tmpOwner(name);
  if (!/^\..+\.export@/.test(name) || owner === null) return;
  if (owner.host === _HOST && processAlive(owner.pid)) return;
  try {
    if (Deno.lstatSync(target).isFile) Deno.removeSync(target);
  } catch { /* gone */ }
}

/** Every BlobRef inside a JSON value. */
export function blobsIn(
  value: Json | undefined,
  out: BlobRef[] = [],
): BlobRef[] {
  if (value === null || value === undefined || typeof value !== "object") {
    return out;
  }
  if (Array.isArray(value)) {
    for (const x of value) blobsIn(x, out);
    return out;
  }
  if (typeof value.$blob === "string" && typeof value.size === "number") {
    out.push(value as unknown as BlobRef);
    return out;
  }
  for (const x of Object.values(value)) blobsIn(x, out);
  return out;
}

/**
 * A cache directory.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Store } from "./store.ts";
 * const dir = await Deno.makeTempDir();
 * const store = new Store(dir);
 * const ref = store.writeBlob(new Uint8Array([1, 2, 3]), "application/octet-stream");
 * assert.deepEqual(store.readBlob(ref), new Uint8Array([1, 2, 3]));
 * assert.equal(store.hasEntry("0".repeat(64)), false);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class Store {
  /** The cache directory. */
  readonly root: string;
  #made = new Set<string>();
  #verifiedBlobs = new Set<string>();

  /** Opens (creating lazily) the cache at `root`. */
  constructor(root: string) {
    this.root = root;
  }

  #dir(...parts: string[]): string {
    const d = join(this.root, ...parts);
    if (!this.#made.has(d)) {
      onDisk(
        d,
        "create the directory",
        () => Deno.mkdirSync(d, { recursive: true }),
      );
      this.#made.add(d);
    }
    return d;
  }

  /** Path of the entry file of `key`. */
  entryPath(key: string): string {
    return join(this.root, "entries", key.slice(0, 2), `${key}.json`);
  }
  /** Path of the blob file of `hash`. */
  blobPath(hash: string): string {
    return join(this.root, "blobs", hash.slice(0, 2), hash);
  }
  /** Path of the log of `key`. */
  logPath(key: string): string {
    return join(this.#dir("logs"), `${key}.log`);
  }
  /** Directory shared by a kind across runs (NodeContext.auxDir). */
  auxDir(kind: string): string {
    return this.#dir("aux", kind.replace(/[^A-Za-z0-9_.-]/g, "_"));
  }
  /** A fresh private directory for one execution (in `tmp/`, named by {@linkcode tmpName}). */
  workDir(key: string): string {
    const d = join(this.#dir("tmp"), tmpName(`work-${key.slice(0, 16)}`));
    onDisk(d, "create the directory", () => Deno.mkdirSync(d));
    return d;
  }
  /**
   * A fresh temporary path in `tmp/` (same file system as the cache, so a
   * rename moves it into place atomically); a killed process's leftovers
   * are removed by {@linkcode Store.cleanLeftovers}.
   */
  tmpPath(prefix: string): string {
    return join(this.#dir("tmp"), tmpName(prefix));
  }

  /**
   * Checks that the cache can be written (creates it, writes and removes a
   * small file in `tmp/`), so a run on a read-only, full or foreign cache
   * stops before anything runs.
   *
   * @throws {FileSystemError} naming the path and what to do.
   */
  ensureWritable(): void {
    const probe = this.tmpPath("probe");
    onDisk(probe, "write", () => {
      Deno.writeFileSync(probe, new Uint8Array(64));
      Deno.removeSync(probe);
    });
  }

  /**
   * Removes what killed processes left in `tmp/` (work directories,
   * half-written files): at once when the owner ran on this host and is
   * gone, otherwise (another host, or an older name) when older than
   * `maxAgeMs` (`run` passes Infinity: a job on another host of a shared
   * cache may be alive and quiet for days; `cache gc` a day). Never touches
   * a live process's files on this host. Returns how many files or
   * directories were removed and their bytes.
   */
  cleanLeftovers(maxAgeMs = 86_400_000): { removed: number; bytes: number } {
    let removed = 0, bytes = 0;
    let list: Deno.DirEntry[];
    const dir = join(this.root, "tmp");
    try {
      list = [...Deno.readDirSync(dir)];
    } catch {
      return { removed, bytes };
    }
    for (const e of list) {
      const p = join(dir, e.name);
      const owner = tmpOwner(e.name);
      let stale: boolean;
      let size = 0;
      try {
        const st = Deno.statSync(p);
        size = st.isFile ? st.size : 0;
        stale = owner !== null && owner.host === _HOST
          ? owner.pid !== Deno.pid && !processAlive(owner.pid)
          : Date.now() - (st.mtime?.getTime() ?? Date.now()) > maxAgeMs;
      } catch {
        continue; // removed meanwhile
      }
      if (!stale) continue;
      if (e.name.startsWith(EXPORT_NOTE + "@")) _removeNotedExport(p);
      try {
        Deno.removeSync(p, { recursive: true });
        removed++;
        bytes += size;
      } catch { /* removed meanwhile, or not ours to remove */ }
    }
    return { removed, bytes };
  }
  /** Directory of the run manifests of an experiment. */
  runsDir(experiment: string): string {
    return this.#dir("runs", experiment);
  }
  /** Directory of one run's own files (e.g. Slurm job scripts and logs), beside its manifest. */
  runDir(experiment: string, run: string): string {
    return this.#dir("runs", experiment, run);
  }
  /** Path of the job spec of `key`. */
  jobPath(key: string): string {
    return join(this.#dir("jobs"), `${key}.json`);
  }

  /** Writes `bytes` to `final` atomically and write-once (tmp + link). Returns false if it already existed. */
  #writeOnce(final: string, bytes: Uint8Array, dirParts: string[]): boolean {
    this.#dir(...dirParts);
    const tmp = this.tmpPath("w");
    return onDisk(final, "write", () => {
      try {
        Deno.writeFileSync(tmp, bytes);
      } catch (e) {
        try {
          Deno.removeSync(tmp); // half-written (a full disk)
        } catch { /* never written */ }
        throw e;
      }
      return this.#place(tmp, final);
    });
  }

  /** Whether the existing file `final` passes `check` (a regular file, read within 4 GiB). */
  #intact(final: string, check: (bytes: Uint8Array) => void): boolean {
    try {
      check(readRegularFile(final, MAX_BLOB_BYTES));
      return true;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return false; // moved meanwhile
      if (e instanceof NotRegularFileError || e instanceof RangeError) {
        return false;
      }
      throw e;
    }
  }

  /** Links the complete file `tmp` to `final` unless it exists (write-once); removes `tmp`. */
  #place(tmp: string, final: string): boolean {
    try {
      try {
        Deno.linkSync(tmp, final);
        return true;
      } catch (e) {
        if (e instanceof Deno.errors.AlreadyExists) return false;
        // No hard links here: rename (atomic; last writer wins with identical content).
        try {
          Deno.lstatSync(final);
          return false;
        } catch {
          Deno.renameSync(tmp, final);
          return true;
        }
      }
    } finally {
      try {
        Deno.removeSync(tmp);
      } catch { /* renamed, or never written */ }
    }
  }

  /**
   * Stores the file `tmp` (in `tmp/`, already checked to hold the bytes
   * whose sha256 is `hash`) as that blob, write-once; `tmp` is removed.
   * Returns false when the blob existed. For blobs streamed in (bundles).
   */
  adoptBlob(tmp: string, hash: string): boolean {
    this.#dir("blobs", hash.slice(0, 2));
    const final = this.blobPath(hash);
    return onDisk(final, "write", () => this.#place(tmp, final));
  }

  /**
   * Moves a bad file to `corrupt/` so it is never read again; returns where
   * it went, or null when it could not be moved (gone already, or a
   * read-only cache: then it stays, and is reported again next time).
   */
  quarantine(file: string, prefix = ""): string | null {
    try {
      const dest = join(
        this.#dir("corrupt"),
        `${prefix}${file.split("/").pop()}.${Date.now()}-${
          crypto.randomUUID().slice(0, 6)
        }`,
      );
      Deno.renameSync(file, dest);
      return dest;
    } catch {
      return null; // moved by another process, or cannot be moved
    }
  }

  /** Path of the import mark of `key` (beside its entry). */
  importMarkPath(key: string): string {
    return join(this.root, "entries", key.slice(0, 2), `${key}.imported`);
  }

  /** The import mark of `key`, or null when its entry was computed here (or is absent). An unreadable mark still marks. */
  importMark(key: string): ImportMark | null {
    let text: string;
    try {
      text = readRegularText(this.importMarkPath(key), 64 * 1024);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      return { bundle: "?", imported: "", resultsOnly: false };
    }
    try {
      return JSON.parse(text) as ImportMark;
    } catch {
      return { bundle: "?", imported: "", resultsOnly: false };
    }
  }

  /** Marks `key` as imported (written before its entry, so an imported entry is never visible unmarked). */
  markImported(key: string, mark: ImportMark): void {
    this.#dir("entries", key.slice(0, 2));
    const final = this.importMarkPath(key);
    const tmp = this.tmpPath("mark");
    onDisk(final, "write", () => {
      Deno.writeTextFileSync(tmp, JSON.stringify(mark));
      Deno.renameSync(tmp, final);
    });
  }

  /** Removes the import mark of `key` (its entry is now computed here). */
  unmarkImported(key: string): void {
    const path = this.importMarkPath(key);
    try {
      Deno.removeSync(path);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) {
        throw asFileSystemError(e, path, "remove") ?? e;
      }
    }
  }

  /** Every key with an import mark (one pass over the entry directories). */
  importedKeys(): Set<string> {
    const out = new Set<string>();
    let shards: Deno.DirEntry[];
    try {
      shards = [...Deno.readDirSync(join(this.root, "entries"))];
    } catch {
      return out;
    }
    for (const s of shards) {
      if (!s.isDirectory) continue;
      for (const f of Deno.readDirSync(join(this.root, "entries", s.name))) {
        if (f.isFile && f.name.endsWith(".imported")) {
          out.add(f.name.slice(0, -".imported".length));
        }
      }
    }
    return out;
  }

  /** Whether an entry file exists for `key` (not verified). */
  hasEntry(key: string): boolean {
    try {
      Deno.lstatSync(this.entryPath(key));
      return true;
    } catch {
      return false;
    }
  }

  /** Reads and verifies an entry; `null` when absent; throws {@linkcode CorruptEntryError} when bad. */
  readEntry(key: string): Entry | null {
    const file = this.entryPath(key);
    const bytes = this.#readEntryFile(key, file);
    return bytes === null ? null : this.parseEntry(key, file, bytes);
  }

  /**
   * The bytes of an entry file, or null when absent. Anything but a
   * regular file of bounded size is a corrupt entry (never followed, never
   * opened when a FIFO or device).
   */
  #readEntryFile(key: string, file: string): Uint8Array | null {
    try {
      return readRegularFile(file, MAX_ENTRY_BYTES);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      if (e instanceof NotRegularFileError) {
        throw new CorruptEntryError(key, file, `${e.what}, not an entry file`);
      }
      throw e;
    }
  }

  /**
   * Verifies the bytes of an entry file against its header without parsing
   * the JSON; returns the body and the blob hashes the header lists.
   */
  verifyEntryBytes(
    key: string,
    file: string,
    bytes: Uint8Array,
  ): { body: Uint8Array; blobs: string[] } {
    const nl = bytes.indexOf(10);
    if (nl < 0) {
      throw new CorruptEntryError(key, file, "no header line (truncated?)");
    }
    const header = new TextDecoder().decode(bytes.subarray(0, nl));
    const m = /^envsmith-entry 1 ([0-9a-f]{64})((?: [0-9a-f]{64})*)$/.exec(
      header,
    );
    if (!m) {
      throw new CorruptEntryError(
        key,
        file,
        `bad header "${header.slice(0, 80)}"`,
      );
    }
    const body = bytes.subarray(nl + 1);
    if (sha256Hex(body) !== m[1]) {
      throw new CorruptEntryError(
        key,
        file,
        "sha256 of the content does not match its header (truncated or modified)",
      );
    }
    return { body, blobs: m[2] ? m[2].trim().split(" ") : [] };
  }

  /**
   * Whether `key` has a verified entry whose blobs are intact, without
   * parsing it: `false` when absent; throws {@linkcode CorruptEntryError}
   * (after moving the bad file aside) when corrupt.
   */
  checkEntry(key: string): boolean {
    const file = this.entryPath(key);
    let blobs: string[];
    try {
      const bytes = this.#readEntryFile(key, file);
      if (bytes === null) return false;
      blobs = this.verifyEntryBytes(key, file, bytes).blobs;
    } catch (e) {
      if (e instanceof CorruptEntryError) this.quarantine(e.file);
      throw e;
    }
    this.#verifyBlobs(key, blobs);
    return true;
  }

  /** Verifies and parses the bytes of an entry file. */
  parseEntry(key: string, file: string, bytes: Uint8Array): Entry {
    const { body, blobs } = this.verifyEntryBytes(key, file, bytes);
    let entry: Entry;
    try {
      entry = JSON.parse(new TextDecoder().decode(body)) as Entry;
    } catch (e) {
      throw new CorruptEntryError(
        key,
        file,
        `not JSON: ${(e as Error).message}`,
      );
    }
    if (entry.key !== key) {
      throw new CorruptEntryError(key, file, `holds key ${entry.key}`);
    }
    if ((entry.blobs ?? []).join(" ") !== blobs.join(" ")) {
      throw new CorruptEntryError(
        key,
        file,
        "the blob list of its header does not match its content",
      );
    }
    return entry;
  }

  /**
   * Stores an entry computed here (write-once). Returns false if one
   * existed already, except an imported one, which it replaces (a local
   * result is never shadowed by an imported one).
   */
  writeEntry(entry: Entry): boolean {
    const body = new TextEncoder().encode(JSON.stringify(entry));
    const blobs = entry.blobs.length ? " " + entry.blobs.join(" ") : "";
    const head = new TextEncoder().encode(
      `${ENTRY_HEADER} ${sha256Hex(body)}${blobs}\n`,
    );
    const bytes = new Uint8Array(head.length + body.length);
    bytes.set(head);
    bytes.set(body, head.length);
    const final = this.entryPath(entry.key);
    if (this.#writeOnce(final, bytes, ["entries", entry.key.slice(0, 2)])) {
      return true;
    }
    if (this.importMark(entry.key) === null) {
      // Write-once keeps an existing entry only when it is intact: a
      // damaged file would fail every reader, so it is moved aside.
      if (
        this.#intact(final, (b) => this.verifyEntryBytes(entry.key, final, b))
      ) {
        return false;
      }
      this.quarantine(final);
      return this.#writeOnce(final, bytes, ["entries", entry.key.slice(0, 2)]);
    }
    // Replace (atomic rename), then unmark: a crash in between leaves a
    // local result still marked, which is recomputed again, never the
    // reverse.
    writeAtomic(final, this.tmpPath("w"), bytes, "write");
    this.unmarkImported(entry.key);
    return true;
  }

  /** Raw bytes of an entry file (for export); verified. */
  entryBytes(key: string): Uint8Array {
    const file = this.entryPath(key);
    const bytes = this.#readEntryFile(key, file);
    if (bytes === null) throw new Deno.errors.NotFound(`no entry ${key}`);
    this.parseEntry(key, file, bytes);
    return bytes;
  }

  /**
   * Stores an entry file's bytes as exported (verified first). `parsed`:
   * these very bytes (by sha256) were parsed and checked already, so only
   * the header hash is checked again, not the JSON.
   */
  importEntryBytes(key: string, bytes: Uint8Array, parsed = false): boolean {
    if (parsed) this.verifyEntryBytes(key, `(bundle entry ${key})`, bytes);
    else this.parseEntry(key, `(bundle entry ${key})`, bytes);
    return this.#writeOnce(this.entryPath(key), bytes, [
      "entries",
      key.slice(0, 2),
    ]);
  }

  /** Stores bytes as a blob (write-once, named by their sha256). */
  writeBlob(bytes: Uint8Array, media: string): BlobRef {
    const hash = sha256Hex(bytes);
    const final = this.blobPath(hash);
    const dir = ["blobs", hash.slice(0, 2)];
    if (
      !this.#writeOnce(final, bytes, dir) &&
      !this.#intact(final, (b) => {
        if (sha256Hex(b) !== hash) throw new RangeError("damaged");
      })
    ) {
      // A damaged copy (its bytes no longer hash to its name) would fail
      // every reader of this result: moved aside and written anew.
      this.quarantine(final);
      this.#writeOnce(final, bytes, dir);
    }
    this.#verifiedBlobs.add(hash);
    return { $blob: hash, size: bytes.length, media };
  }

  /** Reads and verifies a blob. Throws {@linkcode CorruptEntryError} (and quarantines the file) when bad, `Deno.errors.NotFound` when absent. */
  readBlob(ref: Pick<BlobRef, "$blob"> & { size?: number }): Uint8Array {
    const file = this.blobPath(ref.$blob);
    let bytes: Uint8Array;
    try {
      bytes = readRegularFile(
        file,
        typeof ref.size === "number" && ref.size >= 0
          ? ref.size
          : MAX_BLOB_BYTES,
      );
    } catch (e) {
      if (!(e instanceof NotRegularFileError)) throw e;
      this.quarantine(file);
      throw new CorruptEntryError(
        ref.$blob,
        file,
        e.what.startsWith("larger")
          ? `${e.what}, more than its reference says`
          : `${e.what}, not a blob file`,
      );
    }
    if (sha256Hex(bytes) !== ref.$blob) {
      this.quarantine(file);
      throw new CorruptEntryError(
        ref.$blob,
        file,
        "sha256 of the bytes does not match the blob's name",
      );
    }
    this.#verifiedBlobs.add(ref.$blob);
    return bytes;
  }

  /** Verifies a blob once per process; throws like {@linkcode readBlob}. */
  verifyBlob(hash: string): void {
    if (this.#verifiedBlobs.has(hash)) return;
    this.readBlob({ $blob: hash });
  }

  /**
   * Reads an entry computed here and verifies it and its blobs: what a
   * computation may use. Returns `null` when absent or imported from a
   * bundle (see {@linkcode Store.importMark}; `readEntry` reads those); on
   * corruption quarantines the bad file and throws.
   */
  loadVerified(key: string): Entry | null {
    if (this.importMark(key) !== null) return null;
    let entry: Entry | null;
    try {
      entry = this.readEntry(key);
    } catch (e) {
      if (e instanceof CorruptEntryError) this.quarantine(e.file);
      throw e;
    }
    if (!entry) return null;
    this.#verifyBlobs(key, entry.blobs);
    return entry;
  }

  /**
   * Reads (hash-verifying) every blob of an entry; a missing one makes the
   * entry corrupt, and the entry file is moved aside (so it is recomputed,
   * and reported once, not on every run).
   */
  #verifyBlobs(key: string, blobs: readonly string[]): void {
    for (const b of blobs) {
      try {
        this.readBlob({ $blob: b });
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) {
          const file = this.entryPath(key);
          this.quarantine(file);
          throw new CorruptEntryError(
            key,
            file,
            `its blob ${b} is missing`,
          );
        }
        throw e;
      }
    }
  }

  /** Whether a blob file exists (not verified). */
  hasBlob(hash: string): boolean {
    try {
      Deno.lstatSync(this.blobPath(hash));
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Records that a `cache import` of `bundle` writes into this cache
   * (`ROOT/imports/import@HOST~PID~RANDOM.lock`, a lock file refreshed
   * while it lives): `cache gc` removes nothing while one is there, since
   * the blobs an import has written are referenced only by entries it has
   * yet to write. Released when the import ends, however it ends; a killed
   * import leaves it behind, and gc names it.
   */
  beginImport(bundle: string): Lock {
    const path = join(this.#dir("imports"), `${tmpName("import")}.lock`);
    const got = onDisk(path, "write", () => tryLock(path, bundle));
    if (!("release" in got)) {
      throw new UserError(`${path}: cannot record the import (${got.note})`);
    }
    return got;
  }

  /** The import records of {@linkcode Store.beginImport} present now (paths). */
  importRecords(): string[] {
    const dir = join(this.root, "imports");
    try {
      // Only the `.lock` files: `<sha256>.json` remembers a finished import.
      return [...Deno.readDirSync(dir)].filter((e) => e.name.endsWith(".lock"))
        .map((e) => join(dir, e.name)).sort();
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return [];
      throw asFileSystemError(e, dir, "read") ?? e;
    }
  }

  /** Path of the lock file of `key`. */
  lockPath(key: string): string {
    return join(this.root, "locks", `${key}.lock`);
  }

  /** Tries to lock `key` for computing; the lock or the live holder's info. */
  lock(key: string, note: string, options?: LockOptions): Lock | LockInfo {
    const path = join(this.#dir("locks"), `${key}.lock`);
    return onDisk(path, "create the lock", () => tryLock(path, note, options));
  }

  /** Who computes `key` right now (a live, fresh lock), without locking; `null` when nobody. */
  lockHolder(key: string, options?: LockOptions): LockInfo | null {
    return lockHolder(join(this.root, "locks", `${key}.lock`), options);
  }

  /** Every key with an entry file. */
  *keys(): Generator<string> {
    let shards: Deno.DirEntry[];
    try {
      shards = [...Deno.readDirSync(join(this.root, "entries"))];
    } catch {
      return;
    }
    for (const s of shards) {
      if (!s.isDirectory) continue;
      for (const f of Deno.readDirSync(join(this.root, "entries", s.name))) {
        // Whatever its type: a symlink, directory or FIFO named like an
        // entry is listed, so that reading it reports it as corrupt.
        if (f.name.endsWith(".json")) yield f.name.slice(0, -5);
      }
    }
  }

  /** Every blob hash stored. */
  *blobHashes(): Generator<string> {
    let shards: Deno.DirEntry[];
    try {
      shards = [...Deno.readDirSync(join(this.root, "blobs"))];
    } catch {
      return;
    }
    for (const s of shards) {
      if (!s.isDirectory) continue;
      for (const f of Deno.readDirSync(join(this.root, "blobs", s.name))) {
        yield f.name; // whatever its type (see keys())
      }
    }
  }
}
