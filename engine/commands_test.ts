import assert from "node:assert/strict";
import { type CommandContext, showCommand } from "./commands.ts";
import { UserError } from "./errors.ts";
import { compile, runAll, tmpProject } from "./_test_util.ts";
import { kinds } from "./testdata/kinds.ts";

const YAML = `experiment: show
seed: 1
matrix:
  k: [1, 2]
nodes:
  a: { kind: test.add, with: { a: 1, b: 2 } }
  b: { kind: test.add, with: { a: $a.sum, b: $matrix.k } }
`;

function ctxFor(cache: string): CommandContext & { lines: string[] } {
  const lines: string[] = [];
  return {
    kinds,
    cache,
    lines,
    output: { out: (l) => lines.push(l), err: (l) => lines.push(`ERR ${l}`) },
  };
}

Deno.test("show prints a cached node's value or a field of it, and says how to compute a missing one", async () => {
  await using p = await tmpProject(YAML);
  const ctx = ctxFor(p.cache);
  assert.equal(await showCommand(ctx, p.file, "b[k=2]"), 1);
  assert.match(
    ctx.lines.pop()!,
    /^ERR b\[k=2\] is not in the cache .*deno task run .* --only 'b\[k=2\]'/,
  );

  const exp = compile(p.file, YAML);
  await runAll(exp, p.store);
  assert.equal(
    await showCommand(ctx, p.file, "b[k=2]", { path: "value.sum" }),
    0,
  );
  assert.equal(ctx.lines.pop(), "5");
  assert.equal(await showCommand(ctx, p.file, "a"), 0);
  assert.equal(JSON.parse(ctx.lines.pop()!).sum, 3);

  await assert.rejects(
    () => showCommand(ctx, p.file, "b[k=3]"),
    (e) => e instanceof UserError && /did you mean "b\[k=1\]"/.test(e.message),
  );
  await assert.rejects(
    () => showCommand(ctx, p.file, "a", { path: "value.nope" }),
    (e) =>
      e instanceof UserError &&
      /no field value\.nope; fields here: .*sum/.test(e.message),
  );
  await assert.rejects(
    () => showCommand(ctx, p.file, "a", { path: "sum" }),
    (e) =>
      e instanceof UserError && /starts at "value" or "report"/.test(e.message),
  );
});
