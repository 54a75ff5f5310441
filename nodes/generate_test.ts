import assert from "node:assert/strict";
import { join } from "node:path";
import * as v from "valibot";
import type { BlobRef, NodeContext } from "@envsmith/engine/kind";
import { compileExperiment } from "@envsmith/engine/compile";
import { Store } from "@envsmith/engine/cache";
import { makePlan, runPlan, SilentReporter } from "@envsmith/engine/run";
import { GenerationError, instancesToJsonLines } from "../mapf/mod.ts";
import { configId, PRESETS } from "../schemas/mod.ts";
import {
  GenerateParamsSchema,
  INLINE_LIMIT,
  kind,
  loadGenerated,
  runGenerate,
  streamSeed,
} from "./generate.ts";
import { memoryContext } from "./_memory_context.ts";

function fakeCtx(): NodeContext & {
  blobs: Map<string, Uint8Array>;
  progressCalls: number;
} {
  const blobs = new Map<string, Uint8Array>();
  const ctx = Object.assign(
    memoryContext("/tmp", { blobs, progress: () => void ctx.progressCalls++ }),
    { blobs, progressCalls: 0 },
  );
  return ctx;
}

const params = (x: unknown) => v.parse(GenerateParamsSchema, x);

Deno.test("generate node: small config runs inline, with the resolved config and a report", async () => {
  const ctx = fakeCtx();
  const r = await kind.run(
    params({ config: { preset: "easy", agents: 3 }, count: 5, seed: 2 }),
    ctx,
  );
  const value = r.value as Record<string, unknown>;
  assert.ok(Array.isArray(value.instances));
  assert.equal(value.count, 5);
  assert.deepEqual(value.config, { ...PRESETS.easy, agents: 3 });
  const insts = await loadGenerated(value, ctx.readBlob);
  assert.equal(insts.length, 5);
  assert.equal(insts[0]!.config, configId({ agents: 3 }));
  const gen = (r.report as { generation: { accepted: number }[] }).generation;
  assert.equal(gen[0]!.accepted, 5);
  assert.ok(ctx.progressCalls >= 1);
  // same params, same value
  const again = await kind.run(
    params({ config: { preset: "easy", agents: 3 }, count: 5, seed: 2 }),
    fakeCtx(),
  );
  assert.equal(JSON.stringify(again.value), JSON.stringify(r.value));
});

Deno.test("generate node: large runs go to a JSON-lines blob; suites use their seed space", async () => {
  const ctx = fakeCtx();
  const p = params({ config: { preset: "medium" }, count: 150, seed: 1 });
  const r = await kind.run(p, ctx);
  const ref = (r.value as unknown as { instances: BlobRef }).instances;
  assert.equal(ref.media, "application/x-ndjson");
  assert.ok(ref.size > INLINE_LIMIT);
  const insts = await loadGenerated(r.value, ctx.readBlob);
  assert.equal(
    instancesToJsonLines(insts),
    instancesToJsonLines(runGenerate(p).instances),
  );

  const s = await kind.run(
    params({
      suites: ["base", "corridors"],
      split: "validation",
      per_suite: 3,
      seed: 7,
    }),
    fakeCtx(),
  );
  const sv = s.value as unknown as {
    instances: { id: string; suite: string }[];
    suites: Record<string, unknown>;
  };
  assert.deepEqual(sv.instances.map((i) => i.id), [
    "base-0",
    "base-1",
    "base-2",
    "corridors-0",
    "corridors-1",
    "corridors-2",
  ]);
  assert.deepEqual(Object.keys(sv.suites), ["base", "corridors"]);
  assert.equal((s.report as { generation: unknown[] }).generation.length, 2);

  const t = await kind.run(
    params({ suites: ["base"], split: "test", per_suite: 2, seed: 7 }),
    fakeCtx(),
  );
  const tv = t.value as unknown as { instances: { id: string }[] };
  assert.deepEqual(tv.instances.map((i) => i.id), [
    "base-test2-0",
    "base-test2-1",
  ]);
});

