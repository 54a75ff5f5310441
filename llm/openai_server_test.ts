// envsmith's OpenAI-compatible server over real HTTP, on a tiny
// random-weight GGUF written here (its replies are noise; what is tested is
// the wire format, the grammar, the errors).
import { scaledMs } from "../engine/testdata/load.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { ChatClient } from "./client.ts";
import {
  ChatRequestError,
  JSON_OBJECT_GBNF,
  parseChatRequest,
  startOpenAiServer,
} from "./openai_server.ts";
import { writeRandomGguf } from "./random_gguf.ts";
import { throwsType } from "./_testing.ts";
import { withModelDir } from "./_local_testing.ts";

const hi = [{ role: "user", content: "Name a colour." }];

/** A schema with bounds, an enum and a short string. */
const SCHEMA = {
  type: "object",
  properties: {
    agents: { type: "integer", minimum: 2, maximum: 12 },
    slip: { type: "number", minimum: 0, maximum: 0.5 },
    mode: { enum: ["fail", "block"] },
    note: { type: "string", maxLength: 10 },
  },
  required: ["agents", "slip", "mode", "note"],
};

Deno.test("openai server: parseChatRequest refuses what it cannot honour, naming the field", () => {
  const bad: [unknown, string, number][] = [
    [[], "the body must be a JSON object", 400],
    [{}, "messages", 400],
    [{ messages: [] }, "messages", 400],
    [{ messages: [{ role: "bot", content: "x" }] }, "messages[0].role", 400],
    [{ messages: [{ role: "user", content: 3 }] }, "messages[0].content", 400],
    [{ messages: hi, temperature: 3 }, "temperature", 400],
    [{ messages: hi, seed: -1 }, "seed", 400],
    [{ messages: hi, seed: 1.5 }, "seed", 400],
    [{ messages: hi, max_tokens: 0 }, "max_tokens", 400],
    [{ messages: hi, stream: true }, "stream", 400],
    [{ messages: hi, n: 2 }, "n", 400],
    [{ messages: hi, tools: [] }, "tools", 400],
    [
      { messages: hi, response_format: { type: "xml" } },
      "response_format.type",
      400,
    ],
    [
      {
        messages: hi,
        response_format: { type: "json_schema", json_schema: {} },
      },
      "response_format.json_schema.schema",
      400,
    ],
    [
      {
        messages: hi,
        response_format: {
          type: "json_schema",
          json_schema: { schema: { type: "string", pattern: "a+" } },
        },
      },
      "response_format.json_schema.schema",
      400,
    ],
    [{ messages: hi, model: "other" }, "model", 404],
  ];
  for (const [body, param, status] of bad) {
    const e = throwsType(
      () => parseChatRequest(body, "m.gguf"),
      ChatRequestError,
    );
    assert.equal(e.status, status, JSON.stringify(body));
    if (param.includes(" ")) assert.match(e.message, new RegExp(param));
    else assert.equal(e.param, param, JSON.stringify(body));
  }
  const ok = parseChatRequest({
    model: "m.gguf",
    messages: [
      { role: "system", content: "s" },
      {
        role: "user",
        content: [{ type: "text", text: "a" }, { type: "text", text: "b" }],
      },
    ],
    max_completion_tokens: 9,
    temperature: 0.5,
    seed: 7,
    response_format: { type: "json_object" },
    chat_template_kwargs: { enable_thinking: false },
  }, "m.gguf");
  assert.deepEqual(ok.messages.map((m) => m.content), ["s", "ab"]);
  assert.equal(ok.options.maxTokens, 9);
  assert.equal(ok.options.temperature, 0.5);
  assert.equal(ok.options.seed, 7);
  assert.equal(ok.options.grammar, JSON_OBJECT_GBNF);
  assert.equal(ok.options.thinking, "off");
  const schema = parseChatRequest({
    messages: hi,
    response_format: {
      type: "json_schema",
      json_schema: { name: "x", schema: SCHEMA },
    },
  }, "m.gguf");
  // the bounds are spelled out in the grammar
  assert.match(schema.options.grammar!, /"1" \[0-2\]/);
});

