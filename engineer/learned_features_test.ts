import assert from "node:assert/strict";
import {
  candidateChanges,
  changeSlot,
  changeSlots,
  contextFeatures,
  modelInput,
} from "./learned_features.ts";
import { buildContext, CONTEXT_TYPES } from "./context.ts";
import { diagnose } from "./diagnose.ts";
import { mapfFrozenLake } from "../families/mapf_frozenlake/family.ts";
import { PRESETS } from "../schemas/env_config.ts";
import { canonicalJson } from "@envsmith/engine/hash";
import { stepConfig } from "../families/family.ts";

Deno.test("candidates: keep, then one step of one dimension each way, none at a bound", () => {
  const easy = mapfFrozenLake.presets.easy!;
  const cs = candidateChanges(mapfFrozenLake, easy);
  assert.equal(cs[0]!.label, "keep");
  assert.equal(canonicalJson(cs[0]!.config), canonicalJson(easy));
  const labels = cs.map((c) => c.label);
  assert.equal(new Set(labels).size, labels.length);
  // every non-keep candidate differs from the current config and is one stepConfig away
  for (const c of cs.slice(1)) {
    assert.notEqual(canonicalJson(c.config), canonicalJson(easy));
    assert.equal(
      canonicalJson(c.config),
      canonicalJson(
        stepConfig(mapfFrozenLake, easy, c.change.dim!, c.change.dir),
      ),
    );
  }
  // stepping the first harder dimension all the way to its bound removes its "+"
  let top = easy;
  for (let i = 0; i < 60; i++) {
    top = stepConfig(mapfFrozenLake, top, "agents", 1);
  }
  const atTop = candidateChanges(mapfFrozenLake, top).map((c) => c.label);
  assert.ok(!atTop.includes("agents+"));
  assert.ok(atTop.includes("agents-"));
});

Deno.test("change slots: keep 0, dimension i up 1+2i, down 2+2i", () => {
  const slots = changeSlots(mapfFrozenLake);
  assert.equal(slots, 1 + 2 * mapfFrozenLake.stepped!.length);
  assert.equal(changeSlot(mapfFrozenLake, { dim: null, dir: 0 }), 0);
  const d1 = mapfFrozenLake.stepped![1]!;
  assert.equal(changeSlot(mapfFrozenLake, { dim: d1, dir: 1 }), 3);
  assert.equal(changeSlot(mapfFrozenLake, { dim: d1, dir: -1 }), 4);
  assert.equal(changeSlot(mapfFrozenLake, { dim: "nope", dir: 1 }), -1);
  const x = modelInput([2, 3], 1, 3, -1);
  assert.deepEqual(x, [2, 3, 0, 1, 0, -2, -3]);
});

Deno.test("context features: nested sets, none sees only config and stage", () => {
  const f = diagnose([]);
  const sizes = Object.fromEntries(CONTEXT_TYPES.map((t) => {
    const ctx = buildContext(t, f, PRESETS.medium, { stage: 2 }).json;
    return [t, contextFeatures(t, ctx, mapfFrozenLake)];
  }));
  const none = sizes.none!;
  assert.equal(none.names.length, 1 + mapfFrozenLake.stepped!.length);
  assert.equal(none.values[0], 0.2);
  for (const t of ["stats", "failures", "behavior", "full"]) {
    assert.deepEqual(sizes[t]!.names.slice(0, none.names.length), none.names);
    assert.ok(sizes[t]!.values.every(Number.isFinite));
  }
  assert.ok(sizes.stats!.names.includes("stats.success_rate"));
  assert.ok(!sizes.stats!.names.some((n) => n.startsWith("behavior.")));
  const full = new Set(sizes.full!.names);
  for (const t of ["stats", "failures", "behavior"]) {
    for (const n of sizes[t]!.names) assert.ok(full.has(n), n);
  }
  // medium is harder than easy on some dimension: progress is read
  const easyCtx = buildContext("none", f, PRESETS.easy, { stage: 2 }).json;
  const e = contextFeatures("none", easyCtx, mapfFrozenLake).values;
  assert.ok(e.slice(1).every((x) => Math.abs(x) < 1e-9));
  assert.ok(none.values.slice(1).some((x) => x > 0.2));
});
