import assert from "node:assert/strict";
import * as v from "valibot";
import { LlmEndpointSchema } from "./llm.ts";

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
