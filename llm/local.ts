/**
 * The local runtime: a GGUF model file served in-process through
 * node-llama-cpp (llama.cpp's prebuilt CPU binary; no server, no download),
 * behind the same `chat(messages)` interface as the HTTP client.
 *
 * - node-llama-cpp is imported only when a GGUF endpoint is first used, so
 *   nothing else pays for it.
 * - A model file is identified by the sha256 of its bytes (never its path):
 *   the digest names the model in request hashes and node keys, so the same
 *   file under another name replays the same cached replies, and a changed
 *   file does not.
 * - Each call evaluates from an empty sequence with a seeded sampler on one
 *   thread by default (two threads on a loaded two-core machine stalled at
 *   0.5 tokens/s in our measurements), so the same request gives the same
 *   reply.
 * - A GBNF grammar (see `gbnf.ts`) constrains the reply; with a grammar, or
 *   with `thinking: "off"`, thinking models (Qwen3) are asked not to think
 *   (node-llama-cpp's `thoughts: "discourage"`). With `thinking: "on"` and no
 *   grammar the thought segment is kept apart from the reply text.
 * - Replies are cached by request hash like the HTTP client's, so a run
 *   replays offline without loading the model at all.
 *
 * @example
 * Not run: it needs a GGUF model file, not shipped; local_test.ts runs a tiny random one.
 * ```ts ignore
 * import { LocalChatClient } from "./local.ts";
 * const client = new LocalChatClient({ gguf: "qwen2.5-0.5b-instruct-q8_0.gguf" });
 * const reply = await client.chat([{ role: "user", content: "Say hi" }]);
 * console.log(reply.text, reply.local?.generationTokensPerSecond);
 * ```
 *
 * @module
 */
import type {
  ChatHistoryItem,
  ChatWrapper,
  Llama,
  LlamaContext,
  LlamaGrammar,
  LlamaModel,
} from "node-llama-cpp";
import { createHash } from "node:crypto";
import { resolve } from "node:path";
import { type CachedReply, ReplyCache, requestHash } from "./cache.ts";
import { ggufDigest } from "./gguf_digest.ts";
import type { ChatMessage, ChatReply } from "./client.ts";
import {
  LlmCacheMissError,
  LlmConfigError,
  LlmContextOverflowError,
  LlmError,
} from "./errors.ts";

/** Options of {@linkcode LocalChatClient}. */
export interface LocalChatOptions {
  /** Path of the GGUF model file. */
  gguf: string;
  /**
   * CPU threads of the evaluation.
   * @default {1}
   */
  threads?: number | undefined;
  /**
   * Context size in tokens (prompt plus reply), at most the model's trained
   * context.
   * @default {8192}
   */
  contextSize?: number | undefined;
  /**
   * Sampling temperature (0: greedy).
   * @default {0}
   */
  temperature?: number | undefined;
  /**
   * Sampling seed.
   * @default {0}
   */
  seed?: number | undefined;
  /**
   * Maximum tokens of the reply. By default whatever the context leaves
   * after the prompt: a grammar bounds the reply anyway, and a thinking model
   * gets all the room there is.
   * @default {contextSize - promptTokens}
   */
  maxTokens?: number | undefined;
  /** A GBNF grammar the reply must follow (root rule `root`). */
  grammar?: string | undefined;
  /**
   * Whether a thinking model may think before it answers. Ignored (off)
   * with a grammar: llama.cpp applies the grammar from the first token.
   * @default {"off"}
   */
  thinking?: "on" | "off" | undefined;
  /** Directory of the prompt/reply cache; no caching when absent. */
  cacheDir?: string | undefined;
  /**
   * Answer only from the cache; a miss throws {@linkcode LlmCacheMissError}.
   * @default {false}
   */
  offline?: boolean | undefined;
  /** Cancels the generation. */
  signal?: AbortSignal | undefined;
}

/** What a local generation measured (absent on cached replies). */
export interface LocalTiming {
  /** Tokens of the rendered prompt (chat template applied). */
  readonly promptTokens: number;
  /** Milliseconds to evaluate the prompt (until the first generated token). */
  readonly promptMs: number;
  /** Tokens generated. */
  readonly completionTokens: number;
  /** Milliseconds from the first to the last generated token. */
  readonly generationMs: number;
  /** The chat wrapper node-llama-cpp chose from the model's template. */
  readonly chatWrapper: string;
  /** Thought-segment text, when the model thought (`thinking: "on"`). */
  readonly thoughts?: string;
}