Deno.test("openai server: hostile schemas and messages are 400s naming the limit, in milliseconds", () => {
  const schema = (s: unknown) => ({
    messages: hi,
    response_format: { type: "json_schema", json_schema: { schema: s } },
  });
  let deep = '{"type":"null"}';
  for (let i = 0; i < 100_000; i++) deep = `{"type":"array","items":${deep}}`;
  const cases: [unknown, RegExp][] = [
    [
      schema({ type: "number", minimum: 1e-300, maximum: 1 }),
      /needs 300 decimal places; the limit schema-decimals is 6/,
    ],
    [
      schema({ enum: Array.from({ length: 300_000 }, (_, i) => i) }),
      /enum has 300000 entries; the limit schema-enum is 1000/,
    ],
    [schema(JSON.parse(deep)), /the limit schema-depth is 32/],
    [schema({ enum: "abc" }), /enum must be a list/],
    [schema({ type: "object", properties: null }), /properties must be/],
    [schema({ type: "array", items: null }), /a schema must be an object/],
    [
      { messages: Array.from({ length: 20_000 }, () => hi[0]) },
      /messages has 20000 entries; this server reads at most 10000/,
    ],
    [{ messages: hi, model: { x: "y".repeat(1e6) } }, /is not served here/],
  ];
  for (const [body, message] of cases) {
    const t0 = performance.now();
    const e = throwsType(
      () => parseChatRequest(body, "m.gguf"),
      ChatRequestError,
    );
    const ms = performance.now() - t0;
    assert.ok(e.status === 400 || e.status === 404);
    assert.match(e.message, message);
    assert.ok(
      e.message.length < 600,
      `a ${e.message.length}-character message`,
    );
    assert.ok(ms < scaledMs(2000), `${message}: ${ms.toFixed(0)} ms`);
  }
});

