/**
 * The shipped JSON Schema of experiment files, held to what real clients
 * accept: it is what `./envsmith schema` writes, ajv (strict mode, with the
 * standard formats) compiles it, every shipped experiment validates, and
 * three typical mistakes (an unknown kind, a misspelled parameter, a wrong
 * type) are flagged with one actionable message each, by ajv and by
 * yaml-language-server driven over LSP as an editor drives it.
 *
 * @module
 */
import assert from "node:assert/strict";
import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { parse } from "yaml";
import { experimentJsonSchema } from "@envsmith/engine/compile";
import { builtinExecutors } from "@envsmith/engine/executor";
import { allKinds } from "./mod.ts";
import { startYamlLanguageServer } from "./_yaml_lsp.ts";

const SCHEMA_URL = new URL("./schemas/experiment.schema.json", import.meta.url);
const EXPERIMENTS = new URL("./experiments/", import.meta.url);

function shippedExperiments(): { name: string; text: string }[] {
  return [...Deno.readDirSync(EXPERIMENTS)]
    .filter((e) => e.isFile && /\.ya?ml$/.test(e.name))
    .map((e) => e.name).sort()
    .map((name) => ({
      name,
      text: Deno.readTextFileSync(new URL(name, EXPERIMENTS)),
    }));
}

/** Broken copies of quick.yaml: what each breaks, and where (1-based line:col of the offending key or value). */
function brokenCopies(): {
  name: string;
  text: string;
  line: number;
  ajvPath: string;
  ajv: RegExp;
  lsp: RegExp;
}[] {
  const quick = Deno.readTextFileSync(new URL("quick.yaml", EXPERIMENTS));
  const lines = quick.split("\n");
  const edit = (from: string, to: string) => {
    const i = lines.findIndex((l) => l.includes(from));
    assert.ok(i >= 0, `quick.yaml no longer contains ${from}`);
    const copy = [...lines];
    copy[i] = copy[i]!.replace(from, to);
    return { text: copy.join("\n"), line: i + 1 };
  };
  return [
    {
      name: "unknown_kind",
      ...edit("kind: rollout, ", "kind: rolout,  "),
      ajvPath: "/nodes/curriculum/each/rollouts/kind",
      ajv: /must be equal to one of the allowed values/,
      lsp:
        /^Value is not accepted\. Valid values: "exec", "generate", .*"rollout"/,
    },
    {
      name: "misspelled_parameter",
      ...edit("updates: 20", "updatse: 20"),
      ajvPath: "/nodes/curriculum/each/policy/with",
      ajv: /must NOT have additional properties/,
      lsp: /^Property updatse is not allowed\.$/,
    },
    {
      name: "wrong_type",
      ...edit("count: 256", "count: many"),
      ajvPath: "/nodes/curriculum/each/envs/with/count",
      ajv: /must be integer/,
      lsp: /^Incorrect type\. Expected "integer"\.$/,
    },
  ];
}

function compileWithAjv(draft2020 = false) {
  // deno-lint-ignore no-explicit-any
  const ajv = new ((draft2020 ? Ajv2020 : Ajv) as any)({
    allErrors: true,
    strict: true,
  });
  // deno-lint-ignore no-explicit-any
  (addFormats as any)(ajv);
  return ajv.compile(JSON.parse(Deno.readTextFileSync(SCHEMA_URL)));
}

Deno.test("schemas/experiment.schema.json is what `./envsmith schema` writes for the registered kinds", () => {
  const committed = Deno.readTextFileSync(SCHEMA_URL);
  const fresh =
    JSON.stringify(experimentJsonSchema(allKinds, builtinExecutors), null, 2) +
    "\n";
  assert.ok(
    committed === fresh,
    "schemas/experiment.schema.json is stale (a kind's parameters changed): run `./envsmith schema` and commit it",
  );
});

Deno.test("ajv (draft-07) and Ajv2020 (2020-12) compile the schema (strict) and every shipped experiment validates", () => {
  for (const draft2020 of [false, true]) {
    const validate = compileWithAjv(draft2020);
    const shipped = shippedExperiments();
    assert.ok(shipped.length >= 4, "the shipped experiments");
    for (const { name, text } of shipped) {
      const ok = validate(parse(text));
      assert.ok(ok, `${name}: ${JSON.stringify(validate.errors, null, 1)}`);
    }
    // And it still refuses a broken copy.
    assert.equal(validate(parse(brokenCopies()[1]!.text)), false);
  }
});