/** A reply of the local runtime. */
export interface LocalChatReply extends ChatReply {
  /** Timing of the generation; absent when the reply came from the cache. */
  readonly local?: LocalTiming;
}

// ---------------------------------------------------------------------------
// Model files: lazy loading, one evaluation at a time per model (the file
// digest is in gguf_digest.ts, which node kinds import without this module)

type _Nlc = typeof import("node-llama-cpp");

interface _Loaded {
  nlc: _Nlc;
  llama: Llama;
  model: LlamaModel;
  /** One evaluation at a time per model. */
  queue: Promise<unknown>;
  /** Chat wrappers resolved from the model's template, per thinking mode. */
  wrappers: Map<string, ChatWrapper>;
}

let _nlc: Promise<_Nlc> | undefined;
let _llama: Promise<Llama> | undefined;
const _models = new Map<string, Promise<_Loaded>>();

/** node-llama-cpp, imported on first use. */
function _importNlc(): Promise<_Nlc> {
  _nlc ??= import("node-llama-cpp").catch((e) => {
    _nlc = undefined;
    throw new LlmError(
      `Cannot load node-llama-cpp (the local GGUF runtime): ${
        (e as Error).message
      }. It is a dependency in deno.json; run \`deno install\` once with the npm registry reachable.`,
      { baseURL: "gguf:", model: "", attempts: 0 },
      { cause: e },
    );
  });
  return _nlc;
}

async function _getLlama(): Promise<Llama> {
  const nlc = await _importNlc();
  _llama ??= nlc.getLlama({
    gpu: false,
    build: "never",
    usePrebuiltBinaries: true,
    skipDownload: true,
    progressLogs: false,
    logLevel: nlc.LlamaLogLevel.error,
  }).catch((e) => {
    _llama = undefined;
    throw new LlmError(
      `node-llama-cpp found no usable prebuilt llama.cpp binary for this machine (${
        (e as Error).message
      }); envsmith never builds or downloads one at run time.`,
      { baseURL: "gguf:", model: "", attempts: 0 },
      { cause: e },
    );
  });
  return _llama;
}

function _loadModel(path: string, digest: string): Promise<_Loaded> {
  let p = _models.get(digest);
  if (p === undefined) {
    p = (async () => {
      const nlc = await _importNlc();
      const llama = await _getLlama();
      let model: LlamaModel;
      try {
        model = await llama.loadModel({
          modelPath: resolve(path),
          gpuLayers: 0,
          useMmap: true,
        });
      } catch (e) {
        throw new LlmError(
          `llama.cpp cannot load the GGUF model ${path}: ${
            (e as Error).message
          }`,
          { baseURL: `gguf:${digest.slice(0, 12)}`, model: path, attempts: 0 },
          { cause: e },
        );
      }
      return {
        nlc,
        llama,
        model,
        queue: Promise.resolve(),
        wrappers: new Map(),
      };
    })();
    _models.set(digest, p);
    p.catch(() => _models.delete(digest));
  }
  return p;
}

/**
 * Unload every model and release llama.cpp (tests and the CLI call it
 * before exiting; a process that exits frees them anyway).
 */
export async function disposeLocalModels(): Promise<void> {
  const models = [..._models.values()];
  _models.clear();
  for (const m of models) {
    try {
      await (await m).model.dispose();
    } catch { /* already failed to load */ }
  }
  const llama = _llama;
  _llama = undefined;
  if (llama !== undefined) {
    try {
      await (await llama).dispose();
    } catch { /* never loaded */ }
  }
}

// ---------------------------------------------------------------------------
// The client

/** Request-hash "base URL" of a model file: its digest, never its path. */
export function ggufEndpointId(digest: string): string {
  return `gguf:sha256:${digest}`;
}

/**
 * A chat client on a local GGUF file. Cheap to build; the model loads on
 * the first uncached call and stays loaded for the process (shared by every
 * client of the same file).
 */
export class LocalChatClient {
  #o: LocalChatOptions;
  #cache: ReplyCache | undefined;

