import assert from "node:assert/strict";
import { join } from "node:path";
import * as v from "valibot";
import type { Json } from "@envsmith/engine/kind";
import { compileExperiment } from "@envsmith/engine/compile";
import { buildTable, type Lookup } from "@envsmith/engine/tables";
import { generatePaperGrid } from "../mapf/paper_grid.ts";
import { parseInstanceLines } from "../mapf/instance.ts";
import { renderPrompt } from "../mapf/render_text.ts";
import { allKinds } from "../mod.ts";
import { kind as evaluate } from "../nodes/evaluate.ts";
import { importCommand } from "./import_command.ts";
import { kind as policyInit } from "../nodes/policy_init.ts";
import { runCommand } from "./_mapf_test_util.ts";
import { memoryContext } from "../nodes/_memory_context.ts";

const YAML = `experiment: shape
seed: 1
matrix:
  model: [16, 24]
  seed: [1, 2]
nodes:
  bench: { kind: generate, with: { suites: [paper-grid], split: test, per_cell: 2 } }
  start: { kind: policy.init, with: { hidden: [$matrix.model], seed: $seed } }
  score: { kind: evaluate, with: { policy: $start, envs: $bench } }
tables:
  - name: grid
    node: score
    rows: model
    columns:
      - { label: "* valid", path: value.cells.*.valid_rate }
      - { label: "* optimal", path: value.cells.*.optimal_makespan_rate }
    groups: { by: "^(\\\\d+ag)_", mean: "$1 mean" }
    over: seed
`;

Deno.test("an imported benchmark file and the generated grid give tables of the same shape: 21 cells x valid/optimal, a mean per agent count", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const c = memoryContext(dir);
    const grid = generatePaperGrid({ perCell: 2, split: "test" }).instances;
    // the benchmark's file form: bare prompts under their ids
    const file = join(dir, "benchmark.jsonl");
    await Deno.writeTextFile(
      file,
      grid.map((i) =>
        JSON.stringify({
          sample_id: i.id,
          text: renderPrompt(i, { instructions: false }),
        })
      ).join("\n"),
    );
    const r = await runCommand(importCommand, [
      "--format",
      "prompt",
      "--suite",
      "paper-grid",
      file,
    ]);
    const imported = parseInstanceLines(r.out);
    const values = new Map<string, Json>();
    for (const [model, seed] of [[16, 1], [16, 2], [24, 1], [24, 2]]) {
      const policy = (await policyInit.run(
        v.parse(policyInit.params, { hidden: [model], seed }),
        c,
      )).value;
      for (
        const [source, instances] of [["generated", grid], [
          "imported",
          imported,
        ]] as const
      ) {
        const out = await evaluate.run(
          v.parse(evaluate.params, {
            policy,
            envs: { instances: instances as unknown as Json },
            trajectories: false,
          }),
          c,
        );
        values.set(`${source}/${model}/${seed}`, out.value);
      }
    }
    const exp = compileExperiment("shape.yaml", YAML, { kinds: allKinds });
    const table = (source: string) => {
      const lookup: Lookup = (n) =>
        n.plain === "score"
          ? {
            status: "ok",
            value: values.get(
              `${source}/${n.variant.model}/${n.variant.seed}`,
            )!,
          }
          : { status: "missing" };
      return buildTable(exp, exp.tables[0]!, lookup, (ids) => ids.join(" "));
    };
    const gen = table("generated"), imp = table("imported");
    assert.deepEqual(imp.rows, gen.rows);
    assert.deepEqual(imp.columns, gen.columns);
    assert.equal(gen.columns.length, 21 * 2 + 3 * 2);
    assert.deepEqual(gen.columns.slice(0, 2), [
      "3ag_3x3 valid",
      "3ag_3x3 optimal",
    ]);
    assert.deepEqual(
      gen.columns.filter((l) => l.includes("mean")),
      [
        "3ag mean valid",
        "3ag mean optimal",
        "4ag mean valid",
        "4ag mean optimal",
        "5ag mean valid",
        "5ag mean optimal",
      ],
    );
    for (const t of [gen, imp]) {
      assert.deepEqual(t.missing, []);
      assert.ok(t.cells.every((x) => x.n === 2 && x.mean !== null));
    }
    // the same instances and policies: the same evaluation, field by field
    for (const k of ["16/1", "16/2", "24/1", "24/2"]) {
      assert.deepEqual(
        values.get(`imported/${k}`),
        values.get(`generated/${k}`),
      );
    }
    assert.deepEqual(
      imp.cells.map((x) => x.mean),
      gen.cells.map((x) => x.mean),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
