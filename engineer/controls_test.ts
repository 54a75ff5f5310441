import assert from "node:assert/strict";
import {
  configId,
  type EnvConfig,
  parseEnvConfig,
  PRESETS,
} from "../schemas/mod.ts";
import { blindEngineer, familyPace } from "./blind.ts";
import { lineFamily } from "../families/_test_family.ts";
import { scriptedEngineer } from "./scripted.ts";
import {
  buildContext,
  type BuiltContext,
  type EngineerContext,
} from "./context.ts";
import { curriculumPace, FRONTIER, step, stepsAlong } from "./config_ops.ts";
import { decideRules } from "./rules.ts";
import { builtinEngineerRegistry, createEngineer } from "./builtins.ts";
import { EngineerConfigError } from "./engineer_kind.ts";
import { zeroOutcomeCounts } from "../schemas/findings.ts";

const easy = PRESETS.easy;
const none = buildContext("none", null, easy);

/** A `stats` context: overall and single-component success `s` on `easy`. */
function statsContext(s: number): BuiltContext {
  const json: EngineerContext = {
    type: "stats",
    stage: 1,
    current: { config: easy, config_id: configId(easy) },
    cut: false,
    stats: {
      episodes: 100,
      success_rate: s,
      agent_success_rate: s,
      efficiency: { mean: 0.9, min: 0.5, episodes: 10 },
      components: [{
        index: 0,
        weight: 1,
        config_id: configId(easy),
        episodes: 100,
        success_rate: s,
        agent_success_rate: s,
        outcomes: zeroOutcomeCounts(),
      }],
      dimensions: [],
      dropped_dimensions: 0,
    },
  };
  return { json, text: "" };
}

Deno.test("stepsAlong counts one-step moves, signed, for every frontier dimension", () => {
  for (const d of FRONTIER) {
    const one = step(easy, d, 1);
    const three = step(step(one, d, 1), d, 1);
    assert.equal(stepsAlong(easy, one, d), 1, `${d} +1`);
    assert.equal(stepsAlong(easy, three, d), 3, `${d} +3`);
    assert.equal(stepsAlong(three, easy, d), -3, `${d} -3`);
    assert.equal(stepsAlong(easy, easy, d), 0, `${d} 0`);
  }
  // an odd agent count is one 2-agent step away from 2, not 0
  assert.equal(stepsAlong(easy, { ...easy, agents: 3 }, "agents"), 1);
});

Deno.test("curriculumPace measures the rules engineer's moves", () => {
  // none: one blind step
  const blindStep = decideRules(none.json, easy).config;
  assert.equal(curriculumPace(easy, blindStep), 1);
  // mastered at >= 95 %: two steps along the target, easy kept for retention
  const hard2 = decideRules(statsContext(0.97).json, easy);
  assert.ok(hard2.fired.includes("harden-mastered"), hard2.fired.join());
  assert.equal(curriculumPace(easy, hard2.config), 2);
  assert.equal(curriculumPace(hard2.config, hard2.config), 0);
  assert.equal(curriculumPace(hard2.config, easy), -2);
});

Deno.test("blind engineer: copies the informed pace, blind to the dimension", async () => {
  const medium = PRESETS.medium;
  for (const [to, pace] of [[step(easy, "slip", 1), 1], [easy, 0]] as const) {
    const p = await blindEngineer({ from: easy, to }).propose({
      context: none,
      config: medium,
      seed: 3,
    });
    assert.deepEqual(p.reads, []);
    parseEnvConfig(p.config);
    assert.equal(curriculumPace(medium, p.config), pace);
    if (pace === 0) assert.equal(configId(p.config), configId(medium));
  }
  // the informed run moved slip; the blind one moves the least developed dimension
  const p = await blindEngineer({ from: easy, to: step(easy, "slip", 1) })
    .propose({ context: none, config: easy, seed: 3 });
  assert.equal((p.config as EnvConfig).slip, 0);
  assert.equal((p.config as EnvConfig).agents, easy.agents + 2);
  // easing: two steps down from the most developed dimensions
  const harder = step(step(easy, "agents", 1), "agents", 1);
  const down = await blindEngineer({ from: harder, to: easy }).propose({
    context: none,
    config: harder,
    seed: 3,
  });
  assert.equal(curriculumPace(harder, down.config), -2);
  assert.match(down.rationale, /informed pace -2; agents -2/);
  // the same inputs give the same proposal, whatever the context
  const stats = statsContext(0.1);
  const again = await blindEngineer({ from: harder, to: easy }).propose({
    context: stats,
    config: harder,
    seed: 9,
  });
  assert.equal(configId(again.config), configId(down.config));
});

Deno.test("scripted engineer: proposes its script whatever the context; registry checks inputs", async () => {
  const e = createEngineer("scripted", { script: PRESETS.hard });
  for (const context of [none, statsContext(0.9)]) {
    const p = await e.propose({ context, config: easy, seed: 1 });
    assert.equal(configId(p.config), configId(PRESETS.hard));
    assert.deepEqual(p.reads, []);
  }
  assert.throws(() => createEngineer("scripted"), EngineerConfigError);
  assert.throws(() => createEngineer("blind"), /missing pace \(\[FROM, TO\]/);
  assert.throws(() => scriptedEngineer({ agents: -3 }), TypeError);
  assert.equal(
    createEngineer("blind", { pace: [easy, easy] }).name,
    "blind",
  );
});

Deno.test("scripted and blind on another family: the script is the family's configuration; blind spends the informed pace along the least developed dimension", async () => {
  const line = lineFamily();
  const env = { baseDir: ".", log: () => {}, family: line };
  const input = (config: unknown) => ({
    context: { json: { stage: 1 }, text: "" } as never,
    config: config as never,
    seed: 1,
  });
  const s = createEngineer("scripted", { script: { length: 7, gaps: 2 } }, env);
  const p = await s.propose(input(line.presets.easy));
  assert.deepEqual(p.config, { length: 7, gaps: 2 });
  assert.match(
    p.rationale,
    /^scripted engineer: replays the scripted configuration [0-9a-f]{12}; the context is not read\.$/,
  );
  assert.throws(
    () => createEngineer("scripted", { script: { length: 20, gaps: 0 } }, env),
    /^EngineerConfigError: engineer scripted on family line: script is outside the family's space/,
  );
  const kind = builtinEngineerRegistry().get("scripted")!;
  assert.match(
    kind.checkFamily!({ script: { length: 0, gaps: 0 } }, line)!,
    /script is outside the family's space/,
  );
  assert.equal(kind.checkFamily!({ script: "$config[seed=+1]" }, line), null);
  const b = createEngineer("blind", {
    pace: [{ length: 2, gaps: 0 }, { length: 4, gaps: 0 }],
  }, env);
  const q = await b.propose(input(line.presets.easy));
  assert.deepEqual(q.config, { length: 3, gaps: 1 });
  assert.equal(
    q.rationale,
    "blind engineer: informed pace +2; length +1, gaps +1.",
  );
  const back = createEngineer("blind", {
    pace: [{ length: 5, gaps: 1 }, { length: 5, gaps: 0 }],
  }, env);
  const r = await back.propose(input({ length: 9, gaps: 1 }));
  assert.deepEqual(
    r.config,
    { length: 8, gaps: 1 },
    "easing the most developed",
  );
  assert.equal(
    familyPace(line, { length: 2, gaps: 3 }, { length: 1, gaps: 0 }),
    -4,
  );
});
