import assert from "node:assert/strict";
import * as v from "valibot";
import { bucketize, diagnose } from "./diagnose.ts";
import { FindingsSchema } from "../schemas/mod.ts";
import { PRESETS } from "../schemas/mod.ts";
import {
  corridorCollisionEpisode,
  makeEpisode,
  oscillationTimeoutEpisode,
  slipHoleEpisode,
  successEpisode,
} from "./_fixtures.ts";

Deno.test("diagnose counts outcomes, success and efficiency", () => {
  const detour = makeEpisode({
    map: ["...", "...", "..."],
    goals: [[0, 2]],
    path: [[[0, 0]], [[1, 0]], [[1, 1]], [[1, 2]], [[0, 2]]],
    actions: [[2], [4], [4], [1]],
    outcome: "success",
    referenceSoc: 2,
    referenceMakespan: 2,
  });
  const f = diagnose([
    successEpisode(),
    detour,
    slipHoleEpisode(),
    corridorCollisionEpisode(),
  ]);
  assert.equal(v.safeParse(FindingsSchema, f).success, true);
  assert.equal(f.episodes, 4);
  assert.deepEqual(f.outcomes, {
    success: 2,
    hole: 1,
    vertex_collision: 1,
    edge_collision: 0,
    timeout: 0,
    invalid_plan: 0,
  });
  assert.equal(f.success_rate, 0.5);
  assert.equal(f.agent_episodes, 6);
  // success: 2+1 on goal; hole: 0; collision: 0 -> 3/6.
  assert.equal(f.agent_success_rate, 0.5);
  // efficiency: 4/4 and 2/4.
  assert.deepEqual(f.efficiency, { mean: 0.75, min: 0.5, episodes: 2 });
  // Detours: the 3 successful agents made 2, 2, 4 moves for shortest 2, 2, 2.
  assert.equal(f.behavior.detour_ratio, 1.3333);
  assert.equal(f.failure_count, 2);
});

Deno.test("diagnose measures waiting, oscillation, idle agents and deviations", () => {
  const f = diagnose([oscillationTimeoutEpisode(), slipHoleEpisode()]);
  // Timeout episode: agent 0 makes 4 moves, the last 3 of them A-B-A returns; agent 1 waits 4 steps.
  // Hole episode: 2 moves, no waits.
  assert.equal(f.behavior.wait_fraction, 0.4); // 4 of 10 active agent-steps
  assert.equal(f.behavior.oscillation_rate, 0.5); // 3 of 6 moves
  assert.equal(f.behavior.idle_agent_rate, 0.3333); // agent 1 of 3 agents
  assert.equal(f.behavior.episodes_with_idle_agent, 0.5);
  // Intended moves: 4 (osc) + 2 (hole episode); the slip deviates once.
  assert.equal(f.behavior.deviation_rate, 0.1667);
  assert.equal(f.behavior.progress_at_failure, 0);
});

