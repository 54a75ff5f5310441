import assert from "node:assert/strict";
import {
  components,
  configId,
  type EnvConfig,
  parseEnvConfig,
  PRESETS,
} from "../schemas/mod.ts";
import { type CurriculumDim, step } from "./config_ops.ts";
import { randomEngineer } from "./random.ts";
import { mapfFrozenLake } from "../families/mapf_frozenlake/family.ts";
import { lineFamily } from "../families/_test_family.ts";
import { fixedEngineer } from "./fixed.ts";
import { buildContext } from "./context.ts";

const easy = PRESETS.easy;
const context = buildContext("none", null, easy);

Deno.test("random engineer: seeded, within bounds, and it changes something", async () => {
  const ids = new Set<string>();
  for (let seed = 0; seed < 20; seed++) {
    const a = await randomEngineer(mapfFrozenLake).propose({
      context,
      config: easy,
      seed,
    });
    const b = await randomEngineer(mapfFrozenLake).propose({
      context,
      config: easy,
      seed,
    });
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
    const p = await randomEngineer(mapfFrozenLake).propose({
      context: ctx,
      config: easy,
      seed: 5,
    });
    ids.add(configId(p.config));
  }
  assert.ok(ids.size >= 4, `only ${ids.size} distinct proposals over 6 stages`);
});

Deno.test("random engineer: one to three dimensions of one component, each one curriculum step, in the order the rationale names", async () => {
  const counts = new Set<number>();
  const dirs = new Set<string>();
  for (let seed = 0; seed < 40; seed++) {
    const p = await randomEngineer(mapfFrozenLake).propose({
      context,
      config: PRESETS.medium,
      seed,
    });
    const m = /^random engineer: (.+)\.$/.exec(p.rationale);
    assert.ok(m, p.rationale);
    const moves = m[1] === "no effective change (at bounds)"
      ? []
      : m[1]!.split(", ").map((x) => x.split(" ") as [CurriculumDim, string]);
    assert.ok(moves.length <= 3, p.rationale);
    counts.add(moves.length);
    let c: EnvConfig = PRESETS.medium;
    for (const [dim, dir] of moves) {
      dirs.add(dir);
      c = step(c, dim, dir === "up" ? 1 : -1);
    }
    assert.equal(configId(p.config), configId(c), p.rationale);
  }
  assert.deepEqual([...counts].sort(), [1, 2, 3]);
  assert.deepEqual([...dirs].sort(), ["down", "up"]);
  // a mixture: exactly one component changes
  const mix = parseEnvConfig({
    mixture: [
      { weight: 0.5, config: PRESETS.easy },
      { weight: 0.5, config: PRESETS.medium },
    ],
  });
  for (let seed = 0; seed < 10; seed++) {
    const p = await randomEngineer(mapfFrozenLake).propose({
      context,
      config: mix,
      seed,
    });
    const before = components(mix).map((x) => configId(x.config));
    const after = components(p.config).map((x) => configId(x.config));
    assert.equal(after.length, 2);
    const changed = after.filter((id, i) => id !== before[i]).length;
    assert.ok(changed <= 1, p.rationale);
    if (!p.rationale.includes("no effective change")) {
      assert.equal(changed, 1, p.rationale);
      assert.match(p.rationale, /in component [01]\.$/);
    }
  }
});

Deno.test("random on another family: moves its declared dimensions one step, seeded", async () => {
  const line = lineFamily();
  const context = { json: { stage: 2 }, text: "" } as never;
  const from = { length: 5, gaps: 1 };
  const a = await randomEngineer(line).propose({
    context,
    config: from as never,
    seed: 4,
  });
  const b = await randomEngineer(line).propose({
    context,
    config: from as never,
    seed: 4,
  });
  assert.deepEqual(a.config, b.config);
  const c = a.config as unknown as { length: number; gaps: number };
  assert.ok(Math.abs(c.length - 5) <= 1 && Math.abs(c.gaps - 1) <= 1);
  assert.match(a.rationale, /^random engineer: (length|gaps) (up|down)/);
});
