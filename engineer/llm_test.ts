import assert from "node:assert/strict";
import {
  configId,
  type EnvConfig,
  isMixture,
  PRESETS,
} from "../schemas/mod.ts";
import { LlmTimeoutError, startStubServer } from "../llm/mod.ts";
import { buildContext } from "./context.ts";
import { checkReply, llmEngineer, loadPrompts, promptDigest } from "./llm.ts";
import { diagnose } from "./diagnose.ts";
import { lineFamily } from "../families/_test_family.ts";
import { familyReplyGrammar } from "./reply_format.ts";
import type { ChatMessage } from "../llm/client.ts";
import {
  CUT_OFF_TWICE_LLM_STATS,
  slipHoleEpisode,
  successEpisode,
} from "./_fixtures.ts";

const easy = PRESETS.easy;
const SENTINEL = "sk-SENTINEL-engineer-7d3a";
const env = (n: string) => (n === "STUB_KEY" ? SENTINEL : undefined);
const findings = diagnose([successEpisode(), slipHoleEpisode()], {
  seed: 1,
  config: easy,
});
const context = buildContext("full", findings, easy, { history: [] });
const good =
  '{"rationale": "slips into holes: add slip", "config": {"mixture": [' +
  '{"weight": 0.6, "config": {"preset": "easy"}}, {"weight": 0.4, "config": {"preset": "easy", "slip": 0.1}}]}}';

async function propose(
  baseURL: string,
  extra: Record<string, unknown> = {},
  cacheDir?: string,
) {
  return await llmEngineer({
    chat: {
      baseURL,
      model: "stub",
      apiKeyEnv: "STUB_KEY",
      env,
      maxRetries: 1,
      timeoutMs: 3000,
      cacheDir,
      ...extra,
    },
  }).propose({ context, config: easy, seed: 1 });
}

