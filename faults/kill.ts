/**
 * The randomised kill-and-resume check: an experiment is run through the
 * CLI and killed with SIGKILL at random moments, again and again; after
 * every kill the whole cache must verify and every entry stored before the
 * kill must still be there; then a run to the end must succeed, and every
 * node's value must equal that of an uninterrupted run in another cache.
 *
 * @module
 */
import { join } from "node:path";
import { canonicalJson } from "@envsmith/engine/hash";
import { Store, verifyCache } from "@envsmith/engine/cache";
import { probe } from "./probe.ts";

/** Options of {@linkcode killAndResume}. */
export interface KillOptions {
  /** SIGKILLs to send. */
  readonly kills: number;
  /** Seed of the kill moments (print it to reproduce a failure). */
  readonly seed: number;
  /** Earliest kill, ms after the run starts computing (its first lock). @default 150 */
  readonly minMs?: number;
  /** Latest kill, ms after the run starts computing. @default 1500 */
  readonly maxMs?: number;
  /** `--jobs`. @default 2 */
  readonly jobs?: number;
  /** Extra CLI arguments (e.g. `--kinds`-less runs of real experiments). */
  readonly testKinds?: boolean;
  /** Per-run wall-time bound. @default 120000 */
  readonly timeoutMs?: number;
  /** A cache that already holds the uninterrupted run (skips computing it). */
  readonly reference?: string;
  /** Progress lines. */
  readonly log?: (line: string) => void;
}

/** What {@linkcode killAndResume} found. */
export interface KillReport {
  /** SIGKILLs that hit a running process. */
  readonly kills: number;
  /** Runs that finished before their kill moment. */
  readonly finishedFirst: number;
  /** Corrupt entries or blobs found after the kills (0 expected). */
  readonly corrupt: number;
  /** Entries verified before a kill and missing after it (0 expected). */
  readonly lost: number;
  /** Exit code of the final run (0 expected). */
  readonly finalCode: number;
  /** Nodes compared with the uninterrupted run. */
  readonly nodes: number;
  /** Ids of nodes whose value differs from the uninterrupted run (none expected). */
  readonly differing: readonly string[];
  /**
   * Processes started by the killed runs' nodes (`exec` commands and what
   * they forked) still alive 3 s after a kill (0 expected); they are
   * killed then, so one failure does not spill into the next kill.
   */
  readonly survivors: number;
}

/**
 * Pids of live processes (not zombies, not this one) whose environment names
 * a work directory of the cache `cache` (every `exec` command gets
 * `ENVSMITH_WORK`, and what it forks inherits it). Linux /proc; none
 * elsewhere.
 */
export function nodeProcesses(cache: string): number[] {
  return processesHolding(`ENVSMITH_WORK=${cache}/`, ["environ"]);
}

/**
 * Pids of live processes (not zombies, not this one) one of whose /proc
 * `files` (`cmdline`, `environ`) holds the text `needle`. Linux /proc; none
 * elsewhere.
 */
export function processesHolding(
  needle: string,
  files: readonly ("cmdline" | "environ")[],
): number[] {
  const bytes = new TextEncoder().encode(needle);
  const out: number[] = [];
  let list: Deno.DirEntry[];
  try {
    list = [...Deno.readDirSync("/proc")];
  } catch {
    return out;
  }
  for (const e of list) {
    if (!/^\d+$/.test(e.name) || Number(e.name) === Deno.pid) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
      if (/^\d+ \(.*\) Z/.test(stat)) continue; // a zombie is gone
      for (const f of files) {
        if (_includes(Deno.readFileSync(`/proc/${e.name}/${f}`), bytes)) {
          out.push(Number(e.name));
          break;
        }
      }
    } catch { /* gone meanwhile */ }
  }
  return out;
}

function _includes(hay: Uint8Array, needle: Uint8Array): boolean {
  outer: for (
    let i = hay.indexOf(needle[0]!);
    i >= 0 && i + needle.length <= hay.length;
    i = hay.indexOf(needle[0]!, i + 1)
  ) {
    for (let j = 1; j < needle.length; j++) {
      if (hay[i + j] !== needle[j]) continue outer;
    }
    return true;
  }
  return false;
}

