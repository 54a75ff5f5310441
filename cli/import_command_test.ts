import assert from "node:assert/strict";
import { join } from "node:path";
import { UserError } from "@envsmith/engine/errors";
import {
  exportMap,
  exportScen,
  generate,
  parseInstanceLines,
  renderPrompt,
} from "../mapf/mod.ts";
import { importCommand } from "./import_command.ts";
import { runCommand } from "./_mapf_test_util.ts";

Deno.test("cli import: benchmark JSON lines, single prompts and MovingAI files", async () => {
  const instances =
    generate({ preset: "easy", agents: 4 }, { count: 3, seed: 6 }).instances;
  const dir = await Deno.makeTempDir();
  try {
    const jsonl = join(dir, "bench.jsonl");
    await Deno.writeTextFile(
      jsonl,
      instances.map((inst, k) =>
        JSON.stringify({
          sample_id: `4ag_8x8_${k}`,
          text: "Question:\n" + renderPrompt(inst),
        })
      )
        .join("\n"),
    );
    const r = await runCommand(importCommand, [
      "--format",
      "prompt",
      jsonl,
      "--horizon-factor",
      "2",
    ]);
    const back = parseInstanceLines(r.out);
    assert.deepEqual(back.map((i) => i.id), [
      "4ag_8x8_0",
      "4ag_8x8_1",
      "4ag_8x8_2",
    ]);
    back.forEach((b, k) => {
      assert.deepEqual(b.cells, instances[k]!.cells);
      assert.deepEqual(b.starts, instances[k]!.starts);
      assert.equal(b.holes, "blocked");
      assert.ok(b.reference);
      assert.equal(b.horizon, Math.ceil(2 * b.reference.makespan));
    });
    const single = join(dir, "p.txt");
    await Deno.writeTextFile(single, renderPrompt(instances[0]!));
    const s = await runCommand(importCommand, [
      "--format",
      "prompt",
      single,
      "--holes",
      "lethal",
      "--horizon",
      "40",
    ]);
    const [si] = parseInstanceLines(s.out);
    assert.equal(si!.id, "p");
    assert.equal(si!.holes, "lethal");
    assert.equal(si!.horizon, 40);
    const map = join(dir, "m.map"), scen = join(dir, "m.scen");
    await Deno.writeTextFile(map, exportMap(instances[1]!));
    await Deno.writeTextFile(scen, exportScen(instances[1]!, "m.map"));
    const m = await runCommand(importCommand, [
      "--format",
      "movingai",
      map,
      scen,
      "--agents",
      "2",
    ]);
    const [mi] = parseInstanceLines(m.out);
    assert.equal(mi!.id, "m");
    assert.deepEqual(mi!.starts, instances[1]!.starts.slice(0, 2));
    const broken = join(dir, "b.txt");
    await Deno.writeTextFile(
      broken,
      "There is a 2x2 frozen lake map with 1 agents:\nS Q\nF G\n",
    );
    await assert.rejects(
      () => runCommand(importCommand, ["--format", "prompt", broken]),
      (e: unknown) =>
        e instanceof UserError && /unknown map token "Q"|Q/.test(e.message),
    );
    await assert.rejects(
      () => runCommand(importCommand, ["--format", "movingai", map]),
      UserError,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli import --suite paper-grid: the benchmark file as the grid; a bad record is one line and nothing is written", async () => {
  const { generatePaperGrid } = await import("../mapf/paper_grid.ts");
  const grid = generatePaperGrid({ perCell: 1, split: "test" }).instances;
  const dir = await Deno.makeTempDir();
  try {
    const lines = grid.map((inst) =>
      JSON.stringify({
        sample_id: inst.id,
        text: renderPrompt(inst, { instructions: false }),
      })
    );
    const file = join(dir, "benchmark.jsonl");
    await Deno.writeTextFile(file, lines.join("\n") + "\n");
    const out = join(dir, "grid.jsonl");
    await runCommand(importCommand, [
      "--format",
      "prompt",
      "--suite",
      "paper-grid",
      file,
      "--out",
      out,
    ]);
    const back = parseInstanceLines(await Deno.readTextFile(out));
    assert.deepEqual(back.map((i) => i.id), grid.map((i) => i.id));
    assert.ok(back.every((i) => i.suite === "paper-grid"));
    await Deno.remove(out);
    const broken = join(dir, "broken.jsonl");
    await Deno.writeTextFile(
      broken,
      [
        ...lines.slice(0, 5),
        '{"sample_id": "x", "text": ""}',
        ...lines.slice(5),
      ]
        .join("\n"),
    );
    await assert.rejects(
      () =>
        runCommand(importCommand, [
          "--format",
          "prompt",
          "--suite",
          "paper-grid",
          broken,
          "--out",
          out,
        ]),
      (e: unknown) =>
        e instanceof UserError &&
        e.message ===
          `${broken} line 6 (x): sample_id: "x" is not a benchmark id like 3ag_3x3_hr0.1_000 (agents, rows x columns, hole ratio, index)`,
    );
    await assert.rejects(() => Deno.stat(out), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
