/**
 * The fault suite: bad inputs, file-system faults, signals and kills,
 * each through the CLI in its own process, each bounded in time and memory
 * and asserting the message and the exit code. The larger randomised
 * version is `bench/faults.ts`.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { join } from "node:path";
import { sha256Hex } from "@envsmith/engine/hash";
import {
  exportBundle,
  listManifests,
  readManifest,
  Store,
} from "@envsmith/engine/cache";
import { startStubServer } from "../llm/stub_server.ts";
import { BOUNDS, checkAll, formatResult, LOAD_FACTOR } from "./cases.ts";
import { killAndResume, nodeProcesses } from "./kill.ts";
import { type Tmpfs, tmpfs } from "./mounts.ts";
import { hasStackTrace, probe, ROOT } from "./probe.ts";
import { tmpExperiment } from "../_test_util.ts";

/** A temporary directory `envsmith-faults-<prefix>-…` (see tmpExperiment). */
const tmpDir = (prefix: string, experiment?: string) =>
  tmpExperiment(`faults-${prefix}`, experiment);

/**
 * A test run on a fresh tmpfs of `size`, with a temporary directory whose
 * `exp.yaml` holds `experiment`; where this machine cannot mount a tmpfs, the
 * test shows a skipped step naming why.
 */
function onTmpfs(
  size: string,
  prefix: string,
  experiment: string,
  body: (fs: Tmpfs, d: { dir: string; file: string }) => Promise<void>,
): (t: Deno.TestContext) => Promise<void> {
  return async (t) => {
    const fs = await tmpfs(size);
    if (typeof fs === "string") {
      console.log(`skipped: ${fs}`);
      t.step({ name: `skipped: ${fs}`, ignore: true, fn: () => {} });
      return;
    }
    await using _fs = fs;
    await using d = await tmpDir(prefix, experiment);
    await body(fs, d);
  };
}

/** `tables` of the experiment `file` from the cache `cache`, written to `out`. */
function tablesOf(cache: string, file: string, out: string) {
  return probe(["--cache", cache, "tables", file, "--out", out]);
}

function bounded(r: { ms: number; peakMb: number; timedOut: boolean }) {
  assert.ok(!r.timedOut, "answered within the time bound");
  assert.ok(r.ms < BOUNDS.ms, `${r.ms.toFixed(0)} ms`);
  assert.ok(r.peakMb < BOUNDS.mb, `${r.peakMb.toFixed(0)} MB`);
}

Deno.test("faults: every bad input of the catalogue gets its message and exit code, within 10 s and 500 MB, without a stack trace", async () => {
  await using t = await tmpDir("cases");
  const results = await checkAll(t.dir, 3);
  const failed = results.filter((r) => r.problems.length > 0);
  assert.deepEqual(
    failed.map(formatResult),
    [],
    `${results.length - failed.length}/${results.length} refused cleanly`,
  );
  assert.ok(results.length >= 25);
});

/** An experiment of sleeps, blobs, readers, workers and a join (test kinds). */
function killExperiment(groups: number): string {
  const nodes: string[] = [];
  for (let i = 0; i < groups; i++) {
    nodes.push(
      `  s${i}: { kind: test.sleep, with: { ms: ${
        100 + 100 * i
      }, steps: 3, value: ${i} } }`,
      `  b${i}: { kind: test.blob, with: { size: ${40000 + i} } }`,
      `  r${i}: { kind: test.blob, with: { read: $b${i}.blob } }`,
      // A command that forks and leaves a child behind: no process of it
      // may outlive a kill.
      `  f${i}: { kind: exec, with: { command: sh, args: [-c, "sleep 30 & sleep 0.${
        1 + i % 3
      }; echo $ENVSMITH_SEED > o"], outputs: [o] } }`,
      `  h${i}: { kind: test.spin, with: { n: ${
        1_000_000 + i
      }, input: [$s${i}, $r${i}, $f${i}.outputs] } }`,
    );
  }
  nodes.push(
    `  all: { kind: test.add, with: { a: 0, note: [${
      Array.from({ length: groups }, (_, i) => `$h${i}`).join(", ")
    }] } }`,
  );
  return `experiment: kill\nseed: 1\nnodes:\n${nodes.join("\n")}\n`;
}

