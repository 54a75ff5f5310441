/**
 * envsmith's own OpenAI-compatible server over a GGUF file: the local
 * runtime (`local.ts`, node-llama-cpp) behind real HTTP, so anything that
 * speaks the chat-completions wire format (the `llm` engineer's HTTP
 * client, the `openai` SDK, curl) can use a checkpoint's GGUF export the
 * way it would use vLLM or llama.cpp's server.
 *
 * Endpoints:
 * - `GET /v1/models`: the one model served (its id is the file's name);
 * - `POST /v1/chat/completions`: `messages` (string content, or text
 *   parts), `max_tokens` (or `max_completion_tokens`), `temperature`,
 *   `seed`, `response_format` (`text`, `json_object`: any JSON object;
 *   `json_schema`: the schema turned into a llama.cpp grammar by `gbnf.ts`,
 *   numeric ranges included, as llama.cpp's server turns a schema into a
 *   grammar), `chat_template_kwargs.enable_thinking`;
 * - `GET /health`.
 *
 * A request the server cannot honour is answered 400 with an OpenAI-style
 * error body naming the field (`{"error": {"message", "type", "param"}}`):
 * a body that is not JSON, no messages, a bad role, a value out of range,
 * `stream`, `n` above 1, tools, a schema construct the grammar cannot
 * express, a prompt that does not fit the context. An unknown model is 404.
 *
 * Requests are untrusted, and each is bounded before the work it could
 * blow up: a body over `maxBodyBytes` is refused (413) before it is parsed
 * (from its Content-Length, or once that many bytes arrived); a prompt is
 * counted in tokens, chunk by chunk (`prompt_budget.ts`), before it is
 * rendered whole; a
 * `json_schema` is checked against the schema limits of `gbnf.ts`
 * (subschemas, depth, enum length, numeric bounds, lengths, grammar size)
 * while it is turned into a grammar, answered 400 naming the limit; more
 * than `maxQueue` requests at once are answered 429 (Retry-After). No
 * request a client can send is answered 500. When a client goes away, its
 * generation stops (the request's signal aborts it) and the next one
 * starts.
 *
 * The model is loaded (and one token generated) before the server listens,
 * so a ready server answers at once and a broken file fails at start. One
 * generation runs at a time (the local runtime queues them); `threads` is
 * always given to llama.cpp (its default oversubscribes a loaded machine).
 * Replies are those the in-process runtime gives for the same request:
 * the same wrapper, sampler and grammar code.
 *
 * @example
 * Not run: it needs a GGUF model file, not shipped; openai_server_test.ts serves a tiny random one.
 * ```ts ignore
 * import { startOpenAiServer } from "./openai_server.ts";
 * await using server = await startOpenAiServer({ gguf: "model.gguf", threads: 1 });
 * console.log(server.baseURL); // http://127.0.0.1:PORT/v1
 * ```
 *
 * @module
 */
import { basename } from "node:path";
import type { ChatMessage } from "./client.ts";
import {
  GbnfSchemaError,
  type JsonSchema,
  jsonSchemaToGbnf,
  type SchemaLimits,
} from "./gbnf.ts";
import { LlmContextOverflowError, LlmError } from "./errors.ts";
import { ggufDigest, LocalChatClient, type LocalChatOptions } from "./local.ts";
import { PromptCounter } from "./prompt_budget.ts";

/** Options of {@linkcode startOpenAiServer}. */
export interface OpenAiServerOptions {
  /** The GGUF model file. */
  gguf: string;
  /** Interface to listen on. @default {"127.0.0.1"} */
  hostname?: string;
  /** Port; 0 picks a free one. @default {0} */
  port?: number;
  /** CPU threads of llama.cpp. @default {1} */
  threads?: number;
  /** Context size in tokens (prompt plus reply). @default {8192} */
  contextSize?: number;
  /** The model id `/v1/models` lists. @default the file's name */
  modelName?: string;
  /** Largest request body read, bytes (more is 413). @default {MAX_BODY_BYTES} */
  maxBodyBytes?: number;
  /** Chat requests handled at once (generating or waiting); more is 429. @default {MAX_QUEUE} */
  maxQueue?: number;
  /** Limits on `json_schema` schemas, over `gbnf.ts`'s `SCHEMA_LIMITS`. */
  schemaLimits?: Partial<SchemaLimits>;
}

