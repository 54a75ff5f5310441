import assert from "node:assert/strict";
import * as v from "valibot";
import { EngineerRegistrationError, EngineerRegistry } from "./registry.ts";
import { builtinEngineerRegistry, createEngineer } from "./builtins.ts";
import type { EngineerKind } from "./engineer_kind.ts";
import { EngineerConfigError } from "./engineer_kind.ts";
import { PRESETS } from "../schemas/env_config.ts";

const keep: EngineerKind = {
  name: "keep",
  description: "keeps the configuration",
  params: v.strictObject({}),
  module: import.meta.url,
  create: () => ({
    name: "keep",
    propose: (input) =>
      Promise.resolve({
        config: input.config,
        rationale: "kept",
        events: [],
        reads: [],
      }),
  }),
};

Deno.test("engineer registry: the built-ins, in order, each with the parameters it documents", () => {
  const r = builtinEngineerRegistry();
  assert.deepEqual(r.names(), [
    "fixed",
    "random",
    "rules",
    "replay",
    "llm",
    "scripted",
    "blind",
    "dr-stage",
    "band",
    "learned",
    "explore",
    "exec",
  ]);
  const params = Object.fromEntries(
    r.list().map((e) => [e.name, Object.keys(e.params.entries)]),
  );
  assert.deepEqual(params, {
    fixed: [],
    random: [],
    rules: ["thresholds", "steps"],
    replay: [],
    llm: ["llm", "serve", "prompt", "reasks"],
    scripted: ["script"],
    blind: ["pace"],
    exec: ["command", "timeout", "reasks", "inputs", "env"],
    "dr-stage": ["box", "draws"],
    band: ["lo", "hi", "order"],
    learned: ["model"],
    explore: [],
  });
  // every built-in module is its own file
  assert.equal(new Set(r.list().map((e) => e.module)).size, 12);
});

Deno.test("engineer registry: refuses a taken name, no parameter schema, no create, no module, a reserved name; the same kind twice is a no-op", () => {
  const r = new EngineerRegistry();
  r.register(keep, "a.ts");
  r.register(keep, "a.ts");
  assert.deepEqual(r.names(), ["keep"]);
  assert.equal(r.version, 1);
  assert.throws(
    () => r.register({ ...keep }, "b.ts"),
    new EngineerRegistrationError(
      'engineer "keep" (b.ts): the name is already registered by a.ts; rename one',
    ),
  );
  const { params: _p, ...noParams } = keep;
  assert.throws(
    () => r.register(noParams as unknown as EngineerKind, "c.ts"),
    /engineer "keep" \(c\.ts\) has no parameter schema: declare params: v\.strictObject/,
  );
  assert.throws(
    () => r.register({ ...keep, name: "x", params: {} as never }, "c.ts"),
    /has no parameter schema/,
  );
  assert.throws(
    () => r.register({ ...keep, name: "x", create: undefined as never }),
    /has no create\(params, env\) function/,
  );
  assert.throws(
    () => r.register({ ...keep, name: "x", module: "" }),
    /has no module: set module: import\.meta\.url/,
  );
  assert.throws(
    () => r.register({ ...keep, name: "context" }),
    /"context" is reserved/,
  );
  assert.throws(
    () =>
      r.register({
        ...keep,
        name: "x",
        params: v.strictObject({ name: v.string() }),
      }),
    /its parameters may not be named "name"/,
  );
  assert.throws(
    () => r.register({ ...keep, name: "two words" }),
    /the name must be letters/,
  );
  assert.deepEqual(r.names(), ["keep"]);
});

Deno.test("engineer registry: create validates parameters and names what is missing or unknown", () => {
  assert.throws(
    () => createEngineer("rules", { x: 1 }),
    new EngineerConfigError(
      'engineer rules: unknown parameter "x" (the rules engineer takes thresholds, steps)',
    ),
  );
  assert.throws(
    () => createEngineer("exec", {}),
    /engineer exec: missing command \(the program and its arguments, no shell/,
  );
  assert.throws(
    () => createEngineer("blind", { pace: [PRESETS.easy] }),
    /pace is \[FROM, TO\]/,
  );
  assert.throws(
    () => createEngineer("nope"),
    /Unknown engineer "nope"; use one of fixed, random, rules/,
  );
  assert.throws(
    () => createEngineer("llm", { prompt: "loud" }),
    /prompt must be one of neutral, informed/,
  );
  // exec outside a redesign node has no program runner
  assert.throws(
    () => createEngineer("exec", { command: ["true"] }),
    /the exec engineer needs a program runner/,
  );
});
