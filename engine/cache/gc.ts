/**
 * `cache gc`: removes the entries that no run manifest references, the blobs
 * no kept entry references, their logs and job specs, and stale temporary
 * files. Manifests are kept unless `keepRuns` limits them. It keeps what
 * it cannot prove dead: anything that might need entries gc cannot see
 * stops it before it removes anything ({@linkcode GcRefusedError}).
 *
 * @module
 */
import { join } from "node:path";
import { hostname } from "node:os";
import {
  listManifests,
  type Manifest,
  readManifestChecked,
} from "./manifest.ts";
import { type Lock, type LockInfo, lockState, processAlive } from "./lock.ts";
import type { Store } from "./store.ts";
import { CorruptEntryError, UserError } from "../errors.ts";
import { pathExists } from "../path_exists.ts";

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
  /** Runs still alive (their manifests and entries kept whatever `keepRuns` says). */
  readonly liveRuns: string[];
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

/** Prefix under which older versions moved bad manifests to `corrupt/`. */
const _BAD_MANIFEST = "manifest-";

/** Name of the lock a running `cache gc` holds (`locks/gc.lock`). */
export const GC_LOCK = "gc";

/** Directory of the locks runs hold while they live (`live/RUN.lock`), apart from key locks. */
export const RUN_LOCK_DIR = "live";

/**
 * `cache gc` removed nothing because something in the cache may need
 * entries it cannot see: a manifest that cannot be read, an import that is
 * running or stopped halfway, a lock whose owner cannot be determined.
 * The message says which file, what is wrong with it and the fix.
 */
export class GcRefusedError extends UserError {
  /** The file that stopped gc. */
  readonly file: string;
  /** Creates the error. */
  constructor(file: string, message: string) {
    super(message);
    this.name = "GcRefusedError";
    this.file = file;
  }
}

function _refuse(file: string, what: string, fix: string): never {
  throw new GcRefusedError(
    file,
    `cache gc removed nothing: ${what}. ${fix}`,
  );
}

const _AGAIN = "then run `cache gc` again.";

/** Refuses for the first bad manifest (naming how many more there are). */
function _refuseManifest(bad: { path: string; problem: string }[]): never {
  const first = bad[0]!;
  const more = bad.length > 1
    ? ` (and ${bad.length - 1} more bad manifest${bad.length > 2 ? "s" : ""})`
    : "";
  const aside = first.path.includes("/corrupt/");
  _refuse(
    first.path,
    `run manifest ${first.path} is ${
      aside ? "a manifest an earlier gc moved aside, " : ""
    }${
      _problemText(first.problem)
    }${more}, so gc cannot tell which entries that run needs`,
    aside
      ? `Repair it and move it back into runs/, or delete it if that run's results are not needed; ${_AGAIN}`
      : `Repair it, or delete it if that run's results are not needed; ${_AGAIN}`,
  );
}

function _problemText(problem: string): string {
  return problem.startsWith("not ") || problem.startsWith("a ") ||
      problem.startsWith("an ") || problem.startsWith("larger")
    ? problem
    : problem === "missing"
    ? "gone while gc read it"
    : problem;
}

/** Seconds, rounded, for messages. */
function _s(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}

/** Every manifest file, failing loudly when a runs directory cannot be listed. */
function _manifestFiles(store: Store): string[] {
  const base = join(store.root, "runs");
  let dirs: Deno.DirEntry[];
  try {
    dirs = [...Deno.readDirSync(base)];
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    _refuse(
      base,
      `the run manifests in ${base} cannot be listed (${
        (e as Error).message
      }), so gc cannot tell which entries runs need`,
      `Make the directory readable; ${_AGAIN}`,
    );
  }
  for (const d of dirs) {
    if (!d.isDirectory) continue;
    const dir = join(base, d.name);
    try {
      Deno.readDirSync(dir)[Symbol.iterator]().next();
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) continue;
      _refuse(
        dir,
        `the run manifests in ${dir} cannot be listed (${
          (e as Error).message
        }), so gc cannot tell which entries those runs need`,
        `Make the directory readable; ${_AGAIN}`,
      );
    }
  }
  return listManifests(store);
}

/** Who a lock names, for messages. */
function _who(h: LockInfo | null): string {
  if (h === null) return "an owner that cannot be read";
  return `pid ${h.pid} on ${h.host === _HOST ? "this host" : `host ${h.host}`}`;
}

