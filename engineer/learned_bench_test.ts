import assert from "node:assert/strict";
import { benchEngineers, projectChange } from "./learned_bench.ts";
import { candidateChanges } from "./learned_features.ts";
import { exploreEngineer } from "./explore.ts";
import { mapfFrozenLake } from "../families/mapf_frozenlake/family.ts";
import { stepConfig } from "../families/family.ts";
import { PRESETS } from "../schemas/env_config.ts";
import { diagnose } from "./diagnose.ts";
import { buildContext } from "./context.ts";
import type { Engineer } from "./engineer.ts";
import type { HindsightState } from "./learned_data.ts";

const f = mapfFrozenLake;
const easy = PRESETS.easy;
const cands = candidateChanges(f, easy);

Deno.test("projectChange: an exact candidate, the dimension moved most, keep", () => {
  const up = stepConfig(f, easy, "agents", 1);
  assert.deepEqual(projectChange(f, easy, up), {
    change: { dim: "agents", dir: 1 },
    projected: false,
  });
  // two steps of slip and one of agents: slip moved most (progress), harder
  let two = stepConfig(f, easy, "slip", 1);
  two = stepConfig(f, two, "slip", 1);
  two = stepConfig(f, two, "agents", 1);
  const p = projectChange(f, easy, two);
  assert.equal(p.projected, true);
  assert.equal(p.change.dir, 1);
  assert.ok(p.change.dim === "slip" || p.change.dim === "agents");
  assert.deepEqual(projectChange(f, easy, easy).change, { dim: null, dir: 0 });
});

/** An engineer that always makes the candidate labelled `label`. */
const always = (label: string): Engineer => ({
  name: label,
  propose: ({ config }) =>
    Promise.resolve({
      config: candidateChanges(f, config).find((c) => c.label === label)!
        .config,
      rationale: "",
      events: [],
      reads: [],
    }),
});

Deno.test("benchEngineers: regret against the best change in hindsight, best share, untried choices", async () => {
  const state = (best: string, top: number): HindsightState => ({
    group: "g",
    stage: 1,
    config: easy,
    findings: diagnose([]),
    history: [],
    outcomes: ([
      { change: { dim: null, dir: 0 }, label: "keep", progress: 0 },
      { change: { dim: "agents", dir: 1 }, label: "agents+", progress: 0.1 },
      { change: { dim: "slip", dir: 1 }, label: "slip+", progress: 0.05 },
    ] as HindsightState["outcomes"]).map((o) =>
      o.label === best ? { ...o, progress: top } : o
    ),
  });
  const states = [state("agents+", 0.3), state("slip+", 0.2)];
  const rows = await benchEngineers(f, states, [
    { label: "agents", context: "none", engineer: always("agents+") },
    { label: "keep", context: "none", engineer: always("keep") },
    { label: "size", context: "none", engineer: always("size+") },
  ], 1);
  const [a, k, s] = rows;
  // state 1: best agents+ 0.3 (regret 0); state 2: best slip+ 0.2, agents+ 0.1
  assert.ok(Math.abs(a!.regret - 0.05) < 1e-12);
  assert.equal(a!.best, 0.5);
  assert.equal(a!.n, 2);
  assert.ok(Math.abs(k!.regret - 0.25) < 1e-12);
  assert.equal(k!.best, 0);
  // size+ was never tried: counted, not scored
  assert.equal(s!.n, 0);
  assert.equal(s!.untried, 2);
  assert.deepEqual(s!.choices, { "size+": 2 });
});

Deno.test("explore engineer: a candidate each stage, seeded, and not always the same one", async () => {
  const e = exploreEngineer(f);
  const labels = new Set(
    cands.map((c) => c.config).map((c) => JSON.stringify(c)),
  );
  const seen = new Set<string>();
  for (let stage = 0; stage < 12; stage++) {
    const input = {
      context: buildContext("none", null, easy, { stage }),
      config: easy,
      seed: 4,
    };
    const a = await e.propose(input);
    const b = await e.propose(input);
    assert.deepEqual(a.config, b.config);
    assert.ok(labels.has(JSON.stringify(a.config)));
    seen.add(JSON.stringify(a.config));
  }
  assert.ok(seen.size >= 4, `${seen.size} distinct changes in 12 stages`);
});
