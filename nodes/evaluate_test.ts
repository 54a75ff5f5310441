import assert from "node:assert/strict";
import * as v from "valibot";
import type { Json, NodeContext, NodeKind } from "@envsmith/engine/kind";
import { generate } from "../mapf/mod.ts";
import { kind as policyInit } from "./policy_init.ts";
import { kind as evaluate } from "./evaluate.ts";
import { kind as rolloutKind } from "./rollout.ts";
import { memoryContext } from "./_memory_context.ts";

function ctxWith(blobs: Map<string, Uint8Array>): NodeContext {
  return memoryContext("/tmp", { seed: 42, baseDir: "/nonexistent", blobs });
}

async function run<P>(
  kind: NodeKind<P, Json>,
  params: unknown,
  ctx: NodeContext,
): Promise<{ value: unknown }> {
  return await kind.run(v.parse(kind.params, params), ctx);
}

interface Episode {
  instance: string;
  episode: number;
  steps: number;
  outcome: string;
}

Deno.test("evaluate: episodes: K gives K distinct seeded episodes per instance; greedy differs only through slip", async () => {
  const blobs = new Map<string, Uint8Array>();
  const ctx = ctxWith(blobs);
  const policy = (await run(policyInit, { hidden: [16], seed: 3 }, ctx)).value;
  // slippery ice, so even greedy episodes of one instance can differ
  const envs = {
    instances: generate({ preset: "easy", slip: 0.3 }, { count: 12, seed: 5 })
      .instances as unknown as Json,
  };
  const ev = await run(evaluate, {
    policy,
    envs,
    episodes: 3,
    seed: 9,
    trajectories: false,
  }, ctx);
  const value = ev.value as {
    episodes: number;
    success_rate: number;
    per_instance: { id: string; episodes: number; success_rate: number }[];
  };
  assert.equal(value.episodes, 36);
  assert.equal(value.per_instance.length, 12);
  for (const x of value.per_instance) {
    assert.equal(x.episodes, 3);
    assert.ok(
      [0, 1 / 3, 2 / 3, 1].includes(x.success_rate),
      `${x.success_rate}`,
    );
  }
  const mean = value.per_instance.reduce((s, x) => s + x.success_rate, 0) / 12;
  assert.ok(Math.abs(mean - value.success_rate) < 1e-6);
  // the episodes of one instance are distinct draws: the same rollout
  // parameters show different step counts within some instance
  const episodesOf = async (p: Record<string, unknown>) =>
    ((await run(rolloutKind, { policy, envs, ...p }, ctx)).value as {
      episodes: Episode[];
    }).episodes;
  const sampled = await episodesOf({ episodes: 3, seed: 9 });
  const byInstance = (eps: Episode[]) => {
    const m = new Map<string, string[]>();
    for (const e of eps) {
      m.set(e.instance, [
        ...(m.get(e.instance) ?? []),
        `${e.steps}:${e.outcome}`,
      ]);
    }
    return m;
  };
  assert.ok(
    [...byInstance(sampled).values()].some((xs) => new Set(xs).size > 1),
    "some instance has differing episodes",
  );
  // seeded: the same seed gives the same episodes, another seed others
  assert.deepEqual(await episodesOf({ episodes: 3, seed: 9 }), sampled);
  assert.notDeepEqual(await episodesOf({ episodes: 3, seed: 10 }), sampled);
  // greedy: deterministic actions, so with slip the episodes still differ
  // by the slip draws, and the same seed repeats them exactly
  const greedy = await episodesOf({ episodes: 3, seed: 9, greedy: true });
  assert.deepEqual(
    await episodesOf({ episodes: 3, seed: 9, greedy: true }),
    greedy,
  );
  assert.notDeepEqual(greedy, sampled);
  assert.ok(
    [...byInstance(greedy).values()].some((xs) => new Set(xs).size > 1),
  );
  // on ice that does not slip, greedy episodes of one instance are the same
  const still = {
    instances: generate({ preset: "easy", slip: 0 }, { count: 6, seed: 5 })
      .instances as unknown as Json,
  };
  const fixed = ((await run(rolloutKind, {
    policy,
    envs: still,
    episodes: 3,
    greedy: true,
  }, ctx)).value as { episodes: Episode[] }).episodes;
  for (const xs of byInstance(fixed).values()) {
    assert.equal(new Set(xs).size, 1);
  }
});
