import assert from "node:assert/strict";
import { UserError } from "@envsmith/engine/errors";
import { lineFamily } from "../families/_test_family.ts";
import { builtinFamilyRegistry } from "../families/builtins.ts";
import { redesign, redesignKind, redesignParamsSchema } from "./redesign.ts";
import { engineers } from "./engineers.ts";
import * as v from "valibot";

function registry() {
  const r = builtinFamilyRegistry();
  r.register(lineFamily(), "test");
  return r;
}

function fingerprintError(literal: unknown): string {
  const kind = redesignKind(engineers, registry());
  try {
    kind.fingerprint!(literal as never, { baseDir: "." } as never);
  } catch (e) {
    assert.ok(e instanceof UserError, String(e));
    return e.message;
  }
  return "";
}

Deno.test("redesign on another family: rules is refused at plan in one line", () => {
  const msg = fingerprintError({
    engineer: "rules",
    family: "line",
    config: { length: 2, gaps: 0 },
  });
  assert.equal(
    msg,
    "the rules engineer supports family mapf-frozenlake only, not line: choose an engineer that supports line (./envsmith engineers lists them)",
  );
  // on its own family it passes
  assert.equal(
    fingerprintError({ engineer: "rules", config: { preset: "easy" } }),
    "",
  );
});

Deno.test("redesign: an unknown family is one line naming the known families", () => {
  const msg = fingerprintError({
    engineer: "fixed",
    family: "lin",
    config: {},
  });
  assert.match(
    msg,
    /^family: unknown family "lin"; known families: mapf-frozenlake, line .*did you mean "line"\?$/,
  );
  assert.equal(msg.includes("\n"), false);
});

Deno.test("redesign: the key covers the chosen family's module only", () => {
  const kind = redesignKind(engineers, registry());
  const line = kind.codeModules!(
    { engineer: "fixed", family: "line", config: {} } as never,
    { baseDir: "." } as never,
  );
  assert.equal(line.length, 2);
  assert.match(line[1]!, /families\/_test_family\.ts$/);
  const mapf = kind.codeModules!(
    { engineer: "fixed", config: { preset: "easy" } } as never,
    { baseDir: "." } as never,
  );
  assert.match(mapf[1]!, /families\/mapf_frozenlake\/family\.ts$/);
  assert.ok(!mapf.some((m) => m.includes("_test_family")));
});

Deno.test("redesign: config is checked against the node's family's space", () => {
  const schema = redesignParamsSchema(engineers, registry());
  const ok = v.safeParse(schema, {
    engineer: "fixed",
    family: "line",
    config: { length: 3, gaps: 1 },
  });
  assert.equal(ok.success, true);
  const bad = v.safeParse(schema, {
    engineer: "fixed",
    family: "line",
    config: { length: 30, gaps: 1 },
  });
  assert.equal(bad.success, false);
  assert.equal(v.getDotPath(bad.issues![0]), "config.length");
  // a MAPF config is not a line config, and the other way round
  assert.equal(
    v.safeParse(schema, {
      engineer: "fixed",
      config: { length: 3, gaps: 1 },
    }).success,
    false,
  );
  assert.equal(
    v.safeParse(schema, { engineer: "fixed", config: { preset: "hard" } })
      .success,
    true,
  );
});

Deno.test("redesign on another family: fixed keeps the configuration; the report names the family", async () => {
  const r = await redesign(
    {
      engineer: "fixed",
      family: "line",
      config: { length: 4, gaps: 1 },
      findings: { success_rate: 0.5 },
    },
    1,
    { engineers, families: registry() },
  );
  assert.deepEqual(r.config, { length: 4, gaps: 1 });
  assert.equal(r.report.family, "line");
  assert.deepEqual(r.report.diff, { changed: false, dimensions: [] });
});

Deno.test("redesign on another family: rules fails in one line when run", async () => {
  await assert.rejects(
    () =>
      redesign(
        { engineer: "rules", family: "line", config: { length: 4, gaps: 1 } },
        1,
        { engineers, families: registry() },
      ),
    /the rules engineer supports family mapf-frozenlake only, not line/,
  );
});
