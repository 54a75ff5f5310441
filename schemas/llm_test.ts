import assert from "node:assert/strict";
import * as v from "valibot";
import {
  LlmEndpointSchema,
  LlmEndpointSpecSchema,
  resolveLlmEndpoint,
} from "./llm.ts";

Deno.test("LlmEndpointSchema accepts an endpoint and rejects a key in api_key_env", () => {
  const ok = v.safeParse(LlmEndpointSchema, {
    base_url: "http://127.0.0.1:8000/v1",
    model: "qwen3:4b",
    api_key_env: "OPENAI_API_KEY",
    temperature: 0.7,
    max_retries: 3,
  });
  assert.equal(ok.success, true);
  const key = v.safeParse(LlmEndpointSchema, {
    base_url: "http://h/v1",
    model: "m",
    api_key_env: "sk-proj-abc123",
  });
  assert.equal(key.success, false);
  assert.match(key.issues![0].message, /NAME of an environment variable/);
  const extra = v.safeParse(LlmEndpointSchema, {
    base_url: "http://h/v1",
    model: "m",
    api_key: "x",
  });
  assert.equal(extra.success, false);
  const badTemp = v.safeParse(LlmEndpointSchema, {
    base_url: "http://h/v1",
    model: "m",
    temperature: 3,
  });
  assert.equal(badTemp.success, false);
});

Deno.test("LlmEndpointSpecSchema: base_url or base_url_env, model or model_env, exactly one each", () => {
  const ok = (x: unknown) => v.safeParse(LlmEndpointSpecSchema, x).success;
  assert.ok(ok({ base_url: "http://h/v1", model: "m" }));
  assert.ok(ok({ base_url_env: "URL", model_env: "MODEL", api_key_env: "K" }));
  assert.ok(!ok({ model: "m" }));
  assert.ok(!ok({ base_url: "http://h/v1", base_url_env: "URL", model: "m" }));
  assert.ok(!ok({ base_url_env: "not a name", model: "m" }));
  const env = (n: string) =>
    ({ URL: "http://127.0.0.1:8000/v1", MODEL: "qwen3-4b", BAD: "nope" })[n];
  assert.deepEqual(
    resolveLlmEndpoint({ base_url_env: "URL", model_env: "MODEL" }, env),
    { base_url: "http://127.0.0.1:8000/v1", model: "qwen3-4b" },
  );
  assert.throws(
    () => resolveLlmEndpoint({ base_url_env: "NOPE", model: "m" }, env),
    /NOPE, which is not set/,
  );
  assert.throws(
    () => resolveLlmEndpoint({ base_url_env: "BAD", model: "m" }, env),
    /base_url must be an http\(s\) URL/,
  );
});
