import assert from "node:assert/strict";
import type { DrBox } from "../mapf/box.ts";
import { initCheckpoint } from "./checkpoint.ts";
import {
  type Batch,
  type BufferLevel,
  LevelSampler,
  replayDistribution,
  SAMPLER_BOX,
  SAMPLER_DEFAULTS,
  samplerProblem,
  type SamplerState,
} from "./level_sampler.ts";
import { trainWithSampler } from "./sampler_training.ts";
import { randomInstances } from "./_test_instances.ts";

// small levels keep generation and training fast
const BOX: DrBox = { size: [6, 7], agents: [1, 2], hole_density: [0, 0.1] };
const REWARD = { progress: 0, step: 0 };

/** A sampler state with `n` levels, scores `score(i)` and last seen `seen(i)`. */
function filled(
  n: number,
  score: (i: number) => number,
  seen: (i: number) => number = () => 0,
  clock = 0,
): SamplerState {
  const inst = randomInstances(n, 11, { size: 6, agents: 2 });
  const levels: BufferLevel[] = inst.map((instance, i) => ({
    instance: { ...instance, id: `l${i}` },
    score: score(i),
    seen: seen(i),
    origin: "new",
    parent: null,
  }));
  return { levels, clock, batches: 0, pending: null };
}

Deno.test("level sampler: defaults are the reference's (JaxUED maze_plr.py)", () => {
  assert.equal(SAMPLER_DEFAULTS.buffer, 4000);
  assert.equal(SAMPLER_DEFAULTS.replayProb, 0.8);
  assert.equal(SAMPLER_DEFAULTS.temperature, 0.3);
  assert.equal(SAMPLER_DEFAULTS.staleness, 0.3);
  assert.equal(SAMPLER_DEFAULTS.minFill, 0.5);
  // the default box is not the test suites' span (which reaches 24x24, slip 0.2)
  assert.deepEqual(SAMPLER_BOX.size, [8, 16]);
  assert.deepEqual(SAMPLER_BOX.slip, [0, 0.1]);
});

Deno.test("level sampler: bad options are refused in one line naming the option", () => {
  assert.match(
    samplerProblem({ kind: "plr", seed: 1, replayProb: 0 })!,
    /sampler\.replay_prob must lie in \(0, 1\]/,
  );
  assert.match(
    samplerProblem({ kind: "plr", seed: 1, temperature: 0 })!,
    /sampler\.temperature must be > 0/,
  );
  assert.match(
    samplerProblem({ kind: "dr", seed: 1, box: { size: [9, 8] } })!,
    /sampler\.box\.size is inverted/,
  );
  assert.throws(
    () => new LevelSampler({ kind: "plr", seed: 1, buffer: 0 }),
    /sampler\.buffer must be an integer >= 1/,
  );
});

Deno.test("level sampler: rank prioritisation and staleness mix as (1 - s) P_S + s P_C", () => {
  const scores = [0.1, 0.5, 0.3];
  const p = replayDistribution(scores, [0, 0, 0], 10, 1, 0);
  // ranks 3, 1, 2: weights 1/3, 1, 1/2 over their sum 11/6
  assert.ok(Math.abs(p[0]! - (1 / 3) / (11 / 6)) < 1e-12);
  assert.ok(Math.abs(p[1]! - 1 / (11 / 6)) < 1e-12);
  assert.ok(Math.abs(p[2]! - (1 / 2) / (11 / 6)) < 1e-12);
  // a lower temperature concentrates on the top rank
  const cold = replayDistribution(scores, [0, 0, 0], 10, 0.3, 0);
  assert.ok(cold[1]! > p[1]!);
  // staleness alone: proportional to clock - seen
  const st = replayDistribution(scores, [2, 6, 10], 10, 1, 1);
  assert.deepEqual(Array.from(st), [8 / 12, 4 / 12, 0]);
  const mix = replayDistribution(scores, [2, 6, 10], 10, 1, 0.3);
  for (let i = 0; i < 3; i++) {
    assert.ok(Math.abs(mix[i]! - (0.7 * p[i]! + 0.3 * st[i]!)) < 1e-12);
  }
  // every level just seen: the staleness part is uniform
  const fresh = replayDistribution(scores, [10, 10, 10], 10, 1, 1);
  assert.deepEqual(Array.from(fresh), [1 / 3, 1 / 3, 1 / 3]);
});

