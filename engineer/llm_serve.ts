/**
 * `serve:` of the `llm` engineer: the redesign starts a model server, asks
 * it through the HTTP client, and stops it, so a stage's checkpoint can be
 * the engineer over an OpenAI-compatible endpoint without a server kept
 * running outside the experiment.
 *
 * ```yaml
 * # CPU: envsmith's own server over the stage's GGUF export
 * engineer: { name: llm, serve: { gguf: $policy.gguf, threads: 1 }, llm: { max_tokens: 1200 } }
 * # GPU: any OpenAI-compatible server; {port} and {model} are filled in
 * engineer: { name: llm, serve: { command: [vllm, serve, "{model}", --port, "{port}"], model: models/qwen3-4b, ready_timeout_s: 600 } }
 * ```
 *
 * `llm:` then holds request settings only (`max_tokens`, `temperature`,
 * `seed`, `timeout_ms`, `max_retries`, `response_format`, `thinking`,
 * `offline`, `api_key_env`): the base URL and the model name come from the
 * served endpoint (the first model `GET /v1/models` lists).
 *
 * Checked at plan (one line naming the field and the fix): `serve` beside a
 * server or model file in `llm`; a command whose program is not on PATH,
 * or without `{port}`; a model file or directory that does not exist; a GGUF
 * file that is not one. What a node reference hides until it runs (e.g.
 * `serve: { gguf: $policy.gguf }` and a command both given) is checked when
 * the redesign starts.
 *
 * @module
 */
import * as v from "valibot";
import { isAbsolute, join, resolve } from "node:path";
import { LlmEndpointSchema } from "../schemas/llm.ts";
import { ggufDigestSync } from "../llm/gguf_digest.ts";
import { LlmConfigError } from "../llm/errors.ts";
import type { ServedModel } from "../llm/served_client.ts";
import type { ChatOptions } from "../llm/client.ts";
import { EngineerConfigError, type EngineerEnv } from "./engineer_kind.ts";

const _int = (min: number, max: number) =>
  v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

/** The `serve:` block as written. */
export const ServeSpecSchema = v.strictObject({
  gguf: v.optional(v.pipe(
    v.string(),
    v.nonEmpty("serve.gguf must be a GGUF file: $node.gguf or a path"),
    v.description(
      "a GGUF file ($policy.gguf or a path) served by envsmith's own OpenAI-compatible server",
    ),
  )),
  threads: v.optional(v.pipe(
    _int(1, 256),
    v.description("CPU threads of envsmith's server (gguf); default 1"),
  )),
  context_size: v.optional(v.pipe(
    _int(256, 1 << 20),
    v.description("context size of envsmith's server (gguf); default 8192"),
  )),
  command: v.optional(v.pipe(
    v.array(v.pipe(v.string(), v.nonEmpty("an argument must not be empty"))),
    v.minLength(1, "serve.command must name a program"),
    v.description(
      'a server\'s argv, e.g. [vllm, serve, "{model}", --port, "{port}"]; {port} and {model} are filled in',
    ),
  )),
  model: v.optional(v.pipe(
    v.string(),
    v.nonEmpty("serve.model must be a model file or directory"),
    v.description(
      "what {model} in the command stands for: a model file or directory ($policy.gguf or a path)",
    ),
  )),
  ready_timeout_s: v.optional(v.pipe(
    v.number(),
    v.minValue(1),
    v.maxValue(86_400),
    v.description(
      "how long the server may take to answer GET /v1/models; default 300 (gguf), 600 (command)",
    ),
  )),
});

/** The `serve:` block, parsed. */
export type ServeSpec = v.InferOutput<typeof ServeSpecSchema>;

const _ENDPOINT_KEYS = [
  "base_url",
  "base_url_env",
  "model",
  "model_env",
  "gguf",
  "gguf_env",
] as const;
const _SERVER_KEYS = ["threads", "context_size"] as const;