Deno.test("llm engineer: a valid reply becomes the next config", async () => {
  await using stub = startStubServer([{ reply: good }]);
  const p = await propose(stub.baseURL);
  assert.ok(isMixture(p.config));
  assert.deepEqual(p.config.mixture.map((c) => [c.weight, c.config.slip]), [[
    0.6,
    0,
  ], [0.4, 0.1]]);
  assert.equal(p.rationale, "llm engineer: slips into holes: add slip");
  assert.deepEqual(p.events, []);
  assert.equal(p.usage!.requests, 1);
  // The prompt carries the dimensions and the context text.
  const msgs = stub.requests[0]!.body.messages;
  assert.match(msgs[0].content, /hole_density: number 0\.\.0\.6/);
  assert.match(msgs[1].content, /Context type: full/);
  assert.match(msgs[1].content, /# Failures/);
});

Deno.test("llm engineer: JSON in a code fence is accepted", async () => {
  await using stub = startStubServer([{
    reply: "Here you go:\n```json\n" + good + "\n```\nGood luck!",
  }]);
  const p = await propose(stub.baseURL);
  assert.ok(isMixture(p.config));
});

Deno.test("llm engineer: malformed JSON is re-asked with the parse error", async () => {
  await using stub = startStubServer([{ reply: '{"config": {"agents": 3,}}' }, {
    reply: good,
  }]);
  const p = await propose(stub.baseURL);
  assert.ok(isMixture(p.config));
  assert.deepEqual(p.events.map((e) => e.type), ["retry"]);
  const second = stub.requests[1]!.body.messages;
  assert.equal(second.length, 4);
  assert.equal(second[2].role, "assistant");
  assert.match(second[3].content, /does not parse/);
});

Deno.test("llm engineer: unknown fields are rejected with a did-you-mean", async () => {
  await using stub = startStubServer([{ reply: '{"config": {"agent": 3}}' }, {
    reply: '{"config": {"agents": 3}}',
  }]);
  const p = await propose(stub.baseURL);
  assert.equal((p.config as EnvConfig).agents, 3);
  assert.match(
    p.events[0]!.detail,
    /unknown config field "agent"; did you mean "agents"/,
  );
  assert.match(
    stub.requests[1]!.body.messages[3].content,
    /did you mean "agents"/,
  );
});

Deno.test("llm engineer: mildly out-of-range values are clamped and recorded", async () => {
  await using stub = startStubServer([{
    reply: '{"config": {"hole_density": 0.7, "slip": -0.1}}',
  }]);
  const p = await propose(stub.baseURL);
  assert.equal((p.config as EnvConfig).hole_density, 0.6);
  assert.equal((p.config as EnvConfig).slip, 0);
  assert.deepEqual(p.events.map((e) => e.type), ["clamped"]);
  assert.match(p.events[0]!.detail, /hole_density: 0\.7 clamped to 0\.6/);
});

Deno.test("llm engineer: non-finite values are rejected; after the retries the previous config is kept", async () => {
  const bad = '{"config": {"slip": 1e999, "agents": 3}}';
  await using stub = startStubServer([{ reply: bad }, { reply: bad }, {
    reply: "NaN",
  }]);
  const p = await propose(stub.baseURL);
  assert.equal(configId(p.config), configId(easy));
  assert.deepEqual(p.events.map((e) => e.type), ["retry", "retry", "fallback"]);
  assert.match(p.events[0]!.detail, /slip is Infinity, not a finite number/);
  assert.match(p.rationale, /no usable reply after 3 attempts/);
  assert.equal(stub.requests.length, 3);
});

Deno.test("llm engineer: a 10^9 x 10^9 grid is rejected, not clamped", async () => {
  await using stub = startStubServer([
    { reply: '{"config": {"width": 1000000000, "height": 1000000000}}' },
    { reply: '{"config": {"width": 10, "height": 10}}' },
  ]);
  const p = await propose(stub.baseURL);
  assert.equal((p.config as EnvConfig).width, 10);
  assert.match(
    p.events[0]!.detail,
    /width is 1000000000, far outside its range 2\.\.64/,
  );
});

Deno.test("llm engineer: 429 with Retry-After and 500 are retried by the client", async () => {
  await using stub = startStubServer([
    { status: 429, headers: { "retry-after": "1" } },
    { reply: good },
  ]);
  const p = await propose(stub.baseURL);
  assert.ok(isMixture(p.config));
  assert.equal(p.events[0]!.type, "http_retry");
  assert.match(p.events[0]!.detail, /2 HTTP attempts \(429, 200\)/);
  await using stub2 = startStubServer([{ status: 500 }, { reply: good }]);
  const q = await propose(stub2.baseURL);
  assert.match(q.events[0]!.detail, /\(500, 200\)/);
});

Deno.test("llm engineer: an endpoint that never answers throws, or falls back when asked", async () => {
  await using stub = startStubServer(() => ({ hang: true }));
  await assert.rejects(
    () => propose(stub.baseURL, { timeoutMs: 200, maxRetries: 0 }),
    (e) => e instanceof LlmTimeoutError,
  );
  const p = await llmEngineer({
    chat: {
      baseURL: stub.baseURL,
      model: "stub",
      timeoutMs: 200,
      maxRetries: 0,
    },
    onEndpointError: "fallback",
  }).propose({ context, config: easy, seed: 1 });
  assert.equal(configId(p.config), configId(easy));
  assert.deepEqual(p.events.map((e) => e.type), ["llm_error", "fallback"]);
});

Deno.test("llm engineer: replies replay offline from the cache, and the cache holds no key", async () => {
  const dir = await Deno.makeTempDir();
  try {
    {
      await using stub = startStubServer([{
        reply: '{"config": {"agents": 1}}',
      }, { reply: good }]);
      const live = await propose(stub.baseURL, {}, dir);
      assert.equal(
        stub.requests[0]!.headers.get("authorization"),
        `Bearer ${SENTINEL}`,
      );
      const offline = await propose(stub.baseURL, { offline: true }, dir);
      assert.equal(JSON.stringify(offline.config), JSON.stringify(live.config));
      assert.equal(offline.events[0]!.type, "cached");
      assert.equal(stub.requests.length, 1);
    }
    for await (const e of Deno.readDir(dir)) {
      for await (const f of Deno.readDir(`${dir}/${e.name}`)) {
        const text = await Deno.readTextFile(`${dir}/${e.name}/${f.name}`);
        assert.ok(!text.includes("SENTINEL"), f.name);
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("checkReply accepts a bare config and promptDigest is a stable sha256", () => {
  const r = checkReply('{"agents": 4, "rationale": "more"}', easy);
  assert.ok(r.ok);
  assert.equal(r.ok && (r.config as EnvConfig).agents, 4);
  assert.equal(r.ok && r.rationale, "more");
  assert.match(promptDigest(), /^[0-9a-f]{64}$/);
  assert.equal(promptDigest(), promptDigest());
  const notObj = checkReply("[1,2]", easy);
  assert.equal(notObj.ok, false);
});

Deno.test("llm engineer: the default prompt is neutral; the informed variant names suites and conclusions", () => {
  const neutral = loadPrompts();
  const informed = loadPrompts("informed");
  for (
    const p of [
      /crowded maps/,
      /Principles that work/i,
      /Preserve what already works/,
      /Change gradually/,
    ]
  ) {
    assert.doesNotMatch(neutral.system, p);
    assert.match(informed.system, p);
  }
  assert.match(neutral.system, /\{\{dimensions\}\}/);
  assert.match(
    neutral.system,
    /held-out instances whose configurations you are not told/,
  );
  assert.notEqual(promptDigest("neutral"), promptDigest("informed"));
  assert.equal(promptDigest(), promptDigest("neutral"));
});

Deno.test("llm engineer: the reply schema goes to the server as response_format; a server that refuses it is asked without", async () => {
  await using stub = startStubServer([{ reply: good }]);
  const p = await propose(stub.baseURL);
  assert.ok(isMixture(p.config));
  const body = stub.requests[0]!.body;
  assert.equal(body.response_format.type, "json_schema");
  assert.equal(body.response_format.json_schema.name, "environment_config");
  assert.equal(
    body.response_format.json_schema.schema.properties.config.anyOf.length,
    2,
  );
  assert.equal(body.max_tokens, 4096);
  await using refusing = startStubServer([
    { status: 400, message: "response_format json_schema is not supported" },
    { reply: good },
  ]);
  const q = await propose(refusing.baseURL, { maxRetries: 0 });
  assert.ok(isMixture(q.config));
  assert.equal(refusing.requests[1]!.body.response_format, undefined);
  assert.deepEqual(q.events.map((e) => e.type), ["format_rejected"]);
  assert.match(q.events[0]!.detail, /HTTP 400/);
});

Deno.test("llm engineer: a reply cut off at max_tokens before its JSON is a `truncated` event, never a silent fallback", async () => {
  await using stub = startStubServer([
    {
      reply: "<think>The agents keep falling into holes, so",
      finishReason: "length",
    },
    { reply: "<think>hmm", finishReason: "length" },
  ]);
  const p = await llmEngineer({
    chat: { baseURL: stub.baseURL, model: "stub", maxTokens: 64 },
    reasks: 1,
  }).propose({ context, config: easy, seed: 1 });
  assert.deepEqual(p.events.map((e) => e.type), [
    "truncated",
    "retry",
    "truncated",
    "fallback",
  ]);
  assert.match(
    p.events[0]!.detail,
    /cut off at max_tokens 64 before its JSON was complete \(inside an unfinished <think> block\): raise max_tokens, or set thinking: off/,
  );
  assert.deepEqual(
    { ...p.llm!, cached: 0 },
    CUT_OFF_TWICE_LLM_STATS,
  );
  // The re-ask says what happened.
  assert.match(
    stub.requests[1]!.body.messages[3].content,
    /cut off at the token limit/,
  );
});

Deno.test("llm engineer: thinking off reaches the server as chat_template_kwargs", async () => {
  await using stub = startStubServer([{ reply: good }]);
  await propose(stub.baseURL, { thinking: "off" });
  assert.deepEqual(stub.requests[0]!.body.chat_template_kwargs, {
    enable_thinking: false,
  });
  await using plain = startStubServer([{ reply: good }]);
  await propose(plain.baseURL);
  assert.equal(plain.requests[0]!.body.chat_template_kwargs, undefined);
});

Deno.test("llm engineer: a valid config the generator cannot realise is re-asked with the generator's message", async () => {
  await using stub = startStubServer([
    {
      reply:
        '{"rationale": "long trips", "config": {"preset": "easy", "hole_density": 0.2, "distance": {"min": 60, "max": 63}}}',
    },
    { reply: good },
  ]);
  const p = await propose(stub.baseURL);
  assert.ok(isMixture(p.config));
  assert.deepEqual(p.events.map((e) => e.type), ["retry"]);
  assert.match(
    p.events[0]!.detail,
    /the generator cannot realise it: .*shortest-path distance 60\.\.63/,
  );
  assert.match(stub.requests[1]!.body.messages[3].content, /cannot realise/);
  assert.equal(p.llm!.reasks, 1);
});

Deno.test("llm on another family: the family's dimensions and schema in the prompt, its reply schema as the constraint, replies checked against its space", async () => {
  const line = lineFamily();
  const seen: { messages: readonly ChatMessage[] }[] = [];
  let options: unknown;
  const replies = [
    '{"rationale": "too long", "config": {"length": 12, "gaps": 0}}',
    '{"rationale": "one more gap", "config": {"length": 5, "gaps": 2}}',
  ];
  const e = llmEngineer({
    chat: { baseURL: "http://127.0.0.1:9/v1", model: "m" },
    family: line,
    connect: (chat) => {
      options = chat;
      return {
        model: "m",
        chat: (messages) => {
          seen.push({ messages: [...messages] });
          return Promise.resolve({
            text: replies[seen.length - 1]!,
            finishReason: "stop",
            usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
            cached: false,
            requestHash: "h",
            attempts: [],
          } as never);
        },
      };
    },
  });
  const p = await e.propose({
    context: {
      json: { type: "stats", stage: 1 },
      text: "Family: line",
    } as never,
    config: line.presets.medium as never,
    seed: 1,
  });
  assert.deepEqual(p.config, { length: 5, gaps: 2 });
  assert.equal(p.rationale, "llm engineer: one more gap");
  const system = seen[0]!.messages[0]!.content;
  assert.match(system, /the family "line": walk to the end of a line/);
  assert.match(
    system,
    /- gaps: integer 0\.\.3, step 1, harder up: gaps to jump/,
  );
  assert.match(system, /"length":\{"type":"integer","minimum":1,"maximum":9/);
  assert.doesNotMatch(system, /FrozenLake/);
  // the first reply was outside the space: re-asked with the error
  assert.equal(seen.length, 2);
  assert.match(
    seen[1]!.messages.at(-1)!.content,
    /config\.length: .*\(family line\)/,
  );
  const format = (options as {
    responseFormat: { json_schema: { schema: { required: string[] } } };
  })
    .responseFormat.json_schema.schema;
  assert.deepEqual(format.required, ["rationale", "config"]);
  assert.match(familyReplyGrammar(line), /rationale/);
});