Deno.test("generate node: parameter errors are caught before running", () => {
  const bad = (x: unknown) => {
    const r = v.safeParse(GenerateParamsSchema, x);
    assert.ok(!r.success);
    return r.issues.map((i) => i.message).join("; ");
  };
  assert.match(
    bad({ config: { preset: "easy" }, suites: ["base"] }),
    /exactly one/,
  );
  assert.match(bad({ count: 3 }), /exactly one/);
  assert.match(bad({ suites: ["nope"] }), /known suites/);
  assert.match(
    bad({ suites: ["base"], split: "test", count: 3 }),
    /per_suite/,
  );
  assert.match(
    bad({ suites: ["base"] }),
    /need a `split`: `test` for reported/,
  );
  assert.match(
    bad({ suites: ["base"], split: "tset" }),
    /split must be `validation`/,
  );
  assert.match(
    bad({ config: { preset: "easy" }, split: "test" }),
    /`split` goes with `suites`/,
  );
  assert.match(
    bad({ config: { width: 500 }, count: 3 }),
    /width must be at most 64/,
  );
  assert.match(bad({ config: { preset: "easy" }, seed: -1 }), /seed/);
});

Deno.test("generate node: an impossible config fails with the generator's reason", async () => {
  await assert.rejects(
    () =>
      kind.run(
        params({
          config: {
            width: 4,
            height: 4,
            agents: 2,
            distance: { min: 12, max: 14 },
          },
          count: 2,
        }),
        fakeCtx(),
      ),
    (e: unknown) =>
      e instanceof GenerationError && /distance 12..14/.test(e.message),
  );
});

Deno.test("generate node runs in the engine and is cached", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-generate-" });
  try {
    const file = join(dir, "exp.yaml");
    const yaml = [
      "experiment: gen",
      "seed: 1",
      "nodes:",
      "  envs: { kind: generate, with: { config: { preset: easy, slip: 0.1 }, count: 4, seed: 3 } }",
      "  bench: { kind: generate, with: { suites: [mini], split: test, per_suite: 2 } }",
      "",
    ].join("\n");
    await Deno.writeTextFile(file, yaml);
    const store = new Store(join(dir, "cache"));
    const exp = compileExperiment(file, yaml, { kinds: [kind] });
    const r1 = await runPlan(makePlan(exp, store), store, {
      jobs: 1,
      reporter: new SilentReporter(),
    });
    const envs = r1.values.get(exp.byId.get("envs")!)!.value as {
      instances: { slip: number }[];
    };
    assert.equal(envs.instances.length, 4);
    assert.equal(envs.instances[0]!.slip, 0.1);
    const plan2 = makePlan(exp, store);
    assert.ok(
      plan2.items.every((i) => i.status === "cached"),
      JSON.stringify(plan2.items.map((i) => i.status)),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("generate node: streams under one seed draw different instances, deterministically", () => {
  const run = (stream?: number) =>
    runGenerate(params({
      config: { preset: "easy" },
      count: 4,
      seed: 3,
      ...(stream === undefined ? {} : { stream }),
    })).instances.map((i) =>
      JSON.stringify(i.cells) + JSON.stringify(i.starts)
    );
  const plain = run();
  const s0 = run(0);
  const s1 = run(1);
  assert.deepEqual(run(1), s1);
  assert.notDeepEqual(s0, s1);
  assert.notDeepEqual(plain, s0);
  assert.equal(streamSeed(3), 3);
  assert.notEqual(streamSeed(3, 1), streamSeed(4, 1));
  assert.notEqual(streamSeed(3, 1), streamSeed(3, 2));
});

Deno.test("generate node: the paper grid is drawn per cell (per_cell), in its own seed space, with benchmark ids", async () => {
  const ctx = fakeCtx();
  const p = v.parse(GenerateParamsSchema, {
    suites: ["paper-grid", "base"],
    split: "test",
    per_cell: 2,
    per_suite: 3,
  });
  const out = await kind.run(p, ctx);
  const value = out.value as { count: number; suites: Record<string, unknown> };
  assert.equal(value.count, 21 * 2 + 3);
  const instances = await loadGenerated(
    value,
    (r) => Promise.resolve(ctx.blobs.get(r.$blob)!),
  );
  assert.deepEqual(
    instances.slice(0, 3).map((i) => i.id),
    ["3ag_3x3_hr0.1_000", "3ag_3x3_hr0.1_001", "3ag_4x4_hr0.1_000"],
  );
  assert.equal(instances[41]!.id, "5ag_10x10_hr0.1_001");
  assert.equal(instances[42]!.id, "base-test2-0");
  assert.deepEqual(Object.keys(value.suites), ["paper-grid", "base"]);
  for (
    const [bad, why] of [
      [{ suites: ["base"], split: "test", per_cell: 2 }, /per_cell.*grid/],
      [{ suites: ["paper-grid"], split: "test", per_suite: 2 }, /per_cell/],
    ] as const
  ) {
    const r = v.safeParse(GenerateParamsSchema, bad);
    assert.equal(r.success, false);
    assert.match(r.issues!.map((i) => i.message).join("; "), why);
  }
});
