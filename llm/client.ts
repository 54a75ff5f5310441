/**
 * The OpenAI-compatible chat client, on the official `openai` SDK.
 *
 * The SDK does the HTTP work (timeouts, retries with exponential backoff,
 * `Retry-After`/`retry-after-ms` on 408/409/429/5xx); this module configures
 * it, reads the API key from a named environment variable, caches replies by
 * request hash, counts the HTTP attempts, and turns the SDK's errors into the
 * typed errors of `errors.ts` with messages that say what to fix.
 *
 * @module
 */
import OpenAI from "openai";
import { type CachedReply, ReplyCache, requestHash } from "./cache.ts";
import { canonicalJson } from "@envsmith/engine/hash";
import {
  LlmCacheMissError,
  LlmConfigError,
  LlmError,
  LlmHttpError,
  LlmTimeoutError,
  LlmUnreachableError,
} from "./errors.ts";

/** One chat message. */
export interface ChatMessage {
  /** Who speaks. */
  readonly role: "system" | "user" | "assistant";
  /** What is said. */
  readonly content: string;
}

/** How to reach an endpoint and how to sample. */
export interface ChatOptions {
  /** Base URL of the OpenAI-compatible API, e.g. `http://127.0.0.1:8000/v1`. */
  baseURL: string;
  /** Model name sent in each request. */
  model: string;
  /**
   * NAME of the environment variable holding the API key (the key itself is
   * never an option). When unset, no key is needed (local servers) and a
   * placeholder is sent. When set and the variable is empty,
   * {@linkcode LlmConfigError} is thrown.
   */
  apiKeyEnv?: string | undefined;
  /**
   * Sampling temperature.
   * @default {0}
   */
  temperature?: number | undefined;
  /** Sampling seed sent to the endpoint (servers that support it are reproducible). */
  seed?: number | undefined;
  /**
   * Maximum tokens of the reply (`max_tokens`).
   * @default {1024}
   */
  maxTokens?: number | undefined;
  /**
   * Timeout of one HTTP attempt in milliseconds.
   * @default {60000}
   */
  timeoutMs?: number | undefined;
  /**
   * Retries after the first attempt, on connection errors, timeouts, 408, 409,
   * 429 and 5xx. Backoff is exponential (0.5 s, 1 s, 2 s, ... up to 8 s, with
   * jitter) unless the server sends `Retry-After` (seconds or HTTP date) or
   * `retry-after-ms` of at most 60 s, which is honoured.
   * @default {2}
   */
  maxRetries?: number | undefined;
  /** Directory of the prompt/reply cache; no caching when absent. */
  cacheDir?: string | undefined;
  /**
   * Answer only from the cache; a miss throws {@linkcode LlmCacheMissError}.
   * @default {false}
   */
  offline?: boolean | undefined;
  /**
   * Ask for `response_format: {type: "json_object"}` (not every server supports it).
   * @default {false}
   */
  jsonMode?: boolean | undefined;
  /**
   * A `response_format` to send, e.g. `{type: "json_schema", json_schema:
   * {name, schema, strict}}` (vLLM, llama.cpp's server, SGLang, Ollama and
   * OpenAI constrain the reply to the schema). A server that rejects it
   * (HTTP 400/422) is asked again without it, once per client, and the reply
   * carries a note saying so. Overrides `jsonMode`.
   */
  responseFormat?: Readonly<Record<string, unknown>> | undefined;
  /**
   * Thinking models (Qwen3 and others whose chat template reads
   * `enable_thinking`): `"off"` or `"on"` sends
   * `chat_template_kwargs: {enable_thinking}` (vLLM, SGLang, llama.cpp's
   * server). Unset: nothing is sent and the server's default applies.
   */
  thinking?: "on" | "off" | undefined;
  /** Cancels the request. */
  signal?: AbortSignal | undefined;
  /**
   * Reads environment variables (tests inject one).
   * @default {Deno.env.get}
   */
  env?: ((name: string) => string | undefined) | undefined;
}

/** One HTTP attempt, as observed by the client. */
export interface ChatAttempt {
  /** HTTP status, or 0 when no response arrived. */
  readonly status: number;
  /** Milliseconds from sending to the response headers (or the failure). */
  readonly ms: number;
  /** Why no response arrived (e.g. `timeout`, `connection refused`). */
  readonly error?: string;
}

