import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import type {
  BlobRef,
  Json,
  NodeContext,
  NodeKind,
} from "@envsmith/engine/kind";
import {
  decodeTrajectories,
  generate,
  type Instance,
  instanceToJson,
} from "../mapf/mod.ts";
import { exportOnnx, loadCheckpoint, Mlp } from "../policy/mod.ts";
import { kind as policyInit } from "./policy_init.ts";
import { kind as train } from "./train.ts";
import { kind as rolloutKind } from "./rollout.ts";
import { kind as evaluate } from "./evaluate.ts";
import { loadRollouts } from "./diagnose.ts";
import { policyFingerprint } from "./policy_io.ts";
import { memoryContext } from "./_memory_context.ts";
import * as v from "valibot";
import { startStubServer } from "../llm/mod.ts";
import { renderPrompt } from "../mapf/render_text.ts";

/** An in-memory NodeContext that records progress. */
function fakeCtx(
  blobs: Map<string, Uint8Array>,
  baseDir = "/nonexistent",
  seed = 42,
) {
  const progress: [number, number, string | undefined][] = [];
  const ctx = memoryContext("/tmp", {
    seed,
    baseDir,
    blobs,
    progress: (d, t, note) => progress.push([d, t, note]),
  });
  return { ctx, progress };
}

async function run<P>(
  kind: NodeKind<P, Json>,
  params: unknown,
  ctx: NodeContext,
): Promise<{ value: unknown; report?: unknown }> {
  const parsed = v.parse(kind.params, params);
  return await kind.run(parsed, ctx);
}

const envs = {
  instances: generate({ preset: "easy" }, { count: 24, seed: 17 })
    .instances as unknown as Json,
};

Deno.test("policy.init -> train -> rollout -> evaluate, deterministic, readable by diagnose", async () => {
  const blobs = new Map<string, Uint8Array>();
  const { ctx, progress } = fakeCtx(blobs);
  const init = await run(policyInit, { hidden: [32, 32], seed: 3 }, ctx);
  assert.equal((init.value as { obs: { radius: number } }).obs.radius, 2);
  const trainParams = {
    policy: init.value,
    envs,
    updates: 3,
    parallel: 16,
    steps: 16,
    minibatch: 128,
  };
  const t1 = await run(train, trainParams, ctx);
  const t2 = await run(train, trainParams, ctx);
  assert.deepEqual(t1.value, t2.value, "same inputs, same checkpoint blob");
  const value = t1.value as { updates: number; onnx: BlobRef };
  assert.equal(value.updates, 3);
  const report = t1.report as {
    curve: { update: number; success: number | null }[];
  };
  assert.deepEqual(report.curve.map((p) => p.update), [1, 2, 3]);
  assert.deepEqual(progress.map((p) => [p[0], p[1]]), [
    [1, 3],
    [2, 3],
    [3, 3],
    [1, 3],
    [2, 3],
    [3, 3],
  ]);
  // resume: policy out -> policy in
  const t3 = await run(
    train,
    { ...trainParams, policy: t1.value, updates: 2 },
    ctx,
  );
  assert.equal((t3.value as { updates: number }).updates, 5);
  assert.ok(
    loadCheckpoint(blobs.get((t3.value as { onnx: BlobRef }).onnx.$blob)!).adam!
      .t > 0,
  );

  const ro = await run(
    rolloutKind,
    { policy: t1.value, envs, episodes: 2 },
    ctx,
  );
  const rv = ro.value as {
    summary: { episodes: number };
    trajectories: BlobRef;
    episodes: unknown[];
  };
  assert.equal(rv.summary.episodes, 48);
  assert.equal(
    decodeTrajectories(blobs.get(rv.trajectories.$blob)!).length,
    48,
  );
  const loaded = await loadRollouts(ro.value, undefined, undefined, ctx);
  assert.equal(loaded.episodes.length, 48);
  assert.equal(loaded.instances.length, 24);

  const ev = await run(evaluate, {
    policy: t1.value,
    envs,
    greedy: true,
    trajectories: false,
  }, ctx);
  const evv = ev.value as {
    success_rate: number;
    outcome_rates: Record<string, number>;
    per_instance: unknown[];
  };
  assert.equal(evv.per_instance.length, 24);
  const rates = Object.values(evv.outcome_rates).reduce((s, x) => s + x, 0);
  assert.ok(Math.abs(rates - 1) < 1e-9, "outcome rates sum to 1");
  assert.equal(evv.outcome_rates.success, evv.success_rate);
  const ev2 = await run(evaluate, {
    policy: t1.value,
    envs,
    greedy: true,
    trajectories: false,
  }, ctx);
  assert.deepEqual(ev2.value, ev.value);
});

