import assert from "node:assert/strict";
import { UserError } from "@envsmith/engine/errors";
import {
  generate,
  instancesToJsonLines,
  parseInstanceLines,
  parsePlanText,
  replayPlan,
} from "../mapf/mod.ts";
import { solveCommand } from "./solve_command.ts";
import { runCommand } from "./_mapf_test_util.ts";

const instances =
  generate({ preset: "medium" }, { count: 3, seed: 4 }).instances;
const input = instancesToJsonLines(instances);

Deno.test("cli solve: prints soc, makespan and an executable plan per instance; exit 0", async () => {
  const r = await runCommand(solveCommand, ["--solver", "pp"], input);
  assert.equal(r.code, 0);
  const blocks = r.out.split(/\n(?=\S+: soc)/);
  assert.equal(blocks.length, 3);
  blocks.forEach((block, k) => {
    const inst = instances[k]!;
    const m = /^(\S+): soc (\d+) makespan (\d+) solver pp/.exec(block)!;
    assert.equal(m[1], inst.id);
    const plan = parsePlanText(block, inst.starts.length);
    const ep = replayPlan(inst, plan, { noSlip: true });
    assert.equal(ep.outcome, "success");
    assert.equal(ep.steps, Number(m[3]));
  });
});

Deno.test("cli solve: --json, cbs, and exit code 1 when something is unsolved", async () => {
  const r = await runCommand(
    solveCommand,
    ["--solver", "cbs", "--json"],
    input,
  );
  const rows = r.out.split("\n").map((l) => JSON.parse(l));
  assert.equal(rows.length, 3);
  for (const row of rows) {
    assert.equal(row.solved, true);
    assert.equal(row.solver, "cbs");
    assert.ok(
      row.soc <= instances.find((i) => i.id === row.id)!.reference!.soc,
    );
  }
  const impossible = {
    ...parseInstanceLines(input)[0]!,
    width: 3,
    height: 1,
    cells: ["..."],
    starts: [[0, 0], [0, 2]],
    goals: [[0, 2], [0, 0]],
  };
  const r2 = await runCommand(
    solveCommand,
    ["--max-nodes", "50"],
    JSON.stringify(impossible),
  );
  assert.equal(r2.code, 1);
  assert.match(r2.out, /not solved/);
  await assert.rejects(
    () => runCommand(solveCommand, [], "not json"),
    (e: unknown) => e instanceof UserError && /line 1/.test(e.message),
  );
  await assert.rejects(() => runCommand(solveCommand, [], ""), /no instances/);
});
