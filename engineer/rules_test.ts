import assert from "node:assert/strict";
import {
  type AnyEnvConfig,
  configId,
  type EnvConfig,
  isMixture,
  parseEnvConfig,
  PRESETS,
} from "../schemas/mod.ts";
import type { Behavior, FailureCase, FailureFeatures } from "../schemas/mod.ts";
import {
  buildContext,
  CONTEXT_TYPES,
  type EngineerContext,
} from "./context.ts";
import * as v from "valibot";
import {
  decideRules,
  engineer,
  RULE_THRESHOLDS,
  RULES,
  rulesEngineer,
  scaledThresholds,
} from "./rules.ts";
import { diagnose } from "./diagnose.ts";
import {
  corridorCollisionEpisode,
  slipHoleEpisode,
  successEpisode,
} from "./_fixtures.ts";
import { zeroOutcomeCounts } from "../schemas/findings.ts";

const easy = PRESETS.easy;

function ctx(
  type: EngineerContext["type"],
  parts: {
    success?: number;
    components?: { success: number; config: EnvConfig; weight?: number }[];
    dims?: { dimension: string; spread: number }[];
    failureCount?: number;
    types?: Record<string, number>;
    cases?: { outcome: FailureCase["outcome"]; f?: Partial<FailureFeatures> }[];
    behavior?: Partial<Behavior>;
    history?: { config: AnyEnvConfig; success: number }[];
  } = {},
  current: AnyEnvConfig = easy,
): EngineerContext {
  const c: EngineerContext = {
    type,
    stage: 1,
    current: { config: current, config_id: configId(current) },
    cut: false,
  };
  const has = (s: string) => type === s || type === "full";
  if (has("stats")) {
    const comps = parts.components ??
      [{ success: parts.success ?? 0.5, config: current as EnvConfig }];
    c.stats = {
      episodes: 100,
      success_rate: parts.success ?? 0.5,
      agent_success_rate: parts.success ?? 0.5,
      efficiency: { mean: 0.9, min: 0.5, episodes: 10 },
      components: comps.map((x, i) => ({
        index: i,
        weight: x.weight ?? 1,
        config_id: configId(x.config),
        episodes: 50,
        success_rate: x.success,
        agent_success_rate: x.success,
        outcomes: zeroOutcomeCounts(),
      })),
      dimensions: (parts.dims ?? []).map((d) => ({
        dimension: d.dimension,
        unit: "episode" as const,
        buckets: [],
        spread: d.spread,
      })),
      dropped_dimensions: 0,
    };
  }
  if (has("failures")) {
    c.failures = {
      failure_count: parts.failureCount ?? (parts.cases?.length ?? 0),
      failure_types: parts.types ?? {},
      cases: (parts.cases ?? []).map((x, i) => ({
        episode: i,
        outcome: x.outcome,
        step: 5,
        agents: [0],
        component: 0,
        features: {
          slipped: false,
          narrow: false,
          crowd: 1,
          remaining_distance: 3,
          recent_wait: 0,
          recent_oscillation: false,
          ...x.f,
        },
        score: 1,
        text: "",
      })),
      dropped_cases: 0,
    };
  }
  if (has("behavior")) {
    c.behavior = {
      wait_fraction: 0.05,
      oscillation_rate: 0.02,
      detour_ratio: 1.1,
      idle_agent_rate: 0,
      episodes_with_idle_agent: 0,
      deviation_rate: 0,
      progress_at_failure: 0.5,
      ...parts.behavior,
    };
  }
  if (type === "full") {
    c.history = {
      entries: (parts.history ?? []).map((h, i) => ({
        stage: i,
        config: h.config,
        config_id: configId(h.config),
        success_rate: h.success,
        agent_success_rate: h.success,
        components: [],
        top_failure: null,
      })),
      dropped_entries: 0,
    };
  }
  return c;
}

function comps(config: AnyEnvConfig): { weight: number; config: EnvConfig }[] {
  return isMixture(config) ? [...config.mixture] : [{ weight: 1, config }];
}

function only(config: AnyEnvConfig): EnvConfig {
  assert.equal(isMixture(config), false, "expected a single component");
  return config as EnvConfig;
}

/** Every decision must be a valid config. */
function valid(config: AnyEnvConfig) {
  parseEnvConfig(config);
}

