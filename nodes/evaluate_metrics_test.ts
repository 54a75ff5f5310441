import assert from "node:assert/strict";
import * as v from "valibot";
import type { BlobRef, Json } from "@envsmith/engine/kind";
import { startStubServer } from "../llm/stub_server.ts";
import type { Instance } from "../mapf/instance.ts";
import { twoCorridors } from "../mapf/_test_grid.ts";
import { replayPlan } from "../mapf/replay.ts";
import { decodeTrajectories } from "../mapf/trajectory.ts";
import { DEFAULT_OBS, obsSize } from "../policy/observation.ts";
import { type PolicyRunner, rollout } from "../policy/rollout.ts";
import { kind as evaluate } from "./evaluate.ts";
import { kind as policyInit } from "./policy_init.ts";
import { paperMetrics, readEpisodes } from "./evaluate_metrics.ts";
import { memoryContext } from "./_memory_context.ts";

// Two agents on a 2x3 grid: agent 0 (0,0) -> (0,2), agent 1 (1,0) -> (1,2);
// the optimum is SoC 4, makespan 2 (both agents move right twice). The
// horizons differ so that the prompts (and the reply-cache keys) differ.
function inst(id: string, k: number): Instance {
  return twoCorridors(id, {
    horizon: 8 + k,
    holes: "blocked",
    reference: { soc: 4, makespan: 2, solver: "cbs" },
  });
}

/** The hand-made plans (U D L R S = 1 2 3 4 0) and what they are. */
const PLANS: Record<string, { plan: number[][]; text: string }> = {
  optimal: { plan: [[4, 4], [4, 4]], text: "Agent 0: R R\nAgent 1: R R" },
  // agent 0 waits a step: valid, SoC 5 and makespan 3
  late: { plan: [[0, 4, 4], [4, 4]], text: "Agent 0: S R R\nAgent 1: R R" },
  // agent 0 first tries to leave the map upwards
  illegal: {
    plan: [[1, 4, 4], [4, 4]],
    text: "Agent 0: U R R\nAgent 1: R R",
  },
  // agent 0 follows agent 1, then walks into it parked on its goal
  conflict: {
    plan: [[2, 4, 4], [4, 4]],
    text: "Agent 0: D R R\nAgent 1: R R",
  },
};
const NAMES = Object.keys(PLANS);

function expectReadings(
  read: ReturnType<typeof readEpisodes>,
  label: string,
) {
  const by = new Map(read.map((e) => [e.instance, e.reading]));
  const r = (k: string) => by.get(k)!;
  assert.deepEqual(
    NAMES.map((k) => [k, r(k).valid, r(k).optimal_soc, r(k).optimal_makespan]),
    [
      ["optimal", true, true, true],
      ["late", true, false, false],
      ["illegal", false, false, false],
      ["conflict", false, false, false],
    ],
    label,
  );
  assert.equal(r("late").soc, 5, label);
  assert.equal(r("late").makespan, 3, label);
  assert.equal(r("illegal").illegal_moves, 1, label);
  assert.equal(r("illegal").goals_reached, true, label);
  assert.equal(r("conflict").conflicts, 1, label);
  assert.equal(r("conflict").illegal_moves, 0, label);
  const m = paperMetrics(read);
  assert.equal(m.valid_rate, 0.5, label);
  assert.equal(m.optimal_soc_rate, 0.25, label);
  assert.equal(m.optimal_makespan_rate, 0.25, label);
  assert.equal(m.illegal_rate, 0.25, label);
  assert.equal(m.conflict_rate, 0.25, label);
  assert.equal(m.optimum_unknown, 0, label);
  // the conflict episode ends with agent 0 off its goal: 7 of 8 agents
  assert.equal(m.agent_success_rate, 7 / 8, label);
}

/**
 * A stepping policy that plays `plan` on its instance (one environment):
 * each call's rows are the agents not yet on their goals, in order.
 */
function scripted(instance: Instance, plan: number[][]): PolicyRunner {
  const ep = replayPlan(instance, plan, { noSlip: true });
  const n = instance.starts.length;
  const goal = (a: number) =>
    instance.goals[a]![0] * instance.width + instance.goals[a]![1];
  let t = 0;
  return {
    inputSize: obsSize(DEFAULT_OBS),
    logits(_obs, rows) {
      const active: number[] = [];
      for (let a = 0; a < n; a++) {
        let arrived = false;
        for (let s = 0; s <= t; s++) {
          if (ep.positions[s * n + a] === goal(a)) arrived = true;
        }
        if (!arrived) active.push(a);
      }
      assert.equal(active.length, rows);
      const out = new Float32Array(rows * 5);
      active.forEach((a, i) => (out[i * 5 + (plan[a]![t] ?? 0)] = 50));
      t++;
      return Promise.resolve({ logits: out, stride: 5 });
    },
  };
}

