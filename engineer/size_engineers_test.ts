import assert from "node:assert/strict";
import { type Findings, parseFindings } from "../schemas/findings.ts";
import {
  formComponents,
  parseSizeForm,
  type SizeForm,
  sizeFormMixture,
} from "../schemas/size_form.ts";
import { configId } from "../schemas/env_config.ts";
import type { ChatMessage } from "../llm/client.ts";
import type { ChatBackend } from "../llm/endpoint.ts";
import { diagnose } from "./diagnose.ts";
import { buildSizeContext, sizeLines } from "./size_context.ts";
import { sizeRules } from "./size_rules.ts";
import { sizeEngineer as band } from "./size_band.ts";
import { sizeEngineer as random } from "./size_random.ts";
import {
  sizeLlmEngineer,
  sizeReplyGrammar,
  sizeReplyJsonSchema,
} from "./size_llm.ts";

/** Outcomes of one component: success and failures by kind. */
type Counts = {
  success: number;
  hole?: number;
  vertex?: number;
  edge?: number;
  timeout?: number;
};

/** Findings of a form's stage with hand-made per-component outcomes (in formComponents order). */
function findingsFor(form: SizeForm, counts: Counts[]): Findings {
  const base = diagnose([], { config: sizeFormMixture(form) });
  const comps = formComponents(form);
  assert.equal(counts.length, comps.length);
  const components = comps.map((c, i) => {
    const k = counts[i]!;
    const outcomes = {
      success: k.success,
      hole: k.hole ?? 0,
      vertex_collision: k.vertex ?? 0,
      edge_collision: k.edge ?? 0,
      timeout: k.timeout ?? 0,
      invalid_plan: 0,
    };
    const episodes = Object.values(outcomes).reduce((a, b) => a + b, 0);
    return {
      index: i,
      weight: c.weight,
      config_id: configId(c.config),
      episodes,
      success_rate: episodes === 0 ? 0 : k.success / episodes,
      agent_success_rate: episodes === 0 ? 0 : k.success / episodes,
      outcomes,
    };
  });
  const episodes = components.reduce((a, c) => a + c.episodes, 0);
  const success = components.reduce((a, c) => a + c.outcomes.success, 0);
  return parseFindings({
    ...base,
    episodes,
    success_rate: episodes === 0 ? 0 : success / episodes,
    components,
  });
}

const FORM = parseSizeForm({
  sizes: {
    "3x3": { data_ratio: 0.5, hole_ratio: 0.1, wait_ratio: 0.2 },
    "4x4": { data_ratio: 0.5, hole_ratio: 0.1, wait_ratio: 0.2 },
  },
});

Deno.test("size context: components fold back into sizes, with success per wait class and failures in the paper's categories", () => {
  // 3x3 wait, 3x3 free, 4x4 wait, 4x4 free
  const f = findingsFor(FORM, [
    { success: 6, vertex: 11, timeout: 2 },
    { success: 71, vertex: 3, edge: 3 },
    { success: 3, vertex: 12, hole: 1, timeout: 3 },
    { success: 70, hole: 1, vertex: 6 },
  ]);
  const lines = sizeLines(f, FORM);
  const s3 = lines.find((l) => l.size === "3x3")!;
  assert.equal(s3.episodes, 96);
  assert.equal(s3.success_rate, 0.8021);
  assert.equal(s3.success_wait, 0.3158);
  assert.equal(s3.episodes_wait, 19);
  assert.equal(s3.success_free, 0.9221);
  assert.deepEqual(s3.failures, {
    parse_errors: 0,
    illegal_moves: null,
    conflicts: 17,
    hole_collisions: 0,
    timeouts: 2,
  });
  const full = buildSizeContext("full", f, FORM);
  assert.match(
    full.text,
    /3x3: episodes 96, success 0\.8021 \(needs a wait: 0\.3158, needs none: 0\.9221\); failures: parse errors 0, illegal moves n\/a, conflicts 17, hole collisions 0, timeouts 2/,
  );
  // `failures` shows the counts but no success; `none` only the form
  const fail = buildSizeContext("failures", f, FORM);
  assert.equal(fail.json.sizes![0]!.success_rate, null);
  assert.doesNotMatch(fail.text, /success 0\.8021/);
  assert.match(fail.text, /conflicts 17/);
  const none = buildSizeContext("none", f, FORM);
  assert.equal(none.json.sizes, undefined);
  assert.doesNotMatch(none.text, /episodes/);
});

