import assert from "node:assert/strict";
import { join } from "node:path";
import * as v from "valibot";
import { planCommand, runCommand } from "../cli/commands.ts";
import { tablesCommand } from "../cli/tables_command.ts";
import { commandContext, tmpProject } from "../_test_util.ts";
import { kinds } from "../testdata/kinds.ts";
import type { NodeKind } from "../types.ts";
import { NotReadyError } from "./readiness.ts";

/** What the machine of the test has, and what its kind was asked. */
const machine = { tool: false, asked: [] as unknown[] };

const needsTool: NodeKind<{ a: number }> = {
  name: "test.needs_tool",
  description: "adds one, on a machine with the tool (test kind)",
  params: v.strictObject({ a: v.number() }),
  module: import.meta.url,
  ready(params) {
    machine.asked.push(params);
    return machine.tool
      ? null
      : "the tool is missing here; install it with `get-tool`";
  },
  run(p) {
    return Promise.resolve({ value: { sum: p.a + 1 } });
  },
};

const YAML = `experiment: ready
seed: 1
matrix:
  k: [1, 2, 3]
nodes:
  a: { kind: test.needs_tool, with: { a: $matrix.k } }
  b: { kind: test.needs_tool, with: { a: 7 } }
tables:
  - { name: ready, node: a, rows: k, columns: value.sum }
`;

const ctxFor = (cache: string) =>
  commandContext(cache, { kinds: [...kinds, needsTool] });

Deno.test("readiness: plan and run refuse in one line before anything runs; tables never ask; cached nodes are not asked", async () => {
  await using p = await tmpProject(YAML);
  const ctx = ctxFor(p.cache);
  machine.tool = false;
  machine.asked = [];
  for (const cmd of [planCommand, runCommand]) {
    await assert.rejects(
      () => cmd(ctx, p.file),
      (e) =>
        e instanceof NotReadyError && e.node === "a[k=1]" &&
        e.message ===
          "a[k=1] (and 3 more nodes): the tool is missing here; install it with `get-tool`",
    );
  }
  // each distinct literal parameters asked once per command
  assert.equal(machine.asked.length, 8);
  assert.equal([...p.store.keys()].length, 0, "nothing ran");

  // tables read the cache without asking
  machine.asked = [];
  ctx.lines.length = 0;
  assert.equal(
    await tablesCommand(ctx, [p.file], { out: join(p.dir, "t") }),
    1,
  );
  assert.match(ctx.lines.join("\n"), /\| 1 \| missing \|/);
  assert.deepEqual(machine.asked, []);

  // where the tool is, the nodes run; without it, the cached result reads
  // and a plan of cached nodes asks nothing
  machine.tool = true;
  assert.equal((await runCommand(ctx, p.file)).code, 0);
  machine.tool = false;
  machine.asked = [];
  ctx.lines.length = 0;
  assert.equal(
    await tablesCommand(ctx, [p.file], { out: join(p.dir, "t") }),
    0,
  );
  assert.match(ctx.lines.join("\n"), /\| 3 \| 4\.000 \|/);
  assert.equal(await planCommand(ctx, p.file), 0);
  assert.deepEqual(machine.asked, []);
});
