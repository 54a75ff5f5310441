import assert from "node:assert/strict";
import {
  decodeToken,
  goalToken,
  parsePlanText,
  parsePrompt,
  PlanParseError,
  PromptParseError,
  renderPrompt,
  startToken,
} from "./render_text.ts";
import { generate } from "./generator.ts";
import { replayPlan } from "./replay.ts";

// The first sample of the paper's public benchmark (3ag_3x3_hr0.1_000), as
// shown by the dataset viewer; the agent lines follow from the map.
const SAMPLE = `Question:
You are a multi-agent path planning expert. There is a 3x3 frozen lake map with 3 agents:
a s g
G S F
A F F
Legend:
S/s/A/B/C: Start positions for agents 0/1/2/3/4
G/g/a/b/c: Goal positions for agents 0/1/2/3/4
F: Frozen surface (passable)
H: Hole (impassable)
Agent 0 needs to go from (1, 1) to (1, 0).
Agent 1 needs to go from (0, 1) to (0, 2).
Agent 2 needs to go from (2, 0) to (0, 0).
Please give the plan.
`;

Deno.test("parses the paper's benchmark sample", () => {
  const inst = parsePrompt(SAMPLE, { id: "3ag_3x3_hr0.1_000" });
  assert.equal(inst.width, 3);
  assert.equal(inst.height, 3);
  assert.deepEqual(inst.cells, ["...", "...", "..."]);
  assert.deepEqual(inst.starts, [[1, 1], [0, 1], [2, 0]]);
  assert.deepEqual(inst.goals, [[1, 0], [0, 2], [0, 0]]);
  assert.equal(inst.holes, "blocked");
  assert.ok(inst.reference);
  // agent 2 must pass agent 0's goal (1, 0) before agent 0 parks there: 2 + 1 + 2
  assert.equal(inst.reference.soc, 5);
  // the bare rendering reproduces the benchmark's text (minus its tail)
  const bare = renderPrompt(inst, { instructions: false });
  const expected = SAMPLE.split("\n").slice(1, 13).join("\n") + "\n";
  assert.equal(bare, expected);
});

Deno.test("render -> parse round-trips generated instances, with walls and holes", () => {
  const configs = [
    { preset: "hard" as const },
    { preset: "medium" as const, agents: 5 },
    {
      width: 12,
      height: 9,
      agents: 30,
      hole_density: 0.05,
      distance: { min: 1, max: 20 },
    },
  ];
  for (const config of configs) {
    const { instances } = generate(config, { count: 3, seed: 4 });
    for (const inst of instances) {
      const text = renderPrompt(inst);
      const back = parsePrompt(text, { solve: false });
      assert.deepEqual(back.cells, inst.cells);
      assert.deepEqual(back.starts, inst.starts);
      assert.deepEqual(back.goals, inst.goals);
      assert.equal(
        text.includes("#: Wall"),
        inst.cells.some((r) => r.includes("#")),
      );
    }
  }
});

Deno.test("letter scheme: paper letters for 0-4, documented extension beyond", () => {
  assert.deepEqual([0, 1, 2, 3, 4].map(startToken), ["S", "s", "A", "B", "C"]);
  assert.deepEqual([0, 1, 2, 3, 4].map(goalToken), ["G", "g", "a", "b", "c"]);
  assert.equal(startToken(5), "D");
  assert.equal(goalToken(5), "d");
  assert.equal(startToken(7), "I");
  assert.equal(startToken(23), "Z");
  assert.equal(startToken(24), "S24");
  assert.equal(goalToken(63), "G63");
  const tokens = new Set<string>();
  for (let a = 0; a < 64; a++) {
    for (const t of [startToken(a), goalToken(a)]) {
      assert.ok(!tokens.has(t), t);
      assert.ok(!["F", "H", "#"].includes(t));
      tokens.add(t);
      assert.deepEqual(decodeToken(t), {
        kind: t === startToken(a) ? "start" : "goal",
        agent: a,
      });
    }
  }
  assert.equal(decodeToken("S3"), null, "numbered tokens only from 24 on");
  assert.equal(decodeToken("q2"), null);
});

Deno.test("parse errors name the line", () => {
  assert.throws(() => parsePrompt("hello"), PromptParseError);
  const badRow = SAMPLE.replace("G S F", "G S");
  assert.throws(
    () => parsePrompt(badRow),
    (e: unknown) => e instanceof PromptParseError && e.line === 4,
  );
  const badTok = SAMPLE.replace("A F F", "A F !");
  assert.throws(() => parsePrompt(badTok), /unknown map token "!"/);
  const mismatch = SAMPLE.replace("to (1, 0).", "to (2, 2).");
  assert.throws(() => parsePrompt(mismatch), /map shows/);
  const missing = SAMPLE.replace("A F F", "F F F");
  assert.throws(() => parsePrompt(missing), /agent 2 has no start/);
});

Deno.test("default instructions mention slip, horizon and the answer format", () => {
  const [inst] =
    generate({ preset: "easy", slip: 0.2 }, { count: 1, seed: 1 }).instances;
  const text = renderPrompt(inst!);
  assert.ok(text.includes("probability 0.2"));
  assert.ok(text.includes(`within ${inst!.horizon} steps`));
  assert.ok(text.includes('"Agent 0: R R D S"'));
});

Deno.test("parsePlanText reads the answer format and executes", () => {
  const inst = parsePrompt(SAMPLE);
  const plan = parsePlanText(
    "Here is the plan:\nAgent 0: S L\nAgent 1: R\n- Agent 2: up, up\n",
    3,
  );
  assert.deepEqual(plan, [[0, 3], [4], [1, 1]]);
  assert.equal(replayPlan(inst, plan).outcome, "success");
  // moving agent 0 at once collides with agent 2 on (1, 0)
  assert.equal(
    replayPlan(inst, [[3], [4], [1, 1]]).outcome,
    "vertex_collision",
  );
  assert.deepEqual(parsePlanText("Agent 0: [U, D, S]\nAgent 1: R R", 2), [[
    1,
    2,
    0,
  ], [4, 4]]);
  assert.throws(() => parsePlanText("Agent 0: X", 1), PlanParseError);
  assert.throws(() => parsePlanText("Agent 0: U", 2), /no line "Agent 1/);
  assert.throws(() => parsePlanText("Agent 5: U", 2), /agent 5/);
});