Deno.test("failure cases carry features and a rendering", () => {
  const f = diagnose([
    slipHoleEpisode(),
    corridorCollisionEpisode(),
    oscillationTimeoutEpisode(),
  ], {
    seed: 3,
  });
  assert.equal(f.failures.length, 3);
  const hole = f.failures.find((c) => c.outcome === "hole")!;
  assert.equal(hole.features.slipped, true);
  assert.deepEqual(hole.agents, [0]);
  const col = f.failures.find((c) => c.outcome === "vertex_collision")!;
  assert.equal(col.features.narrow, true);
  assert.equal(col.features.crowd, 2);
  assert.equal(col.features.slipped, false);
  assert.deepEqual(col.agents, [0, 1]);
  assert.match(col.text, /vertex collision/);
  assert.match(col.text, /^ {2}#####$/m);
  assert.match(col.text, /^ {2}b\.X\.a$/m); // both agents in one cell: X
  assert.match(
    col.text,
    /t=1: 0 right \(1,1\)->\(1,2\); 1 left \(1,3\)->\(1,2\)/,
  );
  const to = f.failures.find((c) => c.outcome === "timeout")!;
  assert.equal(to.features.recent_oscillation, true);
  assert.equal(to.features.recent_wait, 0.5);
  assert.deepEqual(to.agents, [0, 1]);
  // Ordered by score, highest first.
  for (let i = 1; i < f.failures.length; i++) {
    assert.ok(f.failures[i - 1]!.score >= f.failures[i]!.score);
  }
});

Deno.test("the failure sample is seeded, stratified by type and deterministic", () => {
  const eps = [];
  for (let i = 0; i < 30; i++) eps.push(slipHoleEpisode());
  for (let i = 0; i < 10; i++) eps.push(corridorCollisionEpisode());
  eps.push(oscillationTimeoutEpisode());
  const a = diagnose(eps, { seed: 1, maxCases: 5 });
  const b = diagnose(eps, { seed: 1, maxCases: 5 });
  const c = diagnose(eps, { seed: 2, maxCases: 5 });
  assert.equal(JSON.stringify(a), JSON.stringify(b));
  assert.notDeepEqual(
    a.failures.map((x) => x.episode),
    c.failures.map((x) => x.episode),
  );
  // Every failure type is represented (round-robin over types, most frequent first).
  const types = a.failures.map((x) => x.outcome).sort();
  assert.deepEqual(types, [
    "hole",
    "hole",
    "timeout",
    "vertex_collision",
    "vertex_collision",
  ]);
});

Deno.test("per-component stats follow the mixture", () => {
  const config = {
    mixture: [
      { weight: 2, config: PRESETS.easy },
      { weight: 1, config: PRESETS.medium },
    ],
  };
  const f = diagnose([
    successEpisode(0),
    successEpisode(0),
    slipHoleEpisode(1),
    successEpisode(1),
  ], {
    config,
  });
  assert.equal(f.components.length, 2);
  assert.deepEqual(
    f.components.map((c) => [c.index, c.weight, c.episodes, c.success_rate]),
    [[0, 2, 2, 1], [1, 1, 2, 0.5]],
  );
  assert.equal(f.components[0]!.config_id.length, 12);
  assert.notEqual(f.components[0]!.config_id, f.components[1]!.config_id);
});

Deno.test("bucketize: one bucket per value, or equal-count buckets between distinct values", () => {
  const few = bucketize([
    { value: 2, ok: true },
    { value: 2, ok: true },
    { value: 4, ok: false },
    { value: 4, ok: true },
  ]);
  assert.deepEqual(few.map((b) => [b.label, b.n, b.success_rate]), [
    ["2", 2, 1],
    ["4", 2, 0.5],
  ]);
  const many = bucketize(
    Array.from({ length: 40 }, (_, i) => ({ value: i % 20, ok: i % 20 < 10 })),
  );
  assert.deepEqual(many.map((b) => [b.label, b.n]), [["0-4", 10], ["5-9", 10], [
    "10-14",
    10,
  ], [
    "15-19",
    10,
  ]]);
  assert.deepEqual(many.map((b) => b.success_rate), [1, 1, 0, 0]);
});

Deno.test("per-dimension breakdown shows where success drops", () => {
  const long = makeEpisode({
    map: ["......"],
    goals: [[0, 5]],
    path: [[[0, 0]], [[0, 1]], [[0, 2]]],
    outcome: "timeout",
    horizon: 2,
    referenceMakespan: 5,
  });
  const short = makeEpisode({
    map: ["......"],
    goals: [[0, 1]],
    path: [[[0, 0]], [[0, 1]]],
    outcome: "success",
    referenceMakespan: 1,
  });
  const f = diagnose([short, short, long]);
  const dist = f.dimensions.find((d) => d.dimension === "agent_distance")!;
  assert.equal(dist.unit, "agent");
  assert.deepEqual(dist.buckets.map((b) => [b.label, b.success_rate]), [[
    "1",
    1,
  ], ["5", 0]]);
  assert.equal(dist.spread, 1);
  // Constant dimensions (agents, grid side) are left out.
  assert.equal(f.dimensions.some((d) => d.dimension === "agents"), false);
});

Deno.test("measured path interaction is a dimension when instances carry it", () => {
  const calm = { ...successEpisode(), measuredInteraction: 0 };
  const busy = { ...corridorCollisionEpisode(), measuredInteraction: 0.5 };
  const f = diagnose([calm, calm, busy]);
  const d = f.dimensions.find((x) => x.dimension === "path_interaction")!;
  assert.deepEqual(d.buckets.map((b) => [b.label, b.success_rate]), [["0", 1], [
    "0.5",
    0,
  ]]);
  assert.equal(d.spread, 1);
});