/** Refuses while an import runs or after one was killed halfway. */
function _checkImports(store: Store): void {
  for (const path of store.importRecords()) {
    const st = lockState(path);
    if (st.state === "free") continue;
    if (st.state === "live") {
      _refuse(
        path,
        `a \`cache import\` of ${st.holder.note} (${
          _who(st.holder)
        }) is writing into this cache, and the blobs it has written are referenced only by entries it has yet to write`,
        `Run \`cache gc\` again when the import has finished.`,
      );
    }
    if (st.state === "unknown") {
      _refuse(
        path,
        `the import record ${path} was written ${
          _s(st.ageMs)
        } ago but its owner cannot be read (${st.problem}), so gc cannot tell whether an import is writing into this cache`,
        `Run \`cache gc\` again in 5 minutes (a record nobody refreshes is then known to be left behind), or delete it if no import runs.`,
      );
    }
    _refuse(
      path,
      `a \`cache import\`${
        st.holder ? ` of ${st.holder.note}` : ""
      } stopped halfway (${_who(st.holder)}, ${
        st.holder?.host === _HOST ? "gone" : "not heard of for 5 minutes"
      }; record ${path}); what it wrote is complete, but its blobs may not yet be referenced by its entries`,
      `Import the bundle again to finish it (records already present are skipped), or delete ${path} if that import is not needed; ${_AGAIN}`,
    );
  }
}

/**
 * Refuses for a lock of a computation that no kept manifest explains (its
 * owner alive but unknown to gc, or not determinable), and waits (up to
 * `waitMs`) for starting runs to write their manifests.
 */
function _checkLocks(
  store: Store,
  protectedKeys: Set<string>,
  manifestRuns: Set<string>,
): void {
  const list = (dir: string): string[] => {
    try {
      return [...Deno.readDirSync(dir)].map((e) => join(dir, e.name));
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return [];
      _refuse(
        dir,
        `the locks in ${dir} cannot be listed (${
          (e as Error).message
        }), so gc cannot tell which computations are running`,
        `Make the directory readable; ${_AGAIN}`,
      );
    }
  };
  const names = [
    ...list(join(store.root, RUN_LOCK_DIR)),
    ...list(join(store.root, "locks")),
  ];
  for (const path of names) {
    const name = path.split("/").pop()!;
    if (!name.endsWith(".lock") || name === `${GC_LOCK}.lock`) continue;
    const id = name.slice(0, -".lock".length);
    const st = lockState(path);
    if (st.state === "free" || st.state === "stale") continue;
    if (st.state === "unknown") {
      _refuse(
        path,
        `lock ${path} was written ${
          _s(st.ageMs)
        } ago but its owner cannot be determined (${st.problem}), so gc cannot tell whether a computation that reads entries is running`,
        `Run \`cache gc\` again in 5 minutes (a lock nobody refreshes is then stale), or delete it if no process uses this cache (rm ${path}).`,
      );
    }
    if (_isRunLock(path)) {
      if (manifestRuns.has(id)) continue;
      _refuse(
        path,
        `a run (${
          _who(st.holder)
        }, ${st.holder.note}) is starting on this cache and has not written its manifest yet, so gc cannot tell which entries it will use`,
        `Run \`cache gc\` again in a moment.`,
      );
    }
    if (protectedKeys.has(id)) continue;
    _refuse(
      path,
      `entry ${id} is being computed (${st.holder.note || "?"} in ${
        _who(st.holder)
      }) by a process no run manifest accounts for, so gc cannot tell which entries it reads`,
      `Run \`cache gc\` again when it has finished.`,
    );
  }
}

function _isRunLock(path: string): boolean {
  return path.split("/").slice(-2, -1)[0] === RUN_LOCK_DIR;
}

/** How long gc waits for starting runs to write their manifests. */
const _RUN_START_WAIT_MS = 10_000;

/**
 * Collects garbage: removes the entries no run manifest references, the
 * blobs no kept entry references, their logs and job specs, stale
 * temporary files, and (with `keepRuns`) all but the newest manifests of
 * each finished experiment.
 *
 * It keeps what it cannot prove dead: when anything in the cache might
 * need entries that gc cannot see (a run manifest that cannot be read or
 * is not of a manifest's shape, a runs directory it cannot list, a
 * manifest an older version moved to `corrupt/`, an import running or
 * killed halfway, a lock whose owner cannot be determined or whose
 * computation no manifest accounts for, another gc), it removes nothing
 * and throws {@linkcode GcRefusedError} naming the file and the fix.
 * Entries referenced by a live run are kept whatever `keepRuns` says.
 *
 * @throws {GcRefusedError} when gc cannot tell which entries are needed.
 */
