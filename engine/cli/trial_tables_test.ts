import assert from "node:assert/strict";
import { join } from "node:path";
import { runCommand, statusCommand } from "./commands.ts";
import { tablesCommand } from "./tables_command.ts";
import { tmpProject } from "../_test_util.ts";
import { overridesDigest } from "../tables/trial.ts";
import { commandContext } from "../_test_util.ts";

const YAML = `experiment: trial
seed: 1
matrix:
  k: [1, 2]
nodes:
  c: { kind: test.add, with: { a: $matrix.k, b: 10 } }
tables:
  - { name: sums, title: Sums by k, node: c, rows: k, columns: value.sum }
`;

const SET = ["nodes.c.with.b=500"];

const ctxFor = (cache: string, overrides?: string[]) =>
  commandContext(cache, { overrides });

function read(dir: string, name: string): string {
  return Deno.readTextFileSync(join(dir, name));
}

/**
 * A new project (removed at the end of the caller's scope) after a run of
 * YAML and its tables into `out`; `tablesCtx` is the tables call's context.
 */
async function ranWithTables() {
  const p = await tmpProject(YAML);
  const out = join(p.dir, "tables");
  assert.equal((await runCommand(ctxFor(p.cache), p.file)).code, 0);
  const tablesCtx = ctxFor(p.cache);
  assert.equal(await tablesCommand(tablesCtx, [p.file], { out }), 0);
  return Object.assign(p, { out, tablesCtx });
}

Deno.test("a --set run's tables are a trial: named by the overrides' digest, titled and marked with them; the committed file's tables are unchanged", async () => {
  await using p = await ranWithTables();
  const { out, tablesCtx: before } = p;
  const csv = read(out, "sums.csv"), json = read(out, "sums.json");
  assert.match(csv, /^1,sum,11,/m);

  // The trial: run and tables with --set.
  assert.equal((await runCommand(ctxFor(p.cache, SET), p.file)).code, 0);
  const trial = ctxFor(p.cache, SET);
  assert.equal(await tablesCommand(trial, [p.file], { out }), 0);
  const name = `sums.trial-${overridesDigest(SET)}`;
  const text = trial.lines.join("\n");
  assert.match(
    text,
    /^### Sums by k \[trial: --set nodes\.c\.with\.b=500\]$/m,
  );
  assert.match(text, new RegExp(`written as ${name.replace(".", "\\.")}`));
  const tcsv = read(out, `${name}.csv`);
  assert.match(tcsv, /^row,column,mean,std,n,.*,overrides$/m);
  assert.match(tcsv, /^1,sum,501,0,1,.*,--set nodes\.c\.with\.b=500$/m);
  const tjson = JSON.parse(read(out, `${name}.json`));
  assert.deepEqual(tjson.trial, {
    overrides: SET,
    digest: overridesDigest(SET),
    of: "sums",
  });
  assert.equal(tjson.cells[0].mean, 501);

  // The committed file's table files are byte for byte what they were,
  // and its tables show no trial number.
  assert.equal(read(out, "sums.csv"), csv);
  assert.equal(read(out, "sums.json"), json);
  const after = ctxFor(p.cache);
  assert.equal(await tablesCommand(after, [p.file], { out }), 0);
  assert.deepEqual(after.lines, before.lines);
  assert.equal(read(out, "sums.csv"), csv);
  assert.doesNotMatch(after.lines.join("\n"), /501|trial/);

  // Another set of overrides is another name; the order of overrides counts.
  assert.notEqual(overridesDigest(SET), overridesDigest(["nodes.c.with.b=7"]));
  assert.notEqual(
    overridesDigest(["a=1", "b=2"]),
    overridesDigest(["b=2", "a=1"]),
  );
});

Deno.test("status tells the last run of the file as committed from a newer trial run", async () => {
  await using p = await tmpProject(YAML);
  const first = await runCommand(ctxFor(p.cache), p.file);
  const second = await runCommand(ctxFor(p.cache, SET), p.file);
  const committed = ctxFor(p.cache);
  await statusCommand(committed, p.file);
  const text = committed.lines.join("\n");
  assert.match(
    text,
    new RegExp(
      `^last run of the file as committed ${first.result.manifest.run}: ok`,
      "m",
    ),
  );
  assert.match(
    text,
    new RegExp(
      `^newer: trial run ${second.result.manifest.run} with --set nodes\\.c\\.with\\.b=500 \\(ok; not counted above`,
      "m",
    ),
  );
  const asTrial = ctxFor(p.cache, SET);
  await statusCommand(asTrial, p.file);
  assert.match(
    asTrial.lines.join("\n"),
    new RegExp(
      `^last trial run with --set nodes\\.c\\.with\\.b=500 ${second.result.manifest.run}: ok`,
      "m",
    ),
  );
  assert.doesNotMatch(asTrial.lines.join("\n"), /^newer:/m);
});

Deno.test("tables remembered between calls follow the cache: an entry gone since shows as missing, one computed again as computed", async () => {
  await using p = await ranWithTables();
  const { out, tablesCtx: first } = p;
  const again = ctxFor(p.cache);
  assert.equal(await tablesCommand(again, [p.file], { out }), 0);
  assert.deepEqual(again.lines, first.lines);
  // Remove the entry of c[k=2]: the next tables call must say it is missing.
  const keys = [...p.store.keys()];
  const gone = keys.find((k) => p.store.readEntry(k)?.id === "c[k=2]")!;
  Deno.removeSync(p.store.entryPath(gone));
  const after = ctxFor(p.cache);
  assert.equal(await tablesCommand(after, [p.file], { out }), 1);
  assert.match(
    after.lines.join("\n"),
    /Incomplete: 1 node is not in the cache:\*\* c\[k=2\]/,
  );
  // Computed again, it is back.
  assert.equal((await runCommand(ctxFor(p.cache), p.file)).code, 0);
  const back = ctxFor(p.cache);
  assert.equal(await tablesCommand(back, [p.file], { out }), 0);
  assert.deepEqual(back.lines, first.lines.map((l) => l));
});