Deno.test("rules: a size failing on conflicts gets more data and more waits; a size that works is kept; a weak wait class raises the wait ratio", () => {
  const f = findingsFor(FORM, [
    { success: 2, vertex: 15 }, // 3x3 needing a wait: 2/17
    { success: 30, vertex: 20 }, // 3x3 free: 30/50 -> 3x3 fails (32/67)
    { success: 18, vertex: 1 }, // 4x4 wait: 18/19
    { success: 76, hole: 1 }, // 4x4 free: 4x4 works (94/96)
  ]);
  const out = sizeRules(FORM, sizeLines(f, FORM), true);
  assert.deepEqual(out.form.sizes["3x3"], {
    data_ratio: 0.75,
    hole_ratio: 0.1,
    wait_ratio: 0.4,
  });
  assert.deepEqual(out.form.sizes["4x4"], FORM.sizes["4x4"]);
  assert.deepEqual(
    out.events.map((e) => e.detail.split(":")[0]),
    ["fails-more-data", "fails-more-waits", "works-keep"],
  );
  // overall fine, but the instances that need a wait fail
  const g = findingsFor(FORM, [
    { success: 6, vertex: 13 },
    { success: 71, vertex: 6 },
    { success: 19 },
    { success: 77 },
  ]);
  const w = sizeRules(FORM, sizeLines(g, FORM), true);
  assert.equal(w.form.sizes["3x3"].wait_ratio, 0.4);
  assert.equal(w.form.sizes["3x3"].data_ratio, 0.5);
  assert.match(
    w.events[0]!.detail,
    /^waits-fail: 3x3 success 0\.8021, but 0\.3158/,
  );
});

Deno.test("rules: when every drawn size works the next larger size is added; without per-size evidence the form is kept", () => {
  const f = findingsFor(FORM, [
    { success: 19 },
    { success: 77 },
    { success: 19 },
    { success: 76, vertex: 1 },
  ]);
  const out = sizeRules(FORM, sizeLines(f, FORM), true);
  assert.deepEqual(out.form.sizes["5x5"], {
    data_ratio: 0.5,
    hole_ratio: 0.1,
    wait_ratio: 0.5,
  });
  assert.match(out.rationale, /grow/);
  const kept = sizeRules(FORM, undefined, false);
  assert.deepEqual(kept.form, FORM);
  assert.match(kept.events[0]!.detail, /^no-evidence/);
});

Deno.test("band: a size above the band gets harder, one below it easier, one inside is kept", async () => {
  const form = parseSizeForm({
    sizes: {
      "3x3": { data_ratio: 1, wait_ratio: 0.4, hole_ratio: 0.1 },
      "5x5": { data_ratio: 1, wait_ratio: 0.4, hole_ratio: 0.1 },
      "7x7": { data_ratio: 1, wait_ratio: 0.4, hole_ratio: 0.1 },
    },
  });
  const f = findingsFor(form, [
    { success: 8 },
    { success: 12 }, // 3x3: 20/20 above
    { success: 1, vertex: 7 },
    { success: 2, vertex: 10 }, // 5x5: 3/20 below
    { success: 4, vertex: 4 },
    { success: 8, vertex: 4 }, // 7x7: 12/20 inside
  ]);
  const eng = band.create({}, { baseDir: ".", log: () => {} });
  const p = await eng.propose({
    context: buildSizeContext("stats", f, form),
    form,
    seed: 1,
  });
  assert.deepEqual(p.form.sizes["3x3"], {
    data_ratio: 1,
    wait_ratio: 0.6,
    hole_ratio: 0.15,
  });
  assert.deepEqual(p.form.sizes["5x5"], {
    data_ratio: 1,
    wait_ratio: 0.2,
    hole_ratio: 0.05,
  });
  assert.deepEqual(p.form.sizes["7x7"], form.sizes["7x7"]);
});