/** Default largest request body: 4 MiB (a full 32k-token context is ~130 KB of text). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Default number of chat requests handled at once (one generates, the rest wait). */
export const MAX_QUEUE = 8;

/** Most messages of one request. */
export const MAX_MESSAGES = 10_000;

/** A running server. */
export interface OpenAiServer extends AsyncDisposable {
  /** Base URL of the API, e.g. `http://127.0.0.1:8080/v1`. */
  readonly baseURL: string;
  /** The port it listens on. */
  readonly port: number;
  /** The served model's id. */
  readonly model: string;
  /** Milliseconds from the call until it listened (model load included). */
  readonly startMs: number;
  /** Stop listening (requests in flight finish first). */
  close(): Promise<void>;
  /** Resolves once the server has stopped. */
  readonly finished: Promise<void>;
}

/** What a valid chat request asks of the local runtime. */
export interface ParsedChatRequest {
  /** The messages. */
  readonly messages: ChatMessage[];
  /** Local runtime options besides the file (sampling, grammar, thinking). */
  readonly options: Omit<LocalChatOptions, "gguf">;
}

/** A request the server refuses: HTTP status, message, and the field. */
export class ChatRequestError extends Error {
  /** HTTP status (400, or 404 for an unknown model). */
  readonly status: number;
  /** The request field at fault, e.g. `messages[1].role`. */
  readonly param: string | null;
  /** Build the error. */
  constructor(message: string, param: string | null, status = 400) {
    super(message);
    this.name = "ChatRequestError";
    this.status = status;
    this.param = param;
  }
}

/** Any JSON object, as llama.cpp's `json_object` grammar allows (bounded by max_tokens). */
export const JSON_OBJECT_GBNF = `root ::= object
value ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\\"" ( [^"\\\\\\x7F\\x00-\\x1F] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F]) )* "\\"" ws
number ::= "-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})? ws
ws ::= | " " | "\\n" [ \\t]{0,20}
`;

const _ROLES = new Set(["system", "user", "assistant"]);

/**
 * Check a chat-completions body and turn it into local runtime options.
 *
 * @throws {ChatRequestError} naming the field, for anything the server
 * cannot honour.
 *
 * @example
 * ```ts
 * import { parseChatRequest } from "./openai_server.ts";
 * import assert from "node:assert/strict";
 * const r = parseChatRequest({ messages: [{ role: "user", content: "hi" }], max_tokens: 8 }, "m.gguf");
 * assert.equal(r.options.maxTokens, 8);
 * ```
 */
export function parseChatRequest(
  body: unknown,
  model: string,
  schemaLimits: Partial<SchemaLimits> = {},
): ParsedChatRequest {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new ChatRequestError("the body must be a JSON object", null);
  }
  const b = body as Record<string, unknown>;
  if (b.model !== undefined && b.model !== model) {
    throw new ChatRequestError(
      `the model ${
        _show(b.model)
      } is not served here; this server serves "${model}"`,
      "model",
      404,
    );
  }
  if (b.stream !== undefined && b.stream !== false) {
    throw new ChatRequestError(
      "stream is not supported; send stream: false or leave it out",
      "stream",
    );
  }
  if (b.n !== undefined && b.n !== 1) {
    throw new ChatRequestError("n must be 1 (one choice per request)", "n");
  }
  for (const f of ["tools", "functions", "tool_choice"]) {
    if (b[f] !== undefined) {
      throw new ChatRequestError(`${f} are not supported`, f);
    }
  }
  const messages = _messages(b.messages);
  const options: {
    -readonly [K in keyof ParsedChatRequest["options"]]:
      ParsedChatRequest["options"][K];
  } = {};
  const maxTokens = b.max_completion_tokens ?? b.max_tokens;
  if (maxTokens !== undefined && maxTokens !== null) {
    options.maxTokens = _int(
      maxTokens,
      b.max_completion_tokens !== undefined
        ? "max_completion_tokens"
        : "max_tokens",
      1,
      1 << 20,
    );
  }
  if (b.temperature !== undefined && b.temperature !== null) {
    if (
      typeof b.temperature !== "number" || !(b.temperature >= 0) ||
      !(b.temperature <= 2)
    ) {
      throw new ChatRequestError(
        `temperature must be a number in [0, 2] (got ${_show(b.temperature)})`,
        "temperature",
      );
    }
    options.temperature = b.temperature;
  }
  if (b.seed !== undefined && b.seed !== null) {
    options.seed = _int(b.seed, "seed", 0, 0xffffffff);
  }
  const grammar = _grammar(b.response_format, schemaLimits);
  if (grammar !== undefined) options.grammar = grammar;
  const kwargs = b.chat_template_kwargs;
  if (kwargs !== undefined && kwargs !== null) {
    if (typeof kwargs !== "object" || Array.isArray(kwargs)) {
      throw new ChatRequestError(
        "chat_template_kwargs must be an object",
        "chat_template_kwargs",
      );
    }
    const t = (kwargs as Record<string, unknown>).enable_thinking;
    if (t !== undefined) {
      if (typeof t !== "boolean") {
        throw new ChatRequestError(
          "chat_template_kwargs.enable_thinking must be true or false",
          "chat_template_kwargs.enable_thinking",
        );
      }
      options.thinking = t ? "on" : "off";
    }
  }
  return { messages, options };
}