Deno.test("openai server: chat over real HTTP on a random-weight GGUF", async (t) => {
  await withModelDir("envsmith-serve-", async (dir) => {
    const gguf = join(dir, "tiny.gguf");
    await writeRandomGguf(gguf, { seed: 1 });
    await using server = await startOpenAiServer({
      gguf,
      threads: 1,
      contextSize: 2048,
      maxBodyBytes: 1 << 20,
      maxQueue: 2,
    });
    console.log(`server ready in ${server.startMs.toFixed(0)} ms`);
    const post = (body: unknown) =>
      fetch(`${server.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });

    await t.step("GET /v1/models lists the file", async () => {
      assert.match(server.baseURL, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      const res = await fetch(`${server.baseURL}/models`);
      assert.equal(res.status, 200);
      const body = await res.json();
      assert.deepEqual(body.data.map((m: { id: string }) => m.id), [
        "tiny.gguf",
      ]);
    });

    await t.step(
      "a chat: OpenAI wire format, seeded, max_tokens honoured",
      async () => {
        const t0 = performance.now();
        const res = await post({ messages: hi, max_tokens: 8 }); // greedy
        const ms = performance.now() - t0;
        assert.equal(res.status, 200);
        const body = await res.json();
        assert.equal(body.object, "chat.completion");
        assert.equal(body.model, "tiny.gguf");
        assert.equal(body.choices[0].message.role, "assistant");
        assert.equal(typeof body.choices[0].message.content, "string");
        assert.equal(body.choices[0].finish_reason, "length");
        assert.equal(body.usage.completion_tokens, 8);
        // BOS <|im_start|>user\n...<|im_end|>\n<|im_start|>assistant\n: 4
        // control tokens, every other byte one token: the message arrived whole
        const bytes = new TextEncoder().encode(
          "user\nName a colour.\nassistant\n",
        ).length;
        assert.equal(body.usage.prompt_tokens, 4 + bytes);
        assert.equal(
          body.usage.total_tokens,
          body.usage.prompt_tokens + body.usage.completion_tokens,
        );
        console.log(`chat round trip (8 tokens): ${ms.toFixed(0)} ms`);
        const sampled = async (seed: number) =>
          (await (await post({
            messages: hi,
            max_tokens: 8,
            seed,
            temperature: 1,
          })).json()).choices[0].message.content;
        const a = await sampled(3), b = await sampled(3), c = await sampled(4);
        assert.equal(a, b);
        assert.notEqual(a, c);
      },
    );

    await t.step(
      "the HTTP client of the llm engineer talks to it",
      async () => {
        const reply = await new ChatClient({
          baseURL: server.baseURL,
          model: server.model,
          maxTokens: 4,
          maxRetries: 0,
        }).chat([{ role: "user", content: "hi" }]);
        assert.equal(reply.usage.completionTokens, 4);
        assert.deepEqual(reply.attempts.map((a) => a.status), [200]);
      },
    );

    await t.step(
      "json_schema replies parse and keep the schema's bounds",
      async () => {
        for (let seed = 1; seed <= 5; seed++) {
          const res = await post({
            messages: hi,
            seed,
            temperature: 1,
            response_format: {
              type: "json_schema",
              json_schema: { name: "cfg", strict: true, schema: SCHEMA },
            },
          });
          assert.equal(res.status, 200);
          const body = await res.json();
          assert.equal(body.choices[0].finish_reason, "stop");
          const x = JSON.parse(body.choices[0].message.content);
          assert.deepEqual(Object.keys(x), ["agents", "slip", "mode", "note"]);
          assert.ok(
            Number.isInteger(x.agents) && x.agents >= 2 && x.agents <= 12,
            `agents ${x.agents}`,
          );
          assert.ok(x.slip >= 0 && x.slip <= 0.5, `slip ${x.slip}`);
          assert.ok(["fail", "block"].includes(x.mode));
          // (its length is not checked: a byte-level random model writes
          // broken UTF-8 inside the grammar's characters, decoded as U+FFFD)
          assert.equal(typeof x.note, "string");
        }
      },
    );

    await t.step("json_object replies are JSON objects", async () => {
      for (let seed = 1; seed <= 3; seed++) {
        const body = await (await post({
          messages: hi,
          seed,
          temperature: 1,
          max_tokens: 48,
          response_format: { type: "json_object" },
        })).json();
        const text: string = body.choices[0].message.content;
        assert.match(text, /^\{/);
        if (body.choices[0].finish_reason === "stop") {
          const x = JSON.parse(text);
          assert.ok(x !== null && typeof x === "object" && !Array.isArray(x));
        }
      }
    });

    await t.step(
      "bad requests are 400 with an OpenAI error body; unknown things 404/405",
      async () => {
        const cases: [RequestInit & { path?: string }, number, RegExp][] = [
          [{ method: "POST", body: "not json" }, 400, /the body is not JSON/],
          [
            { method: "POST", body: "{}" },
            400,
            /messages must be a non-empty array/,
          ],
          [
            {
              method: "POST",
              body: JSON.stringify({ messages: hi, temperature: -1 }),
            },
            400,
            /temperature must be a number in \[0, 2\]/,
          ],
          [
            {
              method: "POST",
              body: JSON.stringify({ messages: hi, stream: true }),
            },
            400,
            /stream is not supported/,
          ],
          [
            {
              method: "POST",
              body: JSON.stringify({ messages: hi, model: "gpt-4" }),
            },
            404,
            /is not served here; this server serves "tiny.gguf"/,
          ],
          [{ method: "GET" }, 405, /answers POST only/],
          [
            { method: "GET", path: "/v1/embeddings" },
            404,
            /no route GET \/v1\/embeddings/,
          ],
          [
            {
              method: "POST",
              body: JSON.stringify({
                messages: [{ role: "user", content: "x".repeat(3000) }],
                max_tokens: 8,
              }),
            },
            400,
            /do not fit the context of 2048 tokens/,
          ],
        ];
        for (const [init, status, message] of cases) {
          const url = init.path === undefined
            ? `${server.baseURL}/chat/completions`
            : server.baseURL.replace(/\/v1$/, init.path);
          const res = await fetch(url, init);
          assert.equal(res.status, status, `${init.method} ${init.body}`);
          assert.match(
            res.headers.get("content-type") ?? "",
            /application\/json/,
          );
          const body = await res.json();
          assert.match(body.error.message, message);
          assert.equal(body.error.type, "invalid_request_error");
        }
      },
    );

    await t.step(
      "a body over the limit is 413 before it is parsed, with or without a length",
      async () => {
        const rss0 = Deno.memoryUsage().rss;
        const t0 = performance.now();
        const big = new Uint8Array(8 << 20).fill(0x20);
        let res = await post(new TextDecoder().decode(big));
        assert.equal(res.status, 413);
        assert.match(
          (await res.json()).error.message,
          /the body is 8388608 bytes; this server reads at most 1048576 \(serve-llm --max-body-bytes N raises it\)/,
        );
        // chunked: no Content-Length, refused once the limit is passed
        let sent = 0;
        const stream = new ReadableStream<Uint8Array>({
          pull(c) {
            if (sent >= 64 << 20) return c.close();
            sent += 1 << 16;
            c.enqueue(new Uint8Array(1 << 16).fill(0x20));
          },
        });
        res = await fetch(`${server.baseURL}/chat/completions`, {
          method: "POST",
          body: stream,
        }).catch((e) => e);
        if (res instanceof Response) {
          assert.equal(res.status, 413);
          assert.match((await res.json()).error.message, /more than 1048576/);
        }
        assert.ok(sent < 64 << 20, `the server read ${sent} bytes`);
        const ms = performance.now() - t0;
        assert.ok(ms < scaledMs(5000), `${ms.toFixed(0)} ms`);
        const grew = (Deno.memoryUsage().rss - rss0) / 2 ** 20;
        assert.ok(grew < 300, `${grew.toFixed(0)} MB more`);
      },
    );

    await t.step(
      "a prompt far over the context is refused after counting about a context of tokens",
      async () => {
        const t0 = performance.now();
        const res = await post({
          messages: [{ role: "user", content: "ab ".repeat(300_000) }],
          max_tokens: 1,
        });
        const ms = performance.now() - t0;
        assert.equal(res.status, 400);
        const body = await res.json();
        assert.match(
          body.error.message,
          /The prompt \(at least \d+ tokens\) does not fit the context of 2048 tokens/,
        );
        const atLeast = Number(/at least (\d+)/.exec(body.error.message)![1]);
        // counted chunk by chunk, stopped past the context: not 900,000
        assert.ok(atLeast > 2047 && atLeast < 2048 + 9000, `${atLeast}`);
        assert.equal(body.error.param, "messages");
        assert.ok(ms < scaledMs(5000), `${ms.toFixed(0)} ms`);
      },
    );

    await t.step(
      "no request a client can send is answered 500",
      async () => {
        const bodies: unknown[] = [
          "",
          "[",
          "null",
          '"x"',
          "1e999",
          "\u0000",
          { messages: [{ role: "user", content: null }] },
          { messages: [null] },
          { messages: hi, response_format: null },
          { messages: hi, response_format: "json" },
          { messages: hi, response_format: { type: "json_schema" } },
          {
            messages: hi,
            response_format: {
              type: "json_schema",
              json_schema: {
                schema: { type: "string", maxLength: 1000, minLength: 1000 },
              },
            },
            max_tokens: 1,
          },
          {
            messages: hi,
            response_format: {
              type: "json_schema",
              json_schema: {
                schema: { type: "integer", minimum: 0.2, maximum: 0.8 },
              },
            },
          },
          { messages: hi, max_tokens: 1e300 },
          { messages: hi, seed: "1" },
          { messages: hi, chat_template_kwargs: [] },
          { messages: hi, max_tokens: 2048 },
          { messages: [{ role: "user", content: [{ type: "image" }] }] },
        ];
        for (const b of bodies) {
          const res = await post(b);
          await res.body?.cancel();
          assert.ok(
            res.status < 500,
            `${res.status} for ${JSON.stringify(b).slice(0, 120)}`,
          );
        }
      },
    );

    await t.step(
      "a client that goes away stops its generation; past maxQueue is 429",
      async () => {
        // A reply of exactly 6,000 characters: seconds of generation.
        const long = {
          messages: hi,
          temperature: 1,
          response_format: {
            type: "json_schema",
            json_schema: {
              schema: {
                type: "array",
                items: { type: "string", minLength: 1000, maxLength: 1000 },
                minItems: 6,
                maxItems: 6,
              },
            },
          },
        };
        const gone = new AbortController();
        const first = fetch(`${server.baseURL}/chat/completions`, {
          method: "POST",
          body: JSON.stringify(long),
          signal: gone.signal,
        }).catch((e) => e);
        await new Promise((r) => setTimeout(r, 300));
        // one generating, one waiting, the third refused
        const waiting = post({ messages: hi, max_tokens: 2 });
        await new Promise((r) => setTimeout(r, 100));
        const refused = await post({ messages: hi, max_tokens: 2 });
        assert.equal(refused.status, 429);
        assert.equal(refused.headers.get("retry-after"), "1");
        assert.match((await refused.json()).error.message, /at most 2 at once/);
        const t0 = performance.now();
        gone.abort();
        assert.ok((await first) instanceof Error);
        const next = await waiting;
        const ms = performance.now() - t0;
        assert.equal(next.status, 200);
        assert.equal((await next.json()).usage.completion_tokens, 2);
        // the 6,000-character reply would take far longer
        assert.ok(
          ms < scaledMs(5000),
          `the next request waited ${ms.toFixed(0)} ms`,
        );
      },
    );
  });
});

Deno.test("openai server: a file that is not a model fails at start, before listening", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-serve-" });
  try {
    const text = join(dir, "model.gguf");
    await Deno.writeTextFile(text, "not a model");
    await assert.rejects(
      () => startOpenAiServer({ gguf: text }),
      /not a GGUF model file/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
