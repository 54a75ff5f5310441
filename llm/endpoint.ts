/**
 * One interface for both kinds of endpoint: turn an endpoint as written in
 * an experiment file ({@linkcode LlmEndpoint}, snake_case) into client
 * options, and build the client: {@linkcode ChatClient} for an
 * OpenAI-compatible server, {@linkcode LocalChatClient} for a GGUF file.
 *
 * @module
 */
import type { LlmEndpoint } from "../schemas/llm.ts";
import { ChatClient, type ChatMessage, type ChatOptions } from "./client.ts";
import {
  LocalChatClient,
  type LocalChatOptions,
  type LocalChatReply,
} from "./local.ts";

/** Options of either client: a server (`baseURL`) or a model file (`gguf`). */
export type AnyChatOptions = ChatOptions | LocalChatOptions;

/** What the engineer and the LLM policy need of a client. */
export interface ChatBackend {
  /** The model: its name on a server, the file path locally. */
  readonly model: string;
  /** Send the messages; the reply of the assistant. */
  chat(messages: readonly ChatMessage[]): Promise<LocalChatReply>;
}

/** Whether options name a local GGUF file. */
export function isLocalChatOptions(o: AnyChatOptions): o is LocalChatOptions {
  return "gguf" in o && typeof o.gguf === "string";
}

/**
 * The client for the options: local for `gguf`, HTTP otherwise.
 *
 * @example
 * ```ts
 * import { createChatClient } from "./endpoint.ts";
 * import assert from "node:assert/strict";
 * const c = createChatClient({ baseURL: "http://127.0.0.1:8000/v1", model: "m" });
 * assert.equal(c.model, "m");
 * ```
 */
export function createChatClient(options: AnyChatOptions): ChatBackend {
  return isLocalChatOptions(options)
    ? new LocalChatClient(options)
    : new ChatClient(options);
}

/**
 * Client options for an endpoint, with the reply cache in `cacheDir`.
 *
 * @example
 * ```ts
 * import { chatOptionsFromEndpoint } from "./endpoint.ts";
 * import assert from "node:assert/strict";
 * const o = chatOptionsFromEndpoint({ base_url: "http://h/v1", model: "m", max_tokens: 64 });
 * assert.equal(o.maxTokens, 64);
 * const l = chatOptionsFromEndpoint({ gguf: "/models/q.gguf", threads: 2 });
 * assert.equal("gguf" in l && l.threads, 2);
 * ```
 */
export function chatOptionsFromEndpoint(
  endpoint: LlmEndpoint,
  cacheDir?: string,
): AnyChatOptions {
  if (endpoint.gguf !== undefined) {
    return {
      gguf: endpoint.gguf,
      threads: endpoint.threads,
      contextSize: endpoint.context_size,
      temperature: endpoint.temperature,
      seed: endpoint.seed,
      maxTokens: endpoint.max_tokens,
      thinking: endpoint.thinking,
      offline: endpoint.offline,
      cacheDir,
    };
  }
  return {
    baseURL: endpoint.base_url ?? "",
    model: endpoint.model ?? "",
    apiKeyEnv: endpoint.api_key_env,
    temperature: endpoint.temperature,
    seed: endpoint.seed,
    maxTokens: endpoint.max_tokens,
    timeoutMs: endpoint.timeout_ms,
    maxRetries: endpoint.max_retries,
    thinking: endpoint.thinking,
    offline: endpoint.offline,
    cacheDir,
  };
}
