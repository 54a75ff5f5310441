/**
 * The chat clients shared by the LLM environment engineer and the LLM
 * policy: an OpenAI-compatible server, or a local GGUF model file run
 * in-process. It knows chat, not MAPF.
 *
 * API (small on purpose):
 * - {@linkcode ChatClient} / {@linkcode chat}: `chat(messages, options)` ->
 *   `{ text, usage, cached, requestHash, attempts, finishReason }`. Options:
 *   `baseURL`, `model`, `apiKeyEnv` (the NAME of the variable holding the
 *   key; never the key), `temperature` (default 0), `seed`, `maxTokens`
 *   (default 1024), `timeoutMs` (default 60 s per attempt), `maxRetries`
 *   (default 2; exponential backoff, `Retry-After` honoured on 429/5xx, done by
 *   the official `openai` SDK), `cacheDir` (prompt/reply cache by request
 *   hash), `offline` (cache only), `responseFormat` (e.g. a `json_schema`;
 *   a server that refuses it is asked again without), `thinking`
 *   (`chat_template_kwargs.enable_thinking`).
 * - Errors: {@linkcode LlmUnreachableError} (connection failed),
 *   {@linkcode LlmTimeoutError} (no answer in time; a subclass of the former),
 *   {@linkcode LlmHttpError} (HTTP status), {@linkcode LlmCacheMissError}
 *   (offline miss), {@linkcode LlmConfigError} (a `TypeError`: bad options or
 *   unset key variable). All extend {@linkcode LlmError} except the config
 *   error; none carries the key.
 * - {@linkcode extractJson}: the JSON object of a reply, also from ```json
 *   fences, after `<think>` blocks or inside prose; throws
 *   {@linkcode JsonExtractionError} (a `SyntaxError`).
 * - {@linkcode ReplyCache} / {@linkcode requestHash}: the cache; entries hold
 *   the request (URL, model, messages, sampling parameters) and the reply,
 *   never a key or header.
 * - {@linkcode chatOptionsFromEndpoint}: options from an endpoint as experiment
 *   files write it (`LlmEndpointSchema` in schemas/llm.ts: a server's
 *   `base_url`, `model`, `api_key_env`, `timeout_ms`, `max_retries`,
 *   `response_format`, or a model file's `gguf`, `threads`, `context_size`;
 *   both: `temperature`, `seed`, `max_tokens`, `thinking`, `offline`).
 * - {@linkcode startStubServer}: a scriptable local endpoint for tests (valid
 *   replies, HTTP errors with headers, hangs, raw bodies).
 * - {@linkcode LocalChatClient}: the same `chat(messages)` on a GGUF model
 *   file, in-process through node-llama-cpp (imported on first use; one
 *   thread by default; the file's sha256, not its path, names the model in
 *   request hashes); {@linkcode createChatClient} picks the client for
 *   options with `baseURL` or `gguf`.
 * - {@linkcode jsonSchemaToGbnf}: a llama.cpp grammar from a JSON Schema,
 *   numeric ranges spelled out, so constrained replies are in range by
 *   construction.
 * - {@linkcode randomGguf}: random-weight GGUF models with real models'
 *   shapes, for tests and benchmarks (their replies are noise).
 *
 * @example
 * ```ts
 * import { ChatClient, extractJson, startStubServer } from "./mod.ts";
 * import assert from "node:assert/strict";
 * await using stub = startStubServer([{ reply: 'Sure: {"ok": true}' }]);
 * const client = new ChatClient({ baseURL: stub.baseURL, model: "m" });
 * const reply = await client.chat([{ role: "user", content: "JSON please" }]);
 * assert.deepEqual(extractJson(reply.text), { ok: true });
 * ```
 *
 * @module
 */
export {
  chat,
  type ChatAttempt,
  ChatClient,
  type ChatMessage,
  type ChatOptions,
  type ChatReply,
  sanitizeBaseUrl,
} from "./client.ts";
export {
  type CachedReply,
  type CachedRequest,
  REPLY_CACHE_VERSION,
  ReplyCache,
  requestHash,
} from "./cache.ts";
export { extractJson, type ExtractJsonOptions } from "./json_extract.ts";
export {
  JsonExtractionError,
  LlmCacheMissError,
  LlmConfigError,
  LlmContextOverflowError,
  LlmError,
  type LlmErrorData,
  LlmHttpError,
  LlmTimeoutError,
  LlmUnreachableError,
} from "./errors.ts";
export {
  startStubServer,
  type StubRequest,
  type StubScript,
  type StubServer,
  type StubStep,
} from "./stub_server.ts";
export {
  type AnyChatOptions,
  type ChatBackend,
  chatOptionsFromEndpoint,
  createChatClient,
  isLocalChatOptions,
} from "./endpoint.ts";
export {
  disposeLocalModels,
  ggufDigest,
  ggufDigestSync,
  ggufEndpointId,
  LocalChatClient,
  type LocalChatOptions,
  type LocalChatReply,
  type LocalTiming,
} from "./local.ts";
export {
  gbnfLiteral,
  type GbnfOptions,
  GbnfSchemaError,
  type JsonSchema,
  jsonSchemaToGbnf,
  numberRangeGbnf,
} from "./gbnf.ts";
export {
  CHATML_TEMPLATE,
  GGUF_SHAPES,
  type GgufShape,
  randomGguf,
  randomGgufBytes,
  type RandomGgufOptions,
  writeRandomGguf,
} from "./random_gguf.ts";
export {
  ChatRequestError,
  JSON_OBJECT_GBNF,
  openAiHandler,
  type OpenAiHandlerOptions,
  type OpenAiServer,
  type OpenAiServerOptions,
  parseChatRequest,
  type ParsedChatRequest,
  startOpenAiServer,
} from "./openai_server.ts";
export {
  freePort,
  groupAlive,
  LlmServeError,
  type ServedProcess,
  type ServedProcessOptions,
  startServedProcess,
} from "./served_process.ts";
export {
  servedArgv,
  ServedChatClient,
  type ServedChatOptions,
  servedIdentity,
  servedLabel,
  type ServedModel,
} from "./served_client.ts";
