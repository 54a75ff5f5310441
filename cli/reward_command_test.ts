import { scaledMs } from "../engine/testdata/load.ts";
import assert from "node:assert/strict";
import { generate } from "../mapf/generator.ts";
import { instancesToJsonLines } from "../mapf/instance.ts";
import { pathsToPlan, replayPlan } from "../mapf/replay.ts";
import { solve } from "../mapf/solve.ts";
import { compileInstance } from "../mapf/instance.ts";
import { ACTION_LETTERS } from "../mapf/grid.ts";
import { scoringInstance } from "../policy/plan_reward.ts";
import { rewardCommand, serveRewards } from "./reward_command.ts";

const instances = generate({
  preset: "easy",
  width: 5,
  height: 5,
  agents: 2,
  holes: "blocked",
  distance: { min: 2, max: 6 },
}, { count: 4, seed: 3 }).instances;
const map = new Map(instances.map((i) => [i.id, scoringInstance(i)]));

function solverText(k: number): string {
  const inst = instances[k]!;
  const sol = solve(compileInstance(inst))!;
  return pathsToPlan(sol.paths, inst.width)
    .map((acts, a) =>
      `Agent ${a}: ${acts.map((x) => ACTION_LETTERS[x]).join(" ")}`
    )
    .join("\n");
}

async function* chunks(text: string, size: number) {
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i += size) {
    yield bytes.subarray(i, i + size);
  }
}

async function serve(text: string, size = 7) {
  const out: string[] = [];
  const stats = await serveRewards(map, {
    input: () => chunks(text, size),
    write: (t) => Promise.resolve(void out.push(t)),
  });
  return { lines: out.join("").split("\n").filter((l) => l !== ""), stats };
}

Deno.test("reward: a solver plan scores 1 (success); a stay-put plan times out with the on-goal share", async () => {
  const lines = [
    JSON.stringify({ id: instances[0]!.id, completion: solverText(0) }),
    JSON.stringify({
      id: instances[1]!.id,
      completion: "<think>x</think>\nAgent 0: S\nAgent 1: S",
    }),
  ].join("\n") + "\n";
  const { lines: out, stats } = await serve(lines);
  assert.deepEqual(stats, { scored: 2, errors: 0 });
  const [a, b] = out.map((l) => JSON.parse(l));
  assert.equal(a.id, instances[0]!.id);
  assert.equal(a.outcome, "success");
  assert.equal(a.reward, 1);
  assert.equal(b.outcome, "timeout");
  assert.equal(b.on_goal, 0);
  assert.equal(b.reward, 0.1);
  assert.equal(b.steps, instances[1]!.horizon);
});

Deno.test("reward: the answer agrees with replaying the parsed plan; one agent on goal gives 0.3", async () => {
  // agent 0 follows the solver, agent 1 stays: if agent 0 arrives and 1 does not
  const inst = instances[2]!;
  const sol = solve(compileInstance(inst))!;
  const plan = pathsToPlan(sol.paths, inst.width);
  const text = `Agent 0: ${
    plan[0]!.map((x) => ACTION_LETTERS[x]).join(" ")
  }\nAgent 1: S`;
  const ep = replayPlan(inst, [plan[0]!, []]);
  const { lines } = await serve(
    JSON.stringify({ id: inst.id, completion: text }) + "\n",
    3,
  );
  const r = JSON.parse(lines[0]!);
  assert.equal(r.outcome, ep.outcome);
  assert.equal(r.steps, ep.steps);
  const g0 = inst.goals[0]![0] * inst.width + inst.goals[0]![1];
  const g1 = inst.goals[1]![0] * inst.width + inst.goals[1]![1];
  const on = (ep.positions[ep.steps * 2] === g0 ? 1 : 0) +
    (ep.positions[ep.steps * 2 + 1] === g1 ? 1 : 0);
  assert.equal(r.on_goal, on);
  assert.equal(r.reward, Math.round((0.1 + 0.4 * on / 2) * 1e9) / 1e9);
});

