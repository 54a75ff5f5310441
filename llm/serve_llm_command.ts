/**
 * `deno task cli serve-llm --gguf FILE`: envsmith's OpenAI-compatible
 * server over a GGUF file (`openai_server.ts`), until interrupted. It prints
 * one line with its URL on stdout when the model is loaded and the port is
 * open:
 *
 * ```sh
 * deno task cli serve-llm --gguf model.gguf --port 8080 --threads 1
 * # serve-llm: http://127.0.0.1:8080/v1 (model model.gguf, 1 thread)
 * curl -s http://127.0.0.1:8080/v1/chat/completions -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":8}'
 * ```
 *
 * The `llm` engineer's `serve: { gguf }` runs this module directly (not
 * through `cli.ts`, whose start-up loads every node kind).
 *
 * @module
 */
import { Command, InvalidArgumentError } from "@commander-js/extra-typings";
import { LlmConfigError, LlmError } from "./errors.ts";
import { startOpenAiServer } from "./openai_server.ts";

function _int(name: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max) {
      throw new InvalidArgumentError(
        `${name} must be an integer in [${min}, ${max}].`,
      );
    }
    return n;
  };
}

/** The `serve-llm` subcommand. */
export function serveLlmCommand() {
  return new Command("serve-llm")
    .description(
      "Serve a GGUF model over an OpenAI-compatible API (GET /v1/models, POST /v1/chat/completions) until interrupted",
    )
    .requiredOption("--gguf <file>", "the GGUF model file")
    .option(
      "--port <n>",
      "port (0: a free one, printed)",
      _int("--port", 0, 65535),
      0,
    )
    .option("--host <address>", "interface to listen on", "127.0.0.1")
    .option(
      "--threads <n>",
      "CPU threads of llama.cpp (more oversubscribes a loaded machine)",
      _int("--threads", 1, 256),
      1,
    )
    .option(
      "--context-size <n>",
      "context size in tokens (prompt plus reply)",
      _int("--context-size", 256, 1 << 20),
      8192,
    )
    .option(
      "--model-name <id>",
      "the model id /v1/models lists (default: the file's name)",
    )
    .addHelpText(
      "after",
      "\nExample:\n  deno task cli serve-llm --gguf model.gguf --port 8080 --threads 1",
    )
    .action(async (o) => {
      let server;
      try {
        server = await startOpenAiServer({
          gguf: o.gguf,
          hostname: o.host,
          port: o.port,
          threads: o.threads,
          contextSize: o.contextSize,
          ...(o.modelName === undefined ? {} : { modelName: o.modelName }),
        });
      } catch (e) {
        if (e instanceof LlmConfigError || e instanceof LlmError) {
          console.error(`serve-llm: ${e.message}`);
          Deno.exitCode = 2;
          return;
        }
        throw e;
      }
      console.log(
        `serve-llm: ${server.baseURL} (model ${server.model}, ${o.threads} thread${
          o.threads === 1 ? "" : "s"
        }, ready in ${(server.startMs / 1000).toFixed(1)} s)`,
      );
      await server.finished;
    });
}

if (import.meta.main) {
  try {
    await serveLlmCommand().exitOverride().parseAsync(Deno.args, {
      from: "user",
    });
  } catch (e) {
    // commander has already printed its usage error
    if ((e as { exitCode?: number }).exitCode !== undefined) {
      Deno.exit((e as { exitCode: number }).exitCode === 0 ? 0 : 2);
    }
    throw e;
  }
}
