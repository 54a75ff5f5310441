import assert from "node:assert/strict";
import * as v from "valibot";
import { planCommand, showCommand } from "./commands.ts";
import { tablesCommand } from "./tables_command.ts";
import { UserError } from "../errors.ts";
import type { NodeKind } from "../types.ts";
import { compile, kExperiment, runAll, tmpProject } from "../_test_util.ts";
import { kinds } from "../testdata/kinds.ts";
import { commandContext } from "../_test_util.ts";

const YAML = kExperiment("show", 1);

const ctxFor = (cache: string) => commandContext(cache, { reporter: false });

Deno.test("show prints a cached node's value or a field of it, and says how to compute a missing one", async () => {
  await using p = await tmpProject(YAML);
  const ctx = ctxFor(p.cache);
  assert.equal(await showCommand(ctx, p.file, "b[k=2]"), 1);
  assert.match(
    ctx.lines.pop()!,
    /^ERR b\[k=2\] is not in the cache .*\.\/envsmith run .* --only 'b\[k=2\]'/,
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

Deno.test("tables: a few missing nodes get a command naming them; many get the whole file (a run computes only what is missing)", async () => {
  const few =
    `experiment: few\nseed: 1\nmatrix:\n  k: [1, 2, 3]\nnodes:\n  a: { kind: test.add, with: { a: $matrix.k } }\ntables:\n  - { name: few, node: a, rows: k, columns: value.sum }\n`;
  await using p = await tmpProject(few);
  const ctx = ctxFor(p.cache);
  assert.equal(
    await tablesCommand(ctx, [p.file], { out: `${p.dir}/t` }),
    1,
  );
  assert.match(
    ctx.lines.join("\n"),
    /Compute them with: `\.\/envsmith run \S+ --only a`/,
  );

  // 14 variants, one of them computed (through an experiment of its own:
  // keys are content, so a[k=1] is the same node in both files).
  const many = (ks: string) =>
    `experiment: many\nseed: 1\nmatrix:\n  k: [${ks}]\nnodes:\n  a: { kind: test.add, with: { a: $matrix.k } }\ntables:\n  - { name: many, node: a, rows: k, columns: value.sum }\n`;
  await using q = await tmpProject(many("1"));
  await runAll(compile(q.file, many("1")), q.store);
  await Deno.writeTextFile(
    q.file,
    many(Array.from({ length: 14 }, (_, i) => i + 1).join(", ")),
  );
  const ctx2 = ctxFor(q.cache);
  assert.equal(
    await tablesCommand(ctx2, [q.file], { out: `${q.dir}/t` }),
    1,
  );
  const out = ctx2.lines.join("\n");
  assert.match(out, /\| 1 \| 1\.000 \|/);
  assert.match(out, /Incomplete: 13 nodes are not in the cache/);
  assert.match(out, /Compute them with: `\.\/envsmith run \S+exp\.yaml`/);
  assert.doesNotMatch(out, /--only/);
});

Deno.test("show: a partial id names the full ids it matches; a reference typo gets a did-you-mean", async () => {
  const yaml = `experiment: partial
seed: 1
matrix:
  k: [1, 2]
  seed: [1, 2]
nodes:
  bench: { kind: test.add, with: { a: 1 } }
  b: { kind: test.add, with: { a: $matrix.k, b: $seed, more: [$bench.sum] } }
`;
  await using p = await tmpProject(yaml);
  const ctx = ctxFor(p.cache);
  await assert.rejects(
    () => showCommand(ctx, p.file, "b[k=2]"),
    (e) =>
      e instanceof UserError &&
      /No node "b\[k=2\]" in .*; it names 2 nodes, give one in full: b\[k=2,seed=1\], b\[k=2,seed=2\] /
        .test(e.message),
  );
  await assert.rejects(
    () => showCommand(ctx, p.file, "b[seed=1, k=1]"),
    (e) =>
      e instanceof UserError &&
      /give one in full: b\[k=1,seed=1\] /.test(e.message),
  );
  // `$benchmark` extends the name of the node `bench`.
  assert.throws(
    () => compile(p.file, yaml.replace("$bench.sum", "$benchmark.sum")),
    /Cannot resolve "\$benchmark\.sum": no node named "benchmark"; did you mean "bench"\?/,
  );
});

Deno.test("tables without files: an experiment that cannot be keyed here is skipped with its reason; named, it is refused", async () => {
  const ok =
    `experiment: ok\nseed: 1\nmatrix:\n  k: [1]\nnodes:\n  a: { kind: test.add, with: { a: $matrix.k } }\ntables:\n  - { name: ok, node: a, rows: k, columns: value.sum }\n`;
  await using p = await tmpProject(ok);
  await runAll(compile(p.file, ok), p.store);
  const needs =
    `experiment: needs\nseed: 1\nmatrix:\n  k: [1]\nnodes:\n  a: { kind: test.needs_env, with: { k: $matrix.k } }\ntables:\n  - { name: needs, node: a, rows: k, columns: value }\n`;
  await Deno.writeTextFile(`${p.dir}/needs.yaml`, needs);
  const needsEnv: NodeKind = {
    name: "test.needs_env",
    description: "a kind whose key needs a tool this machine lacks",
    params: v.strictObject({ k: v.number() }),
    module: import.meta.url,
    fingerprint(): null {
      throw new UserError("the tool this kind runs is missing; install it");
    },
    run: () => Promise.resolve({ value: 1 }),
  };
  const kindsHere = [...kinds, needsEnv];
  const ctx = { ...ctxFor(p.cache), kinds: kindsHere };
  assert.equal(
    await tablesCommand(ctx, [], { out: `${p.dir}/t`, experimentsDir: p.dir }),
    0,
  );
  const text = ctx.lines.join("\n");
  assert.match(
    text,
    /ERR skipped \S+needs\.yaml: a\[k=1\]: the tool this kind runs is missing; install it/,
  );
  assert.match(text, /\| 1\.000 \|/);
  await assert.rejects(
    () => tablesCommand(ctx, [`${p.dir}/needs.yaml`], { out: `${p.dir}/t` }),
    /a\[k=1\]: the tool this kind runs is missing; install it/,
  );
});

Deno.test("plan's headline says how many nodes a run computes or reuses, and why the skipped ones are left out", async () => {
  const yaml = `experiment: skips
seed: 1
matrix:
  m:
    - { name: plain, x: 1 }
    - { name: remote, x: 2, requires_env: [SOME_ENDPOINT] }
  seed: [1, 2, 3]
nodes:
  a: { kind: test.add, with: { a: $seed, b: 1 } }
  b: { kind: test.add, with: { a: $a.sum, b: 2, more: [$matrix.m.x] } }
`;
  await using p = await tmpProject(yaml);
  const ctx = { ...ctxFor(p.cache), env: () => undefined };
  assert.equal(await planCommand(ctx, p.file), 0);
  assert.equal(
    ctx.lines[0],
    `plan skips (${p.file}): 9 nodes: 0 cached, 3 to run, 3 blocked, 3 skipped (6 to compute or reuse; the 3 skipped are not run on this machine: SOME_ENDPOINT not set)`,
  );
});
