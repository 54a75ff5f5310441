import assert from "node:assert/strict";
import { generate } from "../mapf/generator.ts";
import { instancesToJsonLines } from "../mapf/instance.ts";
import { parsePlanText, renderPrompt } from "../mapf/render_text.ts";
import { replayPlan } from "../mapf/replay.ts";
import { LLM_SYSTEM } from "../policy/llm_policy.ts";
import { lmDataCommand } from "./lm_data_command.ts";
import { runCommand } from "./_mapf_test_util.ts";

const instances = generate({
  preset: "easy",
  width: 4,
  height: 4,
  agents: 2,
  holes: "blocked",
  distance: { min: 1, max: 5 },
}, { count: 5, seed: 9 }).instances;

Deno.test("cli lm-data: the LLM policy's messages and a reference plan that succeeds", async () => {
  for (const style of ["bare", "full"] as const) {
    const r = await runCommand(
      (io) => lmDataCommand(io),
      ["--prompt", style],
      instancesToJsonLines(instances),
    );
    const rows = r.out.split("\n").map((l) => JSON.parse(l));
    assert.equal(rows.length, 5);
    rows.forEach((row, k) => {
      const inst = instances[k]!;
      assert.equal(row.id, inst.id);
      assert.equal(row.system, LLM_SYSTEM);
      assert.equal(
        row.prompt,
        renderPrompt(inst, style === "bare" ? { instructions: false } : {}),
      );
      const ep = replayPlan(inst, parsePlanText(row.plan, 2), { noSlip: true });
      assert.equal(ep.outcome, "success");
      assert.equal(ep.steps, row.makespan);
    });
    assert.match(r.err, /5 instances, 0 without a reference plan/);
  }
});
