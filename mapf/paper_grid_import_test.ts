import assert from "node:assert/strict";
import { generatePaperGrid } from "./paper_grid.ts";
import {
  GridImportError,
  type GridRecord,
  importGridRecords,
} from "./paper_grid_import.ts";
import { renderPrompt } from "./render_text.ts";

/** The grid as the benchmark file shows it: bare prompts under their ids. */
function benchmarkRecords(perCell: number): GridRecord[] {
  return generatePaperGrid({ perCell, split: "test" }).instances.map((
    inst,
    k,
  ) => ({
    line: k + 1,
    id: inst.id,
    text: renderPrompt(inst, { instructions: false }),
  }));
}

Deno.test("a benchmark file imports as the grid: same ids, maps, suite and exact optima as the generated copy", () => {
  const grid = generatePaperGrid({ perCell: 2, split: "test" }).instances;
  const back = importGridRecords(benchmarkRecords(2));
  assert.equal(back.length, 42);
  back.forEach((b, k) => {
    const g = grid[k]!;
    assert.equal(b.id, g.id);
    assert.equal(b.suite, "paper-grid");
    assert.deepEqual(
      [b.cells, b.starts, b.goals, b.holes, b.collision, b.slip, b.horizon],
      [g.cells, g.starts, g.goals, g.holes, g.collision, g.slip, g.horizon],
    );
    assert.deepEqual(b.reference, g.reference);
  });
});

Deno.test("bad benchmark records: one error naming the record and the field, nothing imported", () => {
  const good = benchmarkRecords(1);
  const bad = (
    edit: (rs: GridRecord[]) => GridRecord[],
    why: RegExp,
  ) => {
    let err: unknown;
    let got: unknown;
    try {
      got = importGridRecords(edit(good.map((r) => ({ ...r }))));
    } catch (e) {
      err = e;
    }
    assert.equal(got, undefined, "nothing is returned");
    assert.ok(err instanceof GridImportError, String(err));
    assert.match(err.message, why);
    assert.ok(!err.message.includes("\n"), "one line");
  };
  const at = (i: number, r: Partial<GridRecord>) => (rs: GridRecord[]) =>
    rs.map((x, k) => (k === i ? { ...x, ...r } : x));
  // unknown ids
  bad(
    at(3, { id: "sample-3" }),
    /^line 4 \(sample-3\): sample_id: "sample-3" is not a benchmark id like 3ag_3x3_hr0\.1_000/,
  );
  bad(
    at(0, { id: "2ag_2x2_hr0.1_000" }),
    /^line 1 \(2ag_2x2_hr0\.1_000\): sample_id: cell 2ag_2x2 is not in the grid/,
  );
  bad(at(2, { id: undefined }), /^line 3: sample_id: missing/);
  bad(
    at(1, { id: good[0]!.id }),
    /^line 2 \(3ag_3x3_hr0\.1_000\): sample_id: repeats the id of line 1/,
  );
  // missing cells
  bad(
    (rs) => rs.filter((r) => !String(r.id).startsWith("5ag_10x10")),
    /^cells with no record: 5ag_10x10 \(the grid has 21 cells; 20 have records\)/,
  );
  // prompts that do not parse
  bad(
    at(0, { text: "Solve this puzzle." }),
    /^line 1 \(3ag_3x3_hr0\.1_000\): text: no header "There is a RxC frozen lake map/,
  );
  bad(
    at(0, { text: (good[0]!.text as string).replace(/\n[^\n]*\n/, "\nF F\n") }),
    /^line 1 \(3ag_3x3_hr0\.1_000\): text: line 2: map row 0 has 2 cells; expected 3/,
  );
  bad(
    at(0, { text: 42 }),
    /^line 1 \(3ag_3x3_hr0\.1_000\): text: missing or not a string/,
  );
  // a map that is not its id's cell, and one with no plan
  bad(
    at(0, { text: good[1]!.text }),
    /^line 1 \(3ag_3x3_hr0\.1_000\): text: the prompt shows 3 agents on 4x4 \(3ag_4x4\), but the id names 3ag_3x3/,
  );
  // agent 0 is walled off from its goal by holes
  const noPlan = [
    "You are a multi-agent path planning expert. There is a 3x3 frozen lake map with 3 agents:",
    "S H G",
    "H H A",
    "s g a",
  ].join("\n");
  bad(
    at(0, { text: noPlan }),
    /^line 1 \(3ag_3x3_hr0\.1_000\): text: no collision-free plan with certified optima exists/,
  );
});
