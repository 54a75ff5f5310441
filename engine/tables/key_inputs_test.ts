import assert from "node:assert/strict";
import { join } from "node:path";
import {
  keyInputsHold,
  recordKeyInputs,
  sourceTreeDigest,
} from "./key_inputs.ts";

/** A program root inside a parent folder: `parent/prog/{mod.ts,prompts/a.md,README.md,x_test.ts,exp.yaml}`. */
function tmpProgram(): { parent: string; root: string; file: string } {
  const parent = Deno.makeTempDirSync({ prefix: "envsmith-key-inputs-" });
  const root = join(parent, "prog");
  Deno.mkdirSync(join(root, "prompts"), { recursive: true });
  Deno.writeTextFileSync(join(root, "mod.ts"), "export const a = 1;\n");
  Deno.writeTextFileSync(join(root, "prompts", "a.md"), "a prompt\n");
  Deno.writeTextFileSync(join(root, "README.md"), "readme\n");
  Deno.writeTextFileSync(join(root, "x_test.ts"), "// test\n");
  const file = join(root, "exp.yaml");
  Deno.writeTextFileSync(file, "experiment: x\n");
  return { parent, root, file };
}

Deno.test("sourceTreeDigest: code and prompts count, tests, YAML and the root's Markdown do not", () => {
  const a = tmpProgram(), b = tmpProgram();
  try {
    Deno.writeTextFileSync(join(b.root, "x_test.ts"), "// other test\n");
    Deno.writeTextFileSync(join(b.root, "README.md"), "other readme\n");
    Deno.writeTextFileSync(join(b.root, "other.yaml"), "experiment: y\n");
    const same = sourceTreeDigest(a.root);
    assert.match(same, /^[0-9a-f]{64}$/);
    assert.equal(sourceTreeDigest(b.root), same, "tests, YAML, README differ");
    const c = tmpProgram();
    Deno.writeTextFileSync(join(c.root, "prompts", "a.md"), "another prompt\n");
    assert.notEqual(sourceTreeDigest(c.root), same, "a prompt is source");
    Deno.removeSync(c.parent, { recursive: true });
  } finally {
    Deno.removeSync(a.parent, { recursive: true });
    Deno.removeSync(b.parent, { recursive: true });
  }
});

Deno.test("recordKeyInputs: the variables and outside files a compile reads are recorded; keyInputsHold follows them", async () => {
  const { parent, root, file } = tmpProgram();
  Deno.env.delete("ENVSMITH_TEST_KI");
  try {
    const { value, inputs } = await recordKeyInputs(root, file, "o", () => {
      Deno.readTextFileSync(file);
      Deno.readTextFileSync(join(root, "mod.ts"));
      try {
        Deno.statSync(join(parent, "deno.json")); // an ancestor's config
      } catch { /* absent */ }
      return Promise.resolve(Deno.env.get("ENVSMITH_TEST_KI") ?? "unset");
    });
    assert.equal(value, "unset");
    assert.ok(inputs !== null);
    assert.deepEqual(inputs.env, { ENVSMITH_TEST_KI: null });
    assert.deepEqual(inputs.files, { "../deno.json": null });
    assert.equal(keyInputsHold(inputs, root, file, "o"), true);
    assert.equal(keyInputsHold(inputs, root, file, "other options"), false);

    Deno.env.set("ENVSMITH_TEST_KI", "x");
    assert.equal(keyInputsHold(inputs, root, file, "o"), false, "variable set");
    Deno.env.delete("ENVSMITH_TEST_KI");

    Deno.writeTextFileSync(join(parent, "deno.json"), "{}");
    assert.equal(
      keyInputsHold(inputs, root, file, "o"),
      false,
      "file appeared",
    );
    Deno.removeSync(join(parent, "deno.json"));

    Deno.writeTextFileSync(file, "experiment: y\n");
    assert.equal(keyInputsHold(inputs, root, file, "o"), false, "text changed");
  } finally {
    Deno.env.delete("ENVSMITH_TEST_KI");
    Deno.removeSync(parent, { recursive: true });
  }
});

Deno.test("recordKeyInputs: a directory read outside the source, or the whole environment, leaves nothing recorded; Deno's functions are restored", async () => {
  const { parent, root, file } = tmpProgram();
  const readDir = Deno.readDirSync, get = Deno.env.get;
  try {
    const dir = await recordKeyInputs(root, file, "o", () => {
      [...Deno.readDirSync(parent)];
      return Promise.resolve(0);
    });
    assert.equal(dir.inputs, null);
    const all = await recordKeyInputs(root, file, "o", () => {
      Deno.env.toObject();
      return Promise.resolve(0);
    });
    assert.equal(all.inputs, null);
    await assert.rejects(
      recordKeyInputs(root, file, "o", () => Promise.reject(new Error("bad"))),
      /bad/,
    );
    assert.equal(Deno.readDirSync, readDir);
    assert.equal(Deno.env.get, get);
  } finally {
    Deno.removeSync(parent, { recursive: true });
  }
});
