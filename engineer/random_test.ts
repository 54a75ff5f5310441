import assert from "node:assert/strict";
import { configId, parseEnvConfig, PRESETS } from "../schemas/mod.ts";
import { randomEngineer } from "./random.ts";
import { fixedEngineer } from "./fixed.ts";
import { buildContext } from "./context.ts";

const easy = PRESETS.easy;
const context = buildContext("none", null, easy);

Deno.test("random engineer: seeded, within bounds, and it changes something", async () => {
  const ids = new Set<string>();
  for (let seed = 0; seed < 20; seed++) {
    const a = await randomEngineer().propose({ context, config: easy, seed });
    const b = await randomEngineer().propose({ context, config: easy, seed });
    assert.equal(JSON.stringify(a), JSON.stringify(b));
    parseEnvConfig(a.config);
    assert.deepEqual(a.reads, []);
    ids.add(configId(a.config));
  }
  assert.ok(
    ids.size >= 10,
    `only ${ids.size} distinct proposals from 20 seeds`,
  );
});

Deno.test("fixed engineer keeps the config", async () => {
  const p = await fixedEngineer().propose({ context, config: easy, seed: 1 });
  assert.equal(configId(p.config), configId(easy));
  assert.deepEqual(p.reads, []);
});

Deno.test("random engineer: one seed draws different perturbations at different stages", async () => {
  const ids = new Set<string>();
  for (let stage = 0; stage < 6; stage++) {
    const ctx = buildContext("none", null, easy, { stage });
    const p = await randomEngineer().propose({
      context: ctx,
      config: easy,
      seed: 5,
    });
    ids.add(configId(p.config));
  }
  assert.ok(ids.size >= 4, `only ${ids.size} distinct proposals over 6 stages`);
});