  /**
   * Check and keep the options.
   * @throws {LlmConfigError} on a bad numeric option or an empty path.
   */
  constructor(options: LocalChatOptions) {
    if (typeof options.gguf !== "string" || options.gguf.trim() === "") {
      throw new LlmConfigError(
        "The GGUF model path is empty; give a .gguf file.",
        "gguf",
      );
    }
    _int(options.threads, "threads", 1, 256);
    _int(options.contextSize, "contextSize", 64, 1 << 20);
    _int(options.maxTokens, "maxTokens", 1, 1 << 20);
    _int(options.seed, "seed", 0, 0xffffffff);
    if (
      options.temperature !== undefined &&
      !(options.temperature >= 0 && options.temperature <= 2)
    ) {
      throw new LlmConfigError(
        `temperature must be a number in [0, 2] (got ${options.temperature}).`,
        "temperature",
      );
    }
    this.#o = options;
    this.#cache = options.cacheDir === undefined
      ? undefined
      : new ReplyCache(options.cacheDir);
  }

  /** The model file path as given. */
  get model(): string {
    return this.#o.gguf;
  }

  /** sha256 of the model file. */
  digest(): Promise<string> {
    return ggufDigest(this.#o.gguf);
  }

  async #request(messages: readonly ChatMessage[]) {
    const o = this.#o;
    const digest = await this.digest();
    const grammar = o.grammar === undefined
      ? null
      : createHash("sha256").update(o.grammar).digest("hex");
    return {
      baseURL: ggufEndpointId(digest),
      model: digest,
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
      params: {
        temperature: o.temperature ?? 0,
        max_tokens: o.maxTokens ?? "rest of the context",
        seed: o.seed ?? 0,
        context_size: o.contextSize ?? 8192,
        grammar,
        thinking: grammar !== null ? "off" : (o.thinking ?? "off"),
      },
    };
  }

