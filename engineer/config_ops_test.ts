import assert from "node:assert/strict";
import {
  configId,
  isMixture,
  parseEnvConfig,
  PRESETS,
} from "../schemas/mod.ts";
import {
  buildMixture,
  CURRICULUM_DIMS,
  development,
  frontier,
  isolate,
  leastDeveloped,
  mostDeveloped,
  progress,
  step,
} from "./config_ops.ts";

const easy = PRESETS.easy;

Deno.test("step moves one dimension within bounds and keeps the config valid", () => {
  assert.equal(step(easy, "agents", 1).agents, 4);
  assert.equal(step(easy, "agents", -1).agents, 1);
  assert.equal(step({ ...easy, agents: 6 }, "agents", -1).agents, 4);
  assert.equal(step(easy, "corridors", 1).corridors, 0.25);
  assert.equal(step(easy, "slip", -1).slip, 0);
  assert.equal(step({ ...easy, slip: 0.3 }, "slip", 1).slip, 0.3);
  const big = step(easy, "size", 1);
  assert.deepEqual([big.width, big.height, big.distance.max], [10, 10, 13]);
  assert.deepEqual(step(easy, "horizon", 1).horizon, { factor: 2.4 });
  assert.deepEqual(step(easy, "horizon", -1).horizon, { factor: 3.75 });
  for (const d of CURRICULUM_DIMS) {
    for (const dir of [-1, 1]) {
      let c = easy;
      for (let i = 0; i < 30; i++) c = step(c, d, dir);
      parseEnvConfig(c); // still valid after 30 steps either way
    }
  }
});

Deno.test("progress, least and most developed dimensions", () => {
  assert.equal(progress(easy, "agents"), 0);
  assert.equal(progress(PRESETS.hard, "agents"), 1);
  assert.equal(leastDeveloped(easy), "agents");
  assert.equal(leastDeveloped({ ...easy, agents: 5 }), "interaction");
  assert.equal(mostDeveloped({ ...easy, slip: 0.1 }), "slip");
});

Deno.test("isolate eases every developed dimension but the kept one", () => {
  const c = { ...easy, agents: 4, hole_density: 0.2, interaction: 0.4 };
  const iso = isolate(c, "hole_density");
  assert.deepEqual([iso.agents, iso.hole_density, iso.interaction], [
    2,
    0.2,
    0.2,
  ]);
});

Deno.test("frontier is the most developed component, not the heaviest", () => {
  const old = { ...easy };
  const edge = { ...easy, agents: 4, interaction: 0.2 };
  const mix = buildMixture([{ weight: 0.7, config: old }, {
    weight: 0.3,
    config: edge,
  }]);
  assert.deepEqual(frontier(mix), edge);
  assert.ok(development(edge) > development(old));
  assert.equal(development(easy), 0);
  assert.deepEqual(frontier(easy), easy);
});

Deno.test("buildMixture merges equal components, normalises and caps", () => {
  const a = easy;
  const b = { ...easy, agents: 3 };
  const m = buildMixture([{ weight: 1, config: a }, { weight: 2, config: b }, {
    weight: 1,
    config: a,
  }]);
  assert.ok(isMixture(m));
  assert.deepEqual(m.mixture.map((x) => [x.weight, x.config.agents]), [
    [0.5, 2],
    [0.5, 3],
  ]);
  assert.equal(configId(buildMixture([{ weight: 3, config: a }])), configId(a));
  const many = buildMixture(
    Array.from(
      { length: 6 },
      (_, i) => ({ weight: i + 1, config: { ...easy, agents: i + 1 } }),
    ),
    { maxComponents: 3 },
  );
  assert.ok(isMixture(many));
  assert.deepEqual(many.mixture.map((x) => x.config.agents), [4, 5, 6]);
  parseEnvConfig(many);
  assert.throws(() => buildMixture([]), RangeError);
});