/**
 * `llm:` beside `serve:`: request settings only (the endpoint is the
 * served one). Server and model-file keys are accepted by the schema and
 * refused by {@linkcode checkServe} with the fix.
 */
export const ServedLlmSettingsSchema = v.strictObject({
  ...LlmEndpointSchema.pipe[0].entries,
  base_url_env: v.optional(v.string()),
  model_env: v.optional(v.string()),
  gguf_env: v.optional(v.string()),
});

/** Where a program is: a path (relative to `baseDir`) or a name on PATH. */
export function findProgram(
  program: string,
  baseDir: string,
  path: string = Deno.env.get("PATH") ?? "",
): string | null {
  const executable = (p: string) => {
    try {
      const st = Deno.statSync(p);
      return st.isFile && ((st.mode ?? 0o111) & 0o111) !== 0;
    } catch {
      return false;
    }
  };
  if (program.includes("/")) {
    const p = isAbsolute(program) ? program : resolve(baseDir, program);
    return executable(p) ? p : null;
  }
  for (const dir of path.split(":")) {
    if (dir === "") continue;
    const p = join(dir, program);
    if (executable(p)) return p;
  }
  return null;
}

/**
 * Check `serve` (and `llm` beside it) as far as the parameters show them;
 * the model files that are literal paths must exist. Node references are
 * absent from plan-time parameters: `complete` says they are resolved (at
 * run), so `serve` must then name exactly one of `gguf` and `command`.
 *
 * Long by design: one check per `serve` field, each a one-line error naming the field and the fix.
 *
 * @throws {EngineerConfigError} one line naming the field and the fix.
 */
export function checkServe(
  serve: ServeSpec,
  llm: Record<string, unknown> | null | undefined,
  baseDir: string,
  complete: boolean,
): void {
  const fail = (m: string): never => {
    throw new EngineerConfigError(`engineer.${m}`);
  };
  for (const k of _ENDPOINT_KEYS) {
    if (llm?.[k] !== undefined) {
      fail(
        `llm.${k}: serve starts the server, so llm names none; remove llm.${k} (or remove serve to use ${
          k.startsWith("gguf") ? "the model file in process" : "that server"
        })`,
      );
    }
  }
  for (const k of _SERVER_KEYS) {
    if (llm?.[k] !== undefined) {
      fail(`llm.${k}: with serve it belongs to the server: write serve.${k}`);
    }
  }
  const gguf = serve.gguf !== undefined;
  const command = serve.command !== undefined;
  if (gguf && command) {
    fail(
      "serve: give gguf (envsmith's own server) or command (your server), not both",
    );
  }
  if (complete && !gguf && !command) {
    fail(
      'serve: give gguf: $policy.gguf (envsmith\'s own server) or command: [..., "{port}"] (your server)',
    );
  }
  if (command) {
    for (const k of _SERVER_KEYS) {
      if (serve[k] !== undefined) {
        fail(
          `serve.${k} applies to envsmith's own server (serve.gguf); pass it in serve.command instead`,
        );
      }
    }
    const argv = serve.command!;
    if (!argv.some((a) => a.includes("{port}"))) {
      fail(
        'serve.command must contain "{port}" where the server takes its port (e.g. --port "{port}")',
      );
    }
    if (findProgram(argv[0]!, baseDir) === null) {
      fail(
        `serve.command: "${argv[0]}" is not ${
          argv[0]!.includes("/") ? "an executable file" : "on PATH"
        }; install it, or give its full path`,
      );
    }
    const usesModel = argv.some((a) => a.includes("{model}"));
    if (serve.model !== undefined && !usesModel) {
      fail(
        'serve.model is given but serve.command has no "{model}"; put "{model}" where the server takes the model',
      );
    }
    if (complete && serve.model === undefined && usesModel) {
      fail(
        'serve.command has "{model}" but serve.model is not given; write serve.model: $policy.gguf or a path',
      );
    }
    if (serve.model !== undefined) {
      try {
        Deno.statSync(resolve(baseDir, serve.model));
      } catch {
        fail(
          `serve.model: ${serve.model} does not exist; give a model file or directory (relative to the experiment file), or $policy.gguf`,
        );
      }
    }
  } else if (serve.model !== undefined) {
    fail(
      "serve.model goes with serve.command; for envsmith's own server write serve.gguf",
    );
  }
  if (gguf) {
    try {
      ggufDigestSync(resolve(baseDir, serve.gguf!));
    } catch (e) {
      if (!(e instanceof LlmConfigError)) throw e;
      fail(`serve.gguf: ${e.message}`);
    }
  }
}

