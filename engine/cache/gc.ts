/**
 * `cache gc`: removes the entries that no run manifest references, the blobs
 * no kept entry references, their logs and job specs, and stale temporary
 * files. Manifests are kept unless `keepRuns` limits them.
 *
 * @module
 */
import { join } from "node:path";
import { hostname } from "node:os";
import {
  badManifestLine,
  listManifests,
  type Manifest,
  MAX_MANIFEST_BYTES,
  readManifestChecked,
} from "./manifest.ts";
import { processAlive } from "./lock.ts";
import { NotRegularFileError, readRegularText } from "../regular_file.ts";
import type { Store } from "./store.ts";
import { CorruptEntryError } from "../errors.ts";

/** What gc removed (or would remove). */
export interface GcResult {
  /** Entry keys. */
  readonly entries: string[];
  /** Blob hashes. */
  readonly blobs: string[];
  /** Bytes freed. */
  readonly bytes: number;
  /** Manifests removed (keepRuns). */
  readonly runs: string[];
  /** Leftovers of killed processes removed from `tmp/`. */
  readonly leftovers: number;
  /** One line per manifest that could not be read (moved aside unless a dry run; its entries kept). */
  readonly badManifests: string[];
  /** Runs still alive (their manifests and entries kept whatever `keepRuns` says). */
  readonly liveRuns: string[];
  /** Why no entry was removed, when gc could not tell which are referenced. */
  readonly entriesKeptBecause?: string;
}

function _size(p: string): number {
  try {
    return Deno.lstatSync(p).size;
  } catch {
    return 0;
  }
}

function _rm(p: string): void {
  try {
    Deno.removeSync(p, { recursive: true });
  } catch { /* gone */ }
}

/** A manifest not rewritten or touched for this long is not a live run's (other hosts). */
export const RUN_STALE_MS = 10 * 60_000;

const _HOST = hostname();

/**
 * Whether the run of a manifest is alive: it says "running" and its process
 * is alive on this host, or (another host) it was written or touched
 * within {@linkcode RUN_STALE_MS} (a run touches its manifest every 30 s).
 */
export function runAlive(m: Manifest, path: string): boolean {
  if (m.status !== "running") return false;
  if (m.host === _HOST) return processAlive(m.pid);
  try {
    const mtime = Deno.lstatSync(path).mtime?.getTime() ?? 0;
    return Date.now() - mtime < RUN_STALE_MS;
  } catch {
    return false;
  }
}

/** Prefix of bad manifests moved to `corrupt/` (their keys stay protected). */
const _BAD_MANIFEST = "manifest-";
const _KEY = /[0-9a-f]{64}/g;

/**
 * The keys a manifest file that is not a valid manifest may reference: every
 * 64-hex string in it (a conservative superset). `null` when the file
 * cannot be read at all.
 */
function _keysIn(path: string): Set<string> | null {
  let text: string;
  try {
    text = readRegularText(path, MAX_MANIFEST_BYTES);
  } catch (e) {
    // Not a regular file: nothing envsmith wrote, so nothing it references.
    if (e instanceof NotRegularFileError) return new Set();
    if (e instanceof Deno.errors.NotFound) return new Set();
    return null;
  }
  return new Set(text.match(_KEY) ?? []);
}

/**
 * Collects garbage. Entries referenced by a kept manifest, by a live run
 * or by a manifest that could not be read are never removed; a bad
 * manifest is moved to `corrupt/` (and what it references stays protected
 * while it lies there).
 */
