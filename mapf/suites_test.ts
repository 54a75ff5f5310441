import assert from "node:assert/strict";
import { generateSuite, getSuite, SUITE_NAMES, SUITES } from "./suites.ts";
import { generate } from "./generator.ts";
import { components, isMixture, PRESETS } from "../schemas/mod.ts";
import type { Instance } from "./instance.ts";

Deno.test("the suites cover what the easy preset lacks", () => {
  for (
    const name of ["base", "crowded", "holey", "slippery", "large", "corridors"]
  ) {
    assert.ok(SUITE_NAMES.includes(name), name);
  }
  const comps = SUITE_NAMES.flatMap((n) =>
    components(SUITES[n]!.config).map((c) => c.config)
  );
  const easy = PRESETS.easy;
  assert.ok(comps.some((c) => c.agents >= 3 * easy.agents), "crowding");
  assert.ok(comps.some((c) => c.corridors >= 0.9), "corridors");
  assert.ok(comps.some((c) => c.interaction >= 0.9), "crossing paths");
  assert.ok(comps.some((c) => c.slip > 0), "slip");
  assert.ok(
    comps.some((c) => "factor" in c.horizon && c.horizon.factor < 1.5),
    "tight horizons",
  );
  assert.ok(
    comps.some((c) => c.width * c.height >= 4 * easy.width * easy.height),
    "larger maps",
  );
  assert.ok(
    comps.some((c) => c.hole_density >= 3 * easy.hole_density),
    "dense holes",
  );
  assert.ok(isMixture(SUITES.mini!.config));
});

Deno.test("suite instances are fixed, named and match their config", () => {
  for (const name of SUITE_NAMES.filter((n) => !SUITES[n]!.cells)) {
    const { instances } = generateSuite(name, { count: 4 });
    const again = generateSuite(name, { count: 4 }).instances;
    assert.deepEqual(instances, again);
    const comps = components(getSuite(name).config);
    instances.forEach((inst, k) => {
      assert.equal(inst.id, `${name}-${k}`);
      assert.equal(inst.suite, name);
      const c = comps[inst.stats!.component]!.config;
      assert.equal(inst.width, c.width);
      assert.equal(inst.starts.length, c.agents);
      assert.equal(inst.slip, c.slip);
      assert.equal(inst.holes, c.holes);
    });
  }
  // another seed gives another fixed set
  assert.notDeepEqual(
    generateSuite("base", { count: 4, seed: 1 }).instances,
    generateSuite("base", { count: 4 }).instances,
  );
});

Deno.test("suite instances never coincide with training instances of the same config", () => {
  const key = (i: Instance) => JSON.stringify([i.cells, i.starts, i.goals]);
  const suite = new Set(
    generateSuite("base", { count: 100 }).instances.map(key),
  );
  assert.equal(suite.size, 100);
  for (const seed of [0, 1, 2]) {
    for (
      const inst of generate(getSuite("base").config, { count: 100, seed })
        .instances
    ) {
      assert.ok(
        !suite.has(key(inst)),
        `training seed ${seed} drew suite instance ${inst.id}`,
      );
    }
  }
  assert.throws(() => getSuite("bsae"), /known suites: base/);
});

Deno.test("validation and test splits are disjoint, fixed and keep validation as it was", () => {
  const key = (i: Instance) => JSON.stringify([i.cells, i.starts, i.goals]);
  for (const name of ["base", "crowded", "tight"]) {
    const validation = generateSuite(name, { count: 60 }).instances;
    // the validation split is the seed space the suites always had
    assert.deepEqual(
      generateSuite(name, { count: 60, split: "validation" }).instances,
      validation,
    );
    const test = generateSuite(name, { count: 60, split: "test" }).instances;
    assert.deepEqual(
      generateSuite(name, { count: 60, split: "test" }).instances,
      test,
    );
    assert.deepEqual(test.map((i) => i.id).slice(0, 2), [
      `${name}-test2-0`,
      `${name}-test2-1`,
    ]);
    assert.ok(test.every((i) => i.suite === name));
    const validation2 =
      generateSuite(name, { count: 60, split: "validation-2" }).instances;
    assert.equal(validation2[0]!.id, `${name}-val2-0`);
    const seen = new Set([...validation, ...validation2].map(key));
    const shared = test.filter((i) => seen.has(key(i))).length;
    // tiny maps could coincide by chance; these suites never do in 60 draws
    assert.equal(shared, 0, `${name}: ${shared} test instances in validation`);
    const v1 = new Set(validation.map(key));
    assert.equal(validation2.filter((i) => v1.has(key(i))).length, 0);
    // same generator: the same config statistics within sampling noise
    const mean = (xs: Instance[]) =>
      xs.reduce((s, i) => s + i.reference!.soc, 0) / xs.length;
    const ratio = mean(test) / mean(validation);
    assert.ok(ratio > 0.8 && ratio < 1.25, `${name}: mean SoC ratio ${ratio}`);
  }
  assert.throws(
    () =>
      generate(getSuite("base").config, { count: 1, seed: 0, split: "test" }),
    /split applies to suite runs only/,
  );
});

Deno.test("validation-2 is the first test split: the same instances, new ids", async () => {
  // sha256 of [cells, starts, goals] of base's first 3 test instances as the
  // first test split drew them (ids base-test-0..2 then)
  const r = generateSuite("base", { count: 3, split: "validation-2" });
  const data = new TextEncoder().encode(
    JSON.stringify(r.instances.map((i) => [i.cells, i.starts, i.goals])),
  );
  const hex = Array.from(
    new Uint8Array(await crypto.subtle.digest("SHA-256", data)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
  assert.equal(
    hex,
    "95e302dd3580ae70ca8175f861e94f7f63c5b9da64b39244b8214eeb26fcbe6e",
  );
  assert.deepEqual(r.instances.map((i) => i.id), [
    "base-val2-0",
    "base-val2-1",
    "base-val2-2",
  ]);
});
