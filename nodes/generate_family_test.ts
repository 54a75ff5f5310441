import assert from "node:assert/strict";
import { UserError } from "@envsmith/engine/errors";
import { lineFamily } from "../families/_test_family.ts";
import type { FamilyRegistry } from "../families/registry.ts";
import { builtinFamilyRegistry } from "../families/builtins.ts";
import { generateKind, kind as mapfGenerate } from "./generate.ts";
import {
  determinismProblem,
  familyFingerprint,
  runFamilyGenerate,
} from "./generate_family.ts";
import { memoryContext } from "./_memory_context.ts";

function registry(...extra: ReturnType<typeof lineFamily>[]) {
  const r = builtinFamilyRegistry();
  r.register(lineFamily(), "test");
  for (const f of extra) r.register(f, "test");
  return r;
}

function planError(r: FamilyRegistry, literal: unknown): string {
  try {
    familyFingerprint(r, literal);
  } catch (e) {
    assert.ok(e instanceof UserError, String(e));
    assert.equal(e.message.includes("\n"), false);
    return e.message;
  }
  return "";
}

Deno.test("generate on a family: plan refuses an unknown family, a config outside its space and an unknown suite, in one line", () => {
  const r = registry();
  assert.match(
    planError(r, { family: "lyne", config: {}, count: 2 }),
    /^family: unknown family "lyne"; known families: mapf-frozenlake, line/,
  );
  assert.equal(
    planError(r, { family: "line", config: { length: 12, gaps: 0 } }),
    "family line: config.length is outside the family's space: Invalid value: Expected <=9 but received 12; write a configuration of line (./envsmith families lists its dimensions)",
  );
  assert.equal(
    planError(r, { family: "line", suites: ["short"], per_suite: 2 }),
    'family line has no suite "short"; its suites: long',
  );
  assert.equal(
    planError(r, { family: "line", config: { length: 3, gaps: 1 } }),
    "",
  );
  // a reference is resolved later, not checked at plan
  assert.equal(planError(r, { family: "line", config: "$prev.config" }), "");
  // the default family is the parameter schema's business
  assert.equal(familyFingerprint(r, { config: { preset: "easy" } }), undefined);
});

Deno.test("generate on a family: a generator that is not deterministic is refused at plan", () => {
  let calls = 0;
  const flaky = {
    ...lineFamily("flaky"),
    generate: (_c: unknown, _s: number, n: number) =>
      Array.from(
        { length: n },
        () => ({ id: `x${calls++}`, length: 2, gaps: [] }),
      ),
  };
  assert.equal(determinismProblem(lineFamily()), null);
  assert.equal(
    planError(registry(flaky as never), {
      family: "flaky",
      config: { length: 2, gaps: 0 },
    }),
    "family flaky: its generator is not deterministic (two draws of 3 instances with seed 1 differ); derive every random draw from the seed argument (no Math.random, no clock)",
  );
});

Deno.test("generate on a family: instances from its generator and its suites, keyed by its code only", async () => {
  const r = registry();
  const ctx = memoryContext(Deno.makeTempDirSync());
  const out = await runFamilyGenerate(r, {
    family: "line",
    config: { length: 4, gaps: 1 },
    count: 3,
    seed: 2,
  }, ctx);
  const value = out.value as { instances: { id: string }[]; count: number };
  assert.equal(value.count, 3);
  assert.deepEqual(
    value.instances,
    lineFamily().generate({ length: 4, gaps: 1 }, 2, 3),
  );
  const suite = await runFamilyGenerate(r, {
    family: "line",
    suites: ["long"],
    per_suite: 5,
  }, ctx);
  assert.equal((suite.value as { count: number }).count, 5);
  const k = generateKind(r);
  const mods = k.codeModules!(
    { family: "line", config: { length: 2, gaps: 0 } } as never,
    { baseDir: "." } as never,
  );
  assert.equal(mods.length, 1);
  assert.match(mods[0]!, /_test_family\.ts$/);
  assert.deepEqual(
    k.codeModules!({ config: { preset: "easy" } } as never, {} as never),
    [],
  );
});

Deno.test("generate on a family: a malformed instance fails the node naming the family and the fix", async () => {
  const broken = {
    ...lineFamily("broken"),
    generate: (_c: unknown, _s: number, n: number) =>
      Array.from(
        { length: n },
        (_, i) => ({ id: `b${i}`, length: 2, gaps: [7] }),
      ),
  };
  await assert.rejects(
    () =>
      runFamilyGenerate(registry(broken as never), {
        family: "broken",
        config: { length: 2, gaps: 0 },
        count: 2,
      }, memoryContext(Deno.makeTempDirSync())),
    /^TypeError: family broken: instance 0 of the generator is malformed \(line b0: a gap lies off the line\); fix the family's generate/,
  );
});

Deno.test("generate: MAPF-FrozenLake through the family-aware kind gives the same value as before", async () => {
  const p = { config: { preset: "easy" }, count: 3, seed: 4 } as const;
  const a = await generateKind(registry()).run(
    p as never,
    memoryContext(Deno.makeTempDirSync()),
  );
  const b = await mapfGenerate.run(
    p as never,
    memoryContext(Deno.makeTempDirSync()),
  );
  assert.deepEqual(a, b);
});