/** A reply. */
export interface ChatReply extends CachedReply {
  /** Whether the reply came from the cache (no HTTP request was made). */
  readonly cached: boolean;
  /** sha256 of the request (see `cache.ts`); the cache key. */
  readonly requestHash: string;
  /** The HTTP attempts (empty when cached). */
  readonly attempts: readonly ChatAttempt[];
  /** What the client did differently from what was asked (e.g. a rejected `response_format`). */
  readonly notes?: readonly string[];
}

/** Placeholder key sent to servers that need none (vLLM, Ollama accept any). */
const NO_KEY = "no-key";

/**
 * A configured chat client. Cheap to build; holds no connection.
 *
 * @example
 * Not run: it needs an OpenAI-compatible server at that address; client_test.ts runs a local stub.
 * ```ts ignore
 * import { ChatClient } from "./client.ts";
 * const client = new ChatClient({
 *   baseURL: "http://127.0.0.1:11434/v1",
 *   model: "qwen3:4b",
 *   cacheDir: ".envsmith/llm",
 * });
 * const reply = await client.chat([{ role: "user", content: "Say hi" }]);
 * console.log(reply.text, reply.usage.totalTokens, reply.cached);
 * ```
 */
export class ChatClient {
  #options: ChatOptions;
  #baseURL: string;
  #cache: ReplyCache | undefined;
  #formatRejected = false;

  /**
   * Check and keep the options.
   * @throws {LlmConfigError} on a bad base URL, model or numeric option.
   */
  constructor(options: ChatOptions) {
    this.#baseURL = sanitizeBaseUrl(options.baseURL);
    if (typeof options.model !== "string" || options.model.trim() === "") {
      throw new LlmConfigError(
        "The LLM model name is empty; pass a model name (e.g. --model qwen3:4b).",
        "model",
      );
    }
    _checkNumber(options.temperature, "temperature", 0, 2);
    _checkNumber(options.maxTokens, "maxTokens", 1, 1_000_000, true);
    _checkNumber(options.timeoutMs, "timeoutMs", 1, 3_600_000, true);
    _checkNumber(options.maxRetries, "maxRetries", 0, 10, true);
    _checkNumber(options.seed, "seed", -(2 ** 53), 2 ** 53, true);
    this.#options = options;
    this.#cache = options.cacheDir === undefined
      ? undefined
      : new ReplyCache(options.cacheDir);
  }

  /** The base URL requests go to (sanitised). */
  get baseURL(): string {
    return this.#baseURL;
  }

  /** The model name. */
  get model(): string {
    return this.#options.model;
  }

