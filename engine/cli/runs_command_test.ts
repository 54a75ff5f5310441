import assert from "node:assert/strict";
import { runCommand } from "./commands.ts";
import { runsCommand, runsDiffCommand } from "./runs_command.ts";
import { UserError } from "../errors.ts";
import { tmpProject } from "../_test_util.ts";
import { commandContext } from "../_test_util.ts";

const YAML = `experiment: hist
seed: 1
matrix:
  k: [1, 2]
nodes:
  a: { kind: test.add, with: { a: 1, b: 2 } }
  s:
    kind: stages
    count: 2
    each:
      b: { kind: test.add, with: { a: $matrix.k, b: 10, more: [$stage] } }
  c: { kind: test.add, with: { a: 0, more: [$s.b.sum, $a.sum] } }
tables:
  - { name: sums, node: c, rows: k, columns: value.sum }
`;

const ctxFor = (cache: string, overrides?: string[]) =>
  commandContext(cache, { overrides });

Deno.test("runs lists every run with what changed; runs diff shows the changed parameter and table cells", async () => {
  await using p = await tmpProject(YAML);
  const first = await runCommand(ctxFor(p.cache), p.file);
  assert.equal(first.code, 0);
  const second = await runCommand(
    ctxFor(p.cache, ["s.each.b.with.b=20"]),
    p.file,
  );
  assert.equal(second.code, 0);
  // 2 stage nodes per k changed, and c per k; a stays cached.
  assert.equal(second.result.manifest.counts.done, 6);
  assert.equal(second.result.manifest.counts.cached, 1);

  const ctx = ctxFor(p.cache);
  assert.equal(await runsCommand(ctx, p.file), 0);
  const text = ctx.lines.join("\n");
  assert.match(
    text,
    /^runs of hist \(2, oldest first; 1 trial with --set, marked `trial`, the rest of the file as committed\):$/m,
  );
  assert.match(text, /ok: 7 computed, 0 cached\n {6}first run in this cache/);
  assert.match(
    text,
    /ok: 6 computed, 1 cached {2}trial\n {6}trial with --set s\.each\.b\.with\.b=20 \(its tables: NAME\.trial-[0-9a-f]{8}\)\n {6}--set added: s\.each\.b\.with\.b=20\n {6}param s\.\*\.b with\.b: 10 -> 20 \(4 nodes\)$/m,
  );
  // The name works as well as the file.
  const byName = ctxFor(p.cache);
  await runsCommand(byName, "hist");
  assert.deepEqual(byName.lines, ctx.lines);

  const a = first.result.manifest.run, b = second.result.manifest.run;
  const diff = ctxFor(p.cache);
  assert.equal(await runsDiffCommand(diff, a.slice(-4), b), 0);
  assert.deepEqual(diff.lines, [
    `runs diff hist: ${a} -> ${b}`,
    "  --set added: s.each.b.with.b=20",
    "  param s.*.b with.b: 10 -> 20 (4 nodes)",
    "table cells that changed (2):",
    // c = s.1.b (k + b + stage 1) + a (3): 1 + 10 + 1 + 3 -> 1 + 20 + 1 + 3
    "  sums: 1 / sum: 15.000 -> 25.000",
    "  sums: 2 / sum: 16.000 -> 26.000",
  ]);
  // Nothing changed between a run and itself.
  const same = ctxFor(p.cache);
  await runsDiffCommand(same, b, b);
  assert.deepEqual(same.lines.slice(1), [
    "  nothing changed",
    "no table cell changed",
  ]);
});

Deno.test("runs: an experiment without runs and an unknown run are one-line errors with did-you-mean", async () => {
  await using p = await tmpProject(YAML);
  await runCommand(ctxFor(p.cache), p.file);
  await assert.rejects(
    () => runsCommand(ctxFor(p.cache), "hsit"),
    (e) =>
      e instanceof UserError &&
      /^No runs of "hsit" in .*; did you mean "hist"\? \(experiments with runs: hist\)/
        .test(e.message),
  );
  await assert.rejects(
    () => runsDiffCommand(ctxFor(p.cache), "zzzzzz", "2026"),
    (e) => e instanceof UserError && /^No run "zzzzzz"/.test(e.message),
  );
});