Deno.test("rule blind-schedule: no diagnosis develops the least developed dimension", () => {
  const d = decideRules(ctx("none"), easy);
  assert.deepEqual(d.fired, ["blind-schedule"]);
  assert.deepEqual(d.reads, []);
  assert.equal(only(d.config).agents, 4);
  // Next time (agents developed), interaction comes next.
  const d2 = decideRules(ctx("none", {}, d.config), d.config);
  assert.equal(only(d2.config).interaction, 0.2);
});

/**
 * The rules' decision on `cur` when the stage succeeds `success` of the time
 * and its components as `components` say.
 */
function decideOnComponents(
  cur: AnyEnvConfig,
  success: number,
  components: { success: number; config: EnvConfig }[],
) {
  return decideRules(ctx("stats", { success, components }, cur), cur);
}

Deno.test("rule harden-mastered: keeps the mastered config and adds a harder one", () => {
  const d = decideRules(ctx("stats", { success: 0.9 }), easy);
  assert.deepEqual(d.fired, ["harden-mastered"]);
  const m = comps(d.config);
  assert.deepEqual(m.map((c) => c.weight), [0.3, 0.7]);
  assert.equal(configId(m[0]!.config), configId(easy));
  assert.equal(m[1]!.config.agents, 4);
  valid(d.config);
});

Deno.test("rule harden-mastered: strong mastery takes two steps, from the most developed working component", () => {
  const edge = { ...easy, agents: 4 };
  const cur = {
    mixture: [{ weight: 0.7, config: easy }, { weight: 0.3, config: edge }],
  };
  const d = decideOnComponents(cur, 0.97, [
    { success: 0.99, config: easy },
    { success: 0.95, config: edge },
  ]);
  assert.equal(d.fired[0], "harden-mastered");
  assert.match(d.lines[0]!, /two steps harder/);
  // From the edge (4 agents), not from the heavier, easier component.
  const newest = comps(d.config).at(-1)!.config;
  assert.equal(newest.agents, 4);
  assert.equal(newest.interaction, 0.4);
  // A component below keepComponent is not hardened from.
  const weak = decideOnComponents(cur, 0.9, [
    { success: 0.99, config: easy },
    { success: 0.4, config: edge },
  ]);
  assert.equal(comps(weak.config).at(-1)!.config.agents, 4);
  assert.equal(comps(weak.config).at(-1)!.config.interaction, 0);
});

Deno.test("rule ease-struggling: eases the most developed dimension", () => {
  const cur = { ...easy, agents: 4, interaction: 0.6 };
  const d = decideRules(ctx("stats", { success: 0.1 }, cur), cur);
  assert.deepEqual(d.fired, ["ease-struggling"]);
  const c = only(d.config);
  // interaction progress 0.6/0.7 > agents progress 2/6: interaction eases.
  assert.equal(c.interaction, 0.4);
  assert.equal(c.agents, 4);
});

Deno.test("rule keep-learning: in the learning zone without evidence the config stays", () => {
  const d = decideRules(ctx("stats", { success: 0.5 }), easy);
  assert.deepEqual(d.fired, ["keep-learning"]);
  assert.equal(configId(d.config), configId(easy));
});

Deno.test("rule thresholds: success exactly at mastered hardens, exactly at struggling stays in the learning zone", () => {
  const at = (success: number) =>
    decideRules(ctx("stats", { success }), easy).fired;
  assert.deepEqual(at(RULE_THRESHOLDS.mastered), ["harden-mastered"]);
  assert.deepEqual(at(RULE_THRESHOLDS.mastered - 0.01), ["keep-learning"]);
  assert.deepEqual(at(RULE_THRESHOLDS.struggling), ["keep-learning"]);
  assert.deepEqual(at(RULE_THRESHOLDS.struggling - 0.01), ["ease-struggling"]);
});

Deno.test("rule reweight-components: a mixture is reweighted by learning potential", () => {
  const hard = { ...easy, agents: 4 };
  const cur = {
    mixture: [{ weight: 1, config: easy }, { weight: 1, config: hard }],
  };
  const d = decideOnComponents(cur, 0.6, [
    { success: 0.95, config: easy },
    { success: 0.5, config: hard },
  ]);
  assert.deepEqual(d.fired, ["keep-learning", "reweight-components"]);
  // max(0.05, 0.95*0.05) = 0.05 vs 0.5*0.5 = 0.25 -> 1/6 and 5/6.
  assert.deepEqual(comps(d.config).map((c) => c.weight), [0.167, 0.833]);
});

