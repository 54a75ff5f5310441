import assert from "node:assert/strict";
import {
  AnyEnvConfigSchema,
  clampEnvConfig,
  components,
  configId,
  describeEnvConfig,
  ENV_CONFIG_BOUNDS,
  ENV_CONFIG_FIELDS,
  EnvConfigError,
  EnvConfigSchema,
  isMixture,
  parseEnvConfig,
  PRESET_NAMES,
  PRESETS,
  resolveEnvConfig,
  safeParseEnvConfig,
} from "./env_config.ts";
import * as v from "valibot";

function issuesOf(input: unknown) {
  const r = safeParseEnvConfig(input);
  assert(!r.success, `expected ${JSON.stringify(input)} to be rejected`);
  return r.issues;
}

Deno.test("presets are valid full configs and ordered by difficulty", () => {
  for (const name of PRESET_NAMES) {
    const p = PRESETS[name];
    assert(v.safeParse(EnvConfigSchema, p).success, name);
    assert.deepEqual(Object.keys(p), [...ENV_CONFIG_FIELDS]);
  }
  assert(
    PRESETS.easy.agents < PRESETS.medium.agents &&
      PRESETS.medium.agents < PRESETS.hard.agents,
  );
  assert(PRESETS.easy.interaction < PRESETS.hard.interaction);
  assert(
    PRESETS.easy.width * PRESETS.easy.height <
      PRESETS.hard.width * PRESETS.hard.height,
  );
});

Deno.test("preset with overrides resolves to a full config", () => {
  const c = parseEnvConfig({
    preset: "hard",
    agents: 3,
    horizon: { steps: 50 },
  });
  assert(!isMixture(c));
  assert.deepEqual(c.agents, 3);
  assert.deepEqual(c.horizon, { steps: 50 });
  assert.deepEqual(c.width, PRESETS.hard.width);
  assert.deepEqual(c.slip, PRESETS.hard.slip);
  assert(!("preset" in c));
  // no preset: defaults come from easy
  const d = parseEnvConfig({ slip: 0.3 });
  assert.deepEqual({ ...d, slip: PRESETS.easy.slip }, PRESETS.easy);
});

Deno.test("out-of-bounds values name the field and the bound", () => {
  const issues = issuesOf({
    width: 100,
    agents: 0,
    slip: 1.5,
    hole_density: 0.9,
  });
  const byPath = Object.fromEntries(issues.map((i) => [i.path, i.message]));
  assert.deepEqual(Object.keys(byPath).sort(), [
    "agents",
    "hole_density",
    "slip",
    "width",
  ]);
  assert(
    byPath.width!.includes("width") && byPath.width!.includes("64") &&
      byPath.width!.includes("100"),
  );
  assert(byPath.agents!.includes("at least 1"));
  assert(byPath.hole_density!.includes("0.6"));
  assert(issuesOf({ agents: 2.5 })[0]!.message.includes("integer"));
  assert.deepEqual(issuesOf({ agents: 2.5 }).length, 1);
  assert(issuesOf({ horizon: { steps: 10000 } })[0]!.message.includes("4096"));
  assert(issuesOf({ horizon: { factor: 0.5 } })[0]!.path === "horizon.factor");
  assert(issuesOf({ horizon: 12 })[0]!.message.includes("factor"));
  assert(
    issuesOf({ collision: "explode" })[0]!.message.includes(
      '"fail" or "block"',
    ),
  );
  assert(
    issuesOf({ holes: "deep" })[0]!.message.includes('"lethal" or "blocked"'),
  );
  assert(
    issuesOf({ distance: { min: 9, max: 3 } })[0]!.message.includes(
      "distance.min must be <=",
    ),
  );
  assert(issuesOf({ preset: "insane" })[0]!.message.includes('"easy"'));
  assert(issuesOf({ width: Number.NaN })[0]!.path === "width");
  assert(issuesOf(5)[0]!.message.includes("object"));
  assert(issuesOf(null)[0]!.message.includes("object"));
});

Deno.test("unknown fields are rejected with a suggestion", () => {
  const [i] = issuesOf({ hole_densty: 0.2 });
  assert.deepEqual(i!.path, "hole_densty");
  assert(i!.message.includes('did you mean "hole_density"'), i!.message);
});

Deno.test("cross-field checks: agents must fit, distance must be reachable", () => {
  const [i] = issuesOf({ width: 4, height: 4, agents: 9 });
  assert(i!.message.includes("at most 8 agents"), i!.message);
  assert(safeParseEnvConfig({ width: 4, height: 4, agents: 8 }).success);
  assert(
    issuesOf({
      width: 2,
      height: 2,
      agents: 1,
      distance: { min: 4, max: 5 },
    })[0]!.message
      .includes("distance.min"),
  );
  // the preset's grid is used when the input leaves it out
  assert(issuesOf({ preset: "easy", agents: 33 })[0]!.message.includes("8x8"));
});

