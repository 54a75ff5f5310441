import assert from "node:assert/strict";
import { experimentJsonSchema } from "./json_schema.ts";
import { exec } from "../run/exec_kind.ts";
import { kinds } from "../testdata/kinds.ts";
import type { NodeKind } from "../types.ts";
import * as v from "valibot";

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
  assert.deepEqual(s.properties.nodes.additionalProperties, {
    $ref: "#/definitions/node",
  });
  // One enum of the kinds; each node checked against its own kind only.
  const node = s.definitions.node;
  assert.deepEqual(node.properties.kind.enum, [
    "exec",
    ...kinds.map((k) => k.name),
    "stages",
  ]);
  assert.equal(node.allOf.length, 1 + kinds.length + 1);
  assert.deepEqual(node.allOf[1], {
    if: { properties: { kind: { const: "test.add" } }, required: ["kind"] },
    then: { $ref: "#/definitions/kind_test_add" },
  });
  assert.equal(node.allOf.at(-1).then.$ref, "#/definitions/stages");
  assert.ok(!s.definitions.stage_node.properties.kind.enum.includes("stages"));
  assert.ok(
    new RegExp(s.definitions.reference.pattern).test("$curriculum.policy"),
  );
  assert.ok(!new RegExp(s.definitions.reference.pattern).test("$$literal"));
  assert.equal(s.properties.tables.items.properties.rows.type, "string");
});

Deno.test("JSON Schema: definitions a conversion nests ($defs of lazy schemas) move to the root, shared when equal", () => {
  const config = v.lazy(() => v.object({ size: v.number() }));
  const make = (name: string): NodeKind => ({
    name,
    description: name,
    module: import.meta.url,
    params: v.strictObject({ config: v.optional(config) }),
    run: () => Promise.resolve({ value: null }),
  });
  // deno-lint-ignore no-explicit-any
  const s = experimentJsonSchema([make("a"), make("b")]) as Record<string, any>;
  const text = JSON.stringify(s);
  assert.ok(!text.includes("$defs"), "no nested $defs left");
  const refs = [...text.matchAll(/"\$ref":"#\/definitions\/([^"]+)"/g)].map((
    m,
  ) => m[1]!);
  for (const r of refs) assert.ok(r in s.definitions, `dangling $ref ${r}`);
  const a = s.definitions.kind_a.properties.with.properties.config.anyOf[0];
  const b = s.definitions.kind_b.properties.with.properties.config.anyOf[0];
  assert.deepEqual(a, { $ref: "#/definitions/kind_a_0" });
  assert.deepEqual(b, a, "equal definitions are shared");
  assert.equal(
    s.definitions.kind_a_0.properties.size.anyOf[1].$ref,
    "#/definitions/reference",
    "references allowed inside hoisted definitions too",
  );
});