Deno.test("rule weak-dimension: the steepest success drop sets the target", () => {
  const d = decideRules(
    ctx("stats", {
      success: 0.9,
      dims: [{ dimension: "agent_distance", spread: 0.6 }, {
        dimension: "hole_density",
        spread: 0.1,
      }],
    }),
    easy,
  );
  assert.deepEqual(d.fired, ["weak-dimension", "harden-mastered"]);
  assert.equal(d.target, "distance");
  assert.deepEqual(comps(d.config)[1]!.config.distance, { min: 3, max: 13 });
});

Deno.test("rule failure-type: hole failures aim a component at hole density", () => {
  const d = decideRules(
    ctx("failures", {
      failureCount: 10,
      types: { hole: 0.7, timeout: 0.3 },
      cases: [{ outcome: "hole" }, { outcome: "hole" }, { outcome: "timeout" }],
    }),
    easy,
  );
  assert.deepEqual(d.fired, ["failure-type", "target-failure"]);
  assert.equal(d.target, "hole_density");
  const m = comps(d.config);
  assert.deepEqual(m.map((c) => c.weight), [0.6, 0.4]);
  assert.equal(m[1]!.config.hole_density, 0.15);
  assert.deepEqual(d.reads, [
    "failures.cases[].features",
    "failures.failure_count",
    "failures.failure_types",
  ]);
});

Deno.test("rule slip-falls: slipped hole cases move the target to slip", () => {
  const d = decideRules(
    ctx("failures", {
      types: { hole: 1 },
      cases: [{ outcome: "hole", f: { slipped: true } }, {
        outcome: "hole",
        f: { slipped: true },
      }],
    }),
    easy,
  );
  assert.deepEqual(d.fired, ["slip-falls", "target-failure"]);
  assert.equal(comps(d.config)[1]!.config.slip, 0.05);
});

Deno.test("rule bottleneck-collisions: collisions in narrow cells target corridors", () => {
  const d = decideRules(
    ctx("failures", {
      types: { vertex_collision: 0.8, hole: 0.2 },
      cases: [{ outcome: "vertex_collision", f: { narrow: true } }, {
        outcome: "vertex_collision",
        f: { narrow: true },
      }],
    }),
    easy,
  );
  assert.equal(d.fired[0], "bottleneck-collisions");
  assert.equal(d.target, "corridors");
  assert.equal(comps(d.config)[1]!.config.corridors, 0.25);
});

Deno.test("rule crowded-collisions: crowded collisions target the number of agents", () => {
  const d = decideRules(
    ctx("failures", {
      types: { edge_collision: 1 },
      cases: [{ outcome: "edge_collision", f: { crowd: 4 } }, {
        outcome: "edge_collision",
        f: { crowd: 3 },
      }],
    }),
    easy,
  );
  assert.equal(d.fired[0], "crowded-collisions");
  assert.equal(comps(d.config)[1]!.config.agents, 4);
});

Deno.test("rule stalled-timeouts: stalled timeouts target interaction, plain ones distance", () => {
  const stalled = decideRules(
    ctx("failures", {
      types: { timeout: 1 },
      cases: [{ outcome: "timeout", f: { recent_oscillation: true } }, {
        outcome: "timeout",
        f: { recent_wait: 0.7 },
      }],
    }),
    easy,
  );
  assert.equal(stalled.fired[0], "stalled-timeouts");
  assert.equal(stalled.target, "interaction");
  const plain = decideRules(
    ctx("failures", { types: { timeout: 1 }, cases: [{ outcome: "timeout" }] }),
    easy,
  );
  assert.equal(plain.fired[0], "failure-type");
  assert.equal(plain.target, "distance");
});

Deno.test("rule target-failure (with stats): the learning zone adds an isolating component", () => {
  const cur = { ...easy, agents: 4, hole_density: 0.2 };
  const d = decideRules(
    ctx("full", {
      success: 0.5,
      types: { hole: 1 },
      cases: [{ outcome: "hole" }],
    }, cur),
    cur,
  );
  assert.deepEqual(d.fired, ["failure-type", "target-failure"]);
  const m = comps(d.config);
  assert.deepEqual(m.map((c) => c.weight), [0.7, 0.3]);
  // Isolated: agents eased one step (4 -> 2), holes kept.
  assert.equal(m[1]!.config.agents, 2);
  assert.equal(m[1]!.config.hole_density, 0.2);
});

