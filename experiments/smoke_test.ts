/**
 * The whole loop end to end on the shipped smoke experiment, through the CLI
 * as a user runs it: cold run, tables from the cache, a fully cached rerun,
 * and the report.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../_test_util.ts";

const FILE = new URL("./smoke.yaml", import.meta.url).pathname;

const cli = runCli;

Deno.test("smoke experiment: the whole loop runs, tables come from the cache, a rerun computes nothing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-smoke-" });
  try {
    const cache = join(dir, "cache");
    const cold = await cli(["--cache", cache, "run", FILE, "--jobs", "2"]);
    assert.equal(cold.code, 0, cold.err);
    assert.match(cold.err + cold.out, /smoke: 20 computed, 0 cached, 0 failed/);

    const tables = await cli([
      "--cache",
      cache,
      "tables",
      FILE,
      "--out",
      join(dir, "tables"),
    ]);
    assert.equal(tables.code, 0, tables.err);
    const json = JSON.parse(
      await Deno.readTextFile(join(dir, "tables", "smoke.json")),
    );
    const cells = JSON.stringify(json);
    for (const row of ["none", "full"]) assert.ok(cells.includes(row));
    for (const col of ["base", "crowded", "mean"]) {
      assert.ok(cells.includes(col));
    }
    assert.match(tables.out, /\| context \| base \| crowded \| mean \|/);
    // Every cell is a number in [0, 1] (a smoke-sized policy may score 0).
    const numbers = [...tables.out.matchAll(/\| (\d\.\d{3}) /g)].map((m) =>
      Number(m[1])
    );
    assert.equal(numbers.length, 6);
    for (const x of numbers) assert.ok(x >= 0 && x <= 1);

    // A results bundle of the JSON entries: a fresh cache prints the same
    // tables after `tables --import` (what a fresh clone does with the
    // shipped bundle).
    const bundle = join(dir, "results.esb");
    const exported = await cli([
      "--cache",
      cache,
      "cache",
      "export",
      bundle,
      "--only",
      "json",
      "--experiment",
      FILE,
    ]);
    assert.equal(exported.code, 0, exported.err);
    const fresh = await cli([
      "--cache",
      join(dir, "fresh"),
      "tables",
      "--import",
      bundle,
      FILE,
      "--out",
      join(dir, "tables2"),
    ]);
    assert.equal(fresh.code, 0, fresh.err);
    // The same numbers; the table says once that they are imported (not
    // computed in this cache), not in every cell.
    assert.ok(!/\d \(imported\)/.test(fresh.out));
    assert.equal(fresh.out.match(/\(imported\)/g)?.length, 1);
    assert.match(
      fresh.out,
      /\(imported\): every value of this table comes from a bundle \(cache import\)/,
    );
    assert.equal(
      fresh.out.replace(/\n\(imported\): [\s\S]*?\n(?=\n|$)/g, ""),
      tables.out,
    );

    const warm = await cli(["--cache", cache, "run", FILE]);
    assert.equal(warm.code, 0, warm.err);
    assert.match(warm.err + warm.out, /smoke: 0 computed, 20 cached, 0 failed/);

    const html = join(dir, "report.html");
    const report = await cli(["--cache", cache, "report", FILE, "--out", html]);
    assert.equal(report.code, 0, report.err);
    const page = await Deno.readTextFile(html);
    assert.match(page, /Smoke run \(success rate per suite\)/);
    assert.match(page, /<svg/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
