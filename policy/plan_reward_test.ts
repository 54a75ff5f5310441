import assert from "node:assert/strict";
import { twoCorridors } from "../mapf/_test_grid.ts";
import {
  REWARD_ON_GOAL,
  REWARD_VALID_PLAN,
  scoreCompletion,
  scoringInstance,
} from "./plan_reward.ts";

// two agents in two corridors, each two moves right of its goal
const inst = twoCorridors("two");

Deno.test("plan reward: success 1, a failed valid plan 0.1 + 0.4 x the share on goal, an unparsable one 0", () => {
  const s = scoringInstance(inst);
  const ok = scoreCompletion(s, "Agent 0: R R\nAgent 1: R R");
  assert.deepEqual([ok.outcome, ok.reward, ok.on_goal], ["success", 1, 2]);
  const half = scoreCompletion(s, "Agent 0: R R\nAgent 1: S");
  assert.notEqual(half.outcome, "success");
  assert.equal(half.on_goal, 1);
  assert.equal(half.reward, 0.3);
  assert.ok(
    Math.abs(half.reward - (REWARD_VALID_PLAN + REWARD_ON_GOAL / 2)) < 1e-12,
  );
  const none = scoreCompletion(s, "Agent 0: S\nAgent 1: S");
  assert.deepEqual([none.on_goal, none.reward], [0, 0.1]);
  const bad = scoreCompletion(s, "I do not know");
  assert.equal(bad.outcome, "invalid_plan");
  assert.equal(bad.reward, 0);
  assert.ok(bad.parse_error);
  // every agent but one on goal still scores below a success
  assert.ok(half.reward < ok.reward && none.reward < half.reward);
  // the raw instance and its scoring form give the same answer
  assert.deepEqual(scoreCompletion(inst, "Agent 0: R R\nAgent 1: S"), half);
});