Deno.test("rule no-failures: no failure at all hardens (failures context)", () => {
  const d = decideRules(ctx("failures", { failureCount: 0 }), easy);
  assert.deepEqual(d.fired, ["no-failures"]);
  assert.equal(comps(d.config)[1]!.config.agents, 4);
});

Deno.test("behaviour rules: passive-agents, oscillation, detours, slippage", () => {
  const cases: [Partial<Behavior>, string, string][] = [
    [{ wait_fraction: 0.5 }, "passive-agents", "interaction"],
    [{ idle_agent_rate: 0.2 }, "passive-agents", "interaction"],
    [{ oscillation_rate: 0.2 }, "oscillation", "corridors"],
    [{ detour_ratio: 1.8 }, "detours", "horizon"],
    [{ deviation_rate: 0.3 }, "slippage", "slip"],
  ];
  for (const [behavior, rule, dim] of cases) {
    const d = decideRules(ctx("behavior", { behavior }), easy);
    assert.deepEqual(d.fired, [rule, "target-failure"], rule);
    assert.equal(d.target, dim, rule);
    assert.deepEqual(d.reads, ["behavior"]);
    valid(d.config);
  }
  // No weakness in behaviour (and nothing else to read): move on.
  const quiet = decideRules(ctx("behavior"), easy);
  assert.deepEqual(quiet.fired, ["calm-behavior"]);
  const m = comps(quiet.config);
  assert.deepEqual(m.map((c) => c.weight), [0.3, 0.7]);
  assert.equal(configId(m[0]!.config), configId(easy));
  assert.equal(m[1]!.config.agents, 4);
});

Deno.test("rule regression-restore: a config that worked comes back as a component", () => {
  const before = easy;
  const cur = { ...easy, agents: 5, interaction: 0.6 };
  const d = decideRules(
    ctx(
      "full",
      { success: 0.35, history: [{ config: before, success: 0.9 }] },
      cur,
    ),
    cur,
  );
  assert.equal(d.fired[0], "regression-restore");
  assert.ok(d.fired.includes("ease-struggling"));
  assert.ok(
    comps(d.config).some((c) => configId(c.config) === configId(before)),
  );
});

Deno.test("rule plateau: a flat learning curve forces a move", () => {
  const cur = { ...easy, agents: 3 };
  const flat = [{ config: cur, success: 0.6 }, { config: cur, success: 0.61 }];
  const d = decideRules(ctx("full", { success: 0.6, history: flat }, cur), cur);
  assert.deepEqual(d.fired, ["plateau", "harden-mastered"]);
  // Without history (stats), the same numbers keep the config.
  const s = decideRules(ctx("stats", { success: 0.6 }, cur), cur);
  assert.deepEqual(s.fired, ["keep-learning"]);
});

Deno.test("every rule listed in RULES is exercised by a test above", () => {
  const src = Deno.readTextFileSync(
    new URL("./rules_test.ts", import.meta.url),
  );
  for (const r of RULES) assert.ok(src.includes(`"${r.id}"`), r.id);
});

Deno.test("the context ablation changes the rules engineer's decision", async () => {
  // Mostly successful rollouts whose failures are slips into holes.
  const eps = [];
  for (let i = 0; i < 17; i++) eps.push(successEpisode());
  for (let i = 0; i < 2; i++) eps.push(slipHoleEpisode());
  eps.push(corridorCollisionEpisode());
  const findings = diagnose(eps, { seed: 1, config: easy });
  assert.equal(findings.success_rate, 0.85);
  const out: Record<string, string> = {};
  for (const type of CONTEXT_TYPES) {
    const context = buildContext(type, findings, easy, { history: [] });
    const p = await rulesEngineer().propose({ context, config: easy, seed: 1 });
    valid(p.config);
    out[type] = configId(p.config);
    if (Deno.env.get("SHOW")) {
      console.log(type, p.rationale, JSON.stringify(p.config));
    }
    assert.match(p.rationale, new RegExp(`context ${type}`));
  }
  // none: blind schedule (agents up, nothing kept); stats: harden along the
  // weakest dimension (hole density), keeping the mastered config; failures:
  // keep + a slip-aimed component (slipped falls); behaviour: nothing abnormal,
  // keep; full: harden along slip, keeping the mastered config.
  assert.equal(new Set(Object.values(out)).size, 5);
  assert.notEqual(out.none, out.stats);
  assert.notEqual(out.stats, out.failures);
  assert.notEqual(out.failures, out.full);
});