/** A value of a request, shown in a message: its JSON, at most 80 characters. */
function _show(x: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(x);
  } catch { /* not JSON */ }
  text ??= String(x);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function _messages(raw: unknown): ChatMessage[] {
  if (!Array.isArray(raw) || raw.length === 0) {
    throw new ChatRequestError(
      "messages must be a non-empty array of {role, content}",
      "messages",
    );
  }
  if (raw.length > MAX_MESSAGES) {
    throw new ChatRequestError(
      `messages has ${raw.length} entries; this server reads at most ${MAX_MESSAGES}`,
      "messages",
    );
  }
  return raw.map((m, i) => {
    const at = `messages[${i}]`;
    if (m === null || typeof m !== "object" || Array.isArray(m)) {
      throw new ChatRequestError(`${at} must be an object {role, content}`, at);
    }
    const { role, content } = m as Record<string, unknown>;
    if (typeof role !== "string" || !_ROLES.has(role)) {
      throw new ChatRequestError(
        `${at}.role must be system, user or assistant (got ${_show(role)})`,
        `${at}.role`,
      );
    }
    let text: string;
    if (typeof content === "string") text = content;
    else if (Array.isArray(content)) {
      text = content.map((p, j) => {
        const part = p as Record<string, unknown> | null;
        if (part?.type !== "text" || typeof part.text !== "string") {
          throw new ChatRequestError(
            `${at}.content[${j}] must be a text part {type: "text", text} (this server reads text only)`,
            `${at}.content`,
          );
        }
        return part.text;
      }).join("");
    } else {
      throw new ChatRequestError(
        `${at}.content must be a string or a list of text parts`,
        `${at}.content`,
      );
    }
    return { role: role as ChatMessage["role"], content: text };
  });
}

function _int(x: unknown, name: string, min: number, max: number): number {
  if (typeof x !== "number" || !Number.isInteger(x) || x < min || x > max) {
    throw new ChatRequestError(
      `${name} must be an integer in [${min}, ${max}] (got ${_show(x)})`,
      name,
    );
  }
  return x;
}

function _grammar(
  format: unknown,
  limits: Partial<SchemaLimits>,
): string | undefined {
  if (format === undefined || format === null) return undefined;
  const type = (format as { type?: unknown } | null)?.type;
  if (type === "text") return undefined;
  if (type === "json_object") return JSON_OBJECT_GBNF;
  if (type === "json_schema") {
    const spec = (format as { json_schema?: unknown }).json_schema;
    const schema = (spec as { schema?: unknown } | null)?.schema;
    if (
      schema === null || typeof schema !== "object" || Array.isArray(schema)
    ) {
      throw new ChatRequestError(
        "response_format.json_schema.schema must be a JSON Schema object",
        "response_format.json_schema.schema",
      );
    }
    try {
      return jsonSchemaToGbnf(schema as JsonSchema, { limits });
    } catch (e) {
      // Whatever fails here fails on the client's schema: a 400, never a 500.
      const why = e instanceof GbnfSchemaError
        ? e.message
        : `the schema cannot be read (${(e as Error)?.message ?? e})`;
      throw new ChatRequestError(
        `response_format.json_schema: ${why}; this server turns a schema into an exact grammar and refuses what it cannot express`,
        "response_format.json_schema.schema",
      );
    }
  }
  throw new ChatRequestError(
    `response_format.type must be text, json_object or json_schema (got ${
      _show(type)
    })`,
    "response_format.type",
  );
}

