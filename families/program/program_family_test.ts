import assert from "node:assert/strict";
import * as v from "valibot";
import { stepConfig } from "../family.ts";
import { programFamily } from "./program_family.ts";
import { ProgramFamilyError } from "./protocol.ts";

const DIR = new URL("./testdata/", import.meta.url).pathname;
const LAKE = new URL("../../examples/python_family/lake.py", import.meta.url)
  .pathname;

Deno.test("programFamily: every hook is a request; the space, presets and suites come from describe", () => {
  const lake = programFamily({ command: ["python3", LAKE] }, { baseDir: DIR });
  assert.equal(lake.name, "python-lake");
  assert.deepEqual(lake.dimensions.map((d) => d.path), [
    "size",
    "holes",
    "slip",
  ]);
  assert.deepEqual(lake.presets.easy, { size: 4, holes: 0.1, slip: 0.0 });
  // get/set along the declared space, clamped into the bounds
  const easy = lake.presets.easy!;
  assert.equal(lake.get(easy, "size"), 4);
  assert.deepEqual(lake.set(easy, "size", 40), {
    size: 12,
    holes: 0.1,
    slip: 0,
  });
  assert.deepEqual(stepConfig(lake, easy, "holes", 1), {
    size: 4,
    holes: 0.15,
    slip: 0,
  });
  assert.equal(lake.renderConfig(easy), "size=4, holes=0.1, slip=0");
  assert.equal(
    v_ok(lake.schema, { size: 4, holes: 0.1, slip: 0.5 }),
    "slip = 0.5 is outside [0, 0.3]",
  );
  // generate: deterministic, checked; render asks the program
  const a = lake.generate(easy, 3, 2);
  assert.deepEqual(lake.generate(easy, 3, 2), a);
  assert.deepEqual(a.map((i) => lake.instanceId(i)), [
    "lake-3-0000",
    "lake-3-0001",
  ]);
  assert.equal(lake.renderInstance(a[0]!), (a[0]!.grid as string[]).join("\n"));
  assert.equal(lake.check(a[0]!), undefined);
  assert.match(
    lake.check({ id: "x" }) ?? "",
    /instance_schema \(\/ must have required property 'grid'\)/,
  );
  assert.equal(lake.mutate, undefined);
  assert.deepEqual(Object.keys(lake.suites), ["hard"]);
  assert.equal(lake.suites.hard!.split, "test");
  assert.equal(lake.suites.hard!.instances(2).length, 2);
  // diagnosis: the outcomes' numbers and a seeded sample of failures
  const eps = [
    { instance: "a", success: true, return: 1, steps: 4 },
    { instance: "b", success: false, return: -1, steps: 2 },
    { instance: "c", success: false, return: -1, steps: 6 },
  ];
  assert.deepEqual(lake.diagnosis.statistics(eps), {
    success_rate: 1 / 3,
    mean_return: -1 / 3,
    mean_steps: 4,
    episodes: 3,
  });
  const cases = lake.diagnosis.failureCases(eps, { count: 1, seed: 5 });
  assert.equal(cases.length, 1);
  assert.deepEqual(
    lake.diagnosis.failureCases(eps, { count: 1, seed: 5 }),
    cases,
  );
  assert.match(cases[0]!.text, /^instance [bc]: failed, return -1, \d steps$/);
});

Deno.test("programFamily: a program that cannot describe itself is refused in one line", () => {
  assert.throws(
    () =>
      programFamily({ command: ["python3", "odd_family.py", "bad-preset"] }, {
        baseDir: DIR,
      }),
    (e) =>
      e instanceof ProgramFamilyError &&
      /^family program odd_family\.py \(describe\): preset hard is outside its own space/
        .test(e.message),
  );
});

function v_ok(schema: v.GenericSchema, x: unknown): string | undefined {
  const r = v.safeParse(schema, x);
  return r.success ? undefined : r.issues[0].message;
}
