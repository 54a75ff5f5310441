/**
 * A scriptable local stand-in for an OpenAI-compatible endpoint, for tests.
 *
 * It listens on 127.0.0.1 on a free port, speaks the chat-completions wire
 * format (`POST /v1/chat/completions`), and answers each request with the next
 * step of a script: a reply text, an HTTP error (with headers such as
 * `Retry-After`), or no answer at all (to exercise timeouts). It records every
 * request it receives.
 *
 * @example
 * ```ts
 * import { startStubServer } from "./stub_server.ts";
 * import { ChatClient } from "./client.ts";
 * import assert from "node:assert/strict";
 * await using stub = startStubServer([{ reply: "hello" }]);
 * const client = new ChatClient({ baseURL: stub.baseURL, model: "stub" });
 * const reply = await client.chat([{ role: "user", content: "hi" }]);
 * assert.deepEqual(reply.text, "hello");
 * assert.deepEqual(stub.requests.length, 1);
 * ```
 *
 * @module
 */

/** What the stub received. */
export interface StubRequest {
  /** Request path, e.g. `/v1/chat/completions`. */
  readonly path: string;
  /** Parsed JSON body (or `null` when it was not JSON). */
  // deno-lint-ignore no-explicit-any
  readonly body: any;
  /** Request headers. */
  readonly headers: Headers;
  /** Milliseconds since the server started. */
  readonly at: number;
}

/** One scripted answer. */
export type StubStep =
  | {
    /** Content of the assistant message in a 200 reply. */
    readonly reply: string;
    /** @default {"stop"} */
    readonly finishReason?: string;
  }
  | {
    /** HTTP status of an error reply. */
    readonly status: number;
    /** Extra headers, e.g. `{ "retry-after": "1" }`. */
    readonly headers?: Record<string, string>;
    /** Error message in the OpenAI error body. */
    readonly message?: string;
  }
  | {
    /** Never answer (until the server closes). */
    readonly hang: true;
  }
  | {
    /** A 200 reply with this raw body (for malformed wire data). */
    readonly raw: string;
  };

/** A script: a list consumed in order, or a function of the request. */
export type StubScript =
  | readonly StubStep[]
  | ((request: StubRequest, index: number) => StubStep);

/** A running stub endpoint. */
export interface StubServer extends AsyncDisposable {
  /** Base URL for the client, e.g. `http://127.0.0.1:40123/v1`. */
  readonly baseURL: string;
  /** Every request received, in order. */
  readonly requests: StubRequest[];
  /** Release hanging requests and stop the server. */
  close(): Promise<void>;
}

/**
 * Start a stub endpoint. When a list script runs out, the stub answers 500
 * with `x-should-retry: false`, so a test that sends too many requests fails
 * visibly.
 */
export function startStubServer(script: StubScript): StubServer {
  const requests: StubRequest[] = [];
  const t0 = performance.now();
  const closing = Promise.withResolvers<void>();
  let served = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      const text = await req.text();
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {
        body = null;
      }
      const request: StubRequest = {
        path,
        body,
        headers: req.headers,
        at: performance.now() - t0,
      };
      requests.push(request);
      if (req.method !== "POST" || path !== "/v1/chat/completions") {
        return _error(404, `stub: no route ${req.method} ${path}`, {
          "x-should-retry": "false",
        });
      }
      const index = served++;
      const step = typeof script === "function"
        ? script(request, index)
        : script[index];
      if (step === undefined) {
        return _error(500, `stub: no scripted answer for request #${index}`, {
          "x-should-retry": "false",
        });
      }
      if ("hang" in step) {
        await closing.promise;
        return _error(503, "stub: released hanging request", {
          "x-should-retry": "false",
        });
      }
      if ("raw" in step) {
        return new Response(step.raw, {
          headers: { "content-type": "application/json" },
        });
      }
      if ("status" in step) {
        return _error(
          step.status,
          step.message ?? `stub error ${step.status}`,
          step.headers ?? {},
        );
      }
      const b = body as
        | { model?: string; messages?: { content?: string }[] }
        | null;
      const promptChars = (b?.messages ?? []).reduce(
        (n, m) => n + (typeof m.content === "string" ? m.content.length : 0),
        0,
      );
      const promptTokens = Math.ceil(promptChars / 4);
      const completionTokens = Math.ceil(step.reply.length / 4);
      return Response.json({
        id: `chatcmpl-stub-${index}`,
        object: "chat.completion",
        created: 1_700_000_000,
        model: b?.model ?? "stub",
        choices: [{
          index: 0,
          message: { role: "assistant", content: step.reply, refusal: null },
          logprobs: null,
          finish_reason: step.finishReason ?? "stop",
        }],
        usage: {
          prompt_tokens: promptTokens,
          completion_tokens: completionTokens,
          total_tokens: promptTokens + completionTokens,
        },
      });
    },
  );
  const addr = server.addr as Deno.NetAddr;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    closing.resolve();
    await server.shutdown();
  };
  return {
    baseURL: `http://127.0.0.1:${addr.port}/v1`,
    requests,
    close,
    [Symbol.asyncDispose]: close,
  };
}

function _error(
  status: number,
  message: string,
  headers: Record<string, string>,
): Response {
  return Response.json(
    { error: { message, type: "stub_error", param: null, code: null } },
    { status, headers },
  );
}