Deno.test("level sampler: staleness grows while a level is not replayed and resets when it is", () => {
  const s = new LevelSampler(
    {
      kind: "plr",
      seed: 3,
      batch: 4,
      buffer: 16,
      replayProb: 1,
      staleness: 1,
      box: BOX,
    },
    filled(16, () => 0.5),
  );
  const played = new Map<string, number>();
  let clock = 0;
  for (let b = 0; b < 30; b++) {
    const before = s.replayProbabilities();
    const batch = s.next();
    assert.equal(batch.branch, "replay");
    clock += batch.levels.length;
    s.observe(batch, { pvl: batch.levels.map(() => 0.5) });
    for (const l of batch.levels) played.set(l.id, clock);
    const st = s.state();
    assert.equal(st.clock, clock, "the clock counts episodes handed out");
    const after = s.replayProbabilities();
    for (const [i, l] of st.levels.entries()) {
      if (played.get(l.instance.id) === clock) {
        assert.equal(l.seen, clock, "a replayed level is seen now");
        assert.equal(after[i], 0, "and has no staleness weight left");
      } else if (b > 0 && before[i]! > 0) {
        assert.ok(after[i]! > 0, "an unplayed level stays stale");
      }
    }
  }
  // staleness alone replays every level of the buffer in 30 batches of 4
  assert.equal(played.size, 16);
});

Deno.test("level sampler: the buffer is re-ranked after every batch (counted)", () => {
  const s = new LevelSampler(
    {
      kind: "plr",
      seed: 5,
      batch: 3,
      buffer: 12,
      replayProb: 0.8,
      staleness: 0,
      box: BOX,
    },
    filled(12, (i) => i / 100),
  );
  for (let b = 0; b < 25; b++) {
    const batch = s.next();
    // the batch's first level gets the highest score seen so far: after
    // observe it must be rank 1, i.e. the most likely level to replay
    const top = 1 + b;
    const first = batch.levels[0]!.id;
    const pvl = batch.levels.map((l) => (l.id === first ? top : 0.001));
    s.observe(batch, { pvl });
    assert.equal(s.counts.reranks, b + 1, `batch ${b}`);
    const st = s.state(), p = s.replayProbabilities();
    const at = st.levels.findIndex((l) =>
      l.instance.id === batch.levels[0]!.id
    );
    assert.ok(at >= 0, "a top-scored level stays in the buffer");
    assert.equal(st.levels[at]!.score, top);
    assert.equal(p[at], Math.max(...p), `batch ${b}: re-ranked to the top`);
  }
  assert.equal(s.counts.replay + s.counts.new, 25);
  assert.ok(s.counts.replay > 0 && s.counts.new > 0);
});

Deno.test("level sampler: replay probability respected within a binomial interval", () => {
  const n = 400, prob = 0.8;
  const s = new LevelSampler(
    { kind: "plr", seed: 9, batch: 1, buffer: 16, replayProb: prob, box: BOX },
    filled(16, () => 1),
  );
  let replays = 0;
  for (let i = 0; i < n; i++) {
    const b = s.next();
    if (b.branch === "replay") replays++;
    s.observe(b, { pvl: [0.5] });
  }
  // 99.9 % two-sided interval of Binomial(400, 0.8): ±3.29 sd
  const sd = Math.sqrt(n * prob * (1 - prob));
  assert.ok(
    Math.abs(replays - n * prob) <= 3.29 * sd,
    `${replays} replays of ${n}`,
  );
  // and never a replay before the buffer is min_fill full
  const empty = new LevelSampler({
    kind: "plr",
    seed: 9,
    batch: 2,
    buffer: 10,
    replayProb: 1,
    minFill: 0.5,
    box: BOX,
  });
  const branches: string[] = [];
  for (let i = 0; i < 4; i++) {
    const b = empty.next();
    branches.push(b.branch);
    empty.observe(b, { pvl: [0.1, 0.2] });
  }
  // 0, 2, 4 levels are below 5 (half of 10); 6 are not
  assert.deepEqual(branches, ["new", "new", "new", "replay"]);
  // min_fill 0: an empty buffer still starts with new levels
  const zero = new LevelSampler({
    kind: "plr",
    seed: 9,
    batch: 2,
    replayProb: 1,
    minFill: 0,
    box: BOX,
  });
  assert.equal(zero.next().branch, "new");
});

Deno.test("level sampler: a full buffer keeps the highest scores", () => {
  const s = new LevelSampler(
    { kind: "plr", seed: 2, batch: 4, buffer: 4, replayProb: 1, box: BOX },
    filled(4, (i) => [0.2, 0.4, 0.6, 0.8][i]!),
  );
  const fresh: Batch = {
    branch: "new",
    levels: randomInstances(2, 5, { size: 6 }).map((x, i) => ({
      ...x,
      id: `n${i}`,
    })),
    indices: [],
    parents: [],
    learn: false,
  };
  s.observe(fresh, { pvl: [0.5, 0.1] });
  const scores = s.state().levels.map((l) => l.score).sort();
  assert.deepEqual(scores, [0.4, 0.5, 0.6, 0.8]);
});

