import assert from "node:assert/strict";
import { PRESETS } from "../../schemas/env_config.ts";
import { boxConfig } from "../../mapf/box.ts";
import { generate } from "../../mapf/generator.ts";
import { Rng } from "../../mapf/rng.ts";
import { step } from "../../engineer/config_ops.ts";
import { stepConfig } from "../family.ts";
import { familyProblem } from "../registry.ts";
import { DEFAULT_BAND_ORDER } from "../../engineer/band.ts";
import {
  MAPF_CURRICULUM,
  MAPF_DIMENSIONS,
  mapfFrozenLake as F,
} from "./family.ts";

Deno.test("mapf-frozenlake: a complete family with easy/medium/hard presets", () => {
  assert.equal(familyProblem(F, "test"), null);
  assert.deepEqual(Object.keys(F.presets), ["easy", "medium", "hard"]);
  assert.deepEqual(MAPF_CURRICULUM, DEFAULT_BAND_ORDER);
  assert.deepEqual(
    MAPF_DIMENSIONS.map((d) => `${d.path}:${d.harder}`),
    [
      "size:up",
      "agents:up",
      "hole_density:up",
      "hole_clustering:up",
      "walls:up",
      "corridors:up",
      "slip:up",
      "interaction:up",
      "horizon:down",
      "distance:up",
    ],
  );
});

Deno.test("mapf-frozenlake: set on easy is the box point's configuration, clamped to the bounds", () => {
  let c = F.presets.easy!;
  c = F.set(c, "size", 10);
  c = F.set(c, "agents", 3);
  c = F.set(c, "horizon", 2.5);
  assert.deepEqual(c, boxConfig({ size: 10, agents: 3, horizon: 2.5 }));
  assert.equal(F.get(c, "size"), 10);
  assert.equal(F.get(c, "horizon"), 2.5);
  assert.equal(F.get(F.set(c, "slip", 7), "slip"), 1);
  assert.equal(F.get(F.set(c, "agents", 2.6), "agents"), 3);
  // a mixture: set in every component, read at the leading edge
  const m = F.mix!([{ weight: 1, config: PRESETS.easy }, {
    weight: 3,
    config: PRESETS.hard,
  }]);
  assert.equal(F.get(m, "agents"), PRESETS.hard.agents);
  const m2 = F.set(m, "slip", 0.2) as unknown as {
    mixture: { config: { slip: number } }[];
  };
  assert.deepEqual(m2.mixture.map((x) => x.config.slip), [0.2, 0.2]);
  assert.throws(() => F.get(c, "width"), /has no dimension "width"/);
});

Deno.test("mapf-frozenlake: a curriculum step is config_ops' step (band's numbers unchanged)", () => {
  for (const d of ["agents", "size", "horizon", "slip", "walls", "distance"]) {
    for (const dir of [1, -1, 0.5]) {
      assert.deepEqual(
        stepConfig(F, PRESETS.medium, d, dir),
        step(PRESETS.medium, d as Parameters<typeof step>[1], dir),
        `${d} ${dir}`,
      );
    }
  }
  // a dimension the curriculum does not know steps by its declared step
  assert.equal(
    F.get(stepConfig(F, PRESETS.easy, "hole_clustering", 1), "hole_clustering"),
    PRESETS.easy.hole_clustering + 0.1,
  );
});

Deno.test("mapf-frozenlake: generate is deterministic and is the generator's output", () => {
  const a = F.generate(PRESETS.easy, 5, 4);
  const b = F.generate(PRESETS.easy, 5, 4);
  assert.deepEqual(a, b);
  assert.deepEqual(a, generate(PRESETS.easy, { count: 4, seed: 5 }).instances);
  assert.notDeepEqual(a, F.generate(PRESETS.easy, 6, 4));
  for (const inst of a) assert.equal(F.check(inst), undefined);
});

Deno.test("mapf-frozenlake: mutate makes a different, checked instance, the same for the same draws", () => {
  const [parent] = F.generate(PRESETS.medium, 3, 1);
  const x = F.mutate!(parent!, new Rng(1, 2), 7);
  const y = F.mutate!(parent!, new Rng(1, 2), 7);
  assert.ok(x !== null);
  assert.deepEqual(x, y);
  assert.equal(F.check(x), undefined);
  assert.equal(F.instanceId(x), `${parent!.id}-m7`);
  assert.notDeepEqual(
    [x.cells, x.starts, x.goals],
    [parent!.cells, parent!.starts, parent!.goals],
  );
});

Deno.test("mapf-frozenlake: check names what is wrong with a malformed or unsolvable instance", () => {
  const [inst] = F.generate(PRESETS.easy, 1, 1);
  assert.match(
    F.check({ ...inst!, cells: ["..", "."] }) ?? "",
    /row|width|cells/i,
  );
  assert.match(
    F.check({ ...inst!, goals: inst!.starts }) ?? "",
    /starts on its own goal/,
  );
  assert.match(F.check({ ...inst!, horizon: 1 }) ?? "", /over the horizon 1/);
});

Deno.test("mapf-frozenlake: suites come in a validation and a test split with disjoint instances", () => {
  const v = F.suites.base!;
  const t = F.suites["base@test"]!;
  assert.equal(v.split, "validation");
  assert.equal(t.split, "test");
  const a = v.instances(3).map((i) => F.instanceId(i));
  const b = t.instances(3).map((i) => F.instanceId(i));
  assert.equal(a.length, 3);
  assert.equal(a.filter((id) => b.includes(id)).length, 0);
});

Deno.test("mapf-frozenlake: renderings and diagnosis", () => {
  const [inst] = F.generate(PRESETS.easy, 2, 1);
  const text = F.renderInstance(inst!);
  assert.equal(text.split("\n").length >= PRESETS.easy.height, true);
  assert.match(F.renderConfig(PRESETS.easy), /^8x8 agents=2/);
  const s = F.diagnosis.statistics([]);
  assert.equal(s.episodes, 0);
  assert.equal(s.success_rate, 0);
  assert.deepEqual(F.diagnosis.failureCases([], { count: 3, seed: 1 }), []);
});
