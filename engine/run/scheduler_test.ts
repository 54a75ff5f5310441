import assert from "node:assert/strict";
import * as v from "valibot";
import {
  compile,
  kExperiment,
  runAll,
  tmpProject,
  valueOf,
} from "../_test_util.ts";
import { makePlan } from "./plan.ts";
import { runPlan } from "./scheduler.ts";
import { CorruptEntryError } from "../errors.ts";
import { readManifest } from "../cache/manifest.ts";
import type { NodeKind } from "../types.ts";

const GRAPH = kExperiment(
  "g",
  5,
  "  c: { kind: test.add, with: { a: $b.sum, more: [$a.parts.0, 10] } }\n",
);

function counting(name: string, calls: string[]): NodeKind<{ x: number }> {
  return {
    name,
    description: "counts calls",
    params: v.strictObject({ x: v.number() }),
    module: import.meta.url,
    run(p, ctx) {
      calls.push(ctx.id);
      return Promise.resolve({ value: { x: p.x, seed: ctx.seed } });
    },
  };
}

Deno.test("run computes values through references; a rerun is fully cached", async () => {
  await using t = await tmpProject(GRAPH);
  const exp = compile(t.file, GRAPH);
  const r1 = await runAll(exp, t.store);
  assert.equal(r1.failures.length, 0);
  assert.deepEqual(valueOf(exp, r1, "a"), { sum: 3, parts: [1, 2] });
  assert.deepEqual(valueOf(exp, r1, "b[k=2]"), { sum: 5, parts: [3, 2] });
  assert.deepEqual(valueOf(exp, r1, "c[k=2]"), {
    sum: 16,
    parts: [5, 0, 1, 10],
  });
  assert.deepEqual(r1.manifest.counts, { done: 5 });
  const r2 = await runAll(exp, t.store);
  assert.deepEqual(r2.manifest.counts, { cached: 5 });
  assert.deepEqual(valueOf(exp, r2, "c[k=1]"), {
    sum: 15,
    parts: [4, 0, 1, 10],
  });
  const m = readManifest(r2.manifestPath)!;
  assert.equal(m.status, "ok");
  assert.equal(
    m.nodes.find((n) => n.id === "a")!.entry,
    `entries/${m.nodes[0]!.key.slice(0, 2)}/${m.nodes[0]!.key}.json`,
  );
  assert.equal(m.versions.deno, Deno.version.deno);
});

Deno.test("plan explains a miss by diffing against the last run", async () => {
  await using t = await tmpProject(GRAPH);
  await runAll(compile(t.file, GRAPH), t.store);
  const exp2 = compile(t.file, GRAPH.replace("b: 2 }", "b: 4 }"));
  const plan = makePlan(exp2, t.store);
  const why = new Map(
    plan.items.map((it) => [it.node.id, [it.status, it.why.join("; ")]]),
  );
  assert.deepEqual(why.get("a"), ["run", "param with.b changed 2 -> 4"]);
  assert.deepEqual(why.get("b[k=1]"), ["blocked", "input a changed"]);
  assert.deepEqual(why.get("c[k=1]"), [
    "blocked",
    "input b[k=1] changed; input a changed",
  ]);
  assert.deepEqual(
    plan.items.find((it) => it.node.id === "c[k=1]")!.waitingFor,
    ["b[k=1]", "a"],
  );
});

/**
 * A new project of the experiment `yaml` (removed at the end of the caller's
 * scope, with the logs of its run) after a run of all of it: the compiled
 * experiment `exp` and the run's result `r`.
 */
async function runProject(yaml: string) {
  const t = await tmpProject(yaml);
  try {
    const exp = compile(t.file, yaml);
    return Object.assign(t, { exp, r: await runAll(exp, t.store) });
  } catch (e) {
    await t[Symbol.asyncDispose]();
    throw e;
  }
}

