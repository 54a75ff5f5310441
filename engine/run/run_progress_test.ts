import assert from "node:assert/strict";
import { join } from "node:path";
import {
  formatRunSnapshot,
  nodeTimes,
  progressBar,
  type RunOutline,
  RunProgress,
} from "./run_progress.ts";
import { PlainReporter, TtyReporter } from "./progress.ts";
import { type CommandContext, runCommand } from "../cli/commands.ts";
import { Store } from "../cache/store.ts";
import { kinds } from "../testdata/kinds.ts";
import type { Reporter } from "./progress.ts";

// Two chains a -> b and c -> d, plus e alone; history knows a, b, c, d.
const OUTLINE: RunOutline = {
  jobs: 2,
  nodes: [
    { id: "a", kind: "train", deps: [], estimateMs: 10_000 },
    { id: "b", kind: "train", deps: ["a"], estimateMs: 10_000 },
    { id: "c", kind: "eval", deps: [], estimateMs: 2_000 },
    { id: "d", kind: "eval", deps: ["c"], estimateMs: 2_000 },
    { id: "e", kind: "eval", deps: [] },
  ],
};

Deno.test("run progress: done/total, running, ETA from history, scaled by this run's pace, bounded by the critical path", () => {
  // Without a history for e, and nothing finished: no ETA yet.
  const p = new RunProgress(OUTLINE, 0);
  let s = p.snapshot(0);
  assert.deepEqual(
    { ...s, running: [...s.running] },
    {
      total: 5,
      done: 0,
      failed: 0,
      blocked: 0,
      running: [],
      elapsedMs: 0,
      etaMs: null,
    },
  );
  p.start("c", 0);
  p.start("a", 0);
  // c took 4 s where history said 2 s: this run is twice as slow.
  p.end("c", "done", 4_000);
  s = p.snapshot(4_000);
  assert.equal(s.done, 1);
  assert.deepEqual(s.running, ["a"]);
  // Expected: a 20 s (16 s left), b 20 s, d 4 s, e 4 s (eval's mean here).
  // Work left 44 s on 2 jobs = 22 s; the chain a -> b is 36 s: ETA 36 s.
  assert.equal(s.etaMs, 36_000);
  assert.equal(
    formatRunSnapshot(s, { names: 3 }),
    "1/5 nodes (20%) · 1 running: a · elapsed 4.0s · ETA 36.0s",
  );
  assert.equal(progressBar(s, 10), "[██░░░░░░░░]");
  // A failure blocks what depends on it; blocked nodes leave the ETA.
  p.end("a", "failed", 5_000);
  s = p.snapshot(5_000);
  assert.equal(s.failed, 1);
  assert.equal(s.blocked, 1, "b waits for a");
  // Left: d 4 s and e 4 s on 2 jobs: 4 s.
  assert.equal(s.etaMs, 4_000);
  assert.equal(
    formatRunSnapshot(s),
    "3/5 nodes (60%) · 1 failed · 1 blocked · elapsed 5.0s · ETA 4.0s",
  );
  for (const id of ["d", "e"]) {
    p.start(id, 5_000);
    p.end(id, "done", 6_000);
  }
  s = p.snapshot(6_000);
  assert.equal(s.done, 3);
  assert.equal(s.etaMs, 0);
  assert.equal(progressBar(s, 10), "[██████████]");
});

Deno.test("plain reporter: one line with the run's size and ETA, a counter on each end line, a periodic summary", () => {
  let now = Date.UTC(2026, 0, 1, 12, 0, 0);
  const out: string[] = [];
  const r = new PlainReporter({
    write: (t) => out.push(t),
    now: () => now,
    summaryMs: 0,
  });
  r.begin({
    jobs: 2,
    nodes: [
      { id: "a", kind: "k", deps: [], estimateMs: 60_000 },
      { id: "b", kind: "k", deps: ["a"], estimateMs: 60_000 },
    ],
  });
  r.start("a");
  now += 30_000;
  r.summary();
  now += 30_000;
  r.end("a", "done", 60_000);
  r.close();
  assert.deepEqual(out, [
    "[12:00:00] 2 nodes to run, 2 at a time; ETA 2m00s (earlier times of 2/2 nodes)\n",
    "[12:00:00] start a\n",
    "[12:00:30] progress 0/2 nodes (0%) · 1 running: a · elapsed 30.0s · ETA 1m30s\n",
    "[12:01:00] done  a (1m00s) [1/2]\n",
  ]);
  assert.ok(out.every((l) => !l.includes("\x1b")), "no terminal codes");
});