function _json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

function _error(
  status: number,
  message: string,
  param: string | null = null,
): Response {
  return _json({
    error: {
      message,
      type: status >= 500 ? "server_error" : "invalid_request_error",
      param,
      code: status === 404 && param === "model" ? "model_not_found" : null,
    },
  }, status);
}

/** What {@linkcode openAiHandler} serves. */
export interface OpenAiHandlerOptions {
  /** The GGUF file. */
  gguf: string;
  /** The model id. */
  model: string;
  /** CPU threads. */
  threads: number;
  /** Context size. */
  contextSize?: number;
  /** Largest body read, bytes. @default {MAX_BODY_BYTES} */
  maxBodyBytes?: number;
  /** Chat requests handled at once. @default {MAX_QUEUE} */
  maxQueue?: number;
  /** Limits on `json_schema` schemas. */
  schemaLimits?: Partial<SchemaLimits>;
  /** Counts prompts before they are rendered whole (none: not counted here). */
  counter?: PromptCounter;
}

/**
 * The body of `request` as text, at most `max` bytes: refused from its
 * Content-Length before anything is read, or as soon as more arrived.
 */
async function _body(
  request: Request,
  max: number,
): Promise<string | Response> {
  const tooLarge = (n: string) => {
    const res = _error(
      413,
      `the body is ${n} bytes; this server reads at most ${max} (serve-llm --max-body-bytes N raises it)`,
    );
    // the rest of the body is not read: the connection ends with the answer
    res.headers.set("connection", "close");
    return res;
  };
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > max) return tooLarge(String(declared));
  if (request.body === null) return "";
  const reader = request.body.getReader();
  const parts: Uint8Array[] = [];
  let n = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    n += value.length;
    if (n > max) {
      reader.cancel().catch(() => {});
      return tooLarge(`more than ${max}`);
    }
    parts.push(value);
  }
  const bytes = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return new TextDecoder().decode(bytes);
}

