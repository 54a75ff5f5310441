import assert from "node:assert/strict";
import { compileExperiment } from "@envsmith/engine/compile";
import { computeKeys } from "@envsmith/engine/cache";
import { parse } from "yaml";
import { allKinds } from "../mod.ts";

const FILE = new URL("./tuning.yaml", import.meta.url);
const ENGINEERS = [
  "rules",
  "band",
  "probe",
  "dr",
  "plr",
  "accel",
  "dr-stage",
  "plr-stage",
  "accel-stage",
];

Deno.test("tuning.yaml: every engineer, rules included, gets its defaults and 8 points on the same 2 seeds and budget", () => {
  const exp = compileExperiment(FILE.pathname, Deno.readTextFileSync(FILE), {
    kinds: allKinds,
  });
  const keys = computeKeys(exp);
  const distinct = (method: string, plain: string) =>
    new Set(
      exp.nodes.flatMap((n, i) =>
        n.plain === plain && n.variant.method === method ? [keys[i]!.key] : []
      ),
    ).size;
  for (const e of ENGINEERS) {
    // the defaults: one configuration on 2 seeds (the same key at every point)
    assert.equal(distinct(e, "score"), 2, `${e} defaults`);
    // 8 Latin-hypercube points on 2 seeds, each its own configuration
    assert.equal(distinct(`${e}-lhs`, "score"), 16, `${e} points`);
    assert.ok(exp.tables.some((t) => t.name === `tuning-${e}`), e);
  }
  // one train node for every row: the same validation budget
  const doc = parse(Deno.readTextFileSync(FILE));
  assert.equal(doc.nodes.curriculum.each.policy.with.samples, 40000);
  assert.equal(doc.nodes.last.with.samples, 40000);
  assert.equal(doc.nodes.curriculum.count, 3);
  assert.deepEqual(doc.matrix.seed, [1, 2]);
  // rules is searched over both of its parameters
  const rules = doc.matrix.method.find((m: { name: string }) =>
    m.name === "rules-lhs"
  );
  assert.equal(rules.engineer.thresholds, "$matrix.rules_thresholds");
  assert.equal(rules.engineer.steps, "$matrix.rules_steps");
});
