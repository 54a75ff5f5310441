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
