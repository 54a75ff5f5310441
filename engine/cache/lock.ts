/**
 * Per-key lock files that work across processes and hosts sharing a cache
 * directory (NFS included): created with O_EXCL (`createNew`), holding the
 * owner's pid, host and a token, kept fresh by touching their mtime. A lock is
 * stale when its owner is on this host and its process is gone, or when it has
 * not been touched for `staleMs`. Locks only avoid duplicate work: correctness
 * comes from write-once entries, so two processes that both compute a key
 * still leave one consistent entry.
 *
 * @module
 */
import { hostname } from "node:os";

/** What a lock file holds. */
export interface LockInfo {
  /** Process id of the owner. */
  readonly pid: number;
  /** Host name of the owner. */
  readonly host: string;
  /** Unique token of this acquisition. */
  readonly token: string;
  /** Free text, e.g. the node id and run. */
  readonly note: string;
  /** ISO time of acquisition. */
  readonly since: string;
}

const _HOST = hostname();

/** Whether a process with this pid runs on this host (Linux /proc; elsewhere assume yes). */
export function processAlive(pid: number): boolean {
  if (pid === Deno.pid) return true;
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      try {
        Deno.statSync("/proc/self");
        return false; // /proc works and the pid is not there
      } catch {
        return true;
      }
    }
    return true;
  }
}

/** A held lock. */
export class Lock {
  /** The lock file. */
  readonly path: string;
  /** What was written to it. */
  readonly info: LockInfo;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** Wraps a lock file this process created. */
  constructor(path: string, info: LockInfo, heartbeatMs: number) {
    this.path = path;
    this.info = info;
    if (heartbeatMs > 0) {
      const timer = setInterval(() => {
        try {
          const now = new Date();
          Deno.utimeSync(path, now, now);
        } catch { /* gone: nothing to refresh */ }
      }, heartbeatMs);
      Deno.unrefTimer(timer as unknown as number);
      this.#timer = timer;
    }
  }
  /** Releases the lock (only if the file still holds our token). */
  release(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    try {
      const cur = JSON.parse(Deno.readTextFileSync(this.path)) as LockInfo;
      if (cur.token === this.info.token) Deno.removeSync(this.path);
    } catch { /* already gone */ }
  }
}

/** Options of {@linkcode tryLock}. */
export interface LockOptions {
  /** A lock not touched for this long is stale. @default 300000 */
  readonly staleMs?: number;
  /** How often a held lock is touched. @default 30000 */
  readonly heartbeatMs?: number;
}

/**
 * Tries to take the lock at `path`. Returns the lock, or the info of the
 * current (live) holder. Stale locks are broken (renamed away) and retaken.
 */
export function tryLock(
  path: string,
  note: string,
  options: LockOptions = {},
): Lock | LockInfo {
  const staleMs = options.staleMs ?? 300_000;
  const heartbeatMs = options.heartbeatMs ?? 30_000;
  for (let attempt = 0; attempt < 5; attempt++) {
    const info: LockInfo = {
      pid: Deno.pid,
      host: _HOST,
      token: crypto.randomUUID(),
      note,
      since: new Date().toISOString(),
    };
    try {
      const f = Deno.openSync(path, { write: true, createNew: true });
      try {
        f.writeSync(new TextEncoder().encode(JSON.stringify(info)));
      } catch (e) {
        // (a full disk): leave no empty lock behind
        f.close();
        try {
          Deno.removeSync(path);
        } catch { /* gone */ }
        throw e;
      }
      f.close();
      return new Lock(path, info, heartbeatMs);
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    }
    let holder: LockInfo | null = null;
    let mtime = Date.now();
    try {
      const text = Deno.readTextFileSync(path);
      mtime = Deno.statSync(path).mtime?.getTime() ?? Date.now();
      holder = JSON.parse(text) as LockInfo;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) continue; // released meanwhile
      // Unreadable or half-written: stale only when old.
      if (Date.now() - mtime < 2000) {
        return {
          pid: 0,
          host: "?",
          token: "?",
          note: "being written",
          since: "",
        };
      }
    }
    const stale = holder === null ||
      (holder.host === _HOST && !processAlive(holder.pid)) ||
      Date.now() - mtime > staleMs;
    if (!stale) return holder!;
    // Break it: rename it to a unique name (only one breaker wins), then retry.
    const broken = `${path}.stale-${crypto.randomUUID()}`;
    try {
      Deno.renameSync(path, broken);
      Deno.removeSync(broken);
    } catch { /* someone else broke it */ }
  }
  return { pid: 0, host: "?", token: "?", note: "contended", since: "" };
}

/**
 * The live holder of the lock at `path`, without taking it: `null` when
 * there is no lock or it is stale (by the rules of {@linkcode tryLock}).
 */
export function lockHolder(
  path: string,
  options: LockOptions = {},
): LockInfo | null {
  const staleMs = options.staleMs ?? 300_000;
  let holder: LockInfo;
  let mtime: number;
  try {
    mtime = Deno.statSync(path).mtime?.getTime() ?? Date.now();
    holder = JSON.parse(Deno.readTextFileSync(path)) as LockInfo;
  } catch {
    return null; // none, or half-written (tryLock decides then)
  }
  if (holder.host === _HOST && !processAlive(holder.pid)) return null;
  if (Date.now() - mtime > staleMs) return null;
  return holder;
}