Deno.test("level sampler: dr hands out fresh levels from the box, each trained on", () => {
  const s = new LevelSampler({ kind: "dr", seed: 4, batch: 6, box: BOX });
  const ids = new Set<string>();
  for (let b = 0; b < 3; b++) {
    const batch = s.next();
    assert.equal(batch.branch, "dr");
    assert.ok(batch.learn);
    for (const l of batch.levels) {
      ids.add(l.id);
      assert.ok(l.width >= 6 && l.width <= 7, `width ${l.width}`);
      assert.ok(l.starts.length >= 1 && l.starts.length <= 2);
    }
    s.observe(batch, { pvl: batch.levels.map(() => 0) });
  }
  assert.equal(ids.size, 18, "a fresh level for every episode");
  assert.equal(s.size, 0, "dr keeps no buffer");
});

Deno.test("level sampler: training with accel edits the replayed levels after every replay batch", () => {
  const ck = initCheckpoint({ seed: 1, hidden: [16, 16] });
  const s = new LevelSampler({
    kind: "accel",
    seed: 1,
    batch: 8,
    buffer: 32,
    box: BOX,
  });
  const order: Batch[] = [];
  const r = trainWithSampler(ck, s, {
    trainer: { seed: 1, reward: REWARD },
    maxSamples: 6000,
    onBatch: (_, b) => order.push(b),
  });
  const c = s.counts;
  assert.equal(r.batches, order.length);
  assert.equal(c.reranks, r.batches, "one re-ranking per batch");
  // every replay batch but possibly the last is followed by its edits
  for (let i = 0; i < order.length; i++) {
    if (order[i]!.branch !== "replay" || i + 1 === order.length) continue;
    const e = order[i + 1]!;
    assert.equal(e.branch, "edit", `batch ${i + 1}`);
    assert.ok(!e.learn);
    const parents = new Set(order[i]!.levels.map((l) => l.id));
    for (const p of e.parents) assert.ok(parents.has(p));
  }
  const pendingAtEnd = order[order.length - 1]!.branch === "replay" ? 1 : 0;
  assert.equal(c.edit, c.replay - pendingAtEnd, "edit generations");
  assert.ok(c.edit >= 5, `${c.edit} edit generations in one short run`);
  assert.ok(
    s.state().levels.some((l) => l.origin === "edit"),
    "edited levels entered the buffer",
  );
  // only replay batches were trained on, within the budget
  assert.equal(r.curve.length, c.replay);
  assert.ok(r.samples >= 6000 && r.scoredSamples > 0);
});

Deno.test("level sampler: same seed, same run (weights and buffer); another seed, another run", () => {
  const run = (seed: number) => {
    const ck = initCheckpoint({ seed: 2, hidden: [16, 16] });
    const s = new LevelSampler({
      kind: "plr",
      seed,
      batch: 6,
      buffer: 18,
      box: BOX,
    });
    trainWithSampler(ck, s, {
      trainer: { seed, reward: REWARD },
      maxSamples: 3000,
    });
    const st = s.state();
    return {
      params: Array.from(ck.net.params),
      levels: st.levels.map((l) => [l.instance.id, l.score, l.seen]),
      clock: st.clock,
    };
  };
  const a = run(7), b = run(7), c = run(8);
  assert.deepEqual(a, b);
  assert.notDeepEqual(a.levels, c.levels);
});

Deno.test("level sampler: a carried state resumes the run where it stopped", () => {
  const opts = {
    kind: "plr" as const,
    seed: 3,
    batch: 4,
    buffer: 8,
    box: BOX,
  };
  const whole = new LevelSampler(opts);
  const halves = new LevelSampler(opts);
  const step = (s: LevelSampler, i: number) => {
    const b = s.next();
    s.observe(b, { pvl: b.levels.map((_, k) => ((i * 7 + k) % 5) / 10) });
    return b.levels.map((l) => l.id).join(",");
  };
  const w: string[] = [], h: string[] = [];
  for (let i = 0; i < 12; i++) w.push(step(whole, i));
  for (let i = 0; i < 6; i++) h.push(step(halves, i));
  const resumed = new LevelSampler(opts, halves.state());
  for (let i = 6; i < 12; i++) h.push(step(resumed, i));
  assert.deepEqual(h, w);
});