Deno.test("a failing node fails only its dependents; siblings finish; failure carries the log", async () => {
  const yaml = `experiment: f
seed: 1
nodes:
  ok1: { kind: test.add, with: { a: 1 } }
  bad: { kind: test.fail, with: { message: "boom", input: $ok1 } }
  after: { kind: test.add, with: { a: 1, note: $bad } }
  after2: { kind: test.add, with: { a: 1, note: $after } }
  sibling: { kind: test.sleep, with: { ms: 50, value: $ok1.sum } }
`;
  await using run = await runProject(yaml);
  const { exp, r } = run;
  assert.equal(r.failures.length, 1);
  assert.equal(r.failures[0]!.id, "bad");
  assert.equal(r.failures[0]!.message, "boom");
  assert.match(
    await Deno.readTextFile(r.failures[0]!.log),
    /about to fail[\s\S]*FAILED: Error: boom/,
  );
  const st = new Map(r.manifest.nodes.map((n) => [n.id, n.status]));
  assert.deepEqual(Object.fromEntries(st), {
    ok1: "done",
    bad: "failed",
    after: "blocked",
    after2: "blocked",
    sibling: "done",
  });
  assert.equal(r.manifest.status, "failed");
  assert.equal(
    r.manifest.nodes.find((n) => n.id === "after2")!.reason,
    "input bad failed",
  );
  // The next plan says why bad is not cached.
  const plan = makePlan(exp, run.store);
  assert.deepEqual(plan.items.find((it) => it.node.id === "bad")!.why, [
    "failed in the last run: boom",
  ]);
});

Deno.test("independent nodes run in parallel up to jobs, never more", async () => {
  let running = 0, peak = 0;
  const overlap: NodeKind<{ x: number }> = {
    name: "test.overlap",
    description: "measures concurrency",
    params: v.strictObject({ x: v.number() }),
    module: import.meta.url,
    async run(p) {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 60));
      running--;
      return { value: p.x };
    },
  };
  const yaml = (n: number) =>
    `experiment: p\nseed: 1\nnodes:\n` +
    Array.from({ length: 6 }, (_, i) =>
      `  s${i}: { kind: test.overlap, with: { x: ${i + n} } }\n`).join("");
  await using t = await tmpProject(yaml(0));
  for (const [jobs, offset] of [[3, 0], [1, 10], [6, 20]] as const) {
    peak = 0;
    const r = await runAll(compile(t.file, yaml(offset), [overlap]), t.store, {
      jobs,
    });
    assert.equal(r.manifest.counts.done, 6);
    assert.equal(peak, jobs, `jobs ${jobs}`);
  }
});

Deno.test("heavy kinds run in a worker; their blobs are stored and verified", async () => {
  const yaml =
    `experiment: h\nseed: 1\nnodes:\n  s: { kind: test.spin, with: { n: 200000 } }\n  r: { kind: test.blob, with: { read: $s.blob } }\n`;
  await using run = await runProject(yaml);
  const { exp, r } = run;
  assert.equal(r.failures.length, 0, r.failures.map((f) => f.message).join());
  const s = valueOf(exp, r, "s") as {
    x: number;
    inWorker: boolean;
    blob: { $blob: string; size: number };
  };
  assert.equal(s.inWorker, true);
  const expected = new TextEncoder().encode(`spin ${s.x}`);
  assert.deepEqual(valueOf(exp, r, "r"), {
    sum: expected.reduce((a, b) => a + b, 0),
    size: expected.length,
  });
  assert.equal(s.blob.size, expected.length);
});