Deno.test("evaluate accepts an external ONNX file with the same contract and fingerprints its content", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // a model without envsmith metadata: its width (66) selects observation radius 1
    const net = Mlp.init({
      inputSize: 66,
      hidden: [8],
      actions: 5,
      activation: "relu",
    }, { seed: 1 });
    const bytes = exportOnnx(net, { producer: "pytorch" });
    await Deno.writeFile(join(dir, "ext.onnx"), bytes);
    const { ctx } = fakeCtx(new Map(), dir);
    const ev = await run(evaluate, {
      policy: { file: "ext.onnx" },
      envs,
      trajectories: false,
    }, ctx);
    assert.equal((ev.value as { episodes: number }).episodes, 24);
    const fp = policyFingerprint({ policy: "ext.onnx" }, { baseDir: dir }) as {
      policy_file: string;
      obs_version: number;
    };
    assert.equal(
      fp.policy_file,
      createHash("sha256").update(bytes).digest("hex"),
    );
    assert.equal(fp.obs_version, 1);
    // a width that matches no layout is refused with the supported widths
    const odd = exportOnnx(
      Mlp.init({ inputSize: 70, hidden: [8], actions: 5, activation: "relu" }),
    );
    await Deno.writeFile(join(dir, "odd.onnx"), odd);
    await assert.rejects(
      () => run(evaluate, { policy: "odd.onnx", envs }, ctx),
      /input width 70 matches no observation layout.*66 \(radius 1\), 162 \(radius 2\)/,
    );
    await assert.rejects(
      () => run(evaluate, { policy: "missing.onnx", envs }, ctx),
      /Cannot read policy file missing\.onnx/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("train reads instances given as a JSON-lines blob and refuses bad inputs clearly", async () => {
  const blobs = new Map<string, Uint8Array>();
  const { ctx } = fakeCtx(blobs);
  const init = await run(policyInit, { hidden: [16] }, ctx);
  const lines = (envs.instances as unknown as Instance[]).map(instanceToJson)
    .join("\n");
  const ref = await ctx.writeBlob(
    new TextEncoder().encode(lines),
    "application/jsonl",
  );
  const t = await run(train, {
    policy: init.value,
    envs: { instances: ref },
    samples: 500,
    parallel: 8,
    steps: 8,
    minibatch: 64,
  }, ctx);
  const rep = t.report as { updates: number; samples: number };
  assert.ok(rep.samples >= 500 && rep.updates >= 1);
  await assert.rejects(
    () => run(train, { policy: 5, envs }, ctx),
    /policy: expected the value of a policy\.init or train node/,
  );
  await assert.rejects(
    () => run(train, { policy: init.value, envs: 3 }, ctx),
    /envs: expected the value of a generate node/,
  );
  assert.throws(() =>
    v.parse(train.params, { policy: init.value, envs, algo: "sac" })
  );
});

Deno.test("rollout and evaluate run an LLM policy against an OpenAI-compatible endpoint", async () => {
  await using stub = startStubServer((req) => {
    // answer every prompt with "everyone stays": agents not born on their goal time out
    const agents = Number(
      /with (\d+) agents?/.exec(req.body.messages[1].content)![1],
    );
    const lines = Array.from({ length: agents }, (_, a) => `Agent ${a}: S`);
    return {
      reply: req.body.messages[1].content.includes("(0, 0)")
        ? "no idea"
        : lines.join("\n"),
    };
  });
  const aux = await Deno.makeTempDir();
  try {
    const blobs = new Map<string, Uint8Array>();
    const { ctx } = fakeCtx(blobs);
    const c = { ...ctx, auxDir: aux };
    const policy = {
      llm: { base_url: stub.baseURL, model: "stub", max_retries: 0 },
      concurrency: 3,
    };
    const few = {
      instances: (envs.instances as unknown as Instance[]).slice(
        0,
        6,
      ) as unknown as Json,
    };
    const ro = await run(rolloutKind, { policy, envs: few }, c);
    const rv = ro.value as {
      summary: { episodes: number; outcome_rates: Record<string, number> };
    };
    assert.equal(rv.summary.episodes, 6);
    assert.equal(
      rv.summary.outcome_rates.timeout! +
        rv.summary.outcome_rates.invalid_plan!,
      1,
    );
    const n = stub.requests.length;
    // replayed offline from the reply cache in the aux directory
    const off = { ...policy, llm: { ...policy.llm, offline: true } };
    const ev = await run(evaluate, {
      policy: off,
      envs: few,
      trajectories: false,
    }, c);
    assert.equal(stub.requests.length, n);
    assert.equal((ev.value as { success_rate: number }).success_rate, 0);
    await assert.rejects(
      () => run(evaluate, { policy: { llm: { model: "x" } }, envs: few }, c),
      /policy\.llm: /,
    );
  } finally {
    await Deno.remove(aux, { recursive: true });
  }
});

Deno.test("an LLM policy with prompt: bare sends the benchmark prompt without the rules block", async () => {
  await using stub = startStubServer(() => ({ reply: "no plan" }));
  const aux = await Deno.makeTempDir();
  try {
    const { ctx } = fakeCtx(new Map());
    const c = { ...ctx, auxDir: aux };
    const few = {
      instances: (envs.instances as unknown as Instance[]).slice(
        0,
        2,
      ) as unknown as Json,
    };
    const llm = { base_url: stub.baseURL, model: "stub", max_retries: 0 };
    await run(evaluate, { policy: { llm, prompt: "bare" }, envs: few }, c);
    await run(evaluate, { policy: { llm }, envs: few }, c);
    const prompts = stub.requests.map((r) =>
      (r.body as { messages: { content: string }[] }).messages[1]!.content
    );
    assert.equal(prompts.length, 4);
    const insts = envs.instances as unknown as Instance[];
    // requests run concurrently: compare the two prompts of each run as sets
    assert.deepEqual(
      prompts.slice(0, 2).sort(),
      insts.slice(0, 2).map((i) => renderPrompt(i, { instructions: false }))
        .sort(),
    );
    assert.ok(!prompts[0]!.includes("Rules:"));
    assert.ok(prompts[2]!.includes("Rules:"));
    await assert.rejects(
      () => run(evaluate, { policy: { llm, prompt: "short" }, envs: few }, c),
      /prompt must be "full" or "bare"/,
    );
  } finally {
    await Deno.remove(aux, { recursive: true });
  }
});

Deno.test("train: null is no budget of that kind, and one budget must remain", async () => {
  const blobs = new Map<string, Uint8Array>();
  const { ctx } = fakeCtx(blobs);
  const init = await run(policyInit, { hidden: [16], seed: 2 }, ctx);
  const base = {
    policy: init.value,
    envs,
    parallel: 8,
    steps: 8,
    minibatch: 64,
  };
  // an agent-step budget far below 2 updates' worth would stop after 1
  const t = await run(train, { ...base, samples: null, updates: 2 }, ctx);
  assert.equal((t.report as { updates: number }).updates, 2);
  // 8 envs x 8 steps x 2 agents: 128 agent-steps an update, the second cut short
  const s = await run(train, { ...base, samples: 200, updates: null }, ctx);
  const rep = s.report as { updates: number; samples: number };
  assert.equal(rep.updates, 2);
  // met to within one step of the 8 x 2 acting agents
  assert.ok(rep.samples >= 200 && rep.samples < 216, `${rep.samples}`);
  assert.throws(
    () => v.parse(train.params, { ...base, samples: null, updates: null }),
    /samples: null \(no agent-step budget\) needs an updates budget|updates: null \(no update budget\) needs a samples budget/,
  );
  assert.throws(
    () => v.parse(train.params, { ...base, samples: null }),
    /samples: null \(no agent-step budget\) needs an updates budget/,
  );
});

Deno.test("train with a sampler: levels from its box, its buffer carried to the next train node, same key same output", async () => {
  const blobs = new Map<string, Uint8Array>();
  const { ctx } = fakeCtx(blobs, "/nonexistent", 5);
  const init = await run(policyInit, { hidden: [16], seed: 2 }, ctx);
  const sampler = {
    name: "accel",
    batch: 8,
    buffer: 24,
    box: { size: [6, 7], agents: [1, 2], hole_density: [0, 0.1] },
  };
  const p = { policy: init.value, samples: 2000, sampler, minibatch: 64 };
  const a = await run(train, p, ctx);
  const b = await run(train, p, ctx);
  assert.deepEqual(a.value, b.value, "same parameters, same value");
  const rep = a.report as {
    samples: number;
    sampler: {
      batches: number;
      reranks: number;
      edit_generations: number;
      buffer: number;
      branches: Record<string, number>;
    };
  };
  assert.ok(rep.samples >= 2000);
  assert.equal(rep.sampler.reranks, rep.sampler.batches);
  assert.equal(
    rep.sampler.batches,
    Object.values(rep.sampler.branches).reduce((s, x) => s + x, 0),
  );
  const carried = (a.value as { sampler: { name: string; buffer: number } })
    .sampler;
  assert.equal(carried.name, "accel");
  assert.equal(carried.buffer, rep.sampler.buffer);
  // the next node starts from the carried buffer and keeps counting batches
  const next = await run(train, { ...p, policy: a.value }, ctx);
  const nv = next.value as { sampler: { batches: number } };
  const nr = next.report as { sampler: { batches: number } };
  assert.equal(nv.sampler.batches, rep.sampler.batches + nr.sampler.batches);
  // a policy trained with another sampler is refused
  await assert.rejects(
    () => run(train, { ...p, policy: a.value, sampler: { name: "plr" } }, ctx),
    /trained with sampler "accel" and this train node runs plr/,
  );
  // null is absent: a matrix row may switch between envs and a sampler
  const plain = await run(train, {
    policy: init.value,
    envs,
    sampler: null,
    updates: 1,
    parallel: 4,
    steps: 4,
  }, ctx);
  assert.equal((plain.report as { updates: number }).updates, 1);
  assert.equal((plain.value as { sampler?: unknown }).sampler, undefined);
  const sampled = await run(train, { ...p, envs: null, samples: 500 }, ctx);
  assert.ok((sampled.report as { sampler: unknown }).sampler);
  // bad combinations are refused at plan, in one line
  assert.throws(
    () => v.parse(train.params, { ...p, envs }),
    /with a sampler the levels come from sampler.box: drop envs/,
  );
  assert.throws(
    () => v.parse(train.params, { ...p, parallel: 8 }),
    /drop parallel and steps/,
  );
  assert.throws(
    () => v.parse(train.params, { policy: init.value, samples: 10 }),
    /envs is required/,
  );
  assert.throws(
    () =>
      v.parse(train.params, { ...p, sampler: { name: "plr", replay_prob: 0 } }),
    /sampler.replay_prob must be > 0/,
  );
});
