import assert from "node:assert/strict";
import * as v from "valibot";
import { nodeCodeDigest } from "@envsmith/engine/cache";
import {
  formComponents,
  parseSizeForm,
  sizeFormMixture,
} from "../schemas/size_form.ts";
import { parseEnvConfig } from "../schemas/env_config.ts";
import { diagnose } from "../engineer/diagnose.ts";
import { redesignSizes, redesignSizesKind } from "./redesign_sizes.ts";
import { sizeEngineers } from "./size_engineers.ts";
import {
  GenerateSizesParamsSchema,
  runGenerateSizes,
} from "./generate_sizes.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const FORM = {
  sizes: {
    "3x3": { data_ratio: 0.5, hole_ratio: 0.1, wait_ratio: 0.2 },
    "4x4": { data_ratio: 0.5, hole_ratio: 0.1, wait_ratio: 0.2 },
  },
};

Deno.test("generate.sizes: a ratio outside [0, 1] and a wait ratio no draw can reach are refused by the parameter schema (so at plan), with the reason", () => {
  const issue = (config: unknown) => {
    const r = v.safeParse(GenerateSizesParamsSchema, { config });
    assert.equal(r.success, false);
    return r.issues![0]!.message;
  };
  assert.match(
    issue({ sizes: { "3x3": { data_ratio: 1.5 } } }),
    /data_ratio must be in 0\.\.1 \(got 1\.5\)/,
  );
  assert.match(
    issue({ agents: 1, sizes: { "5x5": { wait_ratio: 0.1 } } }),
    /sizes\.5x5: wait_ratio 0\.1 cannot be reached: a single agent never needs a wait/,
  );
  assert.equal(
    v.safeParse(GenerateSizesParamsSchema, { config: FORM, count: 8 }).success,
    true,
  );
});

Deno.test("generate.sizes: instances carry their component (size and wait class) of the form's mixture; same parameters, same instances", () => {
  const p = v.parse(GenerateSizesParamsSchema, {
    config: FORM,
    count: 20,
    seed: 4,
    stream: 1,
  });
  const a = runGenerateSizes(p);
  assert.deepEqual(runGenerateSizes(p).instances, a.instances);
  assert.equal(a.instances.length, 20);
  assert.equal(a.report.sizes["3x3"]!.need_wait, 2);
  const mixture = parseEnvConfig(sizeFormMixture(a.form));
  assert.ok("mixture" in mixture && mixture.mixture.length === 4);
  const comps = formComponents(a.form);
  for (const inst of a.instances) {
    const c = comps[inst.stats!.component]!;
    assert.equal(`${inst.width}x${inst.height}`, c.size);
  }
  assert.deepEqual(
    [...new Set(a.instances.map((i) => i.stats!.component))].sort(),
    [0, 1, 2, 3],
  );
});

Deno.test("redesign.sizes: the rules engineer's proposal is reported as a diff; agents, holes and horizon stay", async () => {
  const form = parseSizeForm(FORM);
  const findings = diagnose([], { config: sizeFormMixture(form) });
  const out = await redesignSizes(
    { engineer: "rules", config: FORM, findings, stage: 0 },
    1,
    sizeEngineers,
  );
  // no episodes: no evidence, the form is kept
  assert.deepEqual(out.form, form);
  assert.deepEqual(out.report.diff, []);
  assert.equal(out.report.engineer, "rules");
  const r = await redesignSizes(
    { engineer: "random", context: "none", config: FORM, stage: 2 },
    9,
    sizeEngineers,
  );
  assert.equal(r.form.agents, 2);
  assert.ok((r.report.diff as unknown[]).length > 0);
});

Deno.test("redesign.sizes: an unknown engineer is refused with the list; the key covers the chosen engineer's code only", () => {
  const kind = redesignSizesKind(sizeEngineers);
  const bad = v.safeParse(kind.params, { engineer: "rulez", config: FORM });
  assert.equal(bad.success, false);
  assert.match(
    bad.issues![0]!.message,
    /unknown engineer "rulez"; did you mean "rules"\?/,
  );
  const files = (engineer: unknown) =>
    Object.keys(
      nodeCodeDigest(kind, { engineer, config: FORM }, ROOT).files,
    );
  const rules = files("rules");
  assert.ok(rules.includes("engineer/size_rules.ts"));
  assert.ok(!rules.includes("engineer/size_llm.ts"));
  assert.ok(!rules.includes("engineer/size_random.ts"));
  const llm = files({
    name: "llm",
    llm: { base_url: "http://h/v1", model: "m" },
  });
  assert.ok(llm.includes("engineer/size_prompts/system.md"));
  assert.ok(!llm.includes("engineer/size_rules.ts"));
});

Deno.test("experiments/sizes.yaml compiles with the registered kinds; a wait ratio a single agent cannot reach is refused at compile with the reason and the place", async () => {
  const { compileExperiment } = await import("@envsmith/engine/compile");
  const { kinds: allKinds } = await import("./mod.ts");
  const file = new URL("../experiments/sizes.yaml", import.meta.url);
  const text = Deno.readTextFileSync(file);
  const exp = compileExperiment("experiments/sizes.yaml", text, {
    kinds: allKinds,
  });
  assert.ok(exp.byId.has("curriculum.2.config[engineer=rules]"));
  assert.ok(exp.byId.has("score[engineer=random]"));
  const bad = text.replace("agents: 2", "agents: 1");
  assert.throws(
    () => compileExperiment("bad.yaml", bad, { kinds: allKinds }),
    /bad\.yaml:\d+:\d+: config: sizes\.3x3: wait_ratio 0\.2 cannot be reached: a single agent never needs a wait/,
  );
});