Deno.test("faults: random SIGKILLs leave every entry intact; the resumed run gives the values of an uninterrupted one", async () => {
  await using t = await tmpDir("kill", killExperiment(6));
  const file = t.file;
  const seed = Date.now() % 100000;
  const r = await killAndResume(file, t.dir, {
    kills: 3,
    seed,
    minMs: 200,
    maxMs: 1200,
  });
  const why = `seed ${seed}: ${JSON.stringify(r)}`;
  // The work (about 2 s) outlasts the latest first kill: at least that one hits.
  assert.ok(r.kills >= 1, `a kill hit a running process: ${why}`);
  assert.equal(r.corrupt, 0, why);
  assert.equal(r.lost, 0, why);
  assert.equal(r.finalCode, 0, why);
  assert.equal(r.nodes, 31, why);
  assert.deepEqual(r.differing, [], why);
  assert.equal(r.survivors, 0, why);
});

Deno.test("faults: a killed run's work directories are removed by the next run, not kept for a day", async () => {
  await using t = await tmpDir(
    "leftover",
    "experiment: left\nseed: 1\nnodes:\n  slow: { kind: test.sleep, with: { ms: 30000, steps: 300 } }\n",
  );
  const { file, cache } = t;
  const tmp = join(cache, "tmp");
  const work = () => {
    try {
      return [...Deno.readDirSync(tmp)].filter((e) =>
        e.name.startsWith("work-")
      ).length;
    } catch {
      return 0;
    }
  };
  const killed = await probe(["--cache", cache, "run", file], {
    timeoutMs: 20_000,
    started: (child) => {
      const poll = setInterval(() => {
        if (work() > 0) {
          clearInterval(poll);
          child.kill("SIGKILL");
        }
      }, 20);
    },
  });
  assert.equal(killed.signal, "SIGKILL");
  assert.equal(work(), 1, "the killed node's work directory is left");
  // The next run removes it (its process is gone) before running.
  await Deno.writeTextFile(
    file,
    "experiment: left\nseed: 1\nnodes:\n  slow: { kind: test.sleep, with: { ms: 10, steps: 1 } }\n",
  );
  const next = await probe(["--cache", cache, "run", file]);
  assert.equal(next.code, 0, next.err);
  assert.match(next.err, /removed 1 leftover of killed runs from .*tmp/);
  assert.deepEqual([...Deno.readDirSync(tmp)].map((e) => e.name), []);
});

/** A YAML of `bytes` bytes of plain nodes (a valid, slow-to-load file). */
async function bigExperiment(file: string, nodes: number): Promise<void> {
  const lines = ["experiment: big", "seed: 1", "nodes:"];
  for (let i = 0; i < nodes; i++) {
    lines.push(
      `  n${i}: { kind: test.add, with: { a: ${i}, note: [x, ${i}] } }`,
    );
  }
  await Deno.writeTextFile(file, lines.join("\n") + "\n");
}

Deno.test("faults: SIGTERM and SIGINT end loading and planning within a second", async () => {
  await using t = await tmpDir("signals");
  // ~4 MB: several seconds of parsing (allowed with a raised limit).
  const big = join(t.dir, "big.yaml");
  await bigExperiment(big, 60_000);
  // A small file that expands to 200,000 nodes: seconds of expansion, keys
  // and planning.
  const wide = join(t.dir, "wide.yaml");
  await Deno.writeTextFile(
    wide,
    `experiment: wide\nseed: 1\nmatrix:\n${
      [0, 1, 2, 3, 4].map((i) => `  a${i}: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]`)
        .join("\n")
    }\n  a5: [0, 1]\nnodes:\n  x: { kind: test.add, with: { a: 1, note: [$matrix.a0, $matrix.a1, $matrix.a2, $matrix.a3, $matrix.a4, $matrix.a5] } }\n`,
  );
  const results = await Promise.all(
    ([
      // Early enough that a fast machine has not finished (every phase
      // before a run ends on the signal, start-up included).
      ["SIGTERM", 500, big],
      ["SIGINT", 800, big],
      ["SIGTERM", 1100, big],
      ["SIGTERM", 900, wide],
      ["SIGINT", 1400, wide],
    ] as const).map(
      ([sig, at, file]) => {
        let sent = 0;
        return probe([
          "--limit",
          "file-bytes=8M,nodes=200000,variants=200000",
          "--cache",
          join(t.dir, `cache-${at}`),
          "plan",
          file,
        ], {
          heapMb: 3000,
          timeoutMs: 30_000,
          started: (child) => {
            setTimeout(() => {
              sent = performance.now();
              child.kill(sig);
            }, at);
          },
        }).then((r) => ({ r, sig, after: performance.now() - sent }));
      },
    ),
  );
  for (const { r, sig, after } of results) {
    assert.equal(r.signal, sig, `${sig}: ${r.code} ${r.err.slice(0, 500)}`);
    assert.ok(
      after < 1000,
      `${sig} ended the process in ${after.toFixed(0)} ms`,
    );
    assert.equal(r.out, "", "no plan printed");
  }
});

