/**
 * A chat client on a model server it starts itself: on the first request
 * that is not in the reply cache it starts the server (envsmith's own
 * `serve-llm` over a GGUF file, or a user's command such as `vllm serve`)
 * on a free port, talks to it through the HTTP client (`client.ts`), and
 * {@linkcode ServedChatClient.close} stops it.
 *
 * Replies are cached under the served model's identity, never its port:
 * `served:gguf:sha256:<file digest>` for the GGUF form, the command (with
 * `{port}` as written, not filled in) and the model's digest or path for a
 * command.
 * So a rerun replays from the cache, and `offline` replays without
 * starting anything.
 *
 * @module
 */
import { basename, join, resolve } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import { canonicalJson } from "@envsmith/engine/hash";
import { type CachedRequest, ReplyCache, requestHash } from "./cache.ts";
import { ChatClient, type ChatMessage, type ChatOptions } from "./client.ts";
import { LlmCacheMissError, LlmConfigError } from "./errors.ts";
import { ggufDigest } from "./gguf_digest.ts";
import type { LocalChatReply } from "./local.ts";
import {
  freePort,
  type ServedProcess,
  startServedProcess,
} from "./served_process.ts";

/** What to serve: a GGUF file with envsmith's server, or a command. */
export type ServedModel =
  | {
    /** The GGUF file envsmith's own server loads. */
    readonly gguf: string;
    /** CPU threads of llama.cpp. @default {1} */
    readonly threads?: number | undefined;
    /** Context size in tokens. @default {8192} */
    readonly contextSize?: number | undefined;
    /** Time limit of the start. @default {300000} */
    readonly readyTimeoutMs?: number | undefined;
  }
  | {
    /** argv of a server; `{port}` and `{model}` are filled in. */
    readonly command: readonly string[];
    /** What `{model}` stands for: a model file or directory. */
    readonly model?: string | undefined;
    /** Working directory of the command (relative paths in it resolve there). */
    readonly cwd?: string | undefined;
    /** Time limit of the start. @default {600000} */
    readonly readyTimeoutMs?: number | undefined;
  };

/** Options of {@linkcode ServedChatClient}. */
export interface ServedChatOptions {
  /** What to serve. */
  readonly served: ServedModel;
  /** Request settings (sampling, response format, timeouts); `baseURL` and `model` are the served endpoint's. */
  readonly chat: Omit<ChatOptions, "baseURL" | "model" | "cacheDir">;
  /** Directory of the reply cache; no caching when absent. */
  readonly cacheDir?: string | undefined;
  /** Lines about the server (its start, its output, its stop). */
  readonly log?: ((line: string) => void) | undefined;
  /** Aborting it stops the server. */
  readonly signal?: AbortSignal | undefined;
}

/** The module envsmith's own server runs as (digested with its callers). */
const _SERVE_MODULE = new URL("./serve_llm_command.ts", import.meta.url);

/** The repository's deno.json (its import map and lock serve the server). */
function _denoConfig(): string {
  return join(fromFileUrl(new URL("..", import.meta.url).href), "deno.json");
}

/** argv of a served model on `port` (`{port}` and `{model}` filled in). */
export function servedArgv(served: ServedModel, port: number): string[] {
  if ("gguf" in served) {
    return [
      Deno.execPath(),
      "run",
      "--allow-all",
      "--quiet",
      "--config",
      _denoConfig(),
      fromFileUrl(_SERVE_MODULE.href),
      "--gguf",
      resolve(served.gguf),
      "--port",
      String(port),
      "--threads",
      String(served.threads ?? 1),
      ...(served.contextSize === undefined
        ? []
        : ["--context-size", String(served.contextSize)]),
    ];
  }
  return served.command.map((a) =>
    a.replaceAll("{port}", String(port)).replaceAll(
      "{model}",
      served.model ?? "{model}",
    )
  );
}

/**
 * The served model's identity in request hashes: the GGUF file's digest,
 * or the command as written (`{port}` unfilled) and the model's digest
 * (a GGUF file) or absolute path.
 */
export async function servedIdentity(served: ServedModel): Promise<string> {
  if ("gguf" in served) {
    return `served:gguf:sha256:${await ggufDigest(served.gguf)}`;
  }
  let model: string | null = null;
  if (served.model !== undefined) {
    try {
      model = `sha256:${await ggufDigest(served.model)}`;
    } catch (e) {
      if (!(e instanceof LlmConfigError)) throw e;
      model = resolve(served.model);
    }
  }
  return `served:command:${canonicalJson({ command: served.command, model })}`;
}