/** Waits up to `ms` for the processes of `cache`'s nodes to end; kills and counts those left. */
async function _survivors(cache: string, ms = 3000): Promise<number> {
  const t0 = Date.now();
  let left = nodeProcesses(cache);
  while (left.length > 0 && Date.now() - t0 < ms) {
    await new Promise((r) => setTimeout(r, 100));
    left = nodeProcesses(cache);
  }
  for (const pid of left) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch { /* gone */ }
  }
  return left.length;
}

function _verified(store: Store): Set<string> {
  const out = new Set<string>();
  for (const k of store.keys()) {
    try {
      if (store.loadVerified(k)) out.add(k);
    } catch { /* counted by verifyCache */ }
  }
  return out;
}

/** Node id -> key of every node, from `plan --json`. */
async function _keys(
  file: string,
  cache: string,
  testKinds: boolean,
): Promise<Map<string, string>> {
  const r = await probe(["--cache", cache, "plan", file, "--json"], {
    testKinds,
    timeoutMs: 60_000,
  });
  if (r.code !== 0) throw new Error(`plan failed: ${r.err}`);
  const plan = JSON.parse(r.out) as { nodes: { id: string; key: string }[] };
  return new Map(plan.nodes.map((n) => [n.id, n.key]));
}

/** Runs `file` to the end in a fresh cache, then kills runs of it in another; see the module doc. */
export async function killAndResume(
  file: string,
  dir: string,
  options: KillOptions,
): Promise<KillReport> {
  const testKinds = options.testKinds ?? true;
  const timeoutMs = options.timeoutMs ?? 120_000;
  const jobs = String(options.jobs ?? 2);
  const log = options.log ?? (() => {});
  const refCache = options.reference ?? join(dir, "reference");
  const cache = join(dir, "killed");
  const ref = await probe(["--cache", refCache, "run", file, "--jobs", jobs], {
    testKinds,
    timeoutMs,
  });
  if (ref.code !== 0) throw new Error(`reference run failed: ${ref.err}`);
  let seed = options.seed >>> 0;
  const rand = () =>
    (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const lo = options.minMs ?? 150, hi = options.maxMs ?? 1500;
  const locks = join(cache, "locks");
  const computing = () => {
    try {
      return [...Deno.readDirSync(locks)].length > 0;
    } catch {
      return false;
    }
  };
  const store = new Store(cache);
  let kills = 0, finishedFirst = 0, corrupt = 0, lost = 0, survivors = 0;
  let before = new Set<string>();
  for (let i = 0; i < options.kills; i++) {
    const at = lo + rand() * (hi - lo);
    const r = await probe(["--cache", cache, "run", file, "--jobs", jobs], {
      testKinds,
      timeoutMs,
      started: (child) => {
        // From the moment it computes (a lock is taken), not from start-up.
        const poll = setInterval(() => {
          if (!computing()) return;
          clearInterval(poll);
          setTimeout(() => {
            try {
              child.kill("SIGKILL");
            } catch { /* finished */ }
          }, at);
        }, 10);
        child.status.finally(() => clearInterval(poll));
      },
    });
    if (r.signal === "SIGKILL") kills++;
    else finishedFirst++;
    const alive = await _survivors(cache);
    survivors += alive;
    const v = verifyCache(store);
    corrupt += v.corrupt.length;
    const now = _verified(store);
    for (const k of before) if (!now.has(k)) lost++;
    log(
      `kill ${i + 1}/${options.kills} at ${at.toFixed(0)} ms: ${
        r.signal === "SIGKILL" ? "killed" : `finished (exit ${r.code})`
      }; ${now.size} entries, ${v.corrupt.length} corrupt, ${alive} node processes left`,
    );
    before = now;
  }
  const last = await probe(["--cache", cache, "run", file, "--jobs", jobs], {
    testKinds,
    timeoutMs,
  });
  const keys = await _keys(file, cache, testKinds);
  const refStore = new Store(refCache);
  const differing: string[] = [];
  for (const [id, key] of keys) {
    const a = refStore.loadVerified(key), b = store.loadVerified(key);
    if (!a || !b || canonicalJson(a.value) !== canonicalJson(b.value)) {
      differing.push(id);
    }
  }
  for (const k of before) if (!store.hasEntry(k)) lost++;
  survivors += await _survivors(cache);
  return {
    kills,
    finishedFirst,
    corrupt,
    lost,
    finalCode: last.code,
    nodes: keys.size,
    differing,
    survivors,
  };
}
