/**
 * Turn an endpoint as written in an experiment file ({@linkcode LlmEndpoint},
 * snake_case) into {@linkcode ChatOptions}.
 *
 * @module
 */
import type { LlmEndpoint } from "../schemas/llm.ts";
import type { ChatOptions } from "./client.ts";

/**
 * Chat options for an endpoint, with the reply cache in `cacheDir`.
 *
 * @example
 * ```ts
 * import { chatOptionsFromEndpoint } from "./endpoint.ts";
 * import assert from "node:assert/strict";
 * const o = chatOptionsFromEndpoint({ base_url: "http://h/v1", model: "m", max_tokens: 64 });
 * assert.equal(o.maxTokens, 64);
 * ```
 */
export function chatOptionsFromEndpoint(
  endpoint: LlmEndpoint,
  cacheDir?: string,
): ChatOptions {
  return {
    baseURL: endpoint.base_url,
    model: endpoint.model,
    apiKeyEnv: endpoint.api_key_env,
    temperature: endpoint.temperature,
    seed: endpoint.seed,
    maxTokens: endpoint.max_tokens,
    timeoutMs: endpoint.timeout_ms,
    maxRetries: endpoint.max_retries,
    offline: endpoint.offline,
    cacheDir,
  };
}