Deno.test("random: a seeded fresh form per stage within the box; agents kept", async () => {
  const eng = random.create({}, { baseDir: ".", log: () => {} });
  const at = (stage: number) =>
    eng.propose({
      context: buildSizeContext("none", null, FORM, { stage }),
      form: FORM,
      seed: 5,
    });
  const [a, b, a2] = [await at(0), await at(1), await at(0)];
  assert.deepEqual(a.form, a2.form);
  assert.notDeepEqual(a.form.sizes, b.form.sizes);
  for (const r of Object.values(a.form.sizes)) {
    assert.ok(r.hole_ratio >= 0 && r.hole_ratio <= 0.3);
    assert.ok(r.wait_ratio >= 0 && r.wait_ratio <= 1);
  }
  assert.equal(a.form.agents, 2);
});

function fakeClient(replies: string[], seen: ChatMessage[][]): ChatBackend {
  return {
    model: "fake",
    chat(messages) {
      seen.push([...messages]);
      const text = replies.shift() ?? "";
      return Promise.resolve({
        text,
        finishReason: "stop",
        usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
        cached: false,
        requestHash: "0".repeat(64),
        attempts: [],
      });
    },
  };
}

Deno.test("llm (form): the prompt carries the per-size context and the fields; a reply that is not JSON is asked again; an out-of-range one is clamped; agents are never taken from a reply", async () => {
  const f = findingsFor(FORM, [
    { success: 6, vertex: 13 },
    { success: 71, vertex: 6 },
    { success: 19 },
    { success: 77 },
  ]);
  const sizes = Object.fromEntries(
    ["3x3", "4x4", "5x5", "6x6", "7x7", "8x8", "9x9", "10x10"].map((k) => [
      k,
      { data_ratio: 0, hole_ratio: 0.1, wait_ratio: 0 },
    ]),
  );
  sizes["3x3"] = { data_ratio: 0.7, hole_ratio: 0.1, wait_ratio: 1.4 };
  sizes["4x4"] = { data_ratio: 0.3, hole_ratio: 0.1, wait_ratio: 0.3 };
  const seen: ChatMessage[][] = [];
  const eng = sizeLlmEngineer({
    client: fakeClient([
      "I think more waits.",
      JSON.stringify({
        rationale: "3x3 fails on waits",
        config: { agents: 5, sizes },
      }),
    ], seen),
  });
  const p = await eng.propose({
    context: buildSizeContext("full", f, FORM),
    form: FORM,
    seed: 1,
  });
  assert.equal(seen.length, 2);
  assert.match(
    seen[0]![0]!.content,
    /wait_ratio: number 0\.\.1: the share of this size's instances whose optimal solution needs at least one agent to wait/,
  );
  assert.match(
    seen[0]![1]!.content,
    /3x3: episodes 96, success 0\.8021 \(needs a wait: 0\.3158/,
  );
  assert.match(seen[1]![3]!.content, /not a JSON object/);
  assert.equal(p.form.agents, 2);
  assert.deepEqual(p.form.sizes["3x3"], {
    data_ratio: 0.7,
    hole_ratio: 0.1,
    wait_ratio: 1,
  });
  assert.equal(p.llm!.reasks, 1);
  assert.equal(p.llm!.clamped, 1);
  assert.equal(p.llm!.fallback, 0);
  assert.equal(p.usage!.totalTokens, 30);
  assert.match(p.rationale, /3x3 fails on waits/);
  // no usable reply at all: the current form is kept
  const none = await sizeLlmEngineer({
    client: fakeClient(["no", "no", "no"], []),
  }).propose({
    context: buildSizeContext("none", null, FORM),
    form: FORM,
    seed: 1,
  });
  assert.deepEqual(none.form, FORM);
  assert.equal(none.llm!.fallback, 1);
});

Deno.test("llm (form): the reply schema names every size with bounded ratios, and the grammar is built from it", () => {
  const s = sizeReplyJsonSchema() as {
    properties: {
      config: {
        properties: {
          sizes: {
            required: string[];
            properties: Record<
              string,
              { properties: Record<string, { maximum: number }> }
            >;
          };
        };
      };
    };
  };
  const sizes = s.properties.config.properties.sizes;
  assert.deepEqual(sizes.required, [
    "3x3",
    "4x4",
    "5x5",
    "6x6",
    "7x7",
    "8x8",
    "9x9",
    "10x10",
  ]);
  assert.equal(sizes.properties["5x5"]!.properties.hole_ratio!.maximum, 0.6);
  const g = sizeReplyGrammar();
  assert.match(g, /root ::=/);
  assert.match(g, /10x10/);
});

Deno.test("size context: an earlier stage read from its findings alone shows that stage's data shares and per-size success", () => {
  const earlier = parseSizeForm({
    sizes: {
      "3x3": { data_ratio: 0.75, wait_ratio: 0.5 },
      "4x4": { data_ratio: 0.25, wait_ratio: 0 },
    },
  });
  const f = findingsFor(earlier, [
    { success: 3, vertex: 3 },
    { success: 6 },
    { success: 2, hole: 2 },
  ]);
  const ctx = buildSizeContext("full", null, FORM, {
    history: [{ findings: f }],
  });
  assert.deepEqual(ctx.json.history, [{
    success_rate: 11 / 16,
    sizes: [
      { size: "3x3", data_ratio: 0.75, success_rate: 0.75 },
      { size: "4x4", data_ratio: 0.25, success_rate: 0.5 },
    ],
  }]);
  assert.match(
    ctx.text,
    /0: success 0\.6875; 3x3 data 0\.75 success 0\.75, 4x4 data 0\.25 success 0\.5/,
  );
});

const FAKE_FORM_SERVER = `
const [port, model] = Deno.args;
const sizes = {};
for (const s of [3, 4, 5, 6, 7, 8, 9, 10]) sizes[s + "x" + s] = { data_ratio: s === 5 ? 1 : 0, hole_ratio: 0.2, wait_ratio: 0.5 };
const content = JSON.stringify({ rationale: "train on 5x5", config: { sizes } });
Deno.serve({ hostname: "127.0.0.1", port: Number(port), onListen() {} }, (req) => {
  const path = new URL(req.url).pathname;
  if (path === "/v1/models") {
    return Response.json({ object: "list", data: [{ id: model ?? "fake", object: "model" }] });
  }
  return Response.json({
    id: "x", object: "chat.completion", created: 0, model: model ?? "fake",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
  });
});
`;

Deno.test("llm (form) serve: each redesign starts the model's server, asks it, and stops it; the reply becomes the next form", async () => {
  const { join } = await import("node:path");
  const { sizeEngineer: llm } = await import("./size_llm.ts");
  const dir = await Deno.makeTempDir({ prefix: "envsmith-size-serve-" });
  try {
    await Deno.writeTextFile(join(dir, "fake.ts"), FAKE_FORM_SERVER);
    await Deno.mkdir(join(dir, "checkpoint"));
    const log: string[] = [];
    const params = {
      serve: {
        command: [Deno.execPath(), "run", "-A", "fake.ts", "{port}", "{model}"],
        model: "checkpoint",
      },
    };
    // checked at plan: the program exists
    assert.ok(llm.fingerprint!(params, { baseDir: dir }));
    const eng = llm.create(params, {
      baseDir: dir,
      auxDir: join(dir, "aux"),
      log: (l) => log.push(l),
      env: () => undefined,
    });
    const p = await eng.propose({
      context: buildSizeContext("none", null, FORM),
      form: FORM,
      seed: 1,
    });
    assert.deepEqual(p.form.sizes["5x5"], {
      data_ratio: 1,
      hole_ratio: 0.2,
      wait_ratio: 0.5,
    });
    assert.equal(p.form.sizes["3x3"].data_ratio, 0);
    assert.equal(p.llm!.requests, 1);
    assert.match(String(p.report!.model), /checkpoint.*\(served\)/);
    assert.ok(log.some((l) => /process group \d+/.test(l)), log.join(" | "));
    const m = log.join("\n").match(/process group (\d+)/)!;
    const { groupMembers } = await import("../llm/_served_testing.ts");
    assert.deepEqual(groupMembers(Number(m[1])), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