  /** The request hash `chat(messages)` would use (for tests and reports). */
  hashOf(messages: readonly ChatMessage[]): string {
    return requestHash(
      this.#request(
        messages,
        this.#options.responseFormat !== undefined && !this.#formatRejected,
      ),
    );
  }

  /**
   * Send the messages and return the first choice's text.
   *
   * With a cache directory, a request already answered is served from the
   * cache (`cached: true`) without any network access.
   *
   * @throws {LlmUnreachableError} the endpoint cannot be reached.
   * @throws {LlmTimeoutError} no answer within `timeoutMs` (after the retries).
   * @throws {LlmHttpError} an HTTP error status after the retries.
   * @throws {LlmCacheMissError} `offline` and the request is not cached.
   * @throws {LlmConfigError} `apiKeyEnv` names an unset variable.
   */
  async chat(messages: readonly ChatMessage[]): Promise<ChatReply> {
    const o = this.#options;
    const formats = o.responseFormat !== undefined && !this.#formatRejected
      ? [true, false]
      : [false];
    if (this.#cache !== undefined) {
      // A run that fell back to no response_format cached that request.
      for (const withFormat of formats) {
        const hash = requestHash(this.#request(messages, withFormat));
        const hit = await this.#cache.get(hash);
        if (hit !== undefined) {
          return { ...hit, cached: true, requestHash: hash, attempts: [] };
        }
      }
    }
    const hash = requestHash(this.#request(messages, formats[0]!));
    if (o.offline) {
      throw new LlmCacheMissError(
        `Offline replay: the request ${
          hash.slice(0, 12)
        } to ${this.#baseURL} (model ${o.model}) is not in the reply cache` +
          (o.cacheDir === undefined
            ? " (no cache directory is configured)"
            : ` at ${o.cacheDir}`) +
          `; run once with the endpoint reachable, or import the cache that recorded it.`,
        {
          baseURL: this.#baseURL,
          model: o.model,
          attempts: 0,
          requestHash: hash,
        },
      );
    }
    if (!formats[0]) return await this.#send(messages, false);
    try {
      return await this.#send(messages, true);
    } catch (e) {
      if (
        !(e instanceof LlmHttpError) || (e.status !== 400 && e.status !== 422)
      ) throw e;
      this.#formatRejected = true;
      const reply = await this.#send(messages, false);
      return {
        ...reply,
        notes: [
          `the endpoint rejected response_format ${
            String(o.responseFormat?.type ?? "")
          } (HTTP ${e.status}); asked again without it`,
        ],
      };
    }
  }

  async #send(
    messages: readonly ChatMessage[],
    withFormat: boolean,
  ): Promise<ChatReply> {
    const request = this.#request(messages, withFormat);
    const hash = requestHash(request);
    const o = this.#options;
    const data = { baseURL: this.#baseURL, model: o.model, attempts: 0 };
    const apiKey = this.#apiKey();
    const attempts: ChatAttempt[] = [];
    const timeoutMs = o.timeoutMs ?? 60_000;
    const countingFetch: typeof fetch = async (input, init) => {
      const t0 = performance.now();
      try {
        const res = await fetch(input, init);
        attempts.push({ status: res.status, ms: performance.now() - t0 });
        return res;
      } catch (e) {
        const aborted = init?.signal?.aborted ?? false;
        attempts.push({
          status: 0,
          ms: performance.now() - t0,
          error: aborted ? "timeout" : _causeText(e),
        });
        throw e;
      }
    };
    const sdk = new OpenAI({
      apiKey,
      baseURL: this.#baseURL,
      organization: null,
      project: null,
      timeout: timeoutMs,
      maxRetries: o.maxRetries ?? 2,
      fetch: countingFetch,
      logLevel: "off",
    });
    const body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = {
      model: o.model,
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
      temperature: o.temperature ?? 0,
      max_tokens: o.maxTokens ?? 1024,
      ...(o.seed === undefined ? {} : { seed: o.seed }),
      ...(withFormat
        ? { response_format: o.responseFormat }
        : o.jsonMode
        ? { response_format: { type: "json_object" } }
        : {}),
      ...(o.thinking === undefined
        ? {}
        : { chat_template_kwargs: { enable_thinking: o.thinking === "on" } }),
    } as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
    let completion: OpenAI.Chat.ChatCompletion;
    try {
      completion = await sdk.chat.completions.create(
        body,
        o.signal === undefined ? {} : { signal: o.signal },
      );
    } catch (e) {
      throw this.#translate(e, attempts, timeoutMs);
    }
    const choice = completion.choices?.[0];
    if (choice === undefined) {
      throw new LlmError(
        `The LLM endpoint at ${this.#baseURL} (model ${o.model}) returned no choices; ` +
          `check that the model name is served by this endpoint.`,
        { ...data, attempts: attempts.length },
      );
    }
    const reply: CachedReply = {
      text: typeof choice.message?.content === "string"
        ? choice.message.content
        : "",
      finishReason: choice.finish_reason ?? null,
      usage: {
        promptTokens: completion.usage?.prompt_tokens ?? 0,
        completionTokens: completion.usage?.completion_tokens ?? 0,
        totalTokens: completion.usage?.total_tokens ?? 0,
      },
    };
    if (this.#cache !== undefined) await this.#cache.put(hash, request, reply);
    return { ...reply, cached: false, requestHash: hash, attempts };
  }

  #request(messages: readonly ChatMessage[], withFormat: boolean) {
    const o = this.#options;
    // Options added later enter the hash only when set, so replies cached
    // before they existed still replay.
    return {
      baseURL: this.#baseURL,
      model: o.model,
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
      params: {
        temperature: o.temperature ?? 0,
        max_tokens: o.maxTokens ?? 1024,
        seed: o.seed ?? null,
        json_mode: o.jsonMode ?? false,
        ...(withFormat
          ? { response_format: canonicalJson(o.responseFormat) }
          : {}),
        ...(o.thinking === undefined ? {} : { thinking: o.thinking }),
      },
    };
  }

  #apiKey(): string {
    const name = this.#options.apiKeyEnv;
    if (name === undefined || name === "") return NO_KEY;
    const env = this.#options.env ?? ((n: string) => Deno.env.get(n));
    const key = env(name);
    if (key === undefined || key === "") {
      throw new LlmConfigError(
        `The environment variable ${name} (named by the API-key option) is not set; ` +
          `export ${name}=<your key>, or omit the API-key option for a local server that needs none.`,
        "apiKeyEnv",
      );
    }
    return key;
  }

  #translate(e: unknown, attempts: ChatAttempt[], timeoutMs: number): unknown {
    const data = {
      baseURL: this.#baseURL,
      model: this.#options.model,
      attempts: attempts.length,
    };
    const where =
      `the LLM endpoint at ${this.#baseURL} (model ${this.#options.model})`;
    const tries = `${attempts.length} attempt${
      attempts.length === 1 ? "" : "s"
    }`;
    if (e instanceof OpenAI.APIUserAbortError) {
      return this.#options.signal?.reason ?? e;
    }
    if (e instanceof OpenAI.APIConnectionTimeoutError) {
      return new LlmTimeoutError(
        `No answer from ${where} within ${timeoutMs} ms (${tries}); ` +
          `check that the server is up and not overloaded, or raise the timeout.`,
        { ...data, timeoutMs },
        { cause: e },
      );
    }
    if (e instanceof OpenAI.APIConnectionError) {
      const last = attempts.at(-1)?.error ?? _causeText(e);
      return new LlmUnreachableError(
        `Cannot reach ${where} (${tries}): ${last}; ` +
          `check the base URL and that the server is running.`,
        data,
        { cause: e },
      );
    }
    if (e instanceof OpenAI.APIError && typeof e.status === "number") {
      const hint = e.status === 401 || e.status === 403
        ? `check the API key in ${
          this.#options.apiKeyEnv ?? "(no API-key variable set)"
        }`
        : e.status === 404
        ? "check the base URL (it usually ends in /v1) and the model name"
        : e.status === 429
        ? "the endpoint is rate-limiting; retry later or raise the retries"
        : e.status >= 500
        ? "the server failed; retry later"
        : "check the request options";
      return new LlmHttpError(
        `${where} answered HTTP ${e.status} (${tries}): ${
          _short(e.message)
        }; ${hint}.`,
        { ...data, status: e.status },
        { cause: e },
      );
    }
    return e;
  }
}

