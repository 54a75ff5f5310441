import assert from "node:assert/strict";
import { join } from "node:path";
import { UserError } from "@envsmith/engine/errors";
import { generate, parseInstanceLines } from "../mapf/mod.ts";
import { generateCommand } from "./generate_command.ts";
import { runCommand } from "./_mapf_test_util.ts";

Deno.test("cli generate: --preset writes JSON lines identical to the library", async () => {
  const r = await runCommand(generateCommand, [
    "--preset",
    "medium",
    "--count",
    "4",
    "--seed",
    "9",
  ]);
  const insts = parseInstanceLines(r.out);
  assert.equal(insts.length, 4);
  assert.deepEqual(
    insts,
    generate({ preset: "medium" }, { count: 4, seed: 9 }).instances,
  );
  assert.match(r.err, /4 instances from \d+ draws/);
});

Deno.test("cli generate: --config file, --suite and --out", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cfg = join(dir, "c.yaml");
    await Deno.writeTextFile(cfg, "preset: easy\nagents: 4\nslip: 0.3\n");
    const out = join(dir, "o.jsonl");
    await runCommand(generateCommand, [
      "--config",
      cfg,
      "--count",
      "3",
      "--out",
      out,
    ]);
    const insts = parseInstanceLines(await Deno.readTextFile(out));
    assert.equal(insts.length, 3);
    assert.ok(insts.every((i) => i.starts.length === 4 && i.slip === 0.3));
    const s = await runCommand(generateCommand, [
      "--suite",
      "crowded",
      "--count",
      "2",
    ]);
    assert.deepEqual(parseInstanceLines(s.out).map((i) => i.id), [
      "crowded-0",
      "crowded-1",
    ]);
    const bad = join(dir, "bad.yaml");
    await Deno.writeTextFile(bad, "width: 100\n");
    await assert.rejects(
      () => runCommand(generateCommand, ["--config", bad]),
      (e: unknown) =>
        e instanceof UserError && /width must be at most 64/.test(e.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli generate: user mistakes are UserErrors (no stack traces)", async () => {
  await assert.rejects(
    () => runCommand(generateCommand, ["--count", "3"]),
    UserError,
  );
  await assert.rejects(
    () => runCommand(generateCommand, ["--preset", "easy", "--suite", "base"]),
    UserError,
  );
  await assert.rejects(
    () => runCommand(generateCommand, ["--suite", "nope"]),
    /known suites/,
  );
  await assert.rejects(
    () => runCommand(generateCommand, ["--preset", "extreme"]),
    UserError,
  );
  // impossible config: the generator's reason, as a UserError
  const dir = await Deno.makeTempDir();
  try {
    const cfg = join(dir, "c.json");
    await Deno.writeTextFile(
      cfg,
      JSON.stringify({
        width: 4,
        height: 4,
        agents: 2,
        distance: { min: 12, max: 14 },
      }),
    );
    await assert.rejects(
      () => runCommand(generateCommand, ["--config", cfg, "--count", "1"]),
      (e: unknown) =>
        e instanceof UserError && /distance 12..14/.test(e.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
