import assert from "node:assert/strict";
import { configId, PRESETS } from "../schemas/mod.ts";
import { diffConfigs } from "./diff.ts";

const easy = PRESETS.easy;

Deno.test("diff of two single configs lists field changes", () => {
  const d = diffConfigs(easy, { ...easy, agents: 3, horizon: { factor: 2 } });
  assert.equal(d.changed, true);
  assert.deepEqual(d.components[0]!.status, "changed");
  assert.deepEqual(d.summary, ["agents: 2 -> 3", "horizon.factor: 3 -> 2"]);
  assert.equal(diffConfigs(easy, { ...easy }).changed, false);
});

Deno.test("diff of single -> mixture: the kept component and the added one", () => {
  const next = {
    mixture: [{ weight: 0.3, config: easy }, {
      weight: 0.7,
      config: { ...easy, slip: 0.05 },
    }],
  };
  const d = diffConfigs(easy, next);
  assert.deepEqual(
    d.components.map((c) => [c.status, c.weight_from, c.weight_to]),
    [
      ["kept", 1, 0.3],
      ["added", null, 0.7],
    ],
  );
  assert.equal(d.components[1]!.from_id, configId(easy));
  assert.deepEqual(d.components[1]!.changes, [{
    path: "slip",
    from: 0,
    to: 0.05,
  }]);
  assert.deepEqual(d.summary, [
    `component ${configId(easy)}: weight 1 -> 0.3`,
    `component ${configId({ ...easy, slip: 0.05 })} added from ${
      configId(easy)
    } (weight 0.7): slip: 0 -> 0.05`,
  ]);
});

Deno.test("diff of mixture -> single: removed components", () => {
  const b = { ...easy, agents: 4 };
  const d = diffConfigs({
    mixture: [{ weight: 1, config: easy }, { weight: 1, config: b }],
  }, b);
  assert.deepEqual(d.components.map((c) => c.status), ["kept", "removed"]);
});