Deno.test("reward: bad completions are invalid_plan, bad requests are error lines, and the stream goes on", async () => {
  const id = instances[0]!.id;
  const text = [
    JSON.stringify({ id, completion: "I do not know" }),
    "not json",
    JSON.stringify({ id: "missing", completion: "Agent 0: R" }),
    JSON.stringify({ id, completion: 3 }),
    JSON.stringify([1]),
    JSON.stringify({ id, completion: "Agent 0: R\nAgent 1: Q" }),
    JSON.stringify({ id, completion: "Agent 5: R" }),
    JSON.stringify({ id, completion: solverText(0), seed: -1 }),
    "",
    JSON.stringify({ id, completion: solverText(0) }), // last line without newline
  ].join("\n");
  const { lines, stats } = await serve(text, 5);
  assert.deepEqual(stats, { scored: 4, errors: 5 });
  const rows = lines.map((l) => JSON.parse(l));
  assert.equal(rows.length, 9);
  assert.equal(rows[0].outcome, "invalid_plan");
  assert.equal(rows[0].reward, 0);
  assert.match(rows[0].parse_error, /no line "Agent 0/);
  assert.equal(rows[1].id, null);
  assert.match(rows[1].error, /not JSON/);
  assert.match(rows[2].error, /no instance with this id/);
  assert.match(rows[3].error, /"completion" must be a string/);
  assert.match(rows[4].error, /expected an object/);
  assert.match(rows[5].parse_error, /unknown move "Q"/);
  assert.match(rows[6].parse_error, /names agent 5/);
  assert.match(rows[7].error, /"seed"/);
  assert.equal(rows[8].outcome, "success");
});

Deno.test("reward: the CLI command loads FILE and refuses duplicate ids", async () => {
  const tmp = await Deno.makeTempFile({ suffix: ".jsonl" });
  try {
    await Deno.writeTextFile(
      tmp,
      instancesToJsonLines([instances[0]!, instances[0]!]),
    );
    const err: string[] = [];
    const cmd = rewardCommand({
      input: () => chunks("", 1),
      write: () => Promise.resolve(),
      err: (t) => err.push(t),
      files: { out: () => {}, err: () => {}, stdin: () => Promise.resolve("") },
    });
    cmd.exitOverride();
    await assert.rejects(
      cmd.parseAsync(["--instances", tmp], { from: "user" }),
      /appears twice/,
    );
    await Deno.writeTextFile(tmp, instancesToJsonLines(instances));
    const out: string[] = [];
    const cmd2 = rewardCommand({
      input: () =>
        chunks(
          JSON.stringify({ id: instances[3]!.id, completion: solverText(3) }) +
            "\n",
          4,
        ),
      write: (t) => Promise.resolve(void out.push(t)),
      err: (t) => err.push(t),
      files: { out: () => {}, err: () => {}, stdin: () => Promise.resolve("") },
    });
    await cmd2.parseAsync(["--instances", tmp], { from: "user" });
    assert.equal(JSON.parse(out.join("")).reward, 1);
    assert.match(err.at(-1)!, /1 completions scored, 0 bad requests/);
  } finally {
    await Deno.remove(tmp);
  }
});

Deno.test("reward: over-long, binary and malformed lines are answered in turn with one error each, in bounded memory", async () => {
  const id = instances[0]!.id;
  const good = JSON.stringify({ id, completion: solverText(0) });
  const parts: Uint8Array[] = [];
  const enc = new TextEncoder();
  parts.push(enc.encode(good + "\n"));
  // 40 MB without a newline, streamed in 64 KiB chunks: never held.
  const block = enc.encode("x".repeat(64 * 1024));
  const blocks = 640;
  // Binary: invalid UTF-8, NULs and a lone continuation byte.
  const binary = new Uint8Array([0xff, 0xfe, 0x00, 0x80, 0x7b, 0x0a]);
  const tail = enc.encode(
    `{"id": "${id}", "completion": "Agent 0: R` + "\n" + good, // last line without newline
  );
  async function* input() {
    yield parts[0]!;
    for (let i = 0; i < blocks; i++) yield block;
    yield enc.encode("\n");
    yield binary;
    yield tail;
  }
  const out: string[] = [];
  const before = Deno.memoryUsage().rss;
  const t0 = performance.now();
  const stats = await serveRewards(map, {
    input,
    write: (t) => Promise.resolve(void out.push(t)),
  });
  const grew = (Deno.memoryUsage().rss - before) / 1e6;
  const ms = performance.now() - t0;
  const rows = out.join("").split("\n").filter((l) => l !== "").map((l) =>
    JSON.parse(l)
  );
  assert.deepEqual(stats, { scored: 2, errors: 3 });
  assert.equal(rows.length, 5);
  assert.equal(rows[0].outcome, "success");
  assert.equal(rows[1].id, null);
  assert.match(
    rows[1].error,
    /^request line of 41943040 characters or more, longer than the 1048576 a request may have; skipped$/,
  );
  assert.match(rows[2].error, /^not JSON/);
  assert.match(rows[3].error, /^not JSON/); // the cut JSON line
  assert.equal(rows[4].outcome, "success");
  // Linear, not quadratic, in the skipped bytes; far below the 40 MB.
  assert.ok(ms < scaledMs(20_000), `${ms} ms`);
  assert.ok(grew < 30, `rss grew ${grew} MB`);
});

Deno.test("reward: a line just over the limit is refused, one at the limit is read", async () => {
  const id = instances[0]!.id;
  const line = JSON.stringify({ id, completion: solverText(0) });
  const out: string[] = [];
  const stats = await serveRewards(map, {
    input: () => chunks(`${line}\n${line} \n${line}`, 9),
    write: (t) => Promise.resolve(void out.push(t)),
  }, line.length);
  assert.deepEqual(stats, { scored: 2, errors: 1 });
  assert.match(
    out.join(""),
    new RegExp(`line of ${line.length + 1} characters`),
  );
});