export function gc(
  store: Store,
  options: { dryRun?: boolean; keepRuns?: number } = {},
): GcResult {
  if (!options.dryRun) store.ensureWritable();
  const runs: string[] = [];
  const badManifests: string[] = [];
  const liveRuns: string[] = [];
  const live = new Set<string>();
  let unknown: string | undefined;
  let leftovers = 0;
  const byExp = new Map<string, { path: string; m: Manifest }[]>();
  const badPaths: string[] = [];
  const protect = (path: string, problem: string) => {
    const keys = _keysIn(path);
    if (keys === null) {
      unknown ??=
        `run manifest ${path} cannot be read (${problem}): gc cannot tell which entries it references; fix its permissions or move it away`;
    } else for (const k of keys) live.add(k);
  };
  for (const f of listManifests(store)) {
    const r = readManifestChecked(f);
    if (!r.manifest) {
      badManifests.push(badManifestLine(f, r.problem));
      protect(f, r.problem);
      badPaths.push(f);
      continue;
    }
    const exp = f.split("/").slice(-2, -1)[0]!;
    const list = byExp.get(exp) ?? [];
    list.push({ path: f, m: r.manifest });
    byExp.set(exp, list);
  }
  // Bad manifests moved aside earlier keep protecting what they name.
  try {
    for (const e of Deno.readDirSync(join(store.root, "corrupt"))) {
      if (e.name.startsWith(_BAD_MANIFEST)) {
        protect(join(store.root, "corrupt", e.name), "moved aside");
      }
    }
  } catch { /* no corrupt/ */ }
  for (const list of byExp.values()) {
    const alive = list.filter((x) => runAlive(x.m, x.path));
    const done = list.filter((x) => !alive.includes(x));
    const n = options.keepRuns ?? Infinity;
    const cut = Math.max(0, done.length - n);
    runs.push(...done.slice(0, cut).map((x) => x.path));
    liveRuns.push(...alive.map((x) => x.path));
    for (const x of [...done.slice(cut), ...alive]) {
      for (const node of x.m.nodes) live.add(node.key);
    }
  }
  const entries: string[] = [];
  const liveBlobs = new Set<string>();
  let bytes = 0;
  for (const key of store.keys()) {
    if (!live.has(key)) {
      if (unknown !== undefined) continue;
      entries.push(key);
      bytes += _size(store.entryPath(key));
      continue;
    }
    try {
      const e = store.readEntry(key);
      for (const b of e?.blobs ?? []) liveBlobs.add(b);
    } catch (e) {
      if (!(e instanceof CorruptEntryError)) throw e;
      entries.push(key); // corrupt: useless
      bytes += _size(store.entryPath(key));
    }
  }
  const blobs: string[] = [];
  if (unknown === undefined) {
    for (const h of store.blobHashes()) {
      if (!liveBlobs.has(h)) {
        blobs.push(h);
        bytes += _size(store.blobPath(h));
      }
    }
  }
  if (!options.dryRun) {
    for (const k of entries) {
      _rm(store.entryPath(k));
      _rm(store.importMarkPath(k));
      _rm(join(store.root, "logs", `${k}.log`));
      _rm(join(store.root, "jobs", `${k}.json`));
    }
    for (const h of blobs) _rm(store.blobPath(h));
    for (const r of runs) {
      _rm(r);
      _rm(r.replace(/\.json$/, "")); // the run's directory (executor logs)
    }
    for (const f of badPaths) {
      const exp = f.split("/").slice(-2, -1)[0]!;
      store.quarantine(f, `${_BAD_MANIFEST}${exp}-`);
    }
    // Import marks whose entry is gone.
    const present = new Set(store.keys());
    for (const k of store.importedKeys()) {
      if (!present.has(k)) _rm(store.importMarkPath(k));
    }
    // What killed processes left in tmp/: at once when their process (on
    // this host) is gone, else after a day.
    leftovers = store.cleanLeftovers().removed;
  }
  return {
    entries,
    blobs,
    bytes,
    runs,
    leftovers,
    badManifests,
    liveRuns,
    ...(unknown !== undefined ? { entriesKeptBecause: unknown } : {}),
  };
}

/** What `cache verify` found. */
export interface VerifyResult {
  /** Entries checked. */
  readonly entries: number;
  /** Blobs checked. */
  readonly blobs: number;
  /** Problems (each moved to `corrupt/`, unless listed in `stuck`). */
  readonly corrupt: string[];
  /** Corrupt files that could not be moved aside (a read-only cache). */
  readonly stuck: string[];
  /** Entries imported from bundles: intact files, values computed elsewhere. */
  readonly imported: number;
}

/** Verifies every entry and blob of the cache; corrupt ones are moved aside (so they are recomputed). */
export function verifyCache(store: Store): VerifyResult {
  const corrupt: string[] = [];
  const stuck: string[] = [];
  let entries = 0, blobs = 0;
  for (const key of [...store.keys()]) {
    entries++;
    try {
      store.readEntry(key);
    } catch (e) {
      if (!(e instanceof CorruptEntryError)) throw e;
      const moved = store.quarantine(e.file);
      corrupt.push(e.message);
      if (moved === null) stuck.push(e.file);
    }
  }
  for (const h of [...store.blobHashes()]) {
    if (h.includes(".")) continue;
    blobs++;
    try {
      store.readBlob({ $blob: h });
    } catch (e) {
      if (!(e instanceof CorruptEntryError)) throw e;
      corrupt.push(e.message);
      if (_exists(e.file)) stuck.push(e.file);
    }
  }
  const present = new Set(store.keys());
  let imported = 0;
  for (const k of store.importedKeys()) if (present.has(k)) imported++;
  return { entries, blobs, corrupt, stuck, imported };
}

function _exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