Deno.test("tty reporter: the run-wide bar under the node lines; no colour with NO_COLOR", async () => {
  let now = 0;
  const out: string[] = [];
  const r = new TtyReporter({
    write: (t) => out.push(t),
    now: () => now,
    color: false,
  });
  r.begin({
    jobs: 1,
    nodes: [
      { id: "a", kind: "k", deps: [], estimateMs: 10_000 },
      { id: "b", kind: "k", deps: [], estimateMs: 10_000 },
    ],
  });
  r.start("a");
  now = 2_000;
  r.progress("a", 1, 4, "success 0.5");
  for (let i = 0; i < 200 && !out.join("").includes("▸ a"); i++) {
    await new Promise((res) => setTimeout(res, 10));
  }
  const frame = out.join("");
  assert.match(frame, /▸ a {2}1\/4 {2}success 0\.5 {2}2\.0s/);
  assert.match(
    frame,
    /\n\[░+\] 0\/2 nodes \(0%\) · 1 running · elapsed 2\.0s · ETA 18\.0s\n$/,
  );
  out.length = 0;
  r.end("a", "done", 2_000);
  // deno-lint-ignore no-control-regex
  assert.match(out[0]!, /^\x1b\[2F\x1b\[J✓ a \(2\.0s\)\n\[█+░+\] 1\/2 nodes/);
  r.close();
});

Deno.test("runOutline: a rerun's ETA comes from the earlier run's node times", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-eta-" });
  try {
    const file = join(dir, "t.yaml");
    const yaml = (ms: number) =>
      `experiment: eta\nseed: 1\nmatrix:\n  seed: [1, 2]\nnodes:\n  s: { kind: test.sleep, with: { ms: ${ms}, value: $seed } }\n  t: { kind: test.sleep, with: { ms: ${ms}, value: $s } }\n`;
    Deno.writeTextFileSync(file, yaml(60));
    const outlines: RunOutline[] = [];
    const reporter: Reporter = {
      begin: (o) => outlines.push(o),
      start() {},
      progress() {},
      waiting() {},
      end() {},
      info() {},
      close() {},
    };
    const ctx: CommandContext = {
      kinds,
      cache: join(dir, "cache"),
      output: { out: () => {}, err: () => {} },
      reporter,
    };
    assert.equal((await runCommand(ctx, file, { jobs: 2 })).code, 0);
    assert.equal(outlines[0]!.nodes.length, 4);
    assert.ok(outlines[0]!.nodes.every((n) => n.estimateMs === undefined));
    assert.deepEqual(
      outlines[0]!.nodes.find((n) => n.id === "t[seed=1]")!.deps,
      [
        "s[seed=1]",
      ],
    );
    const times = nodeTimes(new Store(ctx.cache), "eta");
    const took = times.byId.get("s[seed=1]")!;
    assert.ok(took >= 60 && took < 5_000, `s took ${took} ms`);
    // Changed parameters, same ids: every node runs again, with an estimate.
    Deno.writeTextFileSync(file, yaml(61));
    assert.equal((await runCommand(ctx, file, { jobs: 2 })).code, 0);
    const again = outlines[1]!;
    assert.equal(again.nodes.length, 4);
    assert.equal(again.jobs, 2);
    assert.equal(
      again.nodes.find((n) => n.id === "s[seed=1]")!.estimateMs,
      took,
    );
    assert.ok(again.nodes.every((n) => typeof n.estimateMs === "number"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