/** The request handler of the server (exported for tests and embedding). */
export function openAiHandler(
  o: OpenAiHandlerOptions,
): (request: Request) => Promise<Response> {
  const created = Math.floor(Date.now() / 1000);
  const maxBody = o.maxBodyBytes ?? MAX_BODY_BYTES;
  const maxQueue = o.maxQueue ?? MAX_QUEUE;
  let served = 0, active = 0;
  async function chat(request: Request): Promise<Response> {
    let text: string | Response;
    try {
      text = await _body(request, maxBody);
    } catch (e) {
      return _error(400, `the body could not be read: ${(e as Error).message}`);
    }
    if (text instanceof Response) return text;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (e) {
      return _error(
        400,
        `the body is not JSON: ${(e as Error).message.slice(0, 200)}`,
      );
    }
    let parsed: ParsedChatRequest;
    try {
      parsed = parseChatRequest(body, o.model, o.schemaLimits);
    } catch (e) {
      if (!(e instanceof ChatRequestError)) throw e;
      return _error(e.status, e.message, e.param);
    }
    if (o.counter !== undefined) {
      // (the runtime may clamp it to the model's trained context, and
      // counts exactly then)
      const context = o.contextSize ?? 8192;
      const atLeast = o.counter.atLeast(parsed.messages, context);
      if (atLeast > context - 1) {
        return _error(
          400,
          `The prompt (at least ${atLeast} tokens) does not fit the context of ${context} tokens of ${o.model}; shorten it, or start the server with a larger --context-size`,
          "messages",
        );
      }
    }
    // A client that goes away stops its generation (or its turn); the
    // listener goes before the answer is sent (Deno also aborts a
    // request's signal once its answer was delivered).
    const gone = new AbortController();
    const onAbort = () => gone.abort();
    request.signal.addEventListener("abort", onAbort, { once: true });
    try {
      const reply = await new LocalChatClient({
        gguf: o.gguf,
        threads: o.threads,
        ...(o.contextSize === undefined ? {} : { contextSize: o.contextSize }),
        ...parsed.options,
        signal: gone.signal,
      }).chat(parsed.messages);
      served++;
      return _json({
        id: `chatcmpl-envsmith-${served}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: o.model,
        choices: [{
          index: 0,
          message: { role: "assistant", content: reply.text },
          finish_reason: reply.finishReason === "length" ? "length" : "stop",
        }],
        usage: {
          prompt_tokens: reply.usage.promptTokens,
          completion_tokens: reply.usage.completionTokens,
          total_tokens: reply.usage.totalTokens,
        },
        // as llama.cpp's server reports them
        timings: {
          prompt_n: reply.local?.promptTokens ?? 0,
          prompt_ms: reply.local?.promptMs ?? 0,
          predicted_n: reply.local?.completionTokens ?? 0,
          predicted_ms: reply.local?.generationMs ?? 0,
        },
      });
    } catch (e) {
      if (gone.signal.aborted) {
        // nobody reads this answer: the client has gone
        return _error(499, "the client closed the request");
      }
      if (e instanceof LlmContextOverflowError) {
        return _error(400, e.message, "messages");
      }
      // (the local runtime says so in its message: the grammar came from
      // the client's schema)
      if (
        e instanceof LlmError &&
        e.message.startsWith("llama.cpp rejected the reply grammar")
      ) {
        return _error(400, e.message, "response_format");
      }
      if (e instanceof LlmError) return _error(500, e.message);
      throw e;
    } finally {
      request.signal.removeEventListener("abort", onAbort);
    }
  }
  return async (request) => {
    const path = new URL(request.url).pathname.replace(/\/+$/, "");
    if (path === "/v1/models" || path === "/health") {
      if (request.method !== "GET") {
        return _error(405, `${path} answers GET only`);
      }
      return path === "/health" ? _json({ status: "ok" }) : _json({
        object: "list",
        data: [{ id: o.model, object: "model", created, owned_by: "envsmith" }],
      });
    }
    if (path !== "/v1/chat/completions") {
      return _error(
        404,
        `no route ${request.method} ${path}; this server answers GET /v1/models and POST /v1/chat/completions`,
      );
    }
    if (request.method !== "POST") {
      return _error(405, "/v1/chat/completions answers POST only");
    }
    if (active >= maxQueue) {
      return new Response(
        JSON.stringify({
          error: {
            message:
              `${active} requests are being handled (at most ${maxQueue} at once); retry shortly`,
            type: "rate_limit_error",
            param: null,
            code: null,
          },
        }),
        {
          status: 429,
          headers: { "content-type": "application/json", "retry-after": "1" },
        },
      );
    }
    active++;
    try {
      return await chat(request);
    } finally {
      active--;
    }
  };
}

/**
 * Load the model, then listen. The model is checked (a missing or non-GGUF
 * file throws `LlmConfigError`) and loaded, with one token generated, before
 * the port opens.
 */
export async function startOpenAiServer(
  o: OpenAiServerOptions,
): Promise<OpenAiServer> {
  const t0 = performance.now();
  const threads = o.threads ?? 1;
  await ggufDigest(o.gguf);
  await new LocalChatClient({
    gguf: o.gguf,
    threads,
    contextSize: 256,
    maxTokens: 1,
  }).chat([{ role: "user", content: "." }]);
  const counter = await PromptCounter.load(o.gguf);
  const model = o.modelName ?? basename(o.gguf);
  const hostname = o.hostname ?? "127.0.0.1";
  const handler = openAiHandler({
    gguf: o.gguf,
    model,
    threads,
    ...(o.contextSize === undefined ? {} : { contextSize: o.contextSize }),
    ...(o.maxBodyBytes === undefined ? {} : { maxBodyBytes: o.maxBodyBytes }),
    ...(o.maxQueue === undefined ? {} : { maxQueue: o.maxQueue }),
    ...(o.schemaLimits === undefined ? {} : { schemaLimits: o.schemaLimits }),
    counter,
  });
  const { promise: listening, resolve } = Promise.withResolvers<number>();
  const server = Deno.serve({
    hostname,
    port: o.port ?? 0,
    onListen: (addr) => resolve(addr.port),
    onError: (e) =>
      _error(500, `internal error: ${(e as Error)?.message ?? String(e)}`),
  }, handler);
  const port = await listening;
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return {
    baseURL: `http://${host}:${port}/v1`,
    port,
    model,
    startMs: performance.now() - t0,
    finished: server.finished.finally(() => counter.dispose()),
    close: () => server.shutdown(),
    [Symbol.asyncDispose]: async () => {
      await server.shutdown();
      await counter.dispose();
    },
  };
}
