import { scaledMs } from "../_test_util.ts";
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
import { onTestClock } from "../_test_util.ts";

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
      etaNote: "ETA after a first eval node",
    },
  );
  p.start("c", 0);
  p.start("a", 0);
  // c took 4 s where history said 2 s. One node does not make this run
  // twice as slow: the history counts as 3 nodes of the mean estimate (6 s)
  // at pace 1, so the pace is (4 + 18) / (2 + 18) = 1.1.
  p.end("c", "done", 4_000);
  s = p.snapshot(4_000);
  assert.equal(s.done, 1);
  assert.deepEqual(s.running, ["a"]);
  // Expected: a 11 s (7 s left), b 11 s, d 2.2 s, e 4 s (eval's mean here).
  // Work left 24.2 s on 2 jobs = 12.1 s; the chain a -> b is 18 s: ETA 18 s.
  assert.ok(Math.abs(s.etaMs! - 18_000) < 1e-6, String(s.etaMs));
  assert.equal(
    formatRunSnapshot(s, { names: 3 }),
    "1/5 nodes (20%) · 1 running: a · elapsed 4.0s · ETA 18.0s",
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

Deno.test("run progress: no estimate early without history, then one that follows a change of pace", () => {
  // A cold run: 10 fast generate nodes, then 30 train nodes, no history.
  const nodes = [
    ...Array.from({ length: 10 }, (_, i) => ({
      id: `g${i}`,
      kind: "generate",
      deps: [],
    })),
    ...Array.from({ length: 30 }, (_, i) => ({
      id: `t${i}`,
      kind: "train",
      deps: [`g${i % 10}`],
    })),
  ];
  const p = new RunProgress({ jobs: 1, nodes }, 0);
  let now = 0;
  const step = (id: string, ms: number) => {
    p.start(id, now);
    now += ms;
    p.end(id, "done", now);
  };
  for (let i = 0; i < 10; i++) step(`g${i}`, 100);
  // Generates alone say nothing of training: no estimate (the old mean over
  // all nodes said 3 s here, then jumped 200-fold at the first train).
  let s = p.snapshot(now);
  assert.equal(s.etaMs, null);
  assert.equal(
    formatRunSnapshot(s).split(" · ").at(-1),
    "ETA after a first train node",
  );
  step("t0", 20_000);
  s = p.snapshot(now);
  assert.equal(s.etaMs, 29 * 20_000);

  // A warm run with history (1 s per node): the machine gets twice as fast
  // after 10 nodes; the estimate follows within the window of 20 nodes.
  const warm = Array.from({ length: 60 }, (_, i) => ({
    id: `n${i}`,
    kind: "train",
    deps: [],
    estimateMs: 1_000,
  }));
  const q = new RunProgress({ jobs: 1, nodes: warm }, 0);
  now = 0;
  const run = (id: string, ms: number) => {
    q.start(id, now);
    now += ms;
    q.end(id, "done", now);
  };
  for (let i = 0; i < 10; i++) run(`n${i}`, 1_000);
  assert.equal(q.snapshot(now).etaMs, 50 * 1_000);
  for (let i = 10; i < 30; i++) run(`n${i}`, 500);
  // The window holds only the 20 fast nodes: pace (10 + 3) / (20 + 3).
  const eta = q.snapshot(now).etaMs!;
  assert.ok(Math.abs(eta - 30 * 1_000 * (13 / 23)) < 1e-6, String(eta));
  // One node 4 times slower than the recent pace moves it by less than 15 %.
  q.start("n30", now);
  now += 2_000;
  q.end("n30", "done", now);
  const after = q.snapshot(now).etaMs!;
  assert.ok(after / (eta * 29 / 30) < 1.15, `${after} vs ${eta}`);
});

Deno.test("plain reporter: one line with the run's size and ETA, a counter on each end line, a periodic summary", () => {
  const { r, out, clock } = onTestClock(
    Date.UTC(2026, 0, 1, 12, 0, 0),
    (io) => new PlainReporter({ ...io, summaryMs: 0 }),
  );
  r.begin({
    jobs: 2,
    nodes: [
      { id: "a", kind: "k", deps: [], estimateMs: 60_000 },
      { id: "b", kind: "k", deps: ["a"], estimateMs: 60_000 },
    ],
  });
  r.start("a");
  clock.ms += 30_000;
  r.summary();
  clock.ms += 30_000;
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
  const { r, out, clock } = onTestClock(
    0,
    (io) => new TtyReporter({ ...io, color: false }),
  );
  r.begin({
    jobs: 1,
    nodes: [
      { id: "a", kind: "k", deps: [], estimateMs: 10_000 },
      { id: "b", kind: "k", deps: [], estimateMs: 10_000 },
    ],
  });
  r.start("a");
  clock.ms = 2_000;
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
    assert.ok(took >= 60 && took < scaledMs(5_000), `s took ${took} ms`);
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

Deno.test("run progress: each kind learns its own pace; a guess from other runs' nodes of a kind is said to be one; a running node's own progress sets its rest", () => {
  // 10 generate nodes with their own history (100 ms), 4 lm.train nodes
  // whose only history is other runs' lm.train nodes (8 s); here each
  // lm.train takes 300 s.
  const nodes = [
    ...Array.from({ length: 10 }, (_, i) => ({
      id: `g${i}`,
      kind: "generate",
      deps: [],
      estimateMs: 100,
      estimateFrom: "node" as const,
    })),
    ...Array.from({ length: 4 }, (_, i) => ({
      id: `lm${i}`,
      kind: "lm.train",
      deps: i > 0 ? [`lm${i - 1}`] : [],
      estimateMs: 8_000,
      estimateFrom: "kind" as const,
    })),
  ];
  const p = new RunProgress({ jobs: 1, nodes }, 0);
  let now = 0;
  for (let i = 0; i < 10; i++) {
    p.start(`g${i}`, now);
    now += 100;
    p.end(`g${i}`, "done", now);
  }
  let s = p.snapshot(now);
  assert.deepEqual(s.etaGuess, ["lm.train"]);
  assert.match(
    formatRunSnapshot(s),
    /ETA 32\.0s \(a guess for lm\.train: other runs' nodes of the kind, until one finishes here\)$/,
  );
  // lm0 runs past its 8 s estimate without reporting progress: at 60 s it
  // is not "done any moment" (the old ETA said 24 s here) but needs at
  // least half its time again.
  const t0 = now;
  p.start("lm0", t0);
  s = p.snapshot(t0 + 60_000);
  assert.equal(s.etaMs, 30_000 + 3 * 8_000);
  // Its own progress (10 % at 30 s, 20 % at 60 s) sets its rest: 240 s.
  p.progress("lm0", 1, 10, t0 + 30_000);
  p.progress("lm0", 2, 10, t0 + 60_000);
  s = p.snapshot(t0 + 60_000);
  assert.equal(s.etaMs, 240_000 + 3 * 8_000);
  // One lm.train done in 300 s: the kind's pace, (300 + 8) / (8 + 8),
  // applies to the other three (its history counts as one node: the kind
  // has 4 nodes here); the guess note goes.
  now = t0 + 300_000;
  p.end("lm0", "done", now);
  s = p.snapshot(now);
  assert.equal(s.etaGuess, undefined);
  assert.ok(Math.abs(s.etaMs! - 3 * 8_000 * (308 / 16)) < 1e-6, `${s.etaMs}`);
  assert.ok(s.etaMs! > 0.5 * 900_000, "within a factor 2 of the 900 s left");
});

/** One node of a recorded run: its id, kind, duration, end time and inputs. */
interface _Recorded {
  id: string;
  kind: string;
  ms: number;
  ended: string;
  deps: string[];
}

/** The state after one recorded end. */
interface _ReplayEvent {
  at: number;
  left: number;
  eta: number | null;
  note: string | undefined;
  guess: readonly string[] | undefined;
  id: string;
  kind: string;
}

/**
 * The micro trainee-to-trainer run's recorded nodes (74: 18 train.lm of
 * 6-9 s, the rest tens of ms), replayed at their recorded start and end
 * times on 2 jobs: after each end, the ETA against the time the run really
 * had left.
 */
function _replay(
  estimate: (kind: string, all: readonly _Recorded[]) => number | undefined,
): _ReplayEvent[] {
  const rec = JSON.parse(
    Deno.readTextFileSync(
      new URL("./testdata/lm_run_durations.json", import.meta.url),
    ),
  ) as { nodes: _Recorded[] };
  const t = (n: _Recorded) => Date.parse(n.ended);
  const t0 = Math.min(...rec.nodes.map((n) => t(n) - n.ms));
  const end = Math.max(...rec.nodes.map(t)) - t0;
  const events = rec.nodes.flatMap((n) => [
    { at: t(n) - n.ms - t0, n, start: true },
    { at: t(n) - t0, n, start: false },
  ]).sort((a, b) => a.at - b.at || (a.start ? 1 : -1));
  const p = new RunProgress({
    jobs: 2,
    nodes: rec.nodes.map((n) => {
      const ms = estimate(n.kind, rec.nodes);
      return {
        id: n.id,
        kind: n.kind,
        deps: n.deps,
        ...(ms !== undefined
          ? { estimateMs: ms, estimateFrom: "kind" as const }
          : {}),
      };
    }),
  }, 0);
  const out: _ReplayEvent[] = [];
  for (const e of events) {
    if (e.start) {
      p.start(e.n.id, e.at);
      continue;
    }
    p.end(e.n.id, "done", e.at);
    const s = p.snapshot(e.at);
    out.push({
      at: e.at,
      left: end - e.at,
      eta: s.etaMs,
      note: s.etaNote,
      guess: s.etaGuess,
      id: e.n.id,
      kind: e.n.kind,
    });
  }
  return out;
}

function _medianOf(kind: string, all: readonly _Recorded[]): number {
  const xs = all.filter((n) => n.kind === kind).map((n) => n.ms).sort((
    a,
    b,
  ) => a - b);
  return xs[Math.floor(xs.length / 2)]!;
}

Deno.test("run progress on a recorded LM run: a train.lm history 38x too short is called a guess, then the ETA is within 0.5-2x of the time left", () => {
  // Other runs' train.lm nodes took 8.3 s where this kind of node took
  // 5 min 12 s (the ratio a user measured): the history is 38x too short.
  const events = _replay((kind, all) =>
    _medianOf(kind, all) / (kind === "train.lm" ? 312 / 8.3 : 1)
  );
  const firstLm = events.findIndex((e) => e.kind === "train.lm");
  assert.ok(firstLm >= 0);
  // Before a train.lm node ends, nothing tells the history is wrong: the
  // estimate is given and said to be a guess for train.lm.
  const p0 = events.slice(0, firstLm);
  for (const e of p0) assert.ok(e.guess?.includes("train.lm"), e.id);
  // After it, train.lm's own pace: within 0.5-2x of the recorded time left
  // at every end while 5 s or more are left (71.9 s in all).
  const checked = events.slice(firstLm).filter((e) => e.left >= 5_000);
  assert.ok(checked.length >= 60, `${checked.length}`);
  for (const e of checked) {
    assert.ok(e.eta !== null, e.id);
    const ratio = e.eta / e.left;
    assert.ok(
      ratio >= 0.5 && ratio <= 2,
      `${e.id} at ${e.at} ms: ETA ${e.eta} ms, ${e.left} ms left`,
    );
    assert.ok(!e.guess?.includes("train.lm"), e.id);
  }
});

Deno.test("run progress on a recorded LM run without any history: no ETA, and which kind it waits for, until each kind has finished once; then within 0.5-2x", () => {
  const events = _replay(() => undefined);
  const first = events.findIndex((e) => e.eta !== null);
  assert.ok(first > 0);
  for (const e of events.slice(0, first)) {
    assert.match(
      e.note ?? "",
      /^ETA after (a first \S+ node|\d+ nodes)$/,
      e.id,
    );
  }
  // It waits for the evaluate kind, whose first node ends two thirds in.
  assert.equal(events[first - 1]!.note, "ETA after a first evaluate node");
  for (const e of events.slice(first).filter((e) => e.left >= 5_000)) {
    const ratio = e.eta! / e.left;
    assert.ok(ratio >= 0.5 && ratio <= 2, `${e.id}: ${e.eta} vs ${e.left}`);
  }
});