/** What the key holds besides the parameters: a literal GGUF file's digest. */
export function serveFingerprint(
  serve: ServeSpec,
  baseDir: string,
): Record<string, string> {
  if (serve.gguf !== undefined) {
    return { gguf_sha256: ggufDigestSync(resolve(baseDir, serve.gguf)) };
  }
  if (serve.model !== undefined) {
    const path = resolve(baseDir, serve.model);
    try {
      return { model_sha256: ggufDigestSync(path) };
    } catch (e) {
      // a directory, or a model file that is not GGUF: its path is the parameter
      if (!(e instanceof LlmConfigError)) throw e;
    }
  }
  return {};
}

/**
 * The served model of a checked `serve`: paths resolved against `baseDir`,
 * where a command also runs.
 */
export function servedModel(serve: ServeSpec, baseDir: string): ServedModel {
  const readyTimeoutMs = serve.ready_timeout_s === undefined
    ? undefined
    : serve.ready_timeout_s * 1000;
  if (serve.gguf !== undefined) {
    return {
      gguf: resolve(baseDir, serve.gguf),
      threads: serve.threads ?? 1,
      contextSize: serve.context_size,
      readyTimeoutMs,
    };
  }
  const argv = [...serve.command!];
  // a name stays a name (PATH finds it; the reply cache's identity holds
  // the command as written); a relative path is the experiment file's
  if (argv[0]!.includes("/")) argv[0] = resolve(baseDir, argv[0]!);
  return {
    command: argv,
    model: serve.model === undefined
      ? undefined
      : resolve(baseDir, serve.model),
    cwd: baseDir,
    readyTimeoutMs,
  };
}

/**
 * What an llm engineer on a served model asks with: `serve` and `llm`
 * checked, the settings, the served model, the chat options (the address is
 * filled in from the served endpoint when it is up) and the reply cache.
 */
export function servedChat(
  serve: ServeSpec,
  llm: Record<string, unknown>,
  env: EngineerEnv,
): {
  settings: v.InferOutput<typeof ServedLlmSettingsSchema>;
  served: ServedModel;
  chat: ChatOptions;
  cacheDir: string | undefined;
} {
  checkServe(serve, llm, env.baseDir, true);
  const settings = v.parse(ServedLlmSettingsSchema, llm);
  const served = servedModel(serve, env.baseDir);
  const chat: ChatOptions = {
    baseURL: "http://127.0.0.1/v1",
    model: "served",
    apiKeyEnv: settings.api_key_env,
    temperature: settings.temperature,
    seed: settings.seed,
    maxTokens: settings.max_tokens,
    // a CPU server queues requests and a full prompt takes minutes on a
    // loaded machine: a timed-out request would be asked again behind itself
    timeoutMs: settings.timeout_ms ?? ("gguf" in served ? 600_000 : undefined),
    maxRetries: settings.max_retries,
    thinking: settings.thinking,
    offline: settings.offline,
    ...(env.env === undefined ? {} : { env: env.env }),
  };
  const cacheDir = env.auxDir === undefined
    ? undefined
    : join(env.auxDir, "llm");
  return { settings, served, chat, cacheDir };
}
