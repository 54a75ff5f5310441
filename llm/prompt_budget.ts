/**
 * A prompt's length in tokens, bounded: the model server counts a request's
 * messages with the model's own tokenizer (loaded vocabulary-only), chunk
 * by chunk, and stops as soon as the count passes the context, so a 100 MB
 * prompt costs about a context's worth of tokenization, not minutes. The
 * exact count (chat template applied) is taken by the local runtime once
 * the prompt may fit.
 *
 * @example
 * Not run: it needs a GGUF model file, not shipped.
 * ```ts ignore
 * import { PromptCounter } from "./prompt_budget.ts";
 * const counter = await PromptCounter.load("model.gguf");
 * counter.atLeast([{ role: "user", content: "x".repeat(1e8) }], 8192); // > 8192, in milliseconds
 * ```
 *
 * @module
 */
import { resolve } from "node:path";
import type { LlamaModel } from "node-llama-cpp";
import type { ChatMessage } from "./client.ts";

/** Characters tokenized at a time. */
const _CHUNK = 8192;

/**
 * A lower bound of the tokens of `messages`, counted chunk by chunk and
 * stopped as soon as it passes `limit`. Each message counts one token (its
 * role marker); a chunk is cut at a space where there is one, and counts
 * two tokens less than it tokenizes to (a token may span a cut).
 */
export function promptTokensAtLeast(
  tokenize: (text: string) => { length: number },
  messages: readonly ChatMessage[],
  limit: number,
): number {
  let n = 0;
  for (const m of messages) {
    n++;
    const t = m.content;
    for (let i = 0; i < t.length && n <= limit;) {
      let j = Math.min(t.length, i + _CHUNK);
      if (j < t.length) {
        const space = t.lastIndexOf(" ", j);
        if (space > i + _CHUNK / 2) j = space;
      }
      n += Math.max(0, tokenize(t.slice(i, j)).length - 2);
      i = j;
    }
    if (n > limit) break;
  }
  return n;
}

/** A model's tokenizer (its vocabulary only). */
export class PromptCounter {
  readonly #model: LlamaModel;

  private constructor(model: LlamaModel) {
    this.#model = model;
  }

  /** Loads the vocabulary of the GGUF file `gguf` (not its weights). */
  static async load(gguf: string): Promise<PromptCounter> {
    const nlc = await import("node-llama-cpp");
    const llama = await nlc.getLlama({
      gpu: false,
      build: "never",
      usePrebuiltBinaries: true,
      skipDownload: true,
      progressLogs: false,
      logLevel: nlc.LlamaLogLevel.error,
    });
    const model = await llama.loadModel({
      modelPath: resolve(gguf),
      vocabOnly: true,
    });
    return new PromptCounter(model);
  }

  /** {@linkcode promptTokensAtLeast} with this model's tokenizer. */
  atLeast(messages: readonly ChatMessage[], limit: number): number {
    const chars = messages.reduce((n, m) => n + m.content.length, 0);
    // Short prompts: the runtime's exact count is cheap anyway.
    if (chars <= 4 * limit) return 0;
    return promptTokensAtLeast(
      (text) => this.#model.tokenize(text),
      messages,
      limit,
    );
  }

  /** Releases the vocabulary. */
  async dispose(): Promise<void> {
    await this.#model.dispose();
  }
}