/**
 * Send messages with one-off options: `new ChatClient(options).chat(messages)`.
 *
 * @example
 * Not run: it needs an OpenAI endpoint and a key; client_test.ts runs a local stub.
 * ```ts ignore
 * import { chat } from "./client.ts";
 * const { text } = await chat([{ role: "user", content: "2+2?" }], {
 *   baseURL: "https://api.openai.com/v1",
 *   model: "gpt-4o-mini",
 *   apiKeyEnv: "OPENAI_API_KEY",
 * });
 * ```
 */
export function chat(
  messages: readonly ChatMessage[],
  options: ChatOptions,
): Promise<ChatReply> {
  return new ChatClient(options).chat(messages);
}

/**
 * Check a base URL and return it without a trailing slash.
 * @throws {LlmConfigError} when it is not an http(s) URL, or carries
 * credentials or a query string (keys belong in an environment variable).
 */
export function sanitizeBaseUrl(baseURL: string): string {
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch {
    throw new LlmConfigError(
      `The LLM base URL "${baseURL}" is not a URL; pass e.g. http://127.0.0.1:8000/v1.`,
      "baseURL",
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new LlmConfigError(
      `The LLM base URL must be http(s), got ${url.protocol}; pass e.g. http://127.0.0.1:8000/v1.`,
      "baseURL",
    );
  }
  if (url.username !== "" || url.password !== "" || url.search !== "") {
    throw new LlmConfigError(
      "The LLM base URL carries credentials or a query string; remove them and " +
        "put the key in an environment variable named by the API-key option.",
      "baseURL",
    );
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

function _checkNumber(
  value: number | undefined,
  name: string,
  min: number,
  max: number,
  integer = false,
): void {
  if (value === undefined) return;
  if (
    typeof value !== "number" || !Number.isFinite(value) || value < min ||
    value > max || (integer && !Number.isInteger(value))
  ) {
    throw new LlmConfigError(
      `The LLM option ${name} is ${value}; it must be ${
        integer ? "an integer" : "a number"
      } in [${min}, ${max}].`,
      name,
    );
  }
}

function _causeText(e: unknown): string {
  let cur: unknown = e;
  let text = "";
  for (let depth = 0; cur instanceof Error && depth < 4; depth++) {
    text = cur.message;
    cur = cur.cause;
  }
  return _short(text || String(e));
}

function _short(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > 200 ? `${one.slice(0, 200)}...` : one;
}
