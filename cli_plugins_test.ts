/**
 * Plugin modules through the command line, as a user writes them: a
 * TypeScript module outside the repository that registers an engineer, a
 * node kind and an executor, named by `--plugins` or by `plugins:` in the
 * experiment file; and every way a plugin module can be wrong.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { engineers as builtinEngineers } from "./nodes/engineers.ts";
import { runCli } from "./_test_util.ts";

const cli = runCli;

/** A plugin a user writes: it imports only valibot and the engine's door. */
const PLUGIN = `import * as v from "valibot";
import { builtinExecutors } from "@envsmith/engine/executor";

export const engineers = [{
  name: "agentsplus",
  description: "adds agents to a plain config",
  params: v.strictObject({
    by: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.description("agents added per stage")), 1),
  }),
  module: import.meta.url,
  create: (p) => ({
    name: "agentsplus",
    propose: ({ config }) => Promise.resolve({
      config: { ...config, agents: config.agents + p.by },
      rationale: "agentsplus: +" + p.by,
      events: [],
      reads: [],
    }),
  }),
}];

export const kinds = [{
  name: "double",
  description: "doubles a number",
  params: v.strictObject({ x: v.number() }),
  module: import.meta.url,
  run: (p) => Promise.resolve({ value: p.x * 2 }),
}];

const local = builtinExecutors.find((e) => e.name === "local");
export const executors = [{
  name: "inline",
  description: "the local executor under another name",
  spec: v.strictObject({ type: v.literal("inline") }),
  create: (_spec, run) => ({ ...local.create(undefined, run), name: "inline" }),
}];
`;

const EXPERIMENT = (plugins: string, engineer: string) =>
  `experiment: plug
seed: 1
${plugins}
nodes:
  c: { kind: redesign, with: { engineer: ${engineer}, config: { preset: easy } } }
  d: { kind: double, with: { x: 21 } }
`;