Deno.test("a flipped byte in a blob is detected, reported and recomputed", async () => {
  const yaml =
    `experiment: b\nseed: 1\nnodes:\n  w: { kind: test.blob, with: { size: 4096 } }\n  r: { kind: test.blob, with: { read: $w.blob } }\n`;
  await using t = await tmpProject(yaml);
  const exp = compile(t.file, yaml);
  const r1 = await runAll(exp, t.store);
  const ref = (valueOf(exp, r1, "w") as { blob: { $blob: string } }).blob;
  const path = t.store.blobPath(ref.$blob);
  const bytes = await Deno.readFile(path);
  bytes[1234]! ^= 0x01;
  await Deno.chmod(path, 0o644);
  await Deno.writeFile(path, bytes);
  assert.throws(
    () => t.store.readBlob(ref),
    (e: unknown) =>
      e instanceof CorruptEntryError && e.file === path &&
      /does not match/.test(e.message),
  );
  // readBlob quarantined the file; put the corrupt bytes back to test planning too.
  await Deno.writeFile(path, bytes);
  const plan = makePlan(exp, t.store);
  assert.equal(plan.items.find((it) => it.node.id === "w")!.status, "run");
  assert.match(
    plan.notes[0]!,
    new RegExp(
      `Corrupt cache blob ${ref.$blob} \\(${
        path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
      }\\)`,
    ),
  );
  const r2 = await runPlan(plan, t.store, { jobs: 2 });
  assert.equal(r2.failures.length, 0);
  assert.deepEqual(valueOf(exp, r2, "w"), valueOf(exp, r1, "w"));
  assert.deepEqual(t.store.readBlob(ref).length, 4096);
});

Deno.test("a truncated entry is detected, named, and recomputed", async () => {
  await using t = await tmpProject(GRAPH);
  const exp = compile(t.file, GRAPH);
  const r1 = await runAll(exp, t.store);
  const key = r1.manifest.nodes.find((n) => n.id === "a")!.key;
  const file = t.store.entryPath(key);
  const text = await Deno.readTextFile(file);
  await Deno.writeTextFile(file, text.slice(0, text.length - 5));
  assert.throws(
    () => t.store.readEntry(key),
    (e: unknown) =>
      e instanceof CorruptEntryError && e.key === key && e.file === file,
  );
  const plan = makePlan(exp, t.store);
  assert.match(
    plan.notes.join("\n"),
    new RegExp(`Corrupt cache entry ${key} \\(.*${key}\\.json\\): sha256`),
  );
  assert.deepEqual(
    plan.items.filter((it) => it.status !== "cached").map((it) => it.node.id),
    ["a"],
  );
  const r2 = await runPlan(plan, t.store);
  assert.deepEqual(r2.manifest.counts, { done: 1, cached: 4 });
  assert.deepEqual(t.store.readEntry(key)!.value, { sum: 3, parts: [1, 2] });
});

Deno.test("determinism: the same experiment in two caches gives byte-identical values", async () => {
  const yaml =
    `experiment: d\nseed: 9\nnodes:\n  w: { kind: test.blob, with: { size: 512 } }\n  s: { kind: test.spin, with: { n: 1000 } }\n  a: { kind: test.add, with: { a: 2, note: [$w, $s] } }\n`;
  await using t1 = await tmpProject(yaml);
  await using t2 = await tmpProject(yaml);
  const e1 = compile(t1.file, yaml), e2 = compile(t2.file, yaml);
  const r1 = await runAll(e1, t1.store), r2 = await runAll(e2, t2.store);
  for (const id of ["w", "s", "a"]) {
    const i = e1.byId.get(id)!;
    assert.equal(
      JSON.stringify(r1.values.get(i)!.value),
      JSON.stringify(r2.values.get(i)!.value),
      id,
    );
    assert.equal(r1.values.get(i)!.key, r2.values.get(i)!.key);
  }
});

Deno.test("two concurrent runs on one cache compute each key once and agree", async () => {
  const calls: string[] = [];
  const k = counting("test.count", calls);
  const yaml = `experiment: c\nseed: 1\nnodes:\n` +
    Array.from(
      { length: 6 },
      (_, i) =>
        `  n${i}: { kind: test.sleep, with: { ms: 60, value: ${i} } }\n  m${i}: { kind: test.count, with: { x: ${i} } }\n`,
    ).join("");
  await using t = await tmpProject(yaml);
  const exp = compile(t.file, yaml, [k]);
  const [r1, r2] = await Promise.all([
    runAll(exp, t.store, { jobs: 3, pollMs: 20 }),
    runAll(exp, t.store, { jobs: 3, pollMs: 20 }),
  ]);
  assert.equal(r1.failures.length + r2.failures.length, 0);
  assert.deepEqual(calls.sort(), ["m0", "m1", "m2", "m3", "m4", "m5"]);
  for (const n of exp.nodes) {
    const a = r1.values.get(n.index)!, b = r2.values.get(n.index)!;
    assert.deepEqual(a.value, b.value);
    assert.deepEqual(t.store.readEntry(a.key)!.value, a.value);
  }
  const done = (r: typeof r1) => (r.manifest.counts.done ?? 0);
  assert.equal(
    done(r1) + done(r2),
    12,
    "each node computed by exactly one of the runs",
  );
});

