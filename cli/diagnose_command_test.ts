import assert from "node:assert/strict";
import { join } from "node:path";
import * as v from "valibot";
import { UserError } from "@envsmith/engine/errors";
import { initCheckpoint, saveCheckpoint } from "../policy/mod.ts";
import { FindingsSchema } from "../schemas/mod.ts";
import { diagnoseCommand } from "./diagnose_command.ts";
import { tmpExperiment } from "../_test_util.ts";

async function run(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const cmd = diagnoseCommand({
    out: (t) => out.push(t),
    err: (t) => err.push(t),
  });
  cmd.exitOverride();
  await cmd.parseAsync(args, { from: "user" });
  return { out: out.join("\n"), err: err.join("\n") };
}

Deno.test("cli diagnose: policy file + preset -> findings.json, deterministic per seed", async () => {
  await using tmp = await tmpExperiment("diagnose-cli");
  const { dir } = tmp;
  const model = join(dir, "p.onnx");
  await Deno.writeFile(
    model,
    saveCheckpoint(initCheckpoint({ hidden: [16], seed: 3 })),
  );
  const a = join(dir, "a.json");
  const b = join(dir, "b.json");
  const diagnoseTo = (out: string) =>
    run([
      "--policy",
      model,
      "--preset",
      "easy",
      "--episodes",
      "24",
      "--seed",
      "5",
      "--out",
      out,
    ]);
  const r = await diagnoseTo(a);
  await diagnoseTo(b);
  assert.equal(r.out, "");
  assert.match(r.err, /^24 episodes: success /);
  const f = v.parse(FindingsSchema, JSON.parse(await Deno.readTextFile(a)));
  assert.equal(f.episodes, 24);
  assert.equal(f.agent_episodes, 48); // easy: 2 agents
  // An untrained policy fails often: there are cases to read.
  assert.ok(f.failure_count > 0);
  assert.ok(
    f.failures.length > 0 && f.failures[0]!.text.includes("Map at step"),
  );
  assert.equal(await Deno.readTextFile(a), await Deno.readTextFile(b));
  await assert.rejects(
    () => run(["--policy", model, "--episodes", "2"]),
    (e) =>
      e instanceof UserError &&
      /--preset NAME or --config FILE/.test(e.message),
  );
  await assert.rejects(
    () =>
      run([
        "--policy",
        join(dir, "missing.onnx"),
        "--preset",
        "easy",
        "--episodes",
        "2",
      ]),
    (e) => e instanceof UserError && /Cannot read policy file/.test(e.message),
  );
});
