import assert from "node:assert/strict";
import { rejectsType } from "./_testing.ts";
import { ChatClient, type ChatOptions, sanitizeBaseUrl } from "./client.ts";
import {
  LlmCacheMissError,
  LlmConfigError,
  LlmHttpError,
  LlmTimeoutError,
  LlmUnreachableError,
} from "./errors.ts";
import { startStubServer } from "./stub_server.ts";

const SENTINEL = "sk-SENTINEL-4f1c9e-never-write-me";
const env = (name: string) => name === "STUB_KEY" ? SENTINEL : undefined;
const msgs = [{ role: "user" as const, content: "hello" }];

/** A client of model "m" on `stub`, with `options` beside. */
function stubClient(
  stub: { baseURL: string },
  options: Omit<ChatOptions, "baseURL" | "model">,
): ChatClient {
  return new ChatClient({ baseURL: stub.baseURL, model: "m", ...options });
}

Deno.test("chat sends the configured request and returns text and usage", async () => {
  await using stub = startStubServer([{ reply: "hi there" }]);
  const client = new ChatClient({
    baseURL: stub.baseURL + "/",
    model: "stub-model",
    apiKeyEnv: "STUB_KEY",
    env,
    temperature: 0.3,
    seed: 42,
    maxTokens: 77,
  });
  const reply = await client.chat(msgs);
  assert.deepEqual(reply.text, "hi there");
  assert.deepEqual(reply.cached, false);
  assert.deepEqual(reply.finishReason, "stop");
  assert.deepEqual(reply.usage, {
    promptTokens: 2,
    completionTokens: 2,
    totalTokens: 4,
  });
  assert.deepEqual(reply.attempts.map((a) => a.status), [200]);
  const req = stub.requests[0]!;
  assert.deepEqual(req.path, "/v1/chat/completions");
  assert.deepEqual(req.body.model, "stub-model");
  assert.deepEqual(req.body.temperature, 0.3);
  assert.deepEqual(req.body.seed, 42);
  assert.deepEqual(req.body.max_tokens, 77);
  assert.deepEqual(req.body.messages, [{ role: "user", content: "hello" }]);
  assert.deepEqual(req.headers.get("authorization"), `Bearer ${SENTINEL}`);
});

