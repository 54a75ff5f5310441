/**
 * `cache gc`: removes the entries that no run manifest references, the blobs
 * no kept entry references, their logs and job specs, and stale temporary
 * files. Manifests are kept unless `keepRuns` limits them.
 *
 * @module
 */
import { join } from "node:path";
import type { CommandContext } from "./commands.ts";
import { listManifests, readManifest } from "./manifest.ts";
import { Store } from "./store.ts";
import { CorruptEntryError } from "./errors.ts";

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
  const runs: string[] = [];
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
      _rm(join(store.root, "logs", `${k}.log`));
      _rm(join(store.root, "jobs", `${k}.json`));
    }
    for (const h of blobs) _rm(store.blobPath(h));
    for (const r of runs) {
      _rm(r);
      _rm(r.replace(/\.json$/, "")); // the run's directory (executor logs)
    }
    // Temporary files older than a day (left by killed processes).
    try {
      for (const e of Deno.readDirSync(join(store.root, "tmp"))) {
        const p = join(store.root, "tmp", e.name);
        const m = Deno.statSync(p).mtime?.getTime() ?? Date.now();
        if (Date.now() - m > 86_400_000) _rm(p);
      }
    } catch { /* no tmp */ }
  }
  return { entries, blobs, bytes, runs };
}

/** `cache gc [--dry-run]` */
export function cacheGcCommand(
  ctx: CommandContext,
  options: { dryRun?: boolean; keepRuns?: number },
): Promise<number> {
  const store = new Store(ctx.cache);
  const r = gc(store, options);
  const verb = options.dryRun ? "would remove" : "removed";
  if (options.dryRun) {
    for (const k of r.entries) ctx.output.out(`entry ${k}`);
    for (const b of r.blobs) ctx.output.out(`blob  ${b}`);
    for (const m of r.runs) ctx.output.out(`run   ${m}`);
  }
  ctx.output.err(
    `${verb} ${r.entries.length} entries, ${r.blobs.length} blobs, ${r.runs.length} manifests (${
      (r.bytes / 1e6).toFixed(2)
    } MB) from ${store.root}`,
  );
  return Promise.resolve(0);
}

/** What `cache verify` found. */
export interface VerifyResult {
  /** Entries checked. */
  readonly entries: number;
  /** Blobs checked. */
  readonly blobs: number;
  /** Problems (each moved to `corrupt/`). */
  readonly corrupt: string[];
}

/** Verifies every entry and blob of the cache; corrupt ones are moved aside (so they are recomputed). */
export function verifyCache(store: Store): VerifyResult {
  const corrupt: string[] = [];
  let entries = 0, blobs = 0;
  for (const key of [...store.keys()]) {
    entries++;
    try {
      store.readEntry(key);
    } catch (e) {
      if (!(e instanceof CorruptEntryError)) throw e;
      store.quarantine(e.file);
      corrupt.push(e.message);
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
    }
  }
  return { entries, blobs, corrupt };
}

/** `cache verify`: exit 1 when anything was corrupt. */
export function cacheVerifyCommand(ctx: CommandContext): Promise<number> {
  const store = new Store(ctx.cache);
  const r = verifyCache(store);
  for (const c of r.corrupt) ctx.output.out(c);
  ctx.output.err(
    `verified ${r.entries} entries and ${r.blobs} blobs in ${store.root}: ` +
      (r.corrupt.length
        ? `${r.corrupt.length} corrupt (moved to ${store.root}/corrupt; they will be recomputed)`
        : "all intact"),
  );
  return Promise.resolve(r.corrupt.length ? 1 : 0);
}