Deno.test("faults: SIGTERM during a run stops it within a second (exit 130, locks released, manifest interrupted), and the next run resumes", async () => {
  const yaml =
    "experiment: term\nseed: 1\nnodes:\n  quick: { kind: test.add, with: { a: 1 } }\n  slow: { kind: test.sleep, with: { ms: 20000, steps: 400 } }\n  spin: { kind: test.spin, with: { n: 2000000000 } }\n";
  await using t = await tmpDir("sigterm-run", yaml);
  const { file, cache } = t;
  const locks = join(cache, "locks");
  let sent = 0;
  const r = await probe(["--cache", cache, "run", file, "--jobs", "3"], {
    timeoutMs: 20_000,
    started: (child) => {
      const poll = setInterval(() => {
        let n = 0;
        try {
          n = [...Deno.readDirSync(locks)].length;
        } catch { /* not yet */ }
        if (n >= 2) {
          clearInterval(poll);
          sent = performance.now();
          child.kill("SIGTERM");
        }
      }, 20);
    },
  });
  const after = performance.now() - sent;
  assert.equal(r.code, 130, r.err);
  // a second on an idle machine, scaled to the load (the catalogue's factor)
  assert.ok(
    after < 1000 * LOAD_FACTOR,
    `stopped in ${after.toFixed(0)} ms`,
  );
  assert.match(
    r.err,
    /terminated \(SIGTERM\): stopping; finished nodes stay cached/,
  );
  assert.ok(!hasStackTrace(r.err), r.err);
  assert.deepEqual([...Deno.readDirSync(locks)], [], "locks released");
  const m = readManifest(listManifests(new Store(cache), "term").pop()!)!;
  assert.equal(m.status, "interrupted");
  assert.equal(m.nodes.find((n) => n.id === "slow")!.status, "interrupted");
  await Deno.writeTextFile(
    file,
    yaml.replace("ms: 20000, steps: 400", "ms: 10, steps: 1").replace(
      "2000000000",
      "1000",
    ),
  );
  const again = await probe(["--cache", cache, "run", file]);
  assert.equal(again.code, 0, again.err);
  assert.match(again.err, /2 computed, 1 cached/);
});

Deno.test("faults: SIGTERM to a run whose exec node forked ends it within 2 s, and no process of the node survives", async () => {
  await using t = await tmpDir(
    "sigterm-exec",
    'experiment: term\nseed: 1\nnodes:\n  x: { kind: exec, with: { command: sh, args: [-c, "sleep 60 & (sleep 60; true) & setsid sleep 60 & sleep 60"] } }\n',
  );
  const { file, cache } = t;
  let sent = 0;
  const r = await probe(["--cache", cache, "run", file], {
    timeoutMs: 20_000,
    started: (child) => {
      const poll = setInterval(() => {
        if (nodeProcesses(cache).length < 4) return;
        clearInterval(poll);
        sent = performance.now();
        child.kill("SIGTERM");
      }, 20);
    },
  });
  const after = performance.now() - sent;
  assert.ok(sent > 0, "the command started");
  assert.equal(r.code, 130, r.err);
  assert.ok(
    after < 2000 * LOAD_FACTOR,
    `stopped in ${after.toFixed(0)} ms`,
  );
  await new Promise((r) => setTimeout(r, 300)); // reaped by init
  assert.deepEqual(nodeProcesses(cache), []);
});

