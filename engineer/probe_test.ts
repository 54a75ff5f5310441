import assert from "node:assert/strict";
import { Rng } from "../mapf/rng.ts";
import { lineFamily } from "../families/_test_family.ts";
import {
  type AnyEnvConfig,
  configId,
  parseEnvConfig,
  PRESETS,
} from "../schemas/env_config.ts";
import { buildContext } from "./context.ts";
import { frontier } from "./config_ops.ts";
import {
  familyProbeCandidates,
  probeCandidates,
  probeEngineer,
  probePick,
  probeProblem,
  type ProbeScore,
} from "./probe.ts";

const easy = PRESETS.easy;

/** A scripted policy: its success and learnable share are functions of the config. */
function scripted(config: AnyEnvConfig): ProbeScore {
  const c = frontier(config);
  const success = Math.max(0, 1 - 0.1 * c.agents - c.slip - 0.02 * c.width);
  const learnable = c.interaction + 0.01 * c.agents;
  return { success, learnable, instances: 10, episodes: 20, agentSteps: 100 };
}

Deno.test("probe: the candidates are the current config first, then distinct one-step mutations", () => {
  const c = probeCandidates(easy, 6, new Rng(3));
  assert.equal(c.length, 6);
  assert.equal(configId(c[0]!.config), configId(easy));
  assert.equal(c[0]!.label, "current");
  assert.equal(new Set(c.map((x) => configId(x.config))).size, 6);
  for (const x of c) parseEnvConfig(x.config);
  // deterministic for the generator's state
  const again = probeCandidates(easy, 6, new Rng(3));
  assert.deepEqual(again.map((x) => x.label), c.map((x) => x.label));
});

Deno.test("probe: under a scripted policy it picks the candidate the criterion names", async () => {
  const seen: AnyEnvConfig[][] = [];
  const prober = (cands: readonly AnyEnvConfig[]) => {
    seen.push([...cands]);
    return Promise.resolve(cands.map(scripted));
  };
  for (const target of [0.3, 0.55, 0.7]) {
    for (let stage = 0; stage < 4; stage++) {
      const e = probeEngineer({ prober, candidates: 8, target });
      const context = buildContext("none", null, easy, { stage });
      const p = await e.propose({ context, config: easy, seed: 5 });
      const cands = seen.at(-1)!;
      const scores = cands.map(scripted);
      // by hand: the smallest |success - target|, first on ties
      let best = 0;
      scores.forEach((s, i) => {
        if (
          Math.abs(s.success - target) <
            Math.abs(scores[best]!.success - target) - 1e-12
        ) best = i;
      });
      assert.equal(
        configId(p.config),
        configId(cands[best]!),
        `target ${target}`,
      );
      assert.equal(p.cost!.agentSteps, 100 * cands.length);
      assert.equal(p.events.length, cands.length);
      assert.match(p.events[best]!.detail, /<- picked/);
    }
  }
  const l = probeEngineer({ prober, candidates: 8, criterion: "learnable" });
  const p = await l.propose({
    context: buildContext("none", null, easy, { stage: 2 }),
    config: easy,
    seed: 9,
  });
  const cands = seen.at(-1)!;
  const ls = cands.map((c) => scripted(c).learnable);
  const best = ls.indexOf(Math.max(...ls));
  assert.equal(configId(p.config), configId(cands[best]!));
});

Deno.test("probe: ties go to the current configuration; K = 1 keeps it", () => {
  const s = (success: number): ProbeScore => ({
    success,
    learnable: 0,
    instances: 1,
    episodes: 1,
    agentSteps: 1,
  });
  assert.equal(probePick([s(0.4), s(0.6), s(0.4)], "target", 0.5), 0);
  assert.equal(probePick([s(0.9), s(0.6), s(0.4)], "target", 0.5), 1);
  assert.equal(probeCandidates(easy, 1, new Rng(1)).length, 1);
});

Deno.test("probe: K = 0 and a target outside 0..1 are refused in one line", () => {
  assert.match(probeProblem(0, 0.5)!, /candidates must be at least 1/);
  assert.match(probeProblem(3, 1.5)!, /target must lie in 0..1/);
  assert.throws(
    () => probeEngineer({ prober: () => Promise.resolve([]), candidates: 0 }),
    /candidates must be at least 1/,
  );
});

Deno.test("probe candidates on another family: the current configuration, then distinct one-step moves of its dimensions", () => {
  const line = lineFamily();
  const cur = line.presets.medium!;
  const c = familyProbeCandidates(line, cur, 8, new Rng(1));
  assert.deepEqual(c[0], { config: cur, label: "current" });
  const ids = c.map((x) => JSON.stringify(x.config));
  assert.equal(new Set(ids).size, c.length);
  for (const x of c.slice(1)) assert.match(x.label, / (harder|easier)$/);
  assert.ok(c.length >= 3, `${c.length} candidates`);
});
