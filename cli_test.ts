import { scaledMs } from "./engine/testdata/load.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import type { Command } from "@commander-js/extra-typings";
import { createProgram, main, subcommands } from "./cli.ts";
import { Store } from "@envsmith/engine/cache";
import { sha256Hex } from "@envsmith/engine/hash";
import { kinds as testKinds } from "./engine/testdata/kinds.ts";
import { lmVenvDir } from "./nodes/lm_env.ts";
import { lastManifest, runCli, tmpExperiment } from "./_test_util.ts";

/** Whether the LM trainer's Python environment exists here. */
function lmVenvReady(): boolean {
  try {
    return Deno.statSync(join(lmVenvDir(), "bin", "python")).isFile;
  } catch {
    return false;
  }
}

const ROOT = new URL(".", import.meta.url).pathname;

/** A temporary project whose `exp.yaml` holds `yaml`. */
const project = (yaml: string) => tmpExperiment("cli", yaml);

/** Runs the CLI in-process with the test kinds; returns code and output. */
const cli = (args: string[]) => runCli(args, { kinds: testKinds });

/** `deno` arguments that run the CLI (from ROOT) with the test kinds. */
const CLI_WITH_TEST_KINDS = [
  "run",
  "-A",
  "cli.ts",
  "--kinds",
  "engine/testdata/kinds.ts",
];