const BLOBS = `experiment: disk
seed: 1
nodes:
${
  Array.from(
    { length: 6 },
    (_, i) => `  b${i}: { kind: test.blob, with: { size: ${200_000 + i} } }`,
  ).join("\n")
}
  sum: { kind: test.blob, with: { read: $b0.blob } }
`;

const SCORES = `experiment: scores
seed: 1
matrix:
  method: [a, b]
nodes:
  w: { kind: test.blob, with: { size: 1000 } }
  r: { kind: test.blob, with: { read: $w.blob } }
  score: { kind: test.add, with: { a: 0.25, b: 0.5, note: [$matrix.method, $r] } }
tables:
  - { name: scores, node: score, rows: method, columns: value.sum }
`;

Deno.test(
  "faults: a full disk fails the run with one line naming the path (exit 1); the cache stays consistent and resumes once there is room",
  onTmpfs("700k", "full", BLOBS, async (fs, { file }) => {
    const cache = join(fs.dir, "cache");
    const full = await probe(["--cache", cache, "run", file, "--jobs", "1"]);
    bounded(full);
    assert.equal(full.code, 1, full.err);
    assert.match(
      full.err,
      /^error: Cannot write .*\/cache\/.*: no space left on the device \(ENOSPC\)\. Free some space .* or use --cache DIR on a disk with room/m,
    );
    assert.match(full.err, /^not stored: b\d/m);
    assert.ok(!hasStackTrace(full.err), full.err);
    // Nothing half-written: every entry verifies, tmp/ is empty.
    const verify = await probe(["--cache", cache, "cache", "verify"]);
    assert.equal(verify.code, 0, verify.err);
    assert.deepEqual([...Deno.readDirSync(join(cache, "tmp"))], []);
    // A rerun on the still-full disk: the same one line, no stack trace.
    const again = await probe(["--cache", cache, "run", file, "--jobs", "1"]);
    assert.ok(again.code === 1 || again.code === 2, again.err);
    assert.match(again.err, /no space left on the device \(ENOSPC\)/);
    assert.ok(!hasStackTrace(again.err), again.err);
    // With room, the run resumes and completes.
    await fs.remount("size=8m");
    const done = await probe(["--cache", cache, "run", file]);
    assert.equal(done.code, 0, done.err);
    assert.match(done.err, /disk: \d computed, [1-9] cached, 0 failed/);
  }),
);