Deno.test("paper metrics, stepping-policy path: rollouts of hand-made plans read as valid-not-optimal, optimal, illegal, conflicting", async () => {
  const instances = NAMES.map((k, i) => inst(k, i));
  const episodes = [];
  for (const [i, k] of NAMES.entries()) {
    const res = await rollout(scripted(instances[i]!, PLANS[k]!.plan), [
      instances[i]!,
    ], { obs: DEFAULT_OBS, envs: 1, greedy: true });
    episodes.push(...decodeTrajectories(res.trajectories!));
  }
  expectReadings(readEpisodes(instances, episodes), "stepping policy");
});

Deno.test("paper metrics, language-model path: evaluate reads one-shot plans as valid-not-optimal, optimal, illegal, conflicting, with tokens per answer", async () => {
  const instances = NAMES.map((k, i) => inst(k, i));
  const texts = NAMES.map((k) => PLANS[k]!.text);
  await using stub = startStubServer((_req, i) => ({ reply: texts[i]! }));
  const aux = await Deno.makeTempDir();
  try {
    const ctx = memoryContext(aux, { seed: 42, baseDir: "/nonexistent" });
    const out = await evaluate.run(
      v.parse(evaluate.params, {
        policy: {
          llm: { base_url: stub.baseURL, model: "stub" },
          concurrency: 1,
        },
        envs: { instances: instances as unknown as Json },
      }),
      ctx,
    );
    const value = out.value as Record<string, unknown> & {
      per_instance: Record<string, Json>[];
      cells: Record<string, Record<string, number>>;
    };
    assert.equal(value.valid_rate, 0.5);
    assert.equal(value.optimal_soc_rate, 0.25);
    assert.equal(value.optimal_makespan_rate, 0.25);
    assert.equal(value.success_rate, 0.75); // the illegal plan still arrives
    const tokens = texts.map((t) => Math.ceil(t.length / 4));
    assert.equal(
      value.tokens_per_answer,
      Math.round(tokens.reduce((a, b) => a + b) / 4 * 1e6) / 1e6,
    );
    assert.deepEqual(Object.keys(value.cells), ["2ag_2x3"]);
    assert.equal(value.cells["2ag_2x3"]!.valid_rate, 0.5);
    assert.deepEqual(
      value.per_instance.map((x) => [x.id, x.cell, x.valid, x.optimal_soc]),
      [
        ["conflict", "2ag_2x3", 0, 0],
        ["illegal", "2ag_2x3", 0, 0],
        ["late", "2ag_2x3", 1, 0],
        ["optimal", "2ag_2x3", 1, 1],
      ],
    );
    // the same readings as the stepping-policy path
    const episodes = decodeTrajectories(
      await ctx.readBlob(value.trajectories as BlobRef),
    );
    expectReadings(readEpisodes(instances, episodes), "language model");
  } finally {
    await Deno.remove(aux, { recursive: true });
  }
});

Deno.test("paper metrics of an MLP policy through evaluate: consistent with success, and per cell", async () => {
  const aux = await Deno.makeTempDir();
  try {
    const ctx = memoryContext(aux, { seed: 42, baseDir: "/nonexistent" });
    const policy = (await policyInit.run(
      v.parse(policyInit.params, { hidden: [16], seed: 3 }),
      ctx,
    )).value;
    const { generatePaperGrid } = await import("../mapf/paper_grid.ts");
    const grid = generatePaperGrid({
      perCell: 4,
      cells: ["3ag_3x3", "3ag_4x4", "4ag_4x4"],
    }).instances;
    const out = await evaluate.run(
      v.parse(evaluate.params, {
        policy,
        envs: { instances: grid as unknown as Json },
        greedy: true,
        trajectories: false,
      }),
      ctx,
    );
    const value = out.value as {
      success_rate: number;
      valid_rate: number;
      optimal_soc_rate: number;
      optimal_makespan_rate: number;
      tokens_per_answer: number | null;
      agent_success_rate: number;
      conflict_rate: number;
      outcome_rates: { vertex_collision: number; edge_collision: number };
      cells: Record<string, Record<string, number | null>>;
      trajectories?: unknown;
    };
    assert.equal(value.trajectories, undefined);
    assert.deepEqual(Object.keys(value.cells), [
      "3ag_3x3",
      "3ag_4x4",
      "4ag_4x4",
    ]);
    assert.ok(value.valid_rate <= value.success_rate);
    assert.ok(value.optimal_soc_rate <= value.valid_rate);
    assert.ok(value.optimal_makespan_rate <= value.valid_rate);
    assert.equal(value.tokens_per_answer, null);
    // in collision mode fail, a conflict is a collision outcome
    assert.equal(
      value.conflict_rate,
      value.outcome_rates.vertex_collision + value.outcome_rates.edge_collision,
    );
    // agents on goal: the agent-weighted mean of the cells (3, 3, 4 agents)
    const c = value.cells;
    const weighted = (3 * c["3ag_3x3"]!.agent_success_rate! +
      3 * c["3ag_4x4"]!.agent_success_rate! +
      4 * c["4ag_4x4"]!.agent_success_rate!) / 10;
    assert.ok(value.agent_success_rate > 0);
    assert.ok(Math.abs(weighted - value.agent_success_rate) < 1e-5);
  } finally {
    await Deno.remove(aux, { recursive: true });
  }
});
