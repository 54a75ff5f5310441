/**
 * Environment families through the command line: a family from a plugin
 * module outside the repository (`plugins:`), listed by `families`, drawn
 * by `generate` and redesigned by a generic engineer through its declared
 * space; `rules` (MAPF-FrozenLake's) refused on it at `plan` in one line;
 * `engineers` naming each engineer's families.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "./_test_util.ts";

const cli = runCli;

const FAMILY = new URL("./families/_test_family.ts", import.meta.url).href;

const EXPERIMENT = (engineer: string) =>
  `experiment: line
seed: 1
plugins: [line_plugin.ts]
nodes:
  envs: { kind: generate, with: { family: line, config: { length: 4, gaps: 1 }, count: 3 } }
  next:
    kind: redesign
    with: { family: line, engineer: ${engineer}, config: { length: 4, gaps: 1 }, findings: { success_rate: 0.99 } }
  mapf: { kind: redesign, with: { engineer: band, config: { preset: easy }, findings: null } }
`;

Deno.test("families: a plugin's family is listed, generated and redesigned by band; rules is refused on it at plan", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-family-" });
  try {
    await Deno.writeTextFile(
      join(dir, "line_plugin.ts"),
      `import { lineFamily } from ${
        JSON.stringify(FAMILY)
      };\nexport const families = [lineFamily()];\n`,
    );
    const file = join(dir, "exp.yaml");
    const cache = join(dir, "cache");
    await Deno.writeTextFile(file, EXPERIMENT("band"));
    const list = await cli([
      "--plugins",
      join(dir, "line_plugin.ts"),
      "families",
    ]);
    assert.equal(list.code, 0, list.err);
    assert.match(list.out, /^mapf-frozenlake: /m);
    assert.match(
      list.out,
      /^line: walk to the end of a line \(.*line_plugin\.ts\)$/m,
    );
    assert.match(
      list.out,
      /^ {2}length {2}1\.\.9 integer step 1, harder up: cells$/m,
    );

    const run = await cli(["--cache", cache, "run", file]);
    assert.equal(run.code, 0, run.err + run.out);
    const show = async (id: string, path: string) => {
      const s = await cli(["--cache", cache, "show", file, id, path]);
      assert.equal(s.code, 0, s.err);
      return JSON.parse(s.out);
    };
    assert.equal(await show("envs", "value.count"), 3);
    assert.equal(await show("envs", "value.family"), "line");
    // success 0.99 is above the band: the least developed dimension
    // (length, at 2/7 of easy..hard, against gaps at 1/3) one step harder
    assert.deepEqual(await show("next", "value"), { length: 5, gaps: 1 });
    assert.equal(await show("next", "report.family"), "line");

    await Deno.writeTextFile(file, EXPERIMENT("rules"));
    const plan = await cli(["--cache", cache, "plan", file]);
    assert.notEqual(plan.code, 0);
    const line = (plan.err + plan.out).split("\n").filter((l) =>
      l.includes("rules engineer")
    );
    assert.equal(line.length, 1, plan.err + plan.out);
    assert.match(
      line[0]!,
      /next: the rules engineer supports family mapf-frozenlake only, not line: choose an engineer that supports line/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("engineers: each engineer's families are listed", async () => {
  const r = await cli(["engineers"]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^rules: .*\[families: mapf-frozenlake\]$/m);
  for (const e of ["fixed", "random", "band", "dr-stage", "exec"]) {
    assert.match(
      r.out,
      new RegExp(
        `^${e}: .*\\[families: any \\(registered: mapf-frozenlake, maze\\)\\]$`,
        "m",
      ),
    );
  }
});