export async function gc(
  store: Store,
  options: { dryRun?: boolean; keepRuns?: number; startWaitMs?: number } = {},
): Promise<GcResult> {
  let lock: Lock | null = null;
  if (!options.dryRun) {
    store.ensureWritable();
    const got = store.lock(GC_LOCK, "cache gc", { heartbeatMs: 30_000 });
    if (!("release" in got)) {
      _refuse(
        store.lockPath(GC_LOCK),
        got.host === "?"
          ? `another \`cache gc\` is starting on this cache (lock ${
            store.lockPath(GC_LOCK)
          } ${got.note})`
          : `another \`cache gc\` (${_who(got)}) is running on this cache`,
        `Run \`cache gc\` again when it has finished.`,
      );
    }
    lock = got;
  }
  try {
    return await _collect(store, options);
  } finally {
    lock?.release();
  }
}

// Long by design: the order of its listings is what makes it safe beside running experiments (entries before manifests); kept in one place on purpose.
async function _collect(
  store: Store,
  options: { dryRun?: boolean; keepRuns?: number; startWaitMs?: number },
): Promise<GcResult> {
  // The entries are listed before the manifests: a run writes its manifest
  // before its first entry, so every entry listed here that a run wrote
  // is named by a manifest listed below.
  const keys = [...store.keys()];
  _checkImports(store);
  const runs: string[] = [];
  const liveRuns: string[] = [];
  const live = new Set<string>();
  let leftovers = 0;
  let byExp = new Map<string, { path: string; m: Manifest }[]>();
  const readAll = () => {
    const bad: { path: string; problem: string }[] = [];
    const out = new Map<string, { path: string; m: Manifest }[]>();
    for (const f of _manifestFiles(store)) {
      const r = readManifestChecked(f);
      if (!r.manifest) {
        bad.push({ path: f, problem: r.problem });
        continue;
      }
      const exp = f.split("/").slice(-2, -1)[0]!;
      const list = out.get(exp) ?? [];
      list.push({ path: f, m: r.manifest });
      out.set(exp, list);
    }
    // Bad manifests older versions of gc moved aside.
    try {
      for (const e of Deno.readDirSync(join(store.root, "corrupt"))) {
        if (e.name.startsWith(_BAD_MANIFEST)) {
          bad.push({
            path: join(store.root, "corrupt", e.name),
            problem: "not readable as one",
          });
        }
      }
    } catch { /* no corrupt/ */ }
    if (bad.length > 0) _refuseManifest(bad);
    return out;
  };
  // Runs that are starting (planning) write their manifest within moments.
  const deadline = Date.now() + (options.startWaitMs ?? _RUN_START_WAIT_MS);
  for (;;) {
    byExp = readAll();
    const names = new Set<string>();
    const all = new Set<string>();
    for (const list of byExp.values()) {
      for (const x of list) {
        names.add(x.m.run);
        for (const n of x.m.nodes) all.add(n.key);
      }
    }
    try {
      _checkLocks(store, all, names);
      break;
    } catch (e) {
      const starting = e instanceof GcRefusedError &&
        _isRunLock(e.file);
      if (!starting || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
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
  for (const key of keys) {
    if (!live.has(key)) {
      entries.push(key);
      bytes += _size(store.entryPath(key));
      continue;
    }
    try {
      const e = store.readEntry(key);
      for (const b of e?.blobs ?? []) liveBlobs.add(b);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) continue;
      if (!(e instanceof CorruptEntryError)) {
        _refuse(
          store.entryPath(key),
          `entry ${key} (${store.entryPath(key)}) cannot be read (${
            (e as Error).message
          }), so gc cannot tell which blobs it needs`,
          `Fix its permissions; ${_AGAIN}`,
        );
      }
      entries.push(key); // corrupt: useless, recomputed by the next run
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
  return { entries, blobs, bytes, runs, leftovers, liveRuns };
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

/**
 * Verifies every entry and blob of the cache; corrupt ones are moved aside (so they are recomputed).
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
 * import { verifyCache } from "./gc.ts";
 * const r = verifyCache(store);
 * assert.deepEqual([r.entries, r.corrupt], [1, []]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
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
      if (pathExists(e.file)) stuck.push(e.file);
    }
  }
  const present = new Set(store.keys());
  let imported = 0;
  for (const k of store.importedKeys()) if (present.has(k)) imported++;
  return { entries, blobs, corrupt, stuck, imported };
}