/** A short name of the served model for reports. */
export function servedLabel(served: ServedModel): string {
  return "gguf" in served
    ? `${basename(served.gguf)} (served by envsmith serve-llm)`
    : `${served.command.join(" ")}${
      served.model === undefined ? "" : ` (model ${basename(served.model)})`
    }`;
}

/**
 * A chat client on a server it starts on first need and stops on
 * {@linkcode close} (also via `await using`).
 */
export class ServedChatClient implements AsyncDisposable {
  #o: ServedChatOptions;
  #cache: ReplyCache | undefined;
  #server: Promise<ServedProcess> | undefined;
  #client: ChatClient | undefined;
  #identity: Promise<string> | undefined;

  /** Keep the options; nothing starts yet. */
  constructor(options: ServedChatOptions) {
    this.#o = options;
    this.#cache = options.cacheDir === undefined
      ? undefined
      : new ReplyCache(options.cacheDir);
  }

  /** The served model as reports name it. */
  get model(): string {
    return servedLabel(this.#o.served);
  }

  /** The running server, once started (tests look at its process group). */
  get server(): Promise<ServedProcess> | undefined {
    return this.#server;
  }

  async #request(messages: readonly ChatMessage[]): Promise<CachedRequest> {
    this.#identity ??= servedIdentity(this.#o.served);
    const c = this.#o.chat;
    return {
      baseURL: await this.#identity,
      model: "",
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
      params: {
        temperature: c.temperature ?? 0,
        max_tokens: c.maxTokens ?? 1024,
        seed: c.seed ?? null,
        json_mode: c.jsonMode ?? false,
        ...(c.responseFormat === undefined
          ? {}
          : { response_format: canonicalJson(c.responseFormat) }),
        ...(c.thinking === undefined ? {} : { thinking: c.thinking }),
      },
    };
  }

  /**
   * The reply to `messages`: from the cache, or from the server (started
   * on the first miss).
   *
   * @throws {LlmCacheMissError} `offline` and the request is not cached.
   * @throws {LlmServeError} the server did not start.
   * @throws {LlmError} what the HTTP client throws.
   */
  async chat(messages: readonly ChatMessage[]): Promise<LocalChatReply> {
    const request = await this.#request(messages);
    const hash = requestHash(request);
    const hit = await this.#cache?.get(hash);
    if (hit !== undefined) {
      return { ...hit, cached: true, requestHash: hash, attempts: [] };
    }
    if (this.#o.chat.offline) {
      throw new LlmCacheMissError(
        `Offline replay: the request ${
          hash.slice(0, 12)
        } to the served model ${this.model} is not in the reply cache` +
          (this.#o.cacheDir === undefined
            ? " (no cache directory is configured)"
            : ` at ${this.#o.cacheDir}`) +
          "; run once without offline, or import the cache that recorded it.",
        {
          baseURL: request.baseURL,
          model: this.model,
          attempts: 0,
          requestHash: hash,
        },
      );
    }
    const client = await this.#connect();
    const reply = await client.chat(messages);
    const { text, finishReason, usage } = reply;
    await this.#cache?.put(hash, request, { text, finishReason, usage });
    return { ...reply, requestHash: hash };
  }

  async #connect(): Promise<ChatClient> {
    if (this.#client !== undefined) return this.#client;
    const served = this.#o.served;
    this.#server ??= (async () => {
      const port = freePort();
      return await startServedProcess({
        command: servedArgv(served, port),
        port,
        readyTimeoutMs: served.readyTimeoutMs ??
          ("gguf" in served ? 300_000 : 600_000),
        ...("command" in served && served.cwd !== undefined
          ? { cwd: served.cwd }
          : {}),
        ...(this.#o.log === undefined ? {} : { log: this.#o.log }),
        ...(this.#o.signal === undefined ? {} : { signal: this.#o.signal }),
      });
    })();
    const server = await this.#server;
    const { offline: _, ...chat } = this.#o.chat;
    this.#client = new ChatClient({
      ...chat,
      baseURL: server.baseURL,
      model: server.model,
    });
    return this.#client;
  }

  /** Stop the server, if one was started (its whole process group). */
  async close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    this.#client = undefined;
    if (server === undefined) return;
    try {
      await (await server).stop();
    } catch { /* it never started: startServedProcess stopped it */ }
  }

  /** {@linkcode close}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
