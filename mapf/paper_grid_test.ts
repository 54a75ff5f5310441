import assert from "node:assert/strict";
import { cellOf } from "./grid_cell.ts";
import {
  generatePaperGrid,
  gridId,
  PAPER_GRID,
  PAPER_GRID_CELLS,
  parseGridId,
} from "./paper_grid.ts";
import { generateSuite, getSuite } from "./suites.ts";
import { generate } from "./generator.ts";
import { compileInstance } from "./instance.ts";
import { exactOptimum } from "./exact_optimum.ts";
import { renderPrompt } from "./render_text.ts";

Deno.test("the grid has the paper's 21 cells: 3 agents on 3x3..10x10, 4 on 4x4.., 5 on 5x5..", () => {
  assert.equal(PAPER_GRID_CELLS.length, 21);
  for (const [n, sizes] of [[3, 8], [4, 7], [5, 6]] as const) {
    const cells = PAPER_GRID_CELLS.filter((c) => c.agents === n);
    assert.equal(cells.length, sizes);
    assert.equal(cells[0]!.size, n);
    assert.equal(cells.at(-1)!.size, 10);
  }
  assert.equal(PAPER_GRID_CELLS[0]!.name, "3ag_3x3");
  assert.equal(gridId(PAPER_GRID_CELLS[0]!, 7), "3ag_3x3_hr0.1_007");
  assert.deepEqual(parseGridId("4ag_10x10_hr0.1_149"), {
    cell: "4ag_10x10",
    agents: 4,
    rows: 10,
    cols: 10,
    holeRatio: 0.1,
    index: 149,
  });
  assert.equal(parseGridId("base-12"), null);
  assert.equal(getSuite(PAPER_GRID).count, 150);
  assert.equal(getSuite(PAPER_GRID).cells?.length, 21);
});

Deno.test("grid instances: benchmark ids, shape of their cell, impassable holes, exact optima, fixed", () => {
  const { instances, report, cells } = generatePaperGrid({ perCell: 3 });
  assert.equal(instances.length, 63);
  assert.equal(report.accepted, 63);
  assert.equal(report.components.length, 21);
  assert.equal(cells.length, 21);
  const seen = new Set<string>();
  for (const inst of instances) {
    const id = parseGridId(inst.id);
    assert.ok(id, inst.id);
    assert.equal(id.cell, cellOf(inst));
    assert.ok(id.index < 3);
    seen.add(id.cell);
    assert.equal(inst.suite, PAPER_GRID);
    assert.equal(inst.holes, "blocked");
    assert.equal(inst.collision, "fail");
    assert.equal(inst.slip, 0);
    assert.equal(inst.reference?.solver, "cbs");
    const opt = exactOptimum(compileInstance(inst))!;
    assert.deepEqual(
      { soc: inst.reference!.soc, makespan: inst.reference!.makespan },
      opt,
    );
    assert.equal(inst.horizon, 3 * opt.makespan);
    // the benchmark's text format can show it (distinct start and goal cells)
    assert.match(renderPrompt(inst), /frozen lake map with \d agents/);
  }
  assert.equal(seen.size, 21);
  assert.deepEqual(generatePaperGrid({ perCell: 3 }).instances, instances);
  // a per-cell count is a prefix of a larger one
  const five = generatePaperGrid({ perCell: 5, cells: ["3ag_4x4"] }).instances;
  assert.deepEqual(
    five.slice(0, 3),
    instances.filter((i) => i.id.startsWith("3ag_4x4_")),
  );
  // the suite door draws the same instances
  assert.deepEqual(
    generateSuite(PAPER_GRID, { count: 3 }).instances,
    instances,
  );
});

Deno.test("the grid's seed space is its own: its splits differ, and training draws of a cell's config never coincide", () => {
  const key = (
    i: { cells: readonly string[]; starts: unknown; goals: unknown },
  ) => JSON.stringify([i.cells, i.starts, i.goals]);
  const val = generatePaperGrid({ perCell: 20, cells: ["3ag_8x8"] }).instances;
  const test = generatePaperGrid({
    perCell: 20,
    cells: ["3ag_8x8"],
    split: "test",
  }).instances;
  const a = new Set(val.map(key));
  assert.ok(test.every((i) => !a.has(key(i))));
  const train = generate(
    {
      width: 8,
      height: 8,
      agents: 3,
      hole_density: 0.1,
      holes: "blocked",
      interaction: 0.5,
      distance: { min: 1, max: 14 },
    },
    { count: 20, seed: 0 },
  ).instances;
  assert.ok(train.every((i) => !a.has(key(i))));
});

Deno.test("an unknown cell is refused with the cells named", () => {
  assert.throws(
    () => generatePaperGrid({ perCell: 1, cells: ["2ag_2x2"] }),
    /unknown grid cell "2ag_2x2"; cells are 3ag_3x3, /,
  );
});
