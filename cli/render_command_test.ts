import assert from "node:assert/strict";
import { join } from "node:path";
import { UserError } from "@envsmith/engine/errors";
import {
  generate,
  importMovingAI,
  instancesToJsonLines,
  parsePrompt,
} from "../mapf/mod.ts";
import { renderCommand } from "./render_command.ts";
import { runCommand } from "./_mapf_test_util.ts";

const instances = generate({ preset: "hard" }, { count: 2, seed: 5 }).instances;
const input = instancesToJsonLines(instances);

Deno.test("cli render: text prompts parse back; --bare drops our instructions", async () => {
  const r = await runCommand(renderCommand, ["--format", "text"], input);
  const prompts = r.out.split(/\n\n(?=You are)/);
  assert.equal(prompts.length, 2);
  prompts.forEach((p, k) => {
    const back = parsePrompt(p, { solve: false });
    assert.deepEqual(back.cells, instances[k]!.cells);
    assert.ok(p.includes("Answer with one line per agent"));
  });
  const bare = await runCommand(
    renderCommand,
    ["--format", "text", "--bare"],
    input,
  );
  assert.ok(!bare.out.includes("Answer with"));
  const state = await runCommand(renderCommand, ["--format", "state"], input);
  assert.ok(state.out.startsWith(instances[0]!.id + "\n"));
});

Deno.test("cli render: svg and movingai files", async () => {
  const one = await runCommand(
    renderCommand,
    ["--format", "svg"],
    instancesToJsonLines([instances[0]!]),
  );
  assert.ok(one.out.startsWith("<svg"));
  await assert.rejects(
    () => runCommand(renderCommand, ["--format", "svg"], input),
    (e: unknown) => e instanceof UserError && /--out-dir/.test(e.message),
  );
  const dir = await Deno.makeTempDir();
  try {
    await runCommand(
      renderCommand,
      ["--format", "svg", "--out-dir", dir],
      input,
    );
    await runCommand(
      renderCommand,
      ["--format", "movingai", "--out-dir", dir],
      input,
    );
    const name = instances[1]!.id;
    assert.ok(
      (await Deno.readTextFile(join(dir, `${name}.svg`))).startsWith("<svg"),
    );
    const back = importMovingAI(
      await Deno.readTextFile(join(dir, `${name}.map`)),
      await Deno.readTextFile(join(dir, `${name}.scen`)),
      { solve: false },
    );
    assert.deepEqual(back.goals, instances[1]!.goals);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