Deno.test("a dimension at its bound falls through to one that can still move", () => {
  const cur = { ...easy, slip: 0.3 };
  const d = decideRules(
    ctx("full", {
      success: 0.9,
      types: { hole: 1 },
      cases: [{ outcome: "hole", f: { slipped: true } }],
    }, cur),
    cur,
  );
  assert.ok(d.fired.includes("harden-mastered"));
  assert.notEqual(d.target, "slip");
  const m = comps(d.config);
  assert.equal(m.length, 2);
  assert.notEqual(configId(m[0]!.config), configId(m[1]!.config));
});

Deno.test("ease-struggling eases the evidence target, even below the easy preset", () => {
  const d = decideRules(
    ctx("full", {
      success: 0.1,
      types: { hole: 1 },
      cases: [{ outcome: "hole" }],
    }),
    easy,
  );
  assert.deepEqual(d.fired, ["failure-type", "ease-struggling"]);
  assert.equal(d.target, "hole_density");
  assert.equal(only(d.config).hole_density, 0.05);
});

Deno.test("settings: factor 1 is the shipped rules; thresholds scale, shares cap at 1, weights stay", () => {
  for (const type of CONTEXT_TYPES) {
    const c = ctx(type, { success: 0.9, types: { hole: 0.6 } });
    assert.deepEqual(
      decideRules(c, easy, { thresholds: 1, steps: 1 }),
      decideRules(c, easy),
    );
  }
  const up = scaledThresholds(1.25);
  assert.equal(up.mastered, 1); // 0.8 x 1.25
  assert.equal(up.strong, 1); // 0.95 x 1.25, capped
  assert.ok(Math.abs(up.struggling - 0.375) < 1e-12);
  assert.equal(up.crowd, 3.75); // a count: not capped
  assert.equal(up.retentionWeight, RULE_THRESHOLDS.retentionWeight);
  assert.equal(scaledThresholds(0.75).mastered, 0.6000000000000001);
});

Deno.test("settings: a higher mastery threshold keeps training where the shipped rules harden", () => {
  const c = ctx("stats", { success: 0.9 });
  assert.deepEqual(decideRules(c, easy).fired, ["harden-mastered"]);
  // 0.9 < 0.8 x 1.25: in the learning zone, no evidence: the config stays
  const d = decideRules(c, easy, { thresholds: 1.25 });
  assert.deepEqual(d.fired, ["keep-learning"]);
  assert.equal(configId(d.config), configId(easy));
  // 0.9 >= 0.95 x 0.75: strong mastery, two steps
  const lo = decideRules(c, easy, { thresholds: 0.75 });
  assert.equal(comps(lo.config)[1]!.config.agents, 6);
});

Deno.test("settings: the step factor scales every move along a dimension", () => {
  // agents: 2 a step, 2 x 1.5 = 3; interaction: 0.2 a step, 0.2 x 1.5 = 0.3
  const d = decideRules(ctx("none"), easy, { steps: 1.5 });
  assert.equal(only(d.config).agents, 5);
  const d2 = decideRules(ctx("none", {}, d.config), d.config, { steps: 1.5 });
  assert.equal(only(d2.config).interaction, 0.3);
  const eased = decideRules(ctx("stats", { success: 0.1 }), d2.config, {
    steps: 0.5,
  });
  assert.deepEqual(eased.fired, ["ease-struggling"]);
  assert.equal(comps(eased.config).at(-1)!.config.agents, 4); // 5 - 1
});

Deno.test("settings: the engineer kind checks its factors", () => {
  const ok = v.safeParse(engineer.params, { thresholds: 1.25, steps: 0.75 });
  assert.ok(ok.success);
  const bad = v.safeParse(engineer.params, { thresholds: 3 });
  assert.ok(!bad.success);
  assert.equal(bad.issues[0].message, "thresholds must be <= 1.5");
  const typo = v.safeParse(engineer.params, { threshold: 1.25 });
  assert.ok(!typo.success);
});