/** The message of the one failure of a run of the experiment `yaml`. */
async function onlyFailure(yaml: string): Promise<string> {
  await using run = await runProject(yaml);
  assert.equal(run.r.failures.length, 1);
  return run.r.failures[0]!.message;
}

Deno.test("a missing field of an input fails the node with a clear message", async () => {
  const yaml =
    `experiment: m\nseed: 1\nnodes:\n  a: { kind: test.add, with: { a: 1 } }\n  b: { kind: test.add, with: { a: $a.summ } }\n`;
  assert.equal(
    await onlyFailure(yaml),
    `input a has no field "summ" (its value has keys: sum, parts)`,
  );
});

Deno.test("resolved parameters are validated against the kind's schema before run", async () => {
  const yaml =
    `experiment: m\nseed: 1\nnodes:\n  a: { kind: test.add, with: { a: 1 } }\n  b: { kind: test.add, with: { a: $a.parts } }\n`;
  assert.match(
    await onlyFailure(yaml),
    /^parameters do not match kind test.add: a: Invalid type: Expected number but received Array/,
  );
});

Deno.test("an error thrown in a worker fails the node with its message, log lines and stack", async () => {
  const yaml =
    `experiment: w\nseed: 1\nnodes:\n  s: { kind: test.spin, with: { n: 10, fail: "out of range" } }\n  t: { kind: test.add, with: { a: 1, note: $s } }\n`;
  await using run = await runProject(yaml);
  const { r } = run;
  assert.equal(r.failures.length, 1);
  assert.equal(r.failures[0]!.message, "out of range");
  const log = await Deno.readTextFile(r.failures[0]!.log);
  assert.match(log, /failing on purpose/);
  assert.match(log, /FAILED: RangeError: out of range\n\s+at .*spin\.ts/);
  assert.equal(r.manifest.nodes.find((n) => n.id === "t")!.status, "blocked");
});

Deno.test("--only selects nodes and pulls in their uncached inputs, nothing else", async () => {
  await using t = await tmpProject(GRAPH);
  const exp = compile(t.file, GRAPH);
  const plan = makePlan(exp, t.store, { only: ["c[k=2]"] });
  assert.deepEqual(plan.items.map((it) => it.node.id), [
    "a",
    "b[k=2]",
    "c[k=2]",
  ]);
  const r = await runPlan(plan, t.store);
  assert.deepEqual(r.manifest.counts, { done: 3, unselected: 2 });
  const plan2 = makePlan(exp, t.store, { only: ["c"] });
  assert.deepEqual(plan2.items.map((it) => [it.node.id, it.status]), [
    ["b[k=1]", "run"],
    ["c[k=1]", "blocked"],
    ["c[k=2]", "cached"],
  ]);
});

Deno.test("plan explains a miss against the last run that included the node, not an --only run", async () => {
  await using t = await tmpProject(GRAPH);
  await runAll(compile(t.file, GRAPH), t.store);
  const changed = compile(
    t.file,
    GRAPH.replace("more: [$a.parts.0, 10]", "more: [$a.parts.0, 11]").replace(
      "b: 2 }",
      "b: 3 }",
    ),
  );
  // An --only run of a alone.
  await runPlan(makePlan(changed, t.store, { only: ["a"] }), t.store);
  const plan = makePlan(changed, t.store);
  const why = new Map(plan.items.map((it) => [it.node.id, it.why.join("; ")]));
  assert.equal(plan.items.find((it) => it.node.id === "a")!.status, "cached");
  assert.equal(
    why.get("c[k=1]"),
    "input b[k=1] changed; input a changed; param with.more[1] changed 10 -> 11",
  );
});