/** The CLI with the test kinds in a new process, in ROOT, with `env` and CI=1. */
function spawnCli(args: string[], env: Record<string, string>) {
  return new Deno.Command(Deno.execPath(), {
    args: [...CLI_WITH_TEST_KINDS, ...args],
    cwd: ROOT,
    env: { ...env, CI: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

function lines(path: string): string[] {
  try {
    return Deno.readTextFileSync(path).split("\n").filter((l) => l);
  } catch {
    return [];
  }
}

Deno.test("cli: a bad experiment exits 2 with file:line:col for every error and no stack trace", async () => {
  await using p = await project(
    `experiment: x\nseed: 1\nnodes:\n  a: { kind: test.ad, with: { a: 1 } }\n  b: { kind: test.add, with: { a: $aa } }\n`,
  );
  const r = await cli(["--cache", p.cache, "plan", p.file]);
  assert.equal(r.code, 2);
  assert.match(
    r.err,
    new RegExp(
      `${p.file}:4:14: unknown kind "test.ad"; did you mean "test.add"\\?`,
    ),
  );
  assert.match(
    r.err,
    new RegExp(
      `${p.file}:5:35: Cannot resolve "\\$aa": no node named "aa"; did you mean "a"\\?`,
    ),
  );
  assert.doesNotMatch(r.err, /\n\s+at /);
});

Deno.test("cli: plan, run with a failure block, status, tables with missing cells", async () => {
  const yaml = `experiment: c
seed: 1
matrix:
  mode: [x, y]
  seed: [1, 2]
nodes:
  a: { kind: test.add, with: { a: $seed, note: $matrix.mode } }
  bad: { kind: test.fail, with: { message: "deliberate", input: $a } }
  after: { kind: test.add, with: { a: 1, note: $bad } }
tables:
  - { name: cli_t, node: a, rows: mode, columns: value.sum, over: seed }
  - { name: cli_u, node: after, rows: mode, columns: value.sum, over: seed }
`;
  await using p = await project(yaml);
  const plan = await cli(["--cache", p.cache, "plan", p.file]);
  assert.equal(plan.code, 0);
  assert.match(
    plan.out,
    /plan c .*: 12 nodes: 0 cached, 4 to run, 8 blocked, 0 skipped/,
  );
  assert.match(
    plan.out,
    /blocked {2}after\[mode=x,seed=1\]\s+after bad\[mode=x,seed=1\]; not computed yet/,
  );
  const run = await cli(["--cache", p.cache, "run", p.file, "--jobs", "2"]);
  assert.equal(run.code, 1);
  assert.match(
    run.err,
    /c: 4 computed, 0 cached, 4 failed, 4 blocked, 0 skipped/,
  );
  assert.match(
    run.err,
    /✗ node {4}bad\[mode=x,seed=1\]\n {2}key {5}[0-9a-f]{64}\n {2}params {2}\{"message":"deliberate","input":"\$a\[mode=x,seed=1\]"\}\n {2}error {3}deliberate\n {2}log {5}.*\.log\n {2}resume {2}\.\/envsmith run .*exp\.yaml --only 'bad\[mode=x,seed=1\]'/,
  );
  const status = await cli(["--cache", p.cache, "status", p.file]);
  assert.match(status.out, /last run .*: failed/);
  assert.match(
    status.out,
    /run {6}bad\[mode=y,seed=2\]\s+failed last run: deliberate/,
  );
  const tables = await cli([
    "--cache",
    p.cache,
    "tables",
    p.file,
    "--out",
    join(p.dir, "t"),
  ]);
  assert.equal(tables.code, 1, "incomplete tables exit 1");
  assert.match(tables.out, /\| x \| 1\.500 ± 0\.707 \|/);
  assert.match(
    tables.out,
    /\*\*Incomplete: 4 nodes are not in the cache:\*\* after\[mode=x,seed=1\], after\[mode=x,seed=2\]/,
  );
  assert.match(
    tables.out,
    /Compute them with: `\.\/envsmith run .*exp\.yaml --only after`/,
  );
  const csv = await Deno.readTextFile(join(p.dir, "t", "cli_t.csv"));
  assert.equal(
    csv.split("\n")[1],
    "x,sum,1.5,0.7071067811865476,2,,,1=1 2=2,,,",
  );
});

Deno.test("cli: run-node by FILE NODE_ID and by KEY", async () => {
  const yaml =
    `experiment: rn\nseed: 1\nnodes:\n  a: { kind: test.add, with: { a: 1 } }\n  b: { kind: test.add, with: { a: $a.sum, b: 5 } }\n`;
  await using p = await project(yaml);
  const early = await cli(["--cache", p.cache, "run-node", p.file, "b"]);
  assert.equal(early.code, 2);
  assert.match(
    early.err,
    /b cannot run alone: its input a is not cached; run them first \(\.\/envsmith run .* --only a\)/,
  );
  assert.equal(
    (await cli(["--cache", p.cache, "run-node", p.file, "a"])).code,
    0,
  );
  assert.equal(
    (await cli(["--cache", p.cache, "run-node", p.file, "b"])).code,
    0,
  );
  const m = lastManifest(p.cache, "rn");
  const bKey = m.nodes.find((n) => n.id === "b")!.key;
  const store = new Store(p.cache);
  assert.deepEqual(store.readEntry(bKey)!.value, { sum: 6, parts: [1, 5] });
  // By key: remove the entry and recompute it from the job spec.
  await Deno.remove(store.entryPath(bKey));
  const byKey = await cli(["--cache", p.cache, "run-node", bKey]);
  assert.equal(byKey.code, 0, byKey.err);
  assert.deepEqual(store.readEntry(bKey)!.value, { sum: 6, parts: [1, 5] });
  // A spec of another key under this key's name runs nothing.
  const aKey = m.nodes.find((n) => n.id === "a")!.key;
  await Deno.remove(store.entryPath(bKey));
  await Deno.copyFile(store.jobPath(aKey), store.jobPath(bKey));
  const wrong = await cli(["--cache", p.cache, "run-node", bKey]);
  assert.equal(wrong.code, 2);
  assert.match(
    wrong.err,
    new RegExp(`is not the spec of key ${bKey} \\(it holds key ${aKey}\\)`),
  );
  assert.equal(store.readEntry(bKey), null);
});

Deno.test("cli: SIGKILL mid-run, then rerun recomputes nothing that had finished", async () => {
  const yaml = `experiment: kill
seed: 1
nodes:
${
    Array.from({ length: 8 }, (_, i) =>
      `  s${i}: { kind: test.sleep, with: { ms: 300, steps: 3, value: ${i} } }`)
      .join("\n")
  }
  c0: { kind: test.sleep, with: { ms: 200, value: [$s0, $s1] } }
  c1: { kind: test.sleep, with: { ms: 200, value: $c0 } }
  c2: { kind: test.add, with: { a: 1, note: [$c1, $s7] } }
`;
  await using p = await project(yaml);
  const log1 = join(p.dir, "log1"), log2 = join(p.dir, "log2");
  const child = spawnCli(["--cache", p.cache, "run", p.file, "--jobs", "2"], {
    ENVSMITH_TEST_LOG: log1,
  });
  const t0 = Date.now();
  while (lines(log1).length < 3 && Date.now() - t0 < 20000) {
    await new Promise((r) => setTimeout(r, 20));
  }
  child.kill("SIGKILL");
  const st = await child.status;
  await child.stdout.cancel();
  await child.stderr.cancel();
  assert.equal(st.signal, "SIGKILL");
  const store = new Store(p.cache);
  // Which nodes finished (entry stored and valid) before the kill?
  const before = lastManifest(p.cache, "kill");
  const finished = new Set(
    before.nodes.filter((n) => store.loadVerified(n.key) !== null).map((n) =>
      n.id
    ),
  );
  assert.ok(finished.size >= 1, `finished before the kill: ${[...finished]}`);
  assert.ok(finished.size < 11, "the kill came before the end");
  const rerun = spawnCli(["--cache", p.cache, "run", p.file, "--jobs", "2"], {
    ENVSMITH_TEST_LOG: log2,
  });
  const out = await rerun.output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const recomputed = new Set(lines(log2).map((l) => l.split(" ")[0]!));
  for (const id of finished) {
    assert.ok(!recomputed.has(id), `${id} was recomputed`);
  }
  assert.equal(recomputed.size, 11 - finished.size);
  const last = lastManifest(p.cache, "kill");
  assert.equal(last.status, "ok");
  assert.equal(last.counts.cached, finished.size);
  assert.equal(last.counts.done, 11 - finished.size);
  for (const n of last.nodes) assert.ok(store.loadVerified(n.key), n.id);
});

Deno.test("cli: SIGINT stops a run (workers terminated), exits 130, and the next run resumes", async () => {
  const yaml = `experiment: intr
seed: 1
nodes:
  quick: { kind: test.add, with: { a: 1 } }
  slow: { kind: test.sleep, with: { ms: 20000, steps: 200 } }
  spin: { kind: test.spin, with: { n: 2000000000 } }
`;
  await using p = await project(yaml);
  const child = spawnCli(
    ["--cache", p.cache, "run", p.file, "--jobs", "3"],
    {},
  );
  const t0 = Date.now();
  const started = () => {
    try {
      return [...Deno.readDirSync(join(p.cache, "locks"))].length >= 2;
    } catch {
      return false;
    }
  };
  while (!started() && Date.now() - t0 < 20000) {
    await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 200));
  const t1 = Date.now();
  child.kill("SIGINT");
  const out = await child.output();
  assert.equal(out.code, 130, new TextDecoder().decode(out.stderr));
  assert.ok(Date.now() - t1 < scaledMs(10000), "stops promptly");
  assert.match(new TextDecoder().decode(out.stderr), /interrupt: stopping/);
  const m = lastManifest(p.cache, "intr");
  assert.equal(m.status, "interrupted");
  assert.equal(m.nodes.find((n) => n.id === "quick")!.status, "done");
  assert.equal(m.nodes.find((n) => n.id === "slow")!.status, "interrupted");
  assert.equal(m.nodes.find((n) => n.id === "spin")!.status, "interrupted");
  assert.equal(
    [...Deno.readDirSync(join(p.cache, "locks"))].length,
    0,
    "locks released",
  );
  // The next run of a shorter variant finds quick cached.
  await Deno.writeTextFile(
    p.file,
    yaml.replace("ms: 20000, steps: 200", "ms: 10, steps: 1").replace(
      "2000000000",
      "1000",
    ),
  );
  const again = await cli(["--cache", p.cache, "run", p.file]);
  assert.equal(again.code, 0);
  assert.match(again.err, /2 computed, 1 cached/);
});

Deno.test("cli: two concurrent runs of one experiment leave one consistent cache", async () => {
  const yaml = `experiment: twin
seed: 1
nodes:
${
    Array.from({ length: 6 }, (_, i) =>
      `  s${i}: { kind: test.sleep, with: { ms: 150, value: ${i} } }`).join(
        "\n",
      )
  }
  sum: { kind: test.add, with: { a: 0, note: [$s0, $s1, $s2, $s3, $s4, $s5] } }
`;
  await using p = await project(yaml);
  const logA = join(p.dir, "a.log"), logB = join(p.dir, "b.log");
  const a = spawnCli(["--cache", p.cache, "run", p.file, "--jobs", "2"], {
    ENVSMITH_TEST_LOG: logA,
  });
  const b = spawnCli(["--cache", p.cache, "run", p.file, "--jobs", "2"], {
    ENVSMITH_TEST_LOG: logB,
  });
  const [ra, rb] = await Promise.all([a.output(), b.output()]);
  assert.equal(ra.code, 0, new TextDecoder().decode(ra.stderr));
  assert.equal(rb.code, 0, new TextDecoder().decode(rb.stderr));
  const all = [...lines(logA), ...lines(logB)].map((l) => l.split(" ")[0]!)
    .sort();
  assert.deepEqual(
    all,
    ["s0", "s1", "s2", "s3", "s4", "s5", "sum"],
    "every node computed exactly once",
  );
  const store = new Store(p.cache);
  const keys = [...store.keys()];
  assert.equal(keys.length, 7);
  for (const k of keys) assert.ok(store.loadVerified(k));
  assert.equal(
    [...Deno.readDirSync(join(p.cache, "locks"))].length,
    0,
    "no lock left behind",
  );
});

Deno.test("cli: cache export --only json, import elsewhere, tables offline; gc", async () => {
  const yaml = `experiment: ex
seed: 1
matrix:
  seed: [1, 2]
nodes:
  w: { kind: test.blob, with: { size: 100 } }
  a: { kind: test.add, with: { a: $seed, note: $w } }
tables:
  - { name: ex_t, node: a, rows: seed, columns: value.sum }
`;
  await using p = await project(yaml);
  assert.equal((await cli(["--cache", p.cache, "run", p.file])).code, 0);
  const bundle = join(p.dir, "b.esb");
  const ex = await cli([
    "--cache",
    p.cache,
    "cache",
    "export",
    bundle,
    "--only",
    "json",
    "--experiment",
    p.file,
    "--filter",
    "a",
  ]);
  assert.equal(ex.code, 0, ex.err);
  assert.match(ex.err, /2 entries, 0 blobs/);
  const other = join(p.dir, "other");
  const im = await cli(["--cache", other, "cache", "import", bundle]);
  assert.match(im.err, /2 entries, 0 blobs/);
  const t = await cli([
    "--cache",
    other,
    "tables",
    p.file,
    "--out",
    join(p.dir, "t"),
  ]);
  assert.equal(t.code, 0, t.out);
  // Imported values are shown, and the table says once that they were not
  // computed here.
  assert.match(t.out, /\| 2 \| 2\.000 \|/);
  assert.match(
    t.out,
    /\(imported\): every value of this table comes from a bundle \(cache import\), not computed here/,
  );
  // A full bundle carries blobs; a corrupted bundle is refused.
  const full = join(p.dir, "full.esb");
  await cli(["--cache", p.cache, "cache", "export", full]);
  const bytes = await Deno.readFile(full);
  bytes[bytes.length - 40]! ^= 1;
  await Deno.writeFile(join(p.dir, "bad.esb"), bytes);
  const bad = await cli([
    "--cache",
    join(p.dir, "third"),
    "cache",
    "import",
    join(p.dir, "bad.esb"),
  ]);
  assert.equal(bad.code, 2);
  assert.match(
    bad.err,
    /is corrupt \(sha256 mismatch at byte \d+\)|bad record header/,
  );
  // verify finds a flipped byte in a blob and moves it aside.
  const st = new Store(p.cache);
  const blob = [...st.blobHashes()][0]!;
  const bb = await Deno.readFile(st.blobPath(blob));
  bb[0]! ^= 0xff;
  await Deno.writeFile(st.blobPath(blob), bb);
  const ver = await cli(["--cache", p.cache, "cache", "verify"]);
  assert.equal(ver.code, 1);
  assert.match(ver.out, new RegExp(`Corrupt cache blob ${blob}`));
  // (the blob, and the entry left dangling without it)
  assert.match(ver.err, /verified 3 entries and 1 blobs .*: 2 corrupt/);
  assert.equal((await cli(["--cache", p.cache, "cache", "verify"])).code, 0);
  assert.match(
    (await cli(["--cache", p.cache, "run", p.file])).err,
    /1 computed, 2 cached/,
  );
  // gc: after changing the experiment and dropping old runs, old entries go.
  await Deno.writeTextFile(p.file, yaml.replace("size: 100", "size: 101"));
  assert.equal((await cli(["--cache", p.cache, "run", p.file])).code, 0);
  const dry = await cli([
    "--cache",
    p.cache,
    "cache",
    "gc",
    "--dry-run",
    "--keep-runs",
    "1",
  ]);
  assert.match(dry.err, /would remove 3 entries, 1 blobs, 2 manifests/);
  const store = new Store(p.cache);
  assert.equal([...store.keys()].length, 6);
  await cli(["--cache", p.cache, "cache", "gc", "--keep-runs", "1"]);
  assert.equal([...store.keys()].length, 3);
  assert.equal(
    (await cli(["--cache", p.cache, "run", p.file])).err.match(
      /0 computed, 3 cached/,
    )?.length,
    1,
  );
});

Deno.test("cli: cache verify reports dangling blobs and entries whatever the import mode", async () => {
  const yaml = `experiment: dv
seed: 1
nodes:
  w: { kind: test.blob, with: { size: 100 } }
  a: { kind: test.add, with: { a: 1, b: 2 } }
`;
  await using p = await project(yaml);
  assert.equal((await cli(["--cache", p.cache, "run", p.file])).code, 0);
  const bundle = join(p.dir, "b.esb");
  assert.equal(
    (await cli(["--cache", p.cache, "cache", "export", bundle])).code,
    0,
  );
  // A bundle with one more blob, referenced by no entry.
  const extra = new TextEncoder().encode("a blob no entry names");
  const hash = sha256Hex(extra);
  const text = await Deno.readFile(bundle);
  const end = text.lastIndexOf(10, text.length - 2) + 1;
  const count = JSON.parse(new TextDecoder().decode(text.subarray(end))).count;
  const enc = new TextEncoder();
  const forged = [
    text.subarray(0, end),
    enc.encode(
      JSON.stringify({
        type: "blob",
        name: hash,
        size: extra.length,
        sha256: hash,
      }) + "\n",
    ),
    extra,
    enc.encode("\n" + JSON.stringify({ type: "end", count: count + 1 }) + "\n"),
  ];
  const out = join(p.dir, "extra.esb");
  await Deno.writeFile(
    out,
    new Uint8Array(await new Blob(forged).arrayBuffer()),
  );
  for (const trust of [true, false]) {
    const cache = join(p.dir, `c-${trust}`);
    const im = await cli([
      "--cache",
      cache,
      "cache",
      "import",
      out,
      ...(trust ? ["--trust"] : []),
    ]);
    assert.equal(im.code, 0, im.err);
    const ver = await cli(["--cache", cache, "cache", "verify"]);
    assert.equal(ver.code, 0, `trust ${trust}: ${ver.err}`);
    assert.match(
      ver.out,
      new RegExp(
        `^Dangling blob ${hash} \\(.*\\): no entry references it; \`cache gc\` removes it$`,
      ),
    );
    assert.equal(ver.out.split("\n").length, 1, ver.out);
    assert.match(
      ver.err,
      /all intact; 1 dangling blob no entry references \(`cache gc` removes them\)/,
    );
    // An entry whose blob went missing is dangling: moved aside, exit 1.
    const store = new Store(cache);
    const blobs = [...store.blobHashes()].filter((h) => h !== hash);
    assert.equal(blobs.length, 1);
    Deno.removeSync(store.blobPath(blobs[0]!));
    const again = await cli(["--cache", cache, "cache", "verify"]);
    assert.equal(again.code, 1);
    assert.match(
      again.out,
      new RegExp(
        `^Dangling cache entry [0-9a-f]{64} \\(.*\\): its blob ${
          blobs[0]
        } is missing( \\(imported from extra\\.esb\\))?; moved aside, it will be recomputed$`,
        "m",
      ),
    );
    assert.match(again.err, /1 corrupt \(moved to/);
    assert.equal((await cli(["--cache", cache, "cache", "verify"])).code, 0);
  }
  // A results-only import (no blobs) is complete as it is: not dangling.
  const json = join(p.dir, "json.esb");
  await cli(["--cache", p.cache, "cache", "export", json, "--only", "json"]);
  const ro = join(p.dir, "c-json");
  assert.equal((await cli(["--cache", ro, "cache", "import", json])).code, 0);
  const v = await cli(["--cache", ro, "cache", "verify"]);
  assert.equal(v.code, 0, v.out);
  assert.equal(v.out, "");
});

Deno.test("cli: ablate fails clearly when its experiment file is missing", async () => {
  const cwd = Deno.cwd();
  const dir = await Deno.makeTempDir();
  Deno.chdir(dir);
  try {
    const r = await cli(["ablate"]);
    assert.equal(r.code, 2);
    assert.match(r.err, /experiments\/ablate-context\.yaml does not exist/);
  } finally {
    Deno.chdir(cwd);
    await Deno.remove(dir, { recursive: true });
  }
});

/** Every subcommand path of the CLI (engine, domain commands and serve-llm), leaves only. */
function commandPaths(): string[][] {
  const program = createProgram(
    () => Promise.reject(new Error("unused")),
    () => {},
  );
  for (const make of subcommands) {
    program.addCommand(make() as unknown as Command);
  }
  const out: string[][] = [];
  const walk = (c: Command, path: string[]) => {
    if (c.commands.length === 0) out.push(path);
    for (const sub of c.commands) walk(sub as Command, [...path, sub.name()]);
  };
  walk(program, []);
  return out;
}

Deno.test("cli: every subcommand has --help with an example, and the files its help names exist", async () => {
  const paths = commandPaths();
  for (
    const name of [
      "plan",
      "run",
      "tables",
      "report",
      "generate",
      "render",
      "solve",
      "train",
      "evaluate",
      "import",
      "diagnose",
      "redesign",
      "engineers",
      "serve-llm",
    ]
  ) {
    assert.ok(paths.some((p) => p[0] === name), name);
  }
  assert.ok(paths.some((p) => p.join(" ") === "cache export"));
  for (const sub of paths) {
    const r = await cli([...sub, "--help"]);
    assert.equal(r.code, 0, sub.join(" "));
    assert.match(
      r.out,
      new RegExp(`^Usage: envsmith ${sub.join(" ")} `),
      sub.join(" "),
    );
    assert.match(
      r.out,
      /\nExamples?:\n {2}\S/,
      `${sub.join(" ")} --help has no example`,
    );
    // One invocation form: the launcher's (`deno task cli` fails without
    // Deno on PATH).
    assert.doesNotMatch(
      r.out,
      /deno task cli/,
      `${sub.join(" ")} --help names \`deno task cli\`, not ./envsmith`,
    );
    // Shipped files a help text names are real (results/tables.esb.gz, not .esb).
    for (
      const m of r.out.matchAll(
        /\b((?:results|experiments|schemas|examples\/\w+)\/[\w.-]+\.[a-z]+)\b/g,
      )
    ) {
      if (m[1]!.includes("<")) continue;
      assert.ok(
        (() => {
          try {
            return Deno.statSync(join(ROOT, m[1]!)).isFile;
          } catch {
            return false;
          }
        })(),
        `${sub.join(" ")} --help names ${m[1]}, which does not exist`,
      );
    }
  }
});

/** The error output of a CLI call that is refused as a usage error (exit 2). */
async function refused(args: string[]): Promise<string> {
  const r = await cli(args);
  assert.equal(r.code, 2, args.join(" "));
  return r.err;
}

Deno.test("cli: usage errors exit 2 with the error and a short usage last; a mistyped file gets a did-you-mean", async () => {
  const typo = await cli(["paln", "experiments/quick.yaml"]);
  assert.equal(typo.code, 2);
  const lines = typo.err.split("\n");
  assert.deepEqual(lines.slice(0, 2), [
    "error: unknown command 'paln'",
    "(Did you mean plan?)",
  ]);
  assert.match(
    lines[2]!,
    /^Usage: envsmith \[options\] <command> {2}\(commands: run, .*plan/,
  );
  assert.equal(
    lines.length,
    4,
    "the error stays on screen: no full help after it",
  );
  assert.deepEqual((await refused(["plan"])).split("\n"), [
    "error: missing required argument 'file'",
    "Usage: envsmith plan [options] <file>",
    "Help: ./envsmith plan --help",
  ]);
  assert.match(
    await refused([
      "run",
      join(ROOT, "experiments/quick.yaml"),
      "--jobz",
      "2",
    ]),
    /^error: unknown option '--jobz'\n\(Did you mean --jobs\?\)\nUsage: envsmith run /,
  );
  assert.equal(
    await refused(["plan", join(ROOT, "experiments/quik.yaml")]),
    `No experiment file ${ROOT}experiments/quik.yaml; did you mean "${ROOT}experiments/quick.yaml"?`,
  );
  // only experiment files are offered: experiments/ also holds
  // ablate_learned_test.ts, smoke.ts and smoke_test.ts
  assert.equal(
    await refused(["tables", join(ROOT, "experiments/ablate.yaml")]),
    `No experiment file ${ROOT}experiments/ablate.yaml; did you mean "${ROOT}experiments/ablate-context.yaml" or "${ROOT}experiments/ablate-learned.yaml"?`,
  );
  assert.match(
    await refused([
      "report",
      join(ROOT, "experiments/quick.yaml"),
      "--cases",
      "-1",
    ]),
    /^--cases must be an integer >= 0, got "-1"$/m,
  );
  assert.equal(
    await refused(["plan", join(ROOT, "experiments/smoke")]),
    `No experiment file ${ROOT}experiments/smoke; did you mean "${ROOT}experiments/smoke.yaml"?`,
  );
  const help = await cli(["--help"]);
  assert.equal(help.code, 0);
});

Deno.test("every shipped experiment carries the schema comment and loads without errors", async () => {
  const dir = join(ROOT, "experiments");
  let files: string[] = [];
  try {
    files = [...Deno.readDirSync(dir)].filter((e) =>
      e.isFile && /\.ya?ml$/.test(e.name)
    ).map((e) => join(dir, e.name));
  } catch { /* no experiments yet */ }
  const cache = await Deno.makeTempDir({ prefix: "envsmith-exp-" });
  for (const f of files) {
    const text = await Deno.readTextFile(f);
    assert.match(
      text,
      /^# yaml-language-server: \$schema=\.\.\/schemas\/experiment\.schema\.json/,
      f,
    );
    const r = await cli(["--cache", cache, "plan", f, "--json"]);
    if (
      r.code === 2 && /kind: (lm\.init|train\.lm)\b/.test(text) &&
      (!lmVenvReady() || /device: cuda/.test(text))
    ) {
      // an LM experiment on a machine without what it needs (the trainer's
      // environment; for the GPU example its model, CUDA environment, GPU):
      // one line, naming it and the fix
      const lines = r.err.trim().split("\n");
      assert.equal(lines.length, 1, `${f}:\n${r.err}`);
      assert.match(
        lines[0]!,
        /create it with `deno task setup:lm`|does not exist; give a Hugging Face checkpoint directory|this machine lacks/,
        f,
      );
      continue;
    }
    assert.equal(r.code, 0, `${f}:\n${r.err}`);
    assert.ok(JSON.parse(r.out).nodes.length > 0, f);
  }
  await Deno.remove(cache, { recursive: true });
});

Deno.test("cli: a broken domain subcommand factory is reported and does not take the CLI down", async () => {
  const out: string[] = [], err: string[] = [];
  const code = await main(["tables", "--help"], {
    kinds: testKinds,
    commands: [function brokenCommand(): never {
      throw new ReferenceError("numberFlag is not defined");
    }],
    output: { out: (l) => out.push(l), err: (l) => err.push(l) },
  });
  assert.equal(code, 0);
  assert.match(out.join("\n"), /Usage: envsmith tables/);
  assert.match(
    err.join("\n"),
    /warning: the subcommand factory brokenCommand failed: numberFlag is not defined/,
  );
});

Deno.test("cli: cache gc with a damaged manifest of experiments/smoke.yaml keeps all 20 entries and says so", async () => {
  await using p = await project("");
  const run = async (args: string[]) => {
    const o = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "cli.ts", "--cache", p.cache, ...args],
      cwd: ROOT,
      env: { CI: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    return {
      code: o.code,
      err: new TextDecoder().decode(o.stderr),
      out: new TextDecoder().decode(o.stdout),
    };
  };
  assert.equal((await run(["run", "experiments/smoke.yaml"])).code, 0);
  const store = new Store(p.cache);
  const before = [...store.keys()].sort();
  const blobs = [...store.blobHashes()].sort();
  assert.equal(before.length, 20);
  const [manifest, ...others] = [...Deno.readDirSync(store.runsDir("smoke"))]
    .filter((e) => e.name.endsWith(".json")).map((e) =>
      join(store.runsDir("smoke"), e.name)
    );
  assert.deepEqual(others, []);
  const good = await Deno.readTextFile(manifest!);
  for (
    const [damage, problem] of [
      ["not json", /is not JSON \(Unexpected token/],
      [good.slice(0, good.length >> 1), /is not JSON \(/],
      ["[1,2,3]", /is not a run manifest: a JSON array, expected an object/],
    ] as const
  ) {
    await Deno.writeTextFile(manifest!, damage);
    for (const dry of [[], ["--dry-run"]]) {
      const gc = await run(["cache", "gc", ...dry]);
      assert.equal(gc.code, 2, gc.err);
      assert.equal(gc.out, "");
      const lines = gc.err.trim().split("\n");
      assert.equal(lines.length, 1, gc.err);
      assert.match(lines[0]!, /^cache gc removed nothing: run manifest /);
      assert.ok(lines[0]!.includes(manifest!), lines[0]);
      assert.match(lines[0]!, problem);
      assert.match(
        lines[0]!,
        /so gc cannot tell which entries that run needs\. Repair it, or delete it if that run's results are not needed; then run `cache gc` again\.$/,
      );
      assert.doesNotMatch(gc.err, /removed \d+ entries|\n\s+at /);
      assert.deepEqual([...store.keys()].sort(), before);
      assert.deepEqual([...store.blobHashes()].sort(), blobs);
    }
  }
  // Repaired: nothing is garbage, nothing removed.
  await Deno.writeTextFile(manifest!, good);
  const ok = await run(["cache", "gc"]);
  assert.equal(ok.code, 0, ok.err);
  assert.match(ok.err, /^removed 0 entries, 0 blobs, 0 manifests/m);
  assert.deepEqual([...store.keys()].sort(), before);
  // Deleted, as the message allows: then its entries are garbage.
  await Deno.remove(manifest!);
  const gone = await run(["cache", "gc"]);
  assert.equal(gone.code, 0, gone.err);
  assert.match(gone.err, /^removed 20 entries, \d+ blobs, 0 manifests/m);
});
