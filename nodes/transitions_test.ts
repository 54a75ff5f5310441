import assert from "node:assert/strict";
import type { BlobRef, NodeContext } from "@envsmith/engine/kind";
import { UserError } from "@envsmith/engine/errors";
import { transitions } from "./transitions.ts";
import { candidate } from "./learned_candidate.ts";
import { hindsight } from "./hindsight.ts";
import { fit } from "./learned_fit.ts";
import { generateSuite } from "../mapf/suites.ts";
import { diagnose } from "../engineer/diagnose.ts";
import { PRESETS } from "../schemas/env_config.ts";
import { candidateChanges } from "../engineer/learned_features.ts";
import { mapfFrozenLake } from "../families/mapf_frozenlake/family.ts";
import { learnedEngineer } from "../engineer/learned.ts";
import type { LearnedModels } from "../engineer/learned_fit.ts";
import { buildContext } from "../engineer/context.ts";

function ctx(id = "t"): NodeContext {
  return {
    id,
    key: "k",
    seed: 1,
    signal: new AbortController().signal,
    workDir: "/tmp",
    auxDir: "/tmp",
    baseDir: "/tmp",
    progress() {},
    log() {},
    writeBlob: (_b: Uint8Array, media: string): Promise<BlobRef> =>
      Promise.resolve({ $blob: "x", size: 0, media }),
    readBlob: () => Promise.resolve(new Uint8Array()),
  };
}

/** An evaluate value over real suite instance ids of a split. */
function evaluated(split: "validation" | "test", success: number) {
  const ids = generateSuite("base", { count: 3, split }).instances.map((i) =>
    i.id
  );
  return {
    success_rate: success,
    per_instance: ids.map((id) => ({ id, suite: "base", success_rate: 1 })),
  };
}

const cands = candidateChanges(mapfFrozenLake, PRESETS.easy);
const up = cands.find((c) => c.label === "agents+")!.config;
const findings = diagnose([]);

Deno.test("transitions: change and next-stage progress per stage, from validation evaluations", async () => {
  const r = await transitions.run({
    findings: [findings, findings],
    configs: [{ preset: "easy" }, up, PRESETS.hard],
    heldout: [
      evaluated("validation", 0.2),
      evaluated("validation", 0.5),
      evaluated("validation", 0.4),
    ],
    group: "g1",
  }, ctx());
  const rows = (r.value as { rows: { change: unknown; progress: number }[] })
    .rows;
  assert.equal(rows.length, 2);
  assert.deepEqual(rows[0]!.change, {
    dim: "agents",
    dir: 1,
    label: "agents+",
  });
  assert.ok(Math.abs(rows[0]!.progress - 0.3) < 1e-9);
  // medium -> hard is no single candidate step: kept as data, left out of fits
  assert.equal(rows[1]!.change, null);
  assert.ok(Math.abs(rows[1]!.progress - -0.1) < 1e-9);
});

Deno.test("no test-split instance enters the data: transitions and hindsight refuse it", async () => {
  // the test split's real instance ids, as the generator names them
  const test = evaluated("test", 0.9);
  assert.ok(test.per_instance.every((x) => /-test2-\d+$/.test(x.id)));
  await assert.rejects(
    () =>
      transitions.run({
        findings: [findings],
        configs: [{ preset: "easy" }, up],
        heldout: [evaluated("validation", 0.2), test],
      }, ctx()),
    (e: Error) =>
      e instanceof UserError &&
      /heldout\[1\]: instance base-test2-0 is from the test split/.test(
        e.message,
      ),
  );
  await assert.rejects(
    () =>
      hindsight.run({
        findings,
        config: PRESETS.easy,
        stage: 0,
        heldout: evaluated("validation", 0.2),
        branches: [{ config: up, heldout: test }],
      }, ctx()),
    /test split/,
  );
  // the validation-2 split is validation data, accepted
  const v2 = generateSuite("base", { count: 2, split: "validation-2" })
    .instances.map((i) => ({ id: i.id }));
  const ok = await hindsight.run({
    findings,
    config: PRESETS.easy,
    stage: 0,
    heldout: evaluated("validation", 0.2),
    branches: [{
      config: up,
      heldout: { success_rate: 0.6, per_instance: v2 },
    }],
  }, ctx());
  assert.equal((ok.report as { best: string }).best, "agents+");
});

Deno.test("candidate: the index-th change, keep past the last", async () => {
  const a = await candidate.run(
    { config: { preset: "easy" }, index: 0 },
    ctx(),
  );
  assert.equal((a.report as { label: string }).label, "keep");
  const b = await candidate.run(
    { config: { preset: "easy" }, index: 999 },
    ctx(),
  );
  assert.equal((b.report as { label: string }).label, "keep");
  const i = cands.findIndex((c) => c.label === "agents+");
  const c = await candidate.run(
    { config: { preset: "easy" }, index: i },
    ctx(),
  );
  assert.deepEqual(c.value, up);
});

Deno.test("learned.fit then the learned engineer picks the change that progressed", async () => {
  // 12 curricula: agents+ always helped (+0.2), every other change hurt (-0.1)
  const values = [];
  for (let g = 0; g < 12; g++) {
    const other = cands[1 + (g % (cands.length - 1))]!;
    const configs = [
      PRESETS.easy,
      up,
      PRESETS.easy,
      other.config,
      PRESETS.easy,
    ];
    const a = 0.1 + 0.01 * g;
    const heldout = [
      a,
      a + 0.2,
      a + 0.1,
      a + 0.1 + (other.label === "agents+" ? 0.2 : -0.1),
      a,
    ]
      .map((s) => evaluated("validation", s));
    // stages: easy->up (+0.2), up->easy, easy->other, other->easy
    const r = await transitions.run({
      findings: [findings, findings, findings, findings],
      configs,
      heldout,
      group: `g${g}`,
    }, ctx());
    values.push(r.value);
  }
  const m = await fit.run({
    transitions: values,
    contexts: ["none", "full"],
    seed: 3,
  }, ctx());
  const models = m.value as unknown as LearnedModels;
  assert.deepEqual(Object.keys(models.models), ["none", "full"]);
  const e = learnedEngineer(models, mapfFrozenLake);
  const p = await e.propose({
    context: buildContext("none", findings, PRESETS.easy, { stage: 0 }),
    config: PRESETS.easy,
    seed: 1,
  });
  assert.match(p.rationale, /for agents\+/, p.events[0]!.detail);
  assert.deepEqual(p.config, up);
  // deterministic given the seed
  const again = await fit.run({
    transitions: values,
    contexts: ["none", "full"],
    seed: 3,
  }, ctx());
  assert.deepEqual(again.value, m.value);
  // a context type the model was not fitted on is refused in one line
  await assert.rejects(
    () =>
      e.propose({
        context: buildContext("stats", findings, PRESETS.easy, { stage: 0 }),
        config: PRESETS.easy,
        seed: 1,
      }),
    /has no stats context model/,
  );
});
