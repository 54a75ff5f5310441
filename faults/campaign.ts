/**
 * The randomised fault campaign: a seeded sequence of steps on one cache
 * (runs, SIGKILLs at random moments, a run and a `cache gc` at once, gcs,
 * corrupted or truncated manifests, entries, blobs and lock files, bundle
 * imports killed or not, and, where a tmpfs can be mounted, a full disk
 * and a read-only cache), checking the cache's invariants
 * (docs/caching.md) after every step:
 *
 * 1. no entry named by a manifest, readable or not, was removed (unless
 *    its own file or a blob of it was damaged by the campaign);
 * 2. every entry present verifies against its key (header hash, key =
 *    hash of its components, blobs present hash to their names), except
 *    what the campaign damaged and no run has read since;
 * 3. every run that exits 0 has, node by node, the values of an
 *    uninterrupted run in a fresh cache; and at the end, with the damage
 *    repaired as the messages say, every variant runs to completion and
 *    gc succeeds;
 * 4. no process of envsmith's (the CLI, `exec` commands and what they
 *    fork) outlives its step.
 *
 * Every command must also exit with a code its step allows and print no
 * stack trace. The test (`campaign_test.ts`) runs a fixed seed; the bench
 * (`bench/fault_campaign.ts`) sweeps seeds.
 *
 * @module
 */
import { join } from "node:path";
import { canonicalJson, hashJson, sha256Hex } from "@envsmith/engine/hash";
import { readManifest, Store } from "@envsmith/engine/cache";
import { hasStackTrace, probe, type ProbeResult } from "./probe.ts";
import { type Tmpfs, tmpfs } from "./mounts.ts";
import { processesHolding } from "./kill.ts";

/** Options of {@linkcode runCampaign}. */
export interface CampaignOptions {
  /** Steps to take. */
  readonly steps: number;
  /** Seed of the step sequence and of every random moment in it. */
  readonly seed: number;
  /** Work directory (the caches, experiments and bundle go there). */
  readonly dir: string;
  /** Mount a tmpfs for full-disk and read-only steps (needs root). @default true */
  readonly mounts?: boolean;
  /** Bound of one command. @default 90000 */
  readonly timeoutMs?: number;
  /** Progress lines. */
  readonly log?: (line: string) => void;
}

/** What {@linkcode runCampaign} did and found. */
export interface CampaignReport {
  /** Steps taken and passed with every invariant held. */
  readonly survived: number;
  /** Steps taken per kind. */
  readonly kinds: Readonly<Record<string, number>>;
  /** SIGKILLs that hit a running command. */
  readonly kills: number;
  /** gc refusals (exit 2 with the one line). */
  readonly refusals: number;
  /** Runs whose values were compared with the uninterrupted run. */
  readonly compared: number;
  /** Why full-disk and read-only steps were skipped, when they were. */
  readonly skippedMounts?: string;
  /** The first violated invariant (step, kind, what), or undefined. */
  readonly failure?: string;
}

/** Two experiments of the engine's test kinds; `value` varies the first (new keys). */
function _experiment(name: string, groups: number, value: number): string {
  const nodes: string[] = [];
  for (let i = 0; i < groups; i++) {
    nodes.push(
      // Sleeps keep an uncached run computing for 300 ms (camp-b) or 400 ms
      // (camp-a) of wall time or more on any machine, so most kill steps'
      // kills (drawn within 600 ms of the first key lock) land mid-run
      // however fast the CPU is; seed 31's do.
      `  s${i}: { kind: test.sleep, with: { ms: ${
        300 + 100 * i
      }, steps: 3, value: ${value + i} } }`,
      `  b${i}: { kind: test.blob, with: { size: ${30000 + i} } }`,
      `  r${i}: { kind: test.blob, with: { read: $b${i}.blob } }`,
      // Forks a child that would outlive the node: the engine must end it.
      `  f${i}: { kind: exec, with: { command: sh, args: [-c, "sleep 30 & sleep 0.1; echo $ENVSMITH_SEED > o"], outputs: [o] } }`,
      `  h${i}: { kind: test.spin, with: { n: ${
        800_000 + i
      }, input: [$s${i}, $r${i}, $f${i}.outputs] } }`,
    );
  }
  nodes.push(
    `  all: { kind: test.add, with: { a: ${value}, note: [${
      Array.from({ length: groups }, (_, i) => `$h${i}`).join(", ")
    }] } }`,
  );
  return `experiment: ${name}\nseed: 1\nnodes:\n${nodes.join("\n")}\n`;
}

