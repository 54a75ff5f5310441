import assert from "node:assert/strict";
import type { Instance } from "../mapf/instance.ts";
import { PRESETS } from "../schemas/env_config.ts";
import { buildContext } from "./context.ts";
import type { Level, MeasuredLevel } from "./levels.ts";
import {
  type LevelIo,
  plrEngineer,
  plrProblem,
  plrReplayProbabilities,
} from "./plr.ts";

const close = (a: number, b: number, what: string) =>
  assert.ok(Math.abs(a - b) < 1e-12, `${what}: ${a} != ${b}`);

Deno.test("plr: the replay distribution equals the formula, by hand on three levels", () => {
  // scores 0.3, 0.1, 0.2 -> ranks 1, 3, 2; beta 0.5: (1/rank)^2 = 1, 1/9, 1/4,
  // i.e. 36 : 4 : 9 of 49. Seen at stages 2, 0, 1, now 2: staleness 0, 2, 1 of 3.
  // P = 0.75 P_S + 0.25 P_C.
  const p = plrReplayProbabilities([0.3, 0.1, 0.2], [2, 0, 1], 2, 0.5, 0.25);
  close(p[0]!, 27 / 49, "level 0");
  close(p[1]!, 3 / 49 + 1 / 6, "level 1");
  close(p[2]!, 27 / 196 + 1 / 12, "level 2");
  close(p.reduce((a, b) => a + b, 0), 1, "sum");
  // equal scores rank in buffer order; all seen now: staleness uniform
  const q = plrReplayProbabilities([0.2, 0.2], [4, 4], 4, 1, 0.5);
  close(q[0]!, 0.5 * (1 / 1.5) + 0.25, "tie first");
  close(q[1]!, 0.5 * (0.5 / 1.5) + 0.25, "tie second");
});

const inst = (id: string) => ({ id } as unknown as Instance);
const m = (
  pvl: number,
  steps = 10,
  episodes = 2,
  successes = 1,
): MeasuredLevel => ({
  pvl,
  agentSteps: steps,
  episodes,
  successes,
});

function fakeIo(
  buffer: Level[] | null,
  trained: { id: string; m: MeasuredLevel }[],
  newScores: number[],
  calls: { fresh: number[] },
): LevelIo {
  return {
    buffer,
    trained: trained.map((t) => ({ instance: inst(t.id), measured: t.m })),
    source: PRESETS.easy,
    fresh(count, seed) {
      calls.fresh.push(count);
      return Promise.resolve(
        Array.from({ length: count }, (_, i) => ({
          instance: inst(`new-${seed}-${i}`),
          measured: m(newScores[i % newScores.length]!, 5, 1, 0),
        })),
      );
    },
    score() {
      throw new Error("plr scores no edited levels");
    },
  };
}

Deno.test("plr: after stage 0 the trained levels enter the buffer with their training PVL; new levels are only scored", async () => {
  const calls = { fresh: [] as number[] };
  const trained = [
    { id: "a", m: m(0.4) },
    { id: "b", m: m(0.1) },
    { id: "a", m: m(0.2, 30) }, // a duplicate: PVL weighted by agent-steps
    { id: "c", m: m(0, 0, 0, 0) }, // in the pool, never played
  ];
  const io = fakeIo(null, trained, [0.3, 0.05], calls);
  const e = plrEngineer({ io, replayProb: 0.5, beta: 1, rho: 0.3 });
  const p = await e.propose({
    context: buildContext("none", null, PRESETS.easy, { stage: 0 }),
    config: PRESETS.easy,
    seed: 1,
  });
  // p = 0.5: as many new levels as training instances
  assert.deepEqual(calls.fresh, [4]);
  const set = p.levels!;
  const by = new Map(set.levels.map((l) => [l.id, l]));
  close(by.get("a")!.score, (0.4 * 10 + 0.2 * 30) / 40, "a's merged PVL");
  assert.equal(by.get("a")!.origin, "start");
  assert.equal(by.get("c")!.score, 0, "unplayed: no score yet");
  const news = set.levels.filter((l) => l.origin === "new");
  assert.equal(news.length, 4);
  assert.deepEqual(news.map((l) => l.score), [0.3, 0.05, 0.3, 0.05]);
  // the replay distribution is the formula over the buffer (now = stage + 1)
  const want = plrReplayProbabilities(
    set.levels.map((l) => l.score),
    set.levels.map((l) => l.seen),
    1,
    1,
    0.3,
  );
  set.replay.forEach((x, i) => close(x, want[i]!, set.levels[i]!.id));
  assert.equal(p.cost!.agentSteps, 20);
  assert.ok(p.events.every((ev) => ev.type === "choice"));
});

Deno.test("plr: later stages rescore replayed levels, keep the others, evict the lowest scores", async () => {
  const level = (id: string, score: number, seen: number): Level => ({
    id,
    instance: inst(id),
    score,
    seen,
    origin: "new",
    success: 0.5,
    parent: null,
  });
  const buffer = [level("x", 0.5, 1), level("y", 0.2, 0), level("z", 0.01, 1)];
  const run = async (cap: number) => {
    const calls = { fresh: [] as number[] };
    const io = fakeIo(buffer, [{ id: "x", m: m(0.05) }], [0.3], calls);
    const e = plrEngineer({ io, buffer: cap, replayProb: 0.25 });
    const p = await e.propose({
      context: buildContext("none", null, PRESETS.easy, { stage: 2 }),
      config: PRESETS.easy,
      seed: 1,
    });
    // p = 0.25: three new levels per training instance
    assert.deepEqual(calls.fresh, [3]);
    return p.levels!.levels;
  };
  const all = new Map((await run(10)).map((l) => [l.id, l]));
  assert.equal(all.size, 6);
  assert.equal(all.get("x")!.score, 0.05, "replayed: rescored by training");
  assert.equal(all.get("x")!.seen, 2);
  assert.equal(all.get("y")!.score, 0.2, "not replayed: score kept");
  assert.equal(all.get("y")!.seen, 0, "not replayed: its staleness grows");
  // capacity 4: the two lowest (x 0.05 after rescoring, z 0.01) leave
  const kept = await run(4);
  assert.deepEqual(
    kept.map((l) => l.score).sort((a, b) => a - b),
    [0.2, 0.3, 0.3, 0.3],
  );
  assert.ok(!kept.some((l) => l.id === "x" || l.id === "z"));
});

Deno.test("plr: a buffer of 0 and p outside (0, 1] are refused in one line", () => {
  assert.match(plrProblem(0, 0.5, 1, 0.3)!, /buffer must be a positive number/);
  assert.match(plrProblem(10, 0, 1, 0.3)!, /replay_prob must lie in \(0, 1\]/);
  assert.match(plrProblem(10, 0.5, 0, 0.3)!, /beta/);
});