Deno.test("plugins: a TypeScript engineer, kind and executor from a file outside the repository appear in plan, engineers, the schema and did-you-mean, and run", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-plugin-" });
  try {
    const plugin = join(dir, "my_plugin.ts");
    await Deno.writeTextFile(plugin, PLUGIN);
    const cache = join(dir, "cache");
    /** The CLI with the plugin, on the test's cache. */
    const withPlugin = (...args: string[]) =>
      cli(["--cache", cache, "--plugins", plugin, ...args]);
    // --plugins on the command line
    const file = join(dir, "exp.yaml");
    await Deno.writeTextFile(
      file,
      EXPERIMENT("", "{ name: agentsplus, by: 2 }"),
    );
    const plan = await withPlugin("plan", file);
    assert.equal(plan.code, 0, plan.err);
    assert.match(
      plan.out,
      /plugin .*my_plugin\.ts: kinds: double; executors: inline; engineers: agentsplus/,
    );
    assert.match(plan.out, /2 nodes: 0 cached, 2 to run/);
    const run = await withPlugin("run", file, "--executor", "inline");
    assert.equal(run.code, 0, run.err);
    const show = async (id: string, path: string) => {
      const s = await withPlugin("show", file, id, path);
      assert.equal(s.code, 0, s.err);
      return JSON.parse(s.out);
    };
    assert.equal(await show("c", "value.agents"), 4); // easy has 2
    assert.equal(await show("c", "report.rationale"), "agentsplus: +2");
    assert.equal(await show("d", "value"), 42);

    // the engineers listing and the JSON Schema
    const list = await cli(["--plugins", plugin, "engineers"]);
    assert.match(
      list.out,
      /^agentsplus: adds agents to a plain config \[families: mapf-frozenlake\]\n {2}by: agents added per stage$/m,
    );
    assert.match(
      list.out,
      /^ {2}script \(required\): the configuration it proposes/m,
    );
    assert.match(list.out, /^exec: runs a program as the engineer/m);
    const schemaFile = join(dir, "schema.json");
    const schema = await cli([
      "--plugins",
      plugin,
      "schema",
      "--out",
      schemaFile,
    ]);
    assert.equal(schema.code, 0, schema.err);
    // the 23 built-in node kinds (10, generate.sizes and redesign.sizes
    // of the per-size form, the maze's and the program family's three
    // each, the learned engineer's five) and the plugin's one; the
    // built-in engineers and the plugin's one
    assert.match(
      schema.err,
      new RegExp(
        `24 node kinds, ${builtinEngineers.names().length + 1} engineers`,
      ),
    );
    const text = await Deno.readTextFile(schemaFile);
    assert.match(text, /"agentsplus: adds agents to a plain config"/);
    assert.match(text, /"agents added per stage"/);
    assert.match(text, /"const": "inline"/);
    assert.match(text, /"kind_double"/);
    // without the plugin, none of it
    const plain = join(dir, "plain.json");
    await cli(["schema", "--out", plain]);
    assert.doesNotMatch(await Deno.readTextFile(plain), /agentsplus/);

    // did-you-mean, for a name and for a parameter
    await Deno.writeTextFile(
      file,
      EXPERIMENT("", "{ name: agentplus, bye: 2 }"),
    );
    const typo = await withPlugin("plan", file);
    assert.equal(typo.code, 2);
    assert.match(
      typo.err,
      /engineer\.name: unknown engineer "agentplus"; did you mean "agentsplus"\?/,
    );
    await Deno.writeTextFile(
      file,
      EXPERIMENT("", "{ name: agentsplus, bye: 2 }"),
    );
    const param = await withPlugin("plan", file);
    assert.match(
      param.err,
      /unknown parameter "bye" of the agentsplus engineer; did you mean "by"\? \(it takes context, by\)/,
    );

    // plugins: in the experiment file (relative to it): the same nodes, cached
    await Deno.writeTextFile(
      file,
      EXPERIMENT("plugins: [./my_plugin.ts]", "{ name: agentsplus, by: 2 }"),
    );
    const yaml = await cli(["--cache", cache, "plan", file]);
    assert.equal(yaml.code, 0, yaml.err);
    assert.match(yaml.out, /plugin \.\/my_plugin\.ts: kinds: double/);
    assert.match(yaml.out, /2 nodes: 2 cached/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("plugins: a module that is missing, does not load, exports nothing, takes a name or lacks a parameter schema is one line at plan (exit 2), nothing run", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-plugin-bad-" });
  try {
    const files: Record<string, string> = {
      "broken.ts": "export const engineers = [;\n",
      "empty.ts": "export const answer = 42;\n",
      "taken.ts":
        `import * as v from "valibot";\nexport const engineers = [{ name: "rules", description: "", params: v.strictObject({}), module: import.meta.url, create: () => ({}) }];\n`,
      "kindtaken.ts":
        `import * as v from "valibot";\nexport const kinds = [{ name: "generate", description: "", params: v.strictObject({}), module: import.meta.url, run: () => Promise.resolve({ value: 1 }) }];\n`,
      "noschema.ts":
        `export const engineers = [{ name: "mine", description: "", module: import.meta.url, create: () => ({}) }];\n`,
    };
    for (const [n, t] of Object.entries(files)) {
      await Deno.writeTextFile(join(dir, n), t);
    }
    const file = join(dir, "exp.yaml");
    const cache = join(dir, "cache");
    const cases: [string, RegExp][] = [
      [
        "missing.ts",
        /: the module does not exist \(.*missing\.ts\); correct the path \(relative to the experiment file\)$/,
      ],
      [
        "broken.ts",
        /: the module does not load: .*; fix the module \(deno check \.\/broken\.ts shows its errors\)$/,
      ],
      [
        "empty.ts",
        /: the module exports nothing to register; export "kinds", "executors", "engineers", "families" \(arrays\)$/,
      ],
      [
        "taken.ts",
        /: engineer "rules" \(\.\/taken\.ts\): the name is already registered by envsmith \(built in\); rename one$/,
      ],
      [
        "kindtaken.ts",
        /: node kind "generate" is already registered \(by .*nodes\/generate\.ts\); rename one$/,
      ],
      [
        "noschema.ts",
        /: engineer "mine" \(\.\/noschema\.ts\) has no parameter schema: declare params: v\.strictObject\(\{ \.\.\. \}\)/,
      ],
    ];
    for (const [module, message] of cases) {
      await Deno.writeTextFile(
        file,
        EXPERIMENT(`plugins: [./${module}]`, "rules"),
      );
      const r = await cli(["--cache", cache, "plan", file]);
      assert.equal(r.code, 2, `${module}: ${r.err}`);
      assert.equal(r.err.split("\n").length, 1, r.err);
      assert.ok(
        r.err.startsWith(`${file}: plugins: ./${module}: `),
        r.err,
      );
      assert.match(r.err, message);
    }
    // the same on the command line, relative to the working directory
    const r = await cli([
      "--cache",
      cache,
      "--plugins",
      join(dir, "missing.ts"),
      "plan",
      file,
    ]);
    assert.equal(r.code, 2);
    assert.match(r.err, /^--plugins .*missing\.ts: the module does not exist/);
    // nothing was run or written
    let entries = 0;
    try {
      for await (const _ of Deno.readDir(join(cache, "entries"))) entries++;
    } catch { /* no cache at all */ }
    assert.equal(entries, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
