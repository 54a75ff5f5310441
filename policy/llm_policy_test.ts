import assert from "node:assert/strict";
import { LlmUnreachableError } from "../llm/errors.ts";
import { startStubServer } from "../llm/stub_server.ts";
import { writeRandomGguf } from "../llm/random_gguf.ts";
import { decodeTrajectories, type Instance } from "../mapf/mod.ts";
import { twoCorridors } from "../mapf/_test_grid.ts";
import { llmRollout, parseLlmPlan } from "./llm_policy.ts";
import { withModelDir } from "../llm/_local_testing.ts";

// Two agents on a 2x3 grid: agent 0 (0,0) -> (0,2), agent 1 (1,0) -> (1,2).
function inst(id: string, extra: Partial<Instance> = {}): Instance {
  return twoCorridors(id, {
    reference: { soc: 4, makespan: 2, solver: "cbs" },
    ...extra,
  });
}

Deno.test("llm policy: plans are parsed and executed; unusable replies are invalid_plan, over real HTTP", async () => {
  const instances = [
    inst("good"),
    inst("garbage"),
    inst("crash"),
    inst("think"),
    inst("slow"),
  ];
  // The stub answers by instance: each prompt names the map; we tell them apart by the system/user text order.
  const replies = [
    "Sure.\nAgent 0: R R\nAgent 1: R R",
    "I cannot solve this puzzle.",
    "Agent 0: D R R\nAgent 1: R R", // agent 0 follows agent 1, then walks into it parked on its goal
    "<think>Agent 0: L L</think>\nAgent 0: right right\nAgent 1: R, R",
    "Agent 0: R R S S\nAgent 1: S R R",
  ];
  await using stub = startStubServer((_req, i) => ({ reply: replies[i]! }));
  const res = await llmRollout(instances, {
    chat: { baseURL: stub.baseURL, model: "stub-model", maxRetries: 0 },
    concurrency: 1,
  });
  assert.equal(stub.requests.length, 5);
  const body = stub.requests[0]!.body;
  assert.equal(body.model, "stub-model");
  assert.match(
    body.messages[1].content,
    /There is a 2x3 frozen lake map with 2 agents/,
  );
  assert.match(body.messages[1].content, /Answer with one line per agent/);
  const outcomes = res.episodes.map((e) => e.outcome);
  assert.deepEqual(outcomes, [
    "success",
    "invalid_plan",
    "vertex_collision",
    "success",
    "success",
  ]);
  assert.equal(res.episodes[0]!.soc, 4);
  assert.equal(res.episodes[4]!.soc, 5, "agent 1 waited one step");
  assert.equal(res.episodes[4]!.makespan, 3);
  assert.match(res.info[1]!.error!, /no line "Agent 0: \.\.\."/);
  assert.equal(res.summary.outcome_rates.invalid_plan, 0.2);
  assert.equal(res.summary.success_rate, 0.6);
  assert.ok(Math.abs(res.summary.soc_ratio! - (1 + 1 + 5 / 4) / 3) < 1e-9);
  const eps = decodeTrajectories(res.trajectories!);
  assert.deepEqual(eps.map((e) => e.outcome), outcomes);
  assert.equal(eps[1]!.steps, 0);
});

Deno.test("llm policy: one request per instance, episodes replay it with different slip draws", async () => {
  await using stub = startStubServer(() => ({
    reply: "Agent 0: R R\nAgent 1: R R",
  }));
  const res = await llmRollout([inst("slippy", { slip: 0.5 })], {
    chat: { baseURL: stub.baseURL, model: "m", maxRetries: 0 },
    episodes: 6,
    seed: 3,
  });
  assert.equal(stub.requests.length, 1);
  assert.equal(res.episodes.length, 6);
  const seeds = new Set(
    decodeTrajectories(res.trajectories!).map((e) => e.seed),
  );
  assert.equal(seeds.size, 6);
});

Deno.test("llm policy: an unreachable endpoint is an error, not an outcome", async () => {
  await assert.rejects(
    () =>
      llmRollout([inst("x")], {
        chat: {
          baseURL: "http://127.0.0.1:9/v1",
          model: "m",
          maxRetries: 0,
          timeoutMs: 2000,
        },
      }),
    LlmUnreachableError,
  );
});

Deno.test("parseLlmPlan ignores think blocks and rejects unknown moves", () => {
  assert.deepEqual(parseLlmPlan("<think>Agent 0: U</think>Agent 0: D", 1), [[
    2,
  ]]);
  assert.throws(() => parseLlmPlan("Agent 0: fly", 1), /unknown move "fly"/);
  assert.throws(
    () => parseLlmPlan("Agent 3: U", 1),
    /names agent 3, but there are 1/,
  );
});

Deno.test("llm policy on a local GGUF model: one request per instance, answered in turn; noise is invalid_plan", async () => {
  await withModelDir("envsmith-llm-policy-", async (dir) => {
    const gguf = `${dir}/tiny.gguf`;
    await writeRandomGguf(gguf, { seed: 3 });
    const instances = [
      inst("a"),
      inst("b", { horizon: 5 }),
      inst("c", { goals: [[1, 2], [0, 2]] }),
    ];
    const res = await llmRollout(instances, {
      chat: { gguf, maxTokens: 12, temperature: 1, seed: 1 },
      concurrency: 3, // the local model answers one request at a time
      episodes: 2,
    });
    assert.equal(res.episodes.length, 6);
    assert.equal(res.info.filter((i) => !i.cached).length, 6);
    assert.equal(new Set(res.info.map((i) => i.request)).size, 3);
    // Random weights write no plan: every episode is invalid_plan, none crashes.
    assert.equal(res.summary.outcome_rates.invalid_plan, 1);
  });
});
