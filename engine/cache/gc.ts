/**
 * `cache gc`: removes the entries that no run manifest references, the blobs
 * no kept entry references, their logs and job specs, and stale temporary
 * files. Manifests are kept unless `keepRuns` limits them.
 *
 * @module
 */
import { join } from "node:path";
import { listManifests, readManifest } from "./manifest.ts";
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
}

function _size(p: string): number {
  try {
    return Deno.statSync(p).size;
  } catch {
    return 0;
  }
}

function _rm(p: string): void {
  try {
    Deno.removeSync(p, { recursive: true });
  } catch { /* gone */ }
}

/** Collects garbage. */
export function gc(
  store: Store,
  options: { dryRun?: boolean; keepRuns?: number } = {},
): GcResult {
  if (!options.dryRun) store.ensureWritable();
  const runs: string[] = [];
  let leftovers = 0;
  const byExp = new Map<string, string[]>();
  for (const f of listManifests(store)) {
    const exp = f.split("/").slice(-2, -1)[0]!;
    const list = byExp.get(exp) ?? [];
    list.push(f);
    byExp.set(exp, list);
  }
  const keep: string[] = [];
  for (const list of byExp.values()) {
    const n = options.keepRuns ?? Infinity;
    const cut = Math.max(0, list.length - n);
    runs.push(...list.slice(0, cut));
    keep.push(...list.slice(cut));
  }
  const live = new Set<string>();
  for (const f of keep) {
    const m = readManifest(f);
    if (!m) continue;
    for (const n of m.nodes) live.add(n.key);
  }
  const entries: string[] = [];
  const liveBlobs = new Set<string>();
  let bytes = 0;
  for (const key of store.keys()) {
    if (!live.has(key)) {
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
  for (const h of store.blobHashes()) {
    if (!liveBlobs.has(h)) {
      blobs.push(h);
      bytes += _size(store.blobPath(h));
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
    // Import marks whose entry is gone.
    const present = new Set(store.keys());
    for (const k of store.importedKeys()) {
      if (!present.has(k)) _rm(store.importMarkPath(k));
    }
    // What killed processes left in tmp/: at once when their process (on
    // this host) is gone, else after a day.
    leftovers = store.cleanLeftovers().removed;
  }
  return { entries, blobs, bytes, runs, leftovers };
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
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
