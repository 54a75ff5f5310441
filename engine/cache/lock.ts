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
import { readRegularText } from "../regular_file.ts";

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

/** A lock file is a line of JSON; anything larger is not one. */
const _MAX_LOCK_BYTES = 64 * 1024;

/** The holder a lock file's text names, or null when it is not a lock's. */
function _holderOf(text: string): LockInfo | null {
  const h = JSON.parse(text) as Partial<LockInfo> | null;
  if (
    typeof h !== "object" || h === null || typeof h.pid !== "number" ||
    typeof h.host !== "string"
  ) return null;
  return {
    pid: h.pid,
    host: h.host,
    token: String(h.token ?? "?"),
    note: String(h.note ?? ""),
    since: String(h.since ?? ""),
  };
}

/** `1h 05m`, `3m 20s`, `12s`. */
function _age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

/**
 * Who holds the lock at `path` and what to do about it, in one line: the
 * node, pid and host, how long it has been held and since it was last
 * refreshed; for a holder on another host (whose process cannot be checked
 * from here), when the lock expires by itself and the command that clears
 * it at once.
 */
export function describeHolder(
  path: string,
  holder: LockInfo,
  options: LockOptions = {},
): string {
  const staleMs = options.staleMs ?? 300_000;
  let touched = Date.now();
  try {
    touched = Deno.lstatSync(path).mtime?.getTime() ?? touched;
  } catch { /* released meanwhile */ }
  const since = Date.parse(holder.since);
  const held = Number.isNaN(since)
    ? ""
    : `, held for ${_age(Date.now() - since)}`;
  const who = `${holder.note || "?"} in pid ${holder.pid} on ${
    holder.host === _HOST ? "this host" : `host ${holder.host}`
  }${held}`;
  if (holder.host === _HOST) return who;
  return `${who}, refreshed ${
    _age(Date.now() - touched)
  } ago; if that run is gone, the lock expires in ${
    _age(Math.max(0, staleMs - (Date.now() - touched)))
  }, or clear it now with: rm ${path}`;
}

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
      mtime = Deno.lstatSync(path).mtime?.getTime() ?? Date.now();
      holder = _holderOf(readRegularText(path, _MAX_LOCK_BYTES));
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
    mtime = Deno.lstatSync(path).mtime?.getTime() ?? Date.now();
    const h = _holderOf(readRegularText(path, _MAX_LOCK_BYTES));
    if (h === null) return null;
    holder = h;
  } catch {
    return null; // none, or half-written (tryLock decides then)
  }
  if (holder.host === _HOST && !processAlive(holder.pid)) return null;
  if (Date.now() - mtime > staleMs) return null;
  return holder;
}

/** What a lock file says about its owner: see {@linkcode lockState}. */
export type LockState =
  | { readonly state: "free" }
  | { readonly state: "stale"; readonly holder: LockInfo | null }
  | { readonly state: "live"; readonly holder: LockInfo }
  | {
    readonly state: "unknown";
    readonly problem: string;
    readonly ageMs: number;
  };

/**
 * Whether a lock file has a live owner, for a caller that must not act on
 * a guess (`cache gc`): `free` (no file), `stale` (its owner is a process
 * of this host that is gone, or it has not been refreshed for `staleMs`:
 * a live owner refreshes it every `heartbeatMs`), `live` (an owner that
 * is or may be running), or `unknown` (a fresh file whose owner cannot be
 * read: half-written, not a lock's JSON, not a regular file, unreadable).
 */
export function lockState(path: string, options: LockOptions = {}): LockState {
  const staleMs = options.staleMs ?? 300_000;
  let mtime: number;
  try {
    mtime = Deno.lstatSync(path).mtime?.getTime() ?? Date.now();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { state: "free" };
    return {
      state: "unknown",
      problem: `cannot be examined (${(e as Error).message})`,
      ageMs: 0,
    };
  }
  const ageMs = Math.max(0, Date.now() - mtime);
  let holder: LockInfo | null;
  let problem = "";
  try {
    holder = _holderOf(readRegularText(path, _MAX_LOCK_BYTES));
    if (holder === null) problem = "not a lock (no pid and host)";
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { state: "free" };
    holder = null;
    problem = e instanceof SyntaxError
      ? "not JSON (half-written?)"
      : (e as Error).message;
  }
  if (ageMs > staleMs) return { state: "stale", holder };
  if (holder === null) return { state: "unknown", problem, ageMs };
  if (holder.host === _HOST && !processAlive(holder.pid)) {
    return { state: "stale", holder };
  }
  return { state: "live", holder };
}