Deno.test("every parameter of every node kind has a description in the schema", () => {
  const schema = JSON.parse(Deno.readTextFileSync(SCHEMA_URL)) as {
    definitions: Record<string, { properties: { with: unknown } }>;
  };
  let described = 0;
  for (const kind of allKinds) {
    const def = schema.definitions[
      `kind_${kind.name.replace(/[^A-Za-z0-9_]/g, "_")}`
    ]!;
    const props = (def.properties.with as {
      properties?: Record<string, { description?: string }>;
    }).properties ?? {};
    assert.ok(Object.keys(props).length > 0, kind.name);
    for (const [name, p] of Object.entries(props)) {
      assert.ok(
        typeof p.description === "string" && p.description.length > 10,
        `${kind.name}.with.${name} has no description`,
      );
      described++;
    }
  }
  assert.ok(described >= 60, `${described} parameters described`);
});

Deno.test("ajv flags an unknown kind, a misspelled parameter and a wrong type, each at its place", () => {
  const validate = compileWithAjv();
  for (const b of brokenCopies()) {
    assert.equal(validate(parse(b.text)), false, `${b.name} passes`);
    const errors = validate.errors as {
      instancePath: string;
      message: string;
      params: Record<string, unknown>;
    }[];
    const at = errors.filter((e) => e.instancePath === b.ajvPath);
    assert.ok(
      at.some((e) => b.ajv.test(e.message)),
      `${b.name}: ${JSON.stringify(errors, null, 1)}`,
    );
    // Only the node's own kind is checked: no error from another kind's schema.
    const elsewhere = errors.filter((e) =>
      !b.ajvPath.startsWith(e.instancePath) &&
      !e.instancePath.startsWith(b.ajvPath)
    );
    assert.deepEqual(elsewhere, [], b.name);
  }
  const [unknown] = brokenCopies();
  validate(parse(unknown!.text));
  const enumErrors = (validate.errors as {
    keyword: string;
    params: { allowedValues?: string[] };
  }[])
    .filter((e) => e.keyword === "enum");
  assert.equal(enumErrors.length, 1, "one enum of the kinds, not one per kind");
  assert.deepEqual(
    enumErrors[0]!.params.allowedValues,
    allKinds.map((k) => k.name),
    "a stage node's kinds (stages do not nest)",
  );
});

Deno.test("yaml-language-server (LSP over stdio) accepts the shipped experiments and flags the broken copies", async () => {
  await using ls = await startYamlLanguageServer();
  // Documents are opened at URIs beside the real ones, so each file's
  // `# yaml-language-server: $schema=../schemas/...` comment resolves to the
  // committed schema, as in an editor.
  const uri = (name: string) => new URL(`_lsp_${name}`, EXPERIMENTS).href;
  for (const { name, text } of shippedExperiments()) {
    assert.match(
      text,
      /^# yaml-language-server: \$schema=\.\.\/schemas\/experiment\.schema\.json$/m,
    );
    const diags = await ls.diagnose(uri(name), text);
    assert.deepEqual(
      diags.map((d) => `${d.range.start.line + 1}: ${d.message}`),
      [],
      name,
    );
  }
  for (const b of brokenCopies()) {
    const diags = await ls.diagnose(uri(`${b.name}.yaml`), b.text);
    assert.equal(diags.length, 1, `${b.name}: ${JSON.stringify(diags)}`);
    const d = diags[0]!;
    assert.match(d.message, b.lsp, b.name);
    assert.equal(d.range.start.line + 1, b.line, `${b.name}: line`);
    assert.equal(d.severity, 1, "an error");
    assert.match(d.source ?? "", /envsmith experiment/, "names the schema");
  }
  // Hover on a parameter shows its description.
  const quick = shippedExperiments().find((e) => e.name === "quick.yaml")!;
  const lines = quick.text.split("\n");
  const line = lines.findIndex((l) => l.includes("updates: 20"));
  const character = lines[line]!.indexOf("updates") + 2;
  const hover = await ls.hover(uri("hover.yaml"), quick.text, line, character);
  assert.match(hover, /budget in PPO\/GRPO updates/, hover);
});
