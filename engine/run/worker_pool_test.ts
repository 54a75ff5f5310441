import assert from "node:assert/strict";
import { compile, runAll, tmpProject, valueOf } from "../_test_util.ts";
import type { Experiment } from "../compile/experiment.ts";
import { executeJob, type JobRunner } from "./job.ts";
import { SilentReporter } from "./progress.ts";
import type { RunResult } from "./scheduler.ts";
import { WorkerPool } from "./worker_pool.ts";
import { workerSummary } from "./executors/local.ts";

function warmRunner(pool: WorkerPool): JobRunner {
  return (job, store, o) => executeJob(job, store, { ...o, workers: pool });
}

/**
 * A run of all of `exp` on two jobs served by the warm workers of `pool`,
 * which must fail no node.
 */
async function runWarm(
  exp: Experiment,
  store: Parameters<typeof runAll>[1],
  pool: WorkerPool,
): Promise<RunResult> {
  const r = await runAll(exp, store, { jobs: 2, runner: warmRunner(pool) });
  assert.equal(r.failures.length, 0);
  return r;
}

function values(exp: Experiment, r: RunResult): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const n of exp.nodes) out[n.id] = valueOf(exp, r, n.id);
  return out;
}

/**
 * The value of every node of YAML run in a new project by fresh workers:
 * what warm workers must reproduce.
 */
async function freshValues(): Promise<Record<string, unknown>> {
  await using t = await tmpProject(YAML);
  const exp = compile(t.file, YAML);
  const r = await runAll(exp, t.store, { jobs: 2 });
  assert.equal(r.failures.length, 0);
  return values(exp, r);
}

// six heavy nodes: two chains of three, each reading the one before
const YAML = `experiment: w\nseed: 3\nnodes:\n` +
  [0, 1].map((c) =>
    `  a${c}: { kind: test.spin, with: { n: ${100000 + c} } }\n` +
    `  b${c}: { kind: test.spin, with: { n: 150000, input: $a${c}.x } }\n` +
    `  c${c}: { kind: test.spin, with: { n: 120000, input: $b${c}.x } }\n`
  ).join("");

Deno.test("warm workers: one worker per slot serves every heavy node, with a fresh worker's results", async () => {
  const reference = await freshValues();
  await using warm = await tmpProject(YAML);
  const pool = new WorkerPool({ size: 2 });
  try {
    const exp = compile(warm.file, YAML);
    const r = await runWarm(exp, warm.store, pool);
    assert.deepEqual(values(exp, r), reference);
    const s = pool.stats;
    assert.equal(s.nodes, 6);
    assert.ok(s.started <= 2, `started ${s.started} workers for 6 nodes`);
    assert.equal(s.replacedAfterFailure, 0);
    assert.equal(pool.alive, s.started);
  } finally {
    await pool.close();
  }
  assert.equal(pool.alive, 0);
});

Deno.test("warm workers: a failed node's worker is replaced; a worker past its memory bound is retired", async () => {
  const yaml = `experiment: f\nseed: 1\nnodes:\n` +
    `  bad: { kind: test.spin, with: { n: 10, fail: "no good" } }\n` +
    `  after: { kind: test.spin, with: { n: 10 } }\n`;
  await using t = await tmpProject(yaml);
  const exp = compile(t.file, yaml);
  const pool = new WorkerPool({ size: 1 });
  try {
    const r = await runAll(exp, t.store, { jobs: 1, runner: warmRunner(pool) });
    assert.deepEqual(r.failures.map((f) => [f.id, f.message]), [
      ["bad", "no good"],
    ]);
    assert.equal(r.manifest.counts.done, 1);
    const s = pool.stats;
    assert.equal(s.nodes, 2);
    assert.equal(s.replacedAfterFailure, 1);
    assert.equal(s.started, 2);
  } finally {
    await pool.close();
  }
  // a bound of 1 byte retires the worker after every node
  await using t2 = await tmpProject(YAML);
  const tight = new WorkerPool({ size: 2, memoryBytes: 1 });
  try {
    await runWarm(compile(t2.file, YAML), t2.store, tight);
    assert.equal(tight.stats.retiredForMemory, 6);
    // the peak is a real worker's heap after a node: megabytes, not a bound
    const peak = tight.stats.peakHeapBytes;
    assert.ok(peak > 2 ** 20 && peak < 2 ** 30, `peak heap ${peak} bytes`);
    assert.equal(
      workerSummary(tight),
      `workers: 6 nodes in 6 workers; largest heap after a node ${
        Math.round(peak / 2 ** 20)
      } MB (bound 0 MB per worker, 6 retired for memory)`,
    );
    assert.equal(tight.stats.started, 6);
    assert.equal(tight.alive, 0);
  } finally {
    await tight.close();
  }
});

Deno.test("warm workers: a worker killed mid-node fails only that node, with its log; the run resumes to an uninterrupted run's results", async () => {
  const uninterrupted = await freshValues();

  await using t = await tmpProject(YAML);
  const exp2 = compile(t.file, YAML);
  const pool = new WorkerPool({ size: 2 });
  let killed = 0;
  const reporter = new SilentReporter();
  reporter.progress = (...args: unknown[]) => {
    // kill while b1 runs (its first progress report)
    if (args[0] === "b1" && killed === 0) killed = pool.killBusy();
  };
  try {
    const r = await runAll(exp2, t.store, {
      jobs: 2,
      runner: warmRunner(pool),
      reporter,
    });
    assert.ok(killed >= 1, "no worker was busy when b1 reported progress");
    const failed = r.failures.map((f) => f.id);
    assert.ok(failed.includes("b1"), `failures: ${failed}`);
    // only nodes running at the kill fail; c1 is blocked; chain 0 is intact
    // unless it was running at that moment too
    for (const f of r.failures) {
      assert.match(f.message, /worker of \S+ crashed: killed/);
      const log = Deno.readTextFileSync(f.log);
      assert.match(log, /FAILED: .*crashed: killed/);
    }
    // each chain a -> b -> c stops at its first failed node: what follows
    // it is blocked (c1 at least, after b1)
    let blocked = 0;
    for (const chain of ["0", "1"]) {
      const first = ["a", "b", "c"].findIndex((n) =>
        failed.includes(n + chain)
      );
      if (first >= 0) blocked += 2 - first;
    }
    assert.equal(r.manifest.counts.done, 6 - failed.length - blocked);
    assert.ok(pool.stats.replacedAfterFailure >= 1);
    // resume: the same pool (replaced workers) finishes the rest
    const again = await runWarm(exp2, t.store, pool);
    assert.equal(again.manifest.counts.done, failed.length + blocked);
    assert.deepEqual(values(exp2, again), uninterrupted);
  } finally {
    await pool.close();
  }
});

Deno.test("warm workers: preload starts the slots' workers once, and their nodes reuse them", async () => {
  await using t = await tmpProject(YAML);
  const pool = new WorkerPool({ size: 2 });
  try {
    const spin = new URL("../testdata/spin.ts", import.meta.url).href;
    pool.preload([spin]);
    pool.preload([spin]); // idempotent
    assert.equal(pool.stats.started, 2);
    await runWarm(compile(t.file, YAML), t.store, pool);
    assert.equal(pool.stats.started, 2);
    assert.equal(pool.stats.nodes, 6);
  } finally {
    await pool.close();
  }
  // a pool of fresh workers starts nothing ahead
  const fresh = new WorkerPool({ size: 2, fresh: true });
  fresh.preload(["file:///nowhere.ts"]);
  assert.equal(fresh.stats.started, 0);
  await fresh.close();
});
