import assert from "node:assert/strict";
import { experimentJsonSchema } from "./json_schema.ts";
import { exec } from "./exec_kind.ts";
import { kinds } from "./testdata/kinds.ts";

Deno.test("JSON Schema: one definition per kind, parameters typed, references allowed below the top", () => {
  // deno-lint-ignore no-explicit-any
  const s = experimentJsonSchema([exec, ...kinds]) as Record<string, any>;
  assert.equal(s.$schema, "http://json-schema.org/draft-07/schema#");
  assert.deepEqual(s.required, ["experiment", "seed", "nodes"]);
  const add = s.definitions.kind_test_add;
  assert.deepEqual(add.properties.kind, {
    const: "test.add",
    description: "adds a, b and more (test kind)",
  });
  const a = add.properties.with.properties.a;
  assert.deepEqual(a, {
    anyOf: [{ type: "number" }, { $ref: "#/definitions/reference" }],
  });
  assert.equal(add.properties.with.additionalProperties, false);
  assert.deepEqual(add.properties.with.required, ["a"]);
  assert.ok(s.definitions.kind_exec.properties.with.properties.command);
  const node = s.properties.nodes.additionalProperties.anyOf;
  assert.equal(node[0].properties.kind.const, "stages");
  assert.equal(node.length, 1 + 1 + kinds.length);
  assert.ok(
    new RegExp(s.definitions.reference.pattern).test("$curriculum.policy"),
  );
  assert.ok(!new RegExp(s.definitions.reference.pattern).test("$$literal"));
  assert.equal(s.properties.tables.items.properties.rows.type, "string");
});
