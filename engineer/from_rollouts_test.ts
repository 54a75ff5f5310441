import assert from "node:assert/strict";
import {
  decodeTrajectories,
  encodeTrajectories,
  type Episode,
  type Instance,
  validateInstance,
} from "../mapf/mod.ts";
import { PRESETS } from "../schemas/mod.ts";
import { episodesFromRollouts, MissingInstanceError } from "./from_rollouts.ts";
import { diagnose } from "./diagnose.ts";

const inst: Instance = validateInstance({
  id: "t-1",
  config: "x",
  seed: 1,
  index: 0,
  width: 3,
  height: 3,
  cells: ["...", ".H.", "..."],
  starts: [[0, 0], [2, 2]],
  goals: [[0, 2], [2, 0]],
  slip: 0.1,
  horizon: 6,
  collision: "fail",
  holes: "lethal",
  reference: { soc: 4, makespan: 2, solver: "cbs" },
});

Deno.test("episodes from the trajectory format diagnose like hand-made ones", () => {
  // Agent 0: right, right (arrives t=2); agent 1: left, left (arrives t=2).
  const ok: Episode = {
    instance: "t-1",
    width: 3,
    agents: 2,
    seed: 0,
    steps: 2,
    positions: Int32Array.of(0, 8, 1, 7, 2, 6),
    actions: Uint8Array.of(4, 3, 4, 3),
    outcome: "success",
    failAgents: [],
    failStep: -1,
  };
  // Agent 0 intends right from (0,1) but slips down into the hole.
  const fall: Episode = {
    instance: "t-1",
    width: 3,
    agents: 2,
    seed: 1,
    steps: 2,
    positions: Int32Array.of(0, 8, 1, 7, 4, 6),
    actions: Uint8Array.of(4, 3, 4, 3),
    outcome: "hole",
    failAgents: [0],
    failStep: 2,
  };
  const decoded = decodeTrajectories(encodeTrajectories([ok, fall]));
  const views = episodesFromRollouts(decoded, [inst], PRESETS.easy);
  assert.equal(views.length, 2);
  assert.equal(views[0]!.config?.slip, 0.1);
  const f = diagnose(views, { seed: 1, config: PRESETS.easy });
  assert.equal(f.success_rate, 0.5);
  assert.deepEqual(f.efficiency, { mean: 1, min: 1, episodes: 1 });
  assert.equal(f.failures[0]!.outcome, "hole");
  assert.equal(f.failures[0]!.features.slipped, true);
  assert.match(f.failures[0]!.text, /0@\(1,1\)\[in hole\]/);
});

Deno.test("a missing instance is a clear error", () => {
  const ep: Episode = {
    instance: "nope",
    width: 3,
    agents: 1,
    seed: 0,
    steps: 0,
    positions: Int32Array.of(0),
    actions: new Uint8Array(0),
    outcome: "running",
    failAgents: [],
    failStep: -1,
  };
  assert.throws(() => episodesFromRollouts([ep], [inst]), MissingInstanceError);
});