Deno.test("replies are cached by request hash, without the key, and replayed offline", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await using stub = startStubServer([{ reply: "first" }, {
      reply: "second",
    }]);
    const opts = {
      baseURL: stub.baseURL,
      model: "m",
      apiKeyEnv: "STUB_KEY",
      env,
      cacheDir: dir,
    };
    const a = await new ChatClient(opts).chat(msgs);
    const b = await new ChatClient(opts).chat(msgs);
    assert.deepEqual([a.text, a.cached], ["first", false]);
    assert.deepEqual([b.text, b.cached], ["first", true]);
    assert.deepEqual(b.requestHash, a.requestHash);
    assert.deepEqual(stub.requests.length, 1);
    // A different prompt is a different entry.
    const c = await new ChatClient(opts).chat([{
      role: "user",
      content: "other",
    }]);
    assert.deepEqual([c.text, c.cached], ["second", false]);
    // Offline: hits are served, misses are a typed error.
    const off = new ChatClient({ ...opts, offline: true });
    assert.deepEqual((await off.chat(msgs)).text, "first");
    await rejectsType(
      () => off.chat([{ role: "user", content: "new" }]),
      LlmCacheMissError,
    );
    // The key is sent to the server but never written to the cache.
    let files = 0;
    for await (const f of _walk(dir)) {
      files++;
      const text = await Deno.readTextFile(f);
      assert(!text.includes(SENTINEL), `key leaked into ${f}`);
      assert(!text.includes("SENTINEL"), `key fragment leaked into ${f}`);
    }
    assert.deepEqual(files, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a corrupt cache entry is ignored and rewritten", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await using stub = startStubServer([{ reply: "fresh" }]);
    const client = stubClient(stub, { cacheDir: dir });
    const hash = client.hashOf(msgs);
    await Deno.mkdir(`${dir}/${hash.slice(0, 2)}`, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/${hash.slice(0, 2)}/${hash}.json`,
      '{"version":1,"ha',
    );
    const reply = await client.chat(msgs);
    assert.deepEqual([reply.text, reply.cached], ["fresh", false]);
    assert.deepEqual((await client.chat(msgs)).cached, true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("429 with Retry-After is retried after the requested delay", async () => {
  await using stub = startStubServer([
    { status: 429, headers: { "retry-after": "1" }, message: "slow down" },
    { reply: "ok" },
  ]);
  const client = stubClient(stub, { maxRetries: 2 });
  const reply = await client.chat(msgs);
  assert.deepEqual(reply.text, "ok");
  assert.deepEqual(reply.attempts.map((a) => a.status), [429, 200]);
  const gap = stub.requests[1]!.at - stub.requests[0]!.at;
  assert(gap >= 950, `retried after ${gap} ms, expected >= 1000 ms`);
});

Deno.test("500 then success is retried with backoff", async () => {
  await using stub = startStubServer([{ status: 500 }, { reply: "ok" }]);
  const client = stubClient(stub, { maxRetries: 1 });
  const reply = await client.chat(msgs);
  assert.deepEqual(reply.text, "ok");
  assert.deepEqual(reply.attempts.map((a) => a.status), [500, 200]);
  const gap = stub.requests[1]!.at - stub.requests[0]!.at;
  assert(
    gap >= 300,
    `backoff of ${gap} ms, expected >= 375 ms (0.5 s minus jitter)`,
  );
});

Deno.test("persistent 500 ends in LlmHttpError after the retries", async () => {
  await using stub = startStubServer([{ status: 500 }, { status: 502 }]);
  const client = stubClient(stub, { maxRetries: 1 });
  const e = await rejectsType(() => client.chat(msgs), LlmHttpError);
  assert.deepEqual(e.status, 502);
  assert.deepEqual(e.attempts, 2);
});

Deno.test("401 is not retried and the message names the key variable, not the key", async () => {
  await using stub = startStubServer([{ status: 401, message: "bad key" }]);
  const client = stubClient(stub, { apiKeyEnv: "STUB_KEY", env });
  const e = await rejectsType(() => client.chat(msgs), LlmHttpError);
  assert.deepEqual(e.status, 401);
  assert.deepEqual(stub.requests.length, 1);
  assert(e.message.includes("STUB_KEY"));
  assert(!e.message.includes(SENTINEL));
});

Deno.test("a server that never answers gives LlmTimeoutError after the retries", async () => {
  await using stub = startStubServer([{ hang: true }, { hang: true }]);
  const client = stubClient(stub, { timeoutMs: 250, maxRetries: 1 });
  const t0 = performance.now();
  const e = await rejectsType(() => client.chat(msgs), LlmTimeoutError);
  assert(e instanceof LlmUnreachableError);
  assert.deepEqual(e.timeoutMs, 250);
  assert.deepEqual(e.attempts, 2);
  assert(/within 250 ms/.test(e.message));
  assert(performance.now() - t0 >= 500);
});

Deno.test("an unreachable endpoint gives LlmUnreachableError", async () => {
  const stub = startStubServer([]);
  const url = stub.baseURL;
  await stub.close();
  const client = new ChatClient({
    baseURL: url,
    model: "m",
    maxRetries: 0,
    timeoutMs: 2000,
  });
  const e = await rejectsType(() => client.chat(msgs), LlmUnreachableError);
  assert(!(e instanceof LlmTimeoutError));
  assert(e.message.includes(url), e.message);
  assert(/check the base URL/.test(e.message));
});

Deno.test("a missing key variable and a bad base URL are config errors", async () => {
  const client = new ChatClient({
    baseURL: "http://127.0.0.1:9/v1",
    model: "m",
    apiKeyEnv: "NOPE_UNSET",
    env,
  });
  const e = await rejectsType(() => client.chat(msgs), LlmConfigError);
  assert(e instanceof TypeError);
  assert.deepEqual(e.option, "apiKeyEnv");
  assert(e.message.includes("NOPE_UNSET"));
  for (
    const bad of [
      "not a url",
      "ftp://x/v1",
      "http://user:pw@host/v1",
      "http://h/v1?key=abc",
    ]
  ) {
    let thrown: unknown;
    try {
      sanitizeBaseUrl(bad);
    } catch (err) {
      thrown = err;
    }
    assert(thrown instanceof LlmConfigError, bad);
  }
  let thrown: unknown;
  try {
    new ChatClient({
      baseURL: "http://h/v1",
      model: "m",
      temperature: Number.NaN,
    });
  } catch (err) {
    thrown = err;
  }
  assert(thrown instanceof LlmConfigError);
});

async function* _walk(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) yield* _walk(p);
    else yield p;
  }
}