  /** The request hash `chat(messages)` would use. */
  async hashOf(messages: readonly ChatMessage[]): Promise<string> {
    return requestHash(await this.#request(messages));
  }

  /**
   * Generate the assistant's reply to `messages`.
   *
   * @throws {LlmConfigError} missing or invalid model file.
   * @throws {LlmCacheMissError} `offline` and the request is not cached.
   * @throws {LlmContextOverflowError} the prompt plus `maxTokens` exceed the context.
   * @throws {LlmError} llama.cpp failed to load or run the model.
   */
  async chat(messages: readonly ChatMessage[]): Promise<LocalChatReply> {
    const request = await this.#request(messages);
    const hash = requestHash(request);
    if (this.#cache !== undefined) {
      const hit = await this.#cache.get(hash);
      if (hit !== undefined) {
        return { ...hit, cached: true, requestHash: hash, attempts: [] };
      }
    }
    const o = this.#o;
    if (o.offline) {
      throw new LlmCacheMissError(
        `Offline replay: the request ${
          hash.slice(0, 12)
        } to the local model ${o.gguf} is not in the reply cache` +
          (o.cacheDir === undefined
            ? " (no cache directory is configured)"
            : ` at ${o.cacheDir}`) +
          "; run once without offline, or import the cache that recorded it.",
        {
          baseURL: request.baseURL,
          model: o.gguf,
          attempts: 0,
          requestHash: hash,
        },
      );
    }
    const loaded = await _loadModel(o.gguf, request.model);
    const run = loaded.queue.then(() =>
      this.#generate(loaded, messages, request.baseURL)
    );
    loaded.queue = run.catch(() => {});
    const { reply, timing } = await run;
    if (this.#cache !== undefined) await this.#cache.put(hash, request, reply);
    return {
      ...reply,
      cached: false,
      requestHash: hash,
      attempts: [],
      local: timing,
    };
  }

  async #generate(
    loaded: _Loaded,
    messages: readonly ChatMessage[],
    endpointId: string,
  ): Promise<{ reply: CachedReply; timing: LocalTiming }> {
    const { nlc, llama, model } = loaded;
    const o = this.#o;
    const contextSize = Math.min(
      o.contextSize ?? 8192,
      model.trainContextSize,
    );
    const thinking = o.grammar !== undefined ? "off" : (o.thinking ?? "off");
    let wrapper = loaded.wrappers.get(thinking);
    if (wrapper === undefined) {
      // Qwen3-style templates read `enable_thinking` and otherwise render as
      // plain ChatML, so they may resolve to node-llama-cpp's ChatML wrapper,
      // which cannot turn thinking off: they get its Qwen wrapper.
      const template = model.fileInfo.metadata?.tokenizer?.chat_template;
      const qwenThinking = typeof template === "string" &&
        template.includes("enable_thinking") &&
        template.includes("<|im_start|>");
      wrapper = nlc.resolveChatWrapper(model, {
        ...(qwenThinking ? { type: "qwen" as const } : {}),
        customWrapperSettings: {
          qwen: { thoughts: thinking === "off" ? "discourage" : "auto" },
        },
        warningLogs: false,
      });
      loaded.wrappers.set(thinking, wrapper);
    }
    const history: ChatHistoryItem[] = messages.map((m) =>
      m.role === "assistant"
        ? { type: "model", response: [m.content] }
        : { type: m.role, text: m.content }
    );
    history.push({ type: "model", response: [] });
    const promptTokens = wrapper.generateContextState({ chatHistory: history })
      .contextText.tokenize(model.tokenizer).length;
    const maxTokens = o.maxTokens ?? contextSize - promptTokens;
    if (promptTokens + Math.max(maxTokens, 1) > contextSize) {
      throw new LlmContextOverflowError(
        `The prompt (${promptTokens} tokens with the chat template) plus ${
          o.maxTokens === undefined ? "a reply" : `max_tokens ${maxTokens}`
        } do not fit the context of ${contextSize} tokens of ${o.gguf}` +
          (contextSize < (o.contextSize ?? 8192)
            ? ` (the model was trained with ${model.trainContextSize})`
            : "") +
          "; raise context_size, lower max_tokens, or shorten the context (budget).",
        {
          baseURL: endpointId,
          model: o.gguf,
          attempts: 0,
          promptTokens,
          contextSize,
        },
      );
    }
    let grammar: LlamaGrammar | undefined;
    if (o.grammar !== undefined) {
      try {
        grammar = new nlc.LlamaGrammar(llama, { grammar: o.grammar });
      } catch (e) {
        throw new LlmError(
          `llama.cpp rejected the reply grammar: ${(e as Error).message}`,
          { baseURL: endpointId, model: o.gguf, attempts: 0 },
          { cause: e },
        );
      }
    }
    let context: LlamaContext | undefined;
    try {
      context = await model.createContext({
        contextSize,
        threads: o.threads ?? 1,
        sequences: 1,
      });
      const chat = new nlc.LlamaChat({
        contextSequence: context.getSequence(),
        chatWrapper: wrapper,
      });
      const t0 = performance.now();
      let tFirst: number | undefined;
      let tLast = t0;
      let completionTokens = 0;
      let thoughts = "";
      const res = await chat.generateResponse(history, {
        maxTokens,
        temperature: o.temperature ?? 0,
        seed: o.seed ?? 0,
        // No repeat penalty: JSON repeats keys, digits and braces by nature,
        // and a penalty would bend the numbers a model means to write.
        repeatPenalty: false,
        ...(grammar === undefined ? {} : { grammar }),
        ...(o.signal === undefined ? {} : { signal: o.signal }),
        onResponseChunk(chunk) {
          const now = performance.now();
          if (chunk.tokens.length > 0) {
            tFirst ??= now;
            tLast = now;
            completionTokens += chunk.tokens.length;
          }
          if (chunk.type === "segment" && chunk.segmentType === "thought") {
            thoughts += chunk.text;
          }
        },
      });
      const stop = res.metadata.stopReason;
      const finishReason = stop === "maxTokens"
        ? "length"
        : stop === "abort"
        ? "abort"
        : "stop";
      const reply: CachedReply = {
        text: res.response,
        finishReason,
        usage: {
          promptTokens,
          completionTokens,
          totalTokens: promptTokens + completionTokens,
        },
      };
      const timing: LocalTiming = {
        promptTokens,
        promptMs: (tFirst ?? tLast) - t0,
        completionTokens,
        generationMs: tFirst === undefined ? 0 : tLast - tFirst,
        chatWrapper: wrapper.wrapperName,
        ...(thoughts === "" ? {} : { thoughts }),
      };
      return { reply, timing };
    } finally {
      await context?.dispose();
    }
  }
}

function _int(
  value: number | undefined,
  name: string,
  min: number,
  max: number,
): void {
  if (value === undefined) return;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new LlmConfigError(
      `${name} must be an integer in [${min}, ${max}] (got ${value}).`,
      name,
    );
  }
}

export { ggufDigest, ggufDigestSync } from "./gguf_digest.ts";