Deno.test("mixtures validate each component and resolve presets", () => {
  const c = parseEnvConfig({
    mixture: [
      { weight: 3, config: { preset: "easy" } },
      { weight: 1, config: { preset: "hard", slip: 0.4 } },
    ],
  });
  assert(isMixture(c));
  assert.deepEqual(c.mixture.length, 2);
  assert.deepEqual(c.mixture[1]!.config.slip, 0.4);
  assert.deepEqual(c.mixture[0]!.config, PRESETS.easy);
  assert(v.safeParse(AnyEnvConfigSchema, c).success);
  assert.deepEqual(components(c).length, 2);
  assert.deepEqual(components(PRESETS.easy), [{
    weight: 1,
    config: PRESETS.easy,
  }]);
  const issues = issuesOf({ mixture: [{ weight: 0, config: { slip: 2 } }] });
  assert.deepEqual(issues.map((i) => i.path).sort(), [
    "mixture.0.config.slip",
    "mixture.0.weight",
  ]);
  assert(issuesOf({ mixture: [] })[0]!.message.includes("at least 1"));
  const many = Array.from({ length: 17 }, () => ({ weight: 1, config: {} }));
  assert(issuesOf({ mixture: many })[0]!.message.includes("at most 16"));
  assert.throws(
    () => parseEnvConfig({ mixture: [{ weight: 1, config: { width: 1 } }] }),
    EnvConfigError,
  );
});

Deno.test("EnvConfigError carries every issue", () => {
  try {
    parseEnvConfig({ width: 1, height: 99 });
    throw new Error("not thrown");
  } catch (e) {
    assert(e instanceof EnvConfigError && e instanceof TypeError);
    assert.deepEqual(e.issues.length, 2);
    assert(e.message.includes("width") && e.message.includes("height"));
  }
});

Deno.test("configId is short, stable and insensitive to spelling", () => {
  const a = configId({ preset: "easy", agents: 3 });
  assert.deepEqual(a.length, 12);
  assert(/^[0-9a-f]{12}$/.test(a));
  assert.deepEqual(configId({ agents: 3 }), a);
  assert.deepEqual(configId({ ...PRESETS.easy, agents: 3 }), a);
  const reordered = Object.fromEntries(
    Object.entries({ ...PRESETS.easy, agents: 3 }).reverse(),
  );
  assert.deepEqual(configId(reordered as unknown as typeof PRESETS.easy), a);
  assert(configId({ agents: 4 }) !== a);
  assert(configId({ slip: 0.01 }) !== configId({}));
  const m = { mixture: [{ weight: 1, config: { preset: "easy" as const } }] };
  assert.deepEqual(configId(m), configId(resolveEnvConfig(m)));
  assert(configId(m) !== configId(PRESETS.easy));
  // pinned value: the id must not change across machines or releases
  assert.deepEqual(
    configId(PRESETS.easy),
    configId(parseEnvConfig({ preset: "easy" })),
  );
  // pinned: ids must not change across machines or releases (reports and caches refer to them)
  assert.deepEqual(
    [configId(PRESETS.easy), configId(PRESETS.medium), configId(PRESETS.hard)],
    ["287b479b14fb", "1b8bbd9a9240", "0be69e0f2db3"],
  );
});

Deno.test("clampEnvConfig repairs untrusted input into a valid config", () => {
  const { config, adjustments } = clampEnvConfig({
    width: 1000,
    height: "12",
    agents: 7.6,
    slip: -0.5,
    hole_density: 2,
    horizon: { factor: 50 },
    distance: { min: 20, max: 5 },
    collision: "boom",
    nonsense: true,
  });
  assert(v.safeParse(AnyEnvConfigSchema, config).success);
  assert(!isMixture(config));
  assert.deepEqual(config.width, 64);
  assert.deepEqual(config.height, 12);
  assert.deepEqual(config.agents, 8);
  assert.deepEqual(config.slip, 0);
  assert.deepEqual(config.hole_density, ENV_CONFIG_BOUNDS.hole_density.max);
  assert.deepEqual(config.horizon, { factor: 10 });
  assert.deepEqual(config.distance, { min: 5, max: 20 });
  assert.deepEqual(config.collision, "fail");
  assert(adjustments.some((a) => a.startsWith("nonsense")));
  assert(adjustments.some((a) => a.startsWith("width: 1000 clamped to 64")));
  assert(adjustments.length >= 8);
  // valid input passes through unchanged
  const ok = clampEnvConfig(PRESETS.hard, PRESETS.easy);
  assert.deepEqual(ok.config, PRESETS.hard);
  assert.deepEqual(ok.adjustments, []);
  // agents that do not fit are reduced
  const tiny = clampEnvConfig({ width: 3, height: 3, agents: 64 });
  assert(!isMixture(tiny.config) && tiny.config.agents === 4);
  // garbage falls back
  assert.deepEqual(
    clampEnvConfig("hello", PRESETS.medium).config,
    PRESETS.medium,
  );
  const mix = clampEnvConfig({
    mixture: [{ weight: -1, config: { agents: 100 } }, 7],
  });
  assert(isMixture(mix.config));
  assert.deepEqual(mix.config.mixture.length, 2);
  assert(v.safeParse(AnyEnvConfigSchema, mix.config).success);
});

Deno.test("describeEnvConfig mentions every dimension", () => {
  const s = describeEnvConfig(PRESETS.hard);
  for (
    const word of [
      "16x16",
      "agents=8",
      "slip=0.1",
      "interaction=0.7",
      "fail/lethal",
      "x1.5",
    ]
  ) {
    assert(s.includes(word), `${word} in ${s}`);
  }
});