Deno.test(
  "faults: a read-only cache: run refuses in one line (exit 2); plan, verify and tables still work and say what they could not do",
  onTmpfs("8m", "ro", SCORES, async (fs, { dir, file }) => {
    const cache = join(fs.dir, "cache");
    assert.equal((await probe(["--cache", cache, "run", file])).code, 0);
    // Corrupt one entry, then make the file system read-only.
    const store = new Store(cache);
    const key = [...store.keys()][0]!;
    const bytes = Deno.readFileSync(store.entryPath(key));
    bytes[bytes.length - 2]! ^= 1;
    Deno.writeFileSync(store.entryPath(key), bytes);
    await fs.remount("ro");
    const run = await probe(["--cache", cache, "run", file]);
    bounded(run);
    assert.equal(run.code, 2, run.err);
    assert.equal(
      run.err.trim(),
      run.err.trim().split("\n")[0],
      "one line",
    );
    assert.match(
      run.err,
      /^Cannot write .*\/cache\/tmp\/probe@.*: the file system is read-only \(EROFS\)\. Use --cache DIR on a writable disk/,
    );
    const plan = await probe(["--cache", cache, "plan", file]);
    assert.equal(plan.code, 0, plan.err);
    assert.match(
      plan.err,
      /warning: Corrupt cache entry .*; it could not be moved aside \(a read-only cache\?\)/,
    );
    const verify = await probe(["--cache", cache, "cache", "verify"]);
    assert.equal(verify.code, 1, verify.err);
    assert.match(verify.err, /1 corrupt; 1 could not be moved aside/);
    const gc = await probe(["--cache", cache, "cache", "gc"]);
    assert.equal(gc.code, 2);
    assert.match(gc.err, /read-only \(EROFS\)/);
    const tables = await tablesOf(cache, file, join(dir, "t"));
    assert.ok(tables.code <= 1, tables.err);
    assert.match(tables.out, /### scores/);
    // Tables into a read-only directory: one line naming it and --out.
    const tablesRo = await tablesOf(cache, file, join(fs.dir, "tables"));
    assert.equal(tablesRo.code, 2);
    assert.match(
      tablesRo.err,
      /Cannot write .*tables.*: the file system is read-only \(EROFS\)\. Write the tables elsewhere with --out DIR\./,
    );
    for (const r of [plan, verify, gc, tables, tablesRo]) {
      assert.ok(!hasStackTrace(r.err), r.err);
    }
  }),
);

Deno.test(
  "faults: an import onto a full disk keeps what it wrote and says so",
  onTmpfs("500k", "import-full", BLOBS, async (fs, { dir, file }) => {
    const src = join(dir, "src");
    assert.equal((await probe(["--cache", src, "run", file])).code, 0);
    const bundle = join(dir, "all.esb");
    await exportBundle(new Store(src), bundle);
    const r = await probe([
      "--cache",
      join(fs.dir, "cache"),
      "cache",
      "import",
      bundle,
    ]);
    bounded(r);
    assert.equal(r.code, 2, r.err);
    assert.match(
      r.err,
      /no space left on the device \(ENOSPC\)\..* The import of .*all\.esb stopped there; what it wrote before \(0 entries, \d blobs, 0 aux files\) is complete and was kept/,
    );
    const verify = await probe([
      "--cache",
      join(fs.dir, "cache"),
      "cache",
      "verify",
    ]);
    assert.equal(verify.code, 0, verify.err);
  }),
);

/** Rewrites an entry of a plain bundle with `value` and valid hashes (what a forger would do). */
function forge(bundle: Uint8Array, key: string, value: unknown): Uint8Array {
  const dec = new TextDecoder(), enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  let pos = bundle.indexOf(10) + 1;
  parts.push(bundle.subarray(0, pos));
  for (;;) {
    const nl = bundle.indexOf(10, pos);
    const head = JSON.parse(dec.decode(bundle.subarray(pos, nl)));
    if (head.type === "end") {
      parts.push(bundle.subarray(pos));
      break;
    }
    let body = bundle.subarray(nl + 1, nl + 1 + head.size);
    pos = nl + 1 + head.size + 1;
    if (head.name === key) {
      const text = dec.decode(body);
      const entry = JSON.parse(text.slice(text.indexOf("\n") + 1));
      entry.value = value;
      const json = JSON.stringify(entry);
      body = enc.encode(`envsmith-entry 1 ${sha256Hex(json)}\n${json}`);
      head.size = body.length;
      head.sha256 = sha256Hex(body);
    }
    parts.push(enc.encode(JSON.stringify(head) + "\n"), body, enc.encode("\n"));
  }
  return new Uint8Array(Buffer.concat(parts));
}

/**
 * A new temporary directory (removed at the end of its scope) whose
 * `exp.yaml` holds SCORES, run into its cache `a`.
 */
async function scoresRun(prefix: string) {
  const d = await tmpDir(prefix, SCORES);
  const a = join(d.dir, "a");
  assert.equal((await probe(["--cache", a, "run", d.file])).code, 0);
  return Object.assign(d, { a });
}

Deno.test("faults: a forged bundle is visibly marked, never trusted: tables marks it, verify says so, run replaces it", async () => {
  await using d = await scoresRun("forged");
  const { file, a } = d;
  const plain = join(d.dir, "a.esb");
  await exportBundle(new Store(a), plain);
  const plan = JSON.parse(
    (await probe(["--cache", a, "plan", file, "--json"])).out,
  ) as { nodes: { id: string; key: string }[] };
  const key = plan.nodes.find((n) => n.id === "score[method=a]")!.key;
  const forged = join(d.dir, "forged.esb");
  Deno.writeFileSync(
    forged,
    forge(Deno.readFileSync(plain), key, { sum: 0.999, parts: [0.999] }),
  );
  const b = join(d.dir, "b");
  const im = await probe(["--cache", b, "cache", "import", forged]);
  assert.equal(im.code, 0, im.err);
  assert.match(
    im.err,
    /4 entries, 1 blobs.*; 4 marked imported: tables and status show them as such, run computes them here/,
  );
  const tables = await tablesOf(b, file, join(d.dir, "t"));
  assert.equal(tables.code, 0, tables.err);
  assert.match(tables.out, /\| a \| 0\.999 \|/);
  assert.match(
    tables.out,
    /\(imported\): every value of this table comes from a bundle \(cache import\), not computed here/,
  );
  const verify = await probe(["--cache", b, "cache", "verify"]);
  assert.equal(verify.code, 0);
  assert.match(
    verify.err,
    /all intact \(4 entries were imported from bundles: .*cannot be checked here/,
  );
  const status = await probe(["--cache", b, "status", file]);
  assert.match(
    status.out,
    /score\[method=a\] +imported from forged\.esb, not computed here/,
  );
  const run = await probe(["--cache", b, "run", file]);
  assert.equal(run.code, 0, run.err);
  assert.match(run.err, /scores: 4 computed, 0 cached/);
  const after = await tablesOf(b, file, join(d.dir, "t2"));
  assert.match(after.out, /\| a \| 0\.750 \|/);
  assert.doesNotMatch(after.out, /imported/);
});

Deno.test("faults: a results-only bundle: no corruption warnings on plan or run, and the table shows the recomputed values", async () => {
  await using d = await scoresRun("results-only");
  const { file, a } = d;
  const json = join(d.dir, "tables.esb.gz");
  assert.equal(
    (await probe([
      "--cache",
      a,
      "cache",
      "export",
      json,
      "--only",
      "json",
      "--experiment",
      file,
    ])).code,
    0,
  );
  const c = join(d.dir, "c");
  const shown = await probe([
    "--cache",
    c,
    "tables",
    "--import",
    json,
    file,
    "--out",
    join(d.dir, "t"),
  ]);
  assert.equal(shown.code, 0, shown.err);
  assert.match(shown.out, /\| a \| 0\.750 \|/);
  assert.match(shown.out, /\(imported\): every value of this table/);
  for (const args of [["plan", file], ["run", file], ["plan", file]]) {
    const r = await probe(["--cache", c, ...args]);
    assert.equal(r.code, 0, r.err);
    assert.doesNotMatch(r.err + r.out, /Corrupt|corrupt/);
  }
  const after = await tablesOf(c, file, join(d.dir, "t2"));
  assert.match(after.out, /\| a \| 0\.750 \|\n\| b \| 0\.750 \|/);
  assert.doesNotMatch(after.out, /imported/);
});

Deno.test("faults: redesign --cache DIR puts the LLM reply cache under DIR, nothing in the working directory", async () => {
  await using d = await tmpDir("redesign-cache");
  await using stub = startStubServer([
    { reply: '{"rationale": "ok", "config": {"preset": "easy", "agents": 3}}' },
  ]);
  const cache = join(d.dir, "cache"), cwd = join(d.dir, "cwd");
  await Deno.mkdir(cwd);
  const r = await probe([
    "--cache",
    cache,
    "redesign",
    "--engineer",
    "llm",
    "--base-url",
    stub.baseURL,
    "--model",
    "m",
    "--context",
    "none",
    "--preset",
    "easy",
    "--max-retries",
    "0",
  ], { cwd, testKinds: false });
  assert.equal(r.code, 0, r.err);
  assert.equal(JSON.parse(r.out).agents, 3);
  assert.ok(
    [...Deno.readDirSync(join(cache, "aux", "redesign", "llm"))].length > 0,
    "the reply is cached under --cache",
  );
  assert.deepEqual(
    [...Deno.readDirSync(cwd)],
    [],
    "nothing written in the working directory",
  );
  assert.equal(ROOT.endsWith("/"), true);
});