interface _Variant {
  readonly name: string;
  readonly file: string;
  readonly args: readonly string[];
  /** node id -> key, from the uninterrupted run's manifest. */
  keys: Map<string, string>;
}

/** A small deterministic generator (LCG), so a seed replays a campaign. */
function _rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

function _exists(p: string): boolean {
  try {
    Deno.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

function _files(dir: string, suffix = ""): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let list: Deno.DirEntry[];
    try {
      list = [...Deno.readDirSync(d)];
    } catch {
      return;
    }
    for (const e of list) {
      const p = join(d, e.name);
      if (e.isDirectory) walk(p);
      else if (e.isFile && e.name.endsWith(suffix)) out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

/**
 * Pids of live processes (not zombies) whose command line or environment
 * names `dir`: the CLI (`--cache DIR/...`), `exec` commands and what they
 * fork (`ENVSMITH_WORK=DIR/...`). Linux /proc; none elsewhere.
 */
export function processesOf(dir: string): number[] {
  return processesHolding(dir + "/", ["cmdline", "environ"]);
}

/** What the campaign writes into a lock file: half a lock's JSON. */
const _GARBAGE = '{"pid":';

/** A violated invariant. */
class _Violation extends Error {}

/** Runs a campaign; see the module doc. Never throws for a violation: it is reported. */
export async function runCampaign(
  options: CampaignOptions,
): Promise<CampaignReport> {
  const log = options.log ?? (() => {});
  const timeoutMs = options.timeoutMs ?? 90_000;
  const rand = _rng(options.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const dir = options.dir;
  let fs: Tmpfs | null = null;
  let skippedMounts: string | undefined;
  if (options.mounts !== false) {
    const m = await tmpfs("64m");
    if (typeof m === "string") skippedMounts = m;
    else fs = m;
  } else skippedMounts = "mounts turned off";
  const root = fs ? fs.dir : dir;
  const cache = join(root, "cache");
  const store = new Store(cache);
  const refCache = join(dir, "reference");
  const refStore = new Store(refCache);
  const bundle = join(dir, "reference.esb");
  // Variants: two experiments, the first also with another value (--set).
  const fa = join(dir, "a.yaml"), fb = join(dir, "b.yaml");
  await Deno.writeTextFile(fa, _experiment("camp-a", 2, 1));
  await Deno.writeTextFile(fb, _experiment("camp-b", 1, 5));
  const variants: _Variant[] = [
    { name: "a", file: fa, args: [], keys: new Map() },
    {
      name: "a+set",
      file: fa,
      args: ["--set", "s0.with.value=9"],
      keys: new Map(),
    },
    { name: "b", file: fb, args: [], keys: new Map() },
  ];
  const cli = (
    args: readonly string[],
    started?: (c: Deno.ChildProcess) => void,
  ): Promise<ProbeResult> =>
    probe(args, { timeoutMs, ...(started ? { started } : {}) });
  const runArgs = (v: _Variant, c = cache) => [
    "--cache",
    c,
    "run",
    v.file,
    ...v.args,
    "--jobs",
    "2",
  ];

  // The uninterrupted runs, and a bundle of them to import.
  for (const v of variants) {
    const r = await cli(runArgs(v, refCache));
    if (r.code !== 0) throw new Error(`reference run ${v.name}: ${r.err}`);
    const path = /manifest (\S+)\)/.exec(r.err)?.[1];
    const m = path ? readManifest(path) : null;
    if (!m) throw new Error(`reference run ${v.name}: no manifest`);
    v.keys = new Map(m.nodes.map((n) => [n.id, n.key]));
  }
  {
    const r = await cli(["--cache", refCache, "cache", "export", bundle]);
    if (r.code !== 0) throw new Error(`export: ${r.err}`);
  }

  // The campaign's own knowledge of what it damaged.
  /** Manifest path -> the keys its original text named. */
  const badManifests = new Map<string, string[]>();
  /** Manifest path -> its text before the campaign damaged it. */
  const originals = new Map<string, string>();
  const damagedEntries = new Set<string>();
  const damagedBlobs = new Set<string>();
  const garbageLocks = new Set<string>();
  const kinds: Record<string, number> = {};
  let kills = 0, refusals = 0, compared = 0, survived = 0;

  const keysOfManifests = (): Map<string, string[]> => {
    const out = new Map<string, string[]>();
    for (const f of _files(join(cache, "runs"), ".json")) {
      const saved = badManifests.get(f);
      if (saved) out.set(f, saved);
      else {
        const m = readManifest(f);
        out.set(f, m ? m.nodes.map((n) => n.key) : []);
      }
    }
    return out;
  };
  const blobsOf = (key: string): string[] => {
    try {
      const text = new TextDecoder().decode(
        Deno.readFileSync(store.entryPath(key)),
      );
      const head = text.slice(0, text.indexOf("\n"));
      return head.split(" ").slice(3);
    } catch {
      return [];
    }
  };
  const isDamaged = (key: string) =>
    damagedEntries.has(key) || blobsOf(key).some((b) => damagedBlobs.has(b));

  /** Invariant 2 (and forgets damage that is gone or was repaired by a run). */
  const checkIntegrity = () => {
    for (const b of [...damagedBlobs]) {
      const p = store.blobPath(b);
      if (!_exists(p) || sha256Hex(Deno.readFileSync(p)) === b) {
        damagedBlobs.delete(b);
      }
    }
    for (const key of store.keys()) {
      const file = store.entryPath(key);
      let problem: string | null = null;
      try {
        const e = store.parseEntry(key, file, Deno.readFileSync(file));
        if (hashJson(e.components) !== key) problem = "key is not its hash";
        for (const b of e.blobs) {
          const p = store.blobPath(b);
          if (_exists(p) && sha256Hex(Deno.readFileSync(p)) !== b) {
            if (!damagedBlobs.has(b)) problem = `blob ${b} does not verify`;
          }
        }
        if (problem === null) damagedEntries.delete(key);
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) continue;
        problem = (e as Error).message;
      }
      if (problem !== null && !damagedEntries.has(key)) {
        throw new _Violation(`entry ${key} does not verify: ${problem}`);
      }
    }
  };

  /** Invariant 4: waits for the processes of the step to end; kills and reports survivors. */
  const checkProcesses = async () => {
    const t0 = Date.now();
    let left = processesOf(root);
    if (root !== dir) left.push(...processesOf(dir));
    while (left.length > 0 && Date.now() - t0 < 10_000) {
      await new Promise((r) => setTimeout(r, 100));
      left = [...processesOf(root), ...(root !== dir ? processesOf(dir) : [])];
    }
    if (left.length === 0) return;
    const what = left.map((pid) => {
      try {
        return `${pid}: ${
          Deno.readTextFileSync(`/proc/${pid}/cmdline`).replaceAll("\0", " ")
            .slice(0, 120)
        }`;
      } catch {
        return `${pid}`;
      }
    });
    for (const pid of left) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
    }
    throw new _Violation(`processes outlived the step: ${what.join("; ")}`);
  };

  /** Invariant 3 for one variant, after it exited 0. */
  const checkValues = (v: _Variant) => {
    for (const [id, key] of v.keys) {
      const a = refStore.readEntry(key), b = store.readEntry(key);
      if (!b) throw new _Violation(`${v.name}: ${id} (${key}) is missing`);
      if (store.importMark(key) !== null) {
        throw new _Violation(`${v.name}: ${id} is still the imported entry`);
      }
      if (canonicalJson(a!.value) !== canonicalJson(b.value)) {
        throw new _Violation(
          `${v.name}: ${id} differs from the uninterrupted run`,
        );
      }
    }
    compared++;
  };

  const expect = (r: ProbeResult, what: string, codes: number[]) => {
    if (hasStackTrace(r.err) || hasStackTrace(r.out)) {
      throw new _Violation(`${what}: a stack trace: ${r.err.slice(0, 800)}`);
    }
    if (r.timedOut) {
      throw new _Violation(`${what}: no answer in ${timeoutMs} ms`);
    }
    if (r.signal === "SIGKILL") return;
    if (!codes.includes(r.code)) {
      throw new _Violation(
        `${what}: exit ${r.code}, expected ${codes.join(" or ")}: ${
          r.err.slice(-800)
        }`,
      );
    }
  };
  /** A gc's outcome: 0, or 2 with the one refusal line; must refuse when it must. */
  const checkGc = (r: ProbeResult, what: string, mustRefuse: boolean) => {
    expect(r, what, [0, 2]);
    if (r.signal === "SIGKILL") return;
    if (r.code === 2) {
      const lines = r.err.trim().split("\n");
      if (
        lines.length !== 1 || !/^cache gc removed nothing: /.test(lines[0]!)
      ) {
        if (!/read-only|no space left/.test(r.err)) {
          throw new _Violation(
            `${what}: exit 2 without the one line: ${r.err}`,
          );
        }
      }
      refusals++;
    } else if (mustRefuse) {
      throw new _Violation(
        `${what}: removed entries while it could not tell which are needed: ${r.err}`,
      );
    }
  };
  /** Garbage lock files still there as the campaign wrote them. */
  const liveGarbage = () => {
    for (const p of [...garbageLocks]) {
      let same = false;
      try {
        same = Deno.readTextFileSync(p) === _GARBAGE;
      } catch { /* broken by a run */ }
      if (!same) garbageLocks.delete(p);
    }
    return garbageLocks.size;
  };
  const mustRefuse = () =>
    badManifests.size > 0 || liveGarbage() > 0 ||
    store.importRecords().length > 0;

  /** SIGKILL `child` `at` ms after it starts computing (a key lock appears) or `at` ms after start. */
  const killer =
    (at: number, afterLock: boolean) => (child: Deno.ChildProcess) => {
      const fire = () =>
        setTimeout(() => {
          try {
            child.kill("SIGKILL");
          } catch { /* finished */ }
        }, at);
      if (!afterLock) return void fire();
      // A key lock taken by this process (those of killed runs stay behind).
      const since = Date.now() - 1000;
      const poll = setInterval(() => {
        let computing = false;
        try {
          const locks = join(cache, "locks");
          computing = [...Deno.readDirSync(locks)].some((e) => {
            if (!/^[0-9a-f]{64}\.lock$/.test(e.name)) return false;
            try {
              const m = Deno.lstatSync(join(locks, e.name)).mtime?.getTime();
              return (m ?? 0) >= since;
            } catch {
              return false;
            }
          });
        } catch { /* none yet */ }
        if (!computing) return;
        clearInterval(poll);
        fire();
      }, 10);
      child.status.finally(() => clearInterval(poll));
    };

  const steps: [string, number, () => Promise<string>][] = [
    ["run", 3, async () => {
      const v = pick(variants);
      const r = await cli(runArgs(v));
      expect(r, `run ${v.name}`, [0]);
      checkValues(v);
      return v.name;
    }],
    ["kill", 4, async () => {
      const v = pick(variants);
      const at = Math.floor(rand() * 600);
      const r = await cli(runArgs(v), killer(at, true));
      expect(r, `run ${v.name} (killed)`, [0]);
      if (r.signal === "SIGKILL") kills++;
      else checkValues(v);
      return `${v.name} at ${at} ms: ${r.signal ?? `exit ${r.code}`}`;
    }],
    ["run+gc", 3, async () => {
      const v = pick(variants);
      const delay = Math.floor(rand() * 2500);
      const keep = rand() < 0.5 ? ["--keep-runs", "1"] : [];
      const refuse = mustRefuse();
      const run = cli(runArgs(v));
      await new Promise((res) => setTimeout(res, delay));
      const g = await cli(["--cache", cache, "cache", "gc", ...keep]);
      const r = await run;
      expect(r, `run ${v.name} (with gc)`, [0]);
      checkValues(v);
      checkGc(g, "gc (with a run)", refuse);
      return `${v.name}, gc after ${delay} ms ${
        keep.join(" ")
      }: exit ${g.code}`;
    }],
    ["gc", 2, async () => {
      const keep = rand() < 0.4 ? ["--keep-runs", "1"] : [];
      const dry = rand() < 0.2 ? ["--dry-run"] : [];
      const g = await cli(["--cache", cache, "cache", "gc", ...keep, ...dry]);
      checkGc(g, "gc", mustRefuse());
      return `${[...keep, ...dry].join(" ")} exit ${g.code}`;
    }],
    ["damage manifest", 2, () => {
      const files = _files(join(cache, "runs"), ".json").filter((f) =>
        !badManifests.has(f)
      );
      if (files.length === 0) return Promise.resolve("none to damage");
      const f = pick(files);
      const text = Deno.readTextFileSync(f);
      const m = readManifest(f);
      const how = pick(["not json", "truncated", "[1,2,3]", "empty"]);
      badManifests.set(f, m ? m.nodes.map((n) => n.key) : []);
      Deno.writeTextFileSync(
        f,
        how === "not json"
          ? "not json"
          : how === "truncated"
          ? text.slice(0, Math.floor(rand() * text.length))
          : how === "empty"
          ? ""
          : "[1,2,3]",
      );
      originals.set(f, text);
      return Promise.resolve(`${how}: ${f.split("/").pop()}`);
    }],
    ["repair manifest", 2, () => {
      const bad = [...badManifests.keys()];
      if (bad.length === 0) return Promise.resolve("none damaged");
      const f = pick(bad);
      const original = originals.get(f)!;
      const restore = rand() < 0.5;
      if (restore) Deno.writeTextFileSync(f, original);
      else Deno.removeSync(f);
      badManifests.delete(f);
      originals.delete(f);
      return Promise.resolve(
        `${restore ? "restored" : "deleted"} ${f.split("/").pop()}`,
      );
    }],
    ["damage entry", 2, () => {
      const keys = [...store.keys()];
      if (keys.length === 0) return Promise.resolve("none");
      const k = pick(keys);
      const p = store.entryPath(k);
      const b = Deno.readFileSync(p);
      const how = rand() < 0.5 ? "truncated" : "flipped";
      if (how === "truncated") {
        Deno.writeFileSync(p, b.slice(0, Math.floor(rand() * b.length)));
      } else {
        b[Math.floor(rand() * b.length)]! ^= 0x20;
        Deno.writeFileSync(p, b);
      }
      damagedEntries.add(k);
      return Promise.resolve(`${how} ${k.slice(0, 12)}`);
    }],
    ["damage blob", 1, () => {
      const blobs = [...store.blobHashes()].filter((h) => !h.includes("."));
      if (blobs.length === 0) return Promise.resolve("none");
      const h = pick(blobs);
      const p = store.blobPath(h);
      const b = Deno.readFileSync(p);
      if (b.length === 0) return Promise.resolve("empty blob");
      b[Math.floor(rand() * b.length)]! ^= 0x01;
      Deno.writeFileSync(p, b);
      damagedBlobs.add(h);
      return Promise.resolve(`flipped ${h.slice(0, 12)}`);
    }],
    ["garbage lock", 1, () => {
      const v = pick(variants);
      const key = pick([...v.keys.values()]);
      Deno.mkdirSync(join(cache, "locks"), { recursive: true });
      const p = join(cache, "locks", `${key}.lock`);
      Deno.writeTextFileSync(p, _GARBAGE);
      garbageLocks.add(p);
      return Promise.resolve(key.slice(0, 12));
    }],
    ["clear lock", 1, () => {
      if (garbageLocks.size === 0) return Promise.resolve("none");
      const p = pick([...garbageLocks]);
      // Either removed, as gc's message says, or left unrefreshed for
      // longer than a live owner would.
      const age = rand() < 0.5;
      if (age) {
        const old = new Date(Date.now() - 600_000);
        try {
          Deno.utimeSync(p, old, old);
        } catch { /* broken by a run meanwhile */ }
      } else {
        try {
          Deno.removeSync(p);
        } catch { /* broken by a run meanwhile */ }
      }
      garbageLocks.delete(p);
      return Promise.resolve(age ? "aged" : "removed");
    }],
    ["import", 2, async () => {
      const kill = rand() < 0.5;
      const at = Math.floor(rand() * 2500);
      const r = await cli(
        ["--cache", cache, "cache", "import", bundle],
        kill ? killer(at, false) : undefined,
      );
      expect(r, "import", [0]);
      if (r.signal === "SIGKILL") kills++;
      return kill
        ? `killed at ${at} ms: ${r.signal ?? `exit ${r.code}`}`
        : `exit ${r.code}`;
    }],
  ];
  steps.push(["full disk", 1, async () => {
    // The same menu with or without mounts: a seed is one sequence.
    if (!fs) return "skipped: no tmpfs";
    const filler = join(fs!.dir, "filler");
    const f = Deno.openSync(filler, { create: true, write: true });
    const chunk = new Uint8Array(1 << 20);
    try {
      for (;;) f.writeSync(chunk);
    } catch { /* full */ }
    try {
      for (;;) f.writeSync(chunk.subarray(0, 4096));
    } catch { /* full */ }
    f.close();
    try {
      const v = pick(variants);
      const r = await cli(runArgs(v));
      expect(r, `run ${v.name} (disk full)`, [0, 1, 2]);
      if (r.code === 0) checkValues(v);
      else if (!/no space left on the device/.test(r.err)) {
        throw new _Violation(`run on a full disk: ${r.err.slice(-600)}`);
      }
      const g = await cli(["--cache", cache, "cache", "gc"]);
      checkGc(g, "gc (disk full)", mustRefuse());
      return `${v.name}: exit ${r.code}, gc exit ${g.code}`;
    } finally {
      Deno.removeSync(filler);
    }
  }]);
  steps.push(["read-only", 1, async () => {
    if (!fs) return "skipped: no tmpfs";
    await fs!.remount("ro");
    try {
      const v = pick(variants);
      const r = await cli(runArgs(v));
      expect(r, `run ${v.name} (read-only)`, [0, 2]);
      if (r.code === 2 && !/read-only/.test(r.err)) {
        throw new _Violation(`run on a read-only cache: ${r.err}`);
      }
      const g = await cli(["--cache", cache, "cache", "gc"]);
      expect(g, "gc (read-only)", [2]);
      const p = await cli(["--cache", cache, "plan", v.file, ...v.args]);
      expect(p, "plan (read-only)", [0]);
      return `${v.name}: run exit ${r.code}`;
    } finally {
      await fs!.remount("rw");
    }
  }]);
  const total = steps.reduce((s, x) => s + x[1], 0);
  const choose = () => {
    let x = rand() * total;
    for (const s of steps) if ((x -= s[1]) < 0) return s;
    return steps[steps.length - 1]!;
  };

  let failure: string | undefined;
  let step = 0;
  const one = async (name: string, body: () => Promise<string>) => {
    const before = keysOfManifests();
    const present = new Set(store.keys());
    const damaged = new Set([...present].filter(isDamaged));
    const t0 = performance.now();
    const what = await body();
    // Invariant 1: what a manifest still present names, and was present
    // and intact before, is still there.
    const after = keysOfManifests();
    for (const [f, keys] of before) {
      if (!after.has(f) && !_exists(f)) continue; // dropped by --keep-runs
      for (const k of keys) {
        if (present.has(k) && !_exists(store.entryPath(k)) && !damaged.has(k)) {
          throw new _Violation(`entry ${k} named by ${f} was removed`);
        }
      }
    }
    checkIntegrity();
    await checkProcesses();
    kinds[name] = (kinds[name] ?? 0) + 1;
    survived++;
    log(
      `step ${step}: ${name} (${what}) ${
        ((performance.now() - t0) / 1000).toFixed(1)
      } s; ${[...store.keys()].length} entries`,
    );
  };
  try {
    for (step = 1; step <= options.steps; step++) {
      const [name, , body] = choose();
      await one(name, body);
    }
    // The end: the damage repaired as the messages say, every variant
    // completes with the uninterrupted values, and gc succeeds.
    step = options.steps + 1;
    await one("repair and finish", async () => {
      for (const f of badManifests.keys()) Deno.removeSync(f);
      badManifests.clear();
      liveGarbage();
      for (const p of garbageLocks) Deno.removeSync(p);
      garbageLocks.clear();
      if (store.importRecords().length > 0) {
        const r = await cli(["--cache", cache, "cache", "import", bundle]);
        expect(r, "import again", [0]);
      }
      for (const v of variants) {
        const r = await cli(runArgs(v));
        expect(r, `final run ${v.name}`, [0]);
        checkValues(v);
      }
      const g = await cli(["--cache", cache, "cache", "gc"]);
      expect(g, "final gc", [0]);
      for (const v of variants) checkValues(v);
      return "all variants complete";
    });
  } catch (e) {
    if (!(e instanceof _Violation)) throw e;
    failure = `step ${step}: ${e.message}`;
    log(`FAILED ${failure}`);
  } finally {
    if (fs) await fs[Symbol.asyncDispose]();
  }
  return {
    survived,
    kinds,
    kills,
    refusals,
    compared,
    ...(skippedMounts ? { skippedMounts } : {}),
    ...(failure ? { failure } : {}),
  };
}
