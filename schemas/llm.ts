/**
 * Schema of an LLM endpoint as experiment files and CLI flags give it: an
 * OpenAI-compatible server (`base_url`, `model`) or a local GGUF model file
 * (`gguf`), served in-process.
 *
 * The API key is never a parameter: `api_key_env` names the environment
 * variable that holds it, so the key cannot reach node parameters, keys,
 * manifests or reports.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { LlmEndpointSchema } from "./llm.ts";
 * const endpoint = v.parse(LlmEndpointSchema, {
 *   base_url: "http://127.0.0.1:11434/v1",
 *   model: "qwen3:4b",
 * });
 * ```
 *
 * @module
 */
import * as v from "valibot";
import { resolve as resolvePath } from "node:path";
import { AnyEnvConfigSchema } from "./env_config.ts";

const _envName = (what: string) =>
  v.pipe(
    v.string(),
    v.regex(
      /^[A-Za-z_][A-Za-z0-9_]*$/,
      `${what} is the NAME of an environment variable (letters, digits, _)`,
    ),
  );

const _int = (min: number, max: number) =>
  v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

/** Settings of both kinds of endpoint. */
const _common = {
  /** Sampling temperature; default 0. */
  temperature: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(2))),
  /** Sampling seed (sent to a server; the sampler's seed locally). */
  seed: v.optional(v.pipe(v.number(), v.integer())),
  /** Maximum reply tokens; default 1024 (the llm engineer: 4096). */
  max_tokens: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  /** Answer only from the reply cache (offline replay); default false. */
  offline: v.optional(v.boolean()),
  /**
   * Thinking models (Qwen3, ...): `off` asks the model not to think (remote:
   * `chat_template_kwargs.enable_thinking = false`; local: the chat
   * wrapper's "discourage"), `on` lets it think. Remote default: the
   * server's; local default: `off`.
   */
  thinking: v.optional(
    v.picklist(["on", "off"], 'thinking must be "on" or "off"'),
  ),
};

/** Settings of an OpenAI-compatible HTTP endpoint only. */
const _remote = {
  /** NAME of the environment variable holding the API key (omit for local servers). */
  api_key_env: v.optional(
    v.pipe(
      v.string(),
      v.regex(
        /^[A-Za-z_][A-Za-z0-9_]*$/,
        "api_key_env is the NAME of an environment variable (letters, digits, _), never the key itself",
      ),
    ),
  ),
  /** Timeout per HTTP attempt in ms; default 60000. */
  timeout_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  /** Retries on connection errors, timeouts, 429 and 5xx; default 2. */
  max_retries: v.optional(_int(0, 10)),
  /**
   * What the llm engineer asks the server to constrain replies to:
   * `json_schema` (the reply schema, numeric bounds included; the default),
   * `json_object`, or `none`. A server that rejects it is asked again
   * without it.
   */
  response_format: v.optional(
    v.picklist(
      ["json_schema", "json_object", "none"],
      "response_format must be json_schema, json_object or none",
    ),
  ),
};

/** Settings of a local GGUF model only. */
const _local = {
  /** CPU threads; default 1 (more stalls on a loaded 2-core machine). */
  threads: v.optional(_int(1, 256)),
  /** Context size in tokens (prompt + reply); default 8192. */
  context_size: v.optional(_int(256, 1 << 20)),
};

const _REMOTE_ONLY = Object.keys(_remote);
const _LOCAL_ONLY = Object.keys(_local);

function _kindCheck(e: Record<string, unknown>): string | null {
  const local = e.gguf !== undefined || e.gguf_env !== undefined;
  const remote = e.base_url !== undefined || e.base_url_env !== undefined;
  if (local && remote) {
    return "give either a server (base_url or base_url_env) or a model file (gguf or gguf_env), not both";
  }
  if (!local && !remote) {
    return "give a server (base_url or base_url_env, with model or model_env) or a GGUF model file (gguf or gguf_env)";
  }
  if (e.base_url !== undefined && e.base_url_env !== undefined) {
    return "give exactly one of base_url and base_url_env";
  }
  if (e.gguf !== undefined && e.gguf_env !== undefined) {
    return "give exactly one of gguf and gguf_env";
  }
  if (remote && (e.model === undefined) === (e.model_env === undefined)) {
    return "give exactly one of model and model_env";
  }
  if (local && (e.model !== undefined || e.model_env !== undefined)) {
    return "a gguf endpoint takes no model name (the file is the model)";
  }
  const wrong = (local ? _REMOTE_ONLY : _LOCAL_ONLY).filter((k) =>
    e[k] !== undefined
  );
  if (wrong.length > 0) {
    return `${wrong.join(", ")} ${
      wrong.length > 1 ? "apply" : "applies"
    } only to ${local ? "a server (base_url)" : "a GGUF model file (gguf)"}`;
  }
  return null;
}

/**
 * A resolved endpoint: an OpenAI-compatible server (`base_url` and `model`)
 * or a local GGUF model file (`gguf`, served in-process by node-llama-cpp),
 * with its sampling settings.
 */
export const LlmEndpointSchema = v.pipe(
  v.strictObject({
    /** Base URL, e.g. `http://127.0.0.1:8000/v1`. */
    base_url: v.optional(
      v.pipe(v.string(), v.url("base_url must be an http(s) URL")),
    ),
    /** Model name (servers). */
    model: v.optional(
      v.pipe(v.string(), v.nonEmpty("model must not be empty")),
    ),
    /** Path of a GGUF model file (local runtime). */
    gguf: v.optional(
      v.pipe(v.string(), v.nonEmpty("gguf must be a file path")),
    ),
    ..._common,
    ..._remote,
    ..._local,
  }),
  v.check(
    (e) => _kindCheck(e) === null,
    (i) => _kindCheck(i.input as Record<string, unknown>) ?? "",
  ),
);

/** An LLM endpoint, as parsed by {@linkcode LlmEndpointSchema}. */
export type LlmEndpoint = v.InferOutput<typeof LlmEndpointSchema>;

/**
 * An endpoint as an experiment file may write it: like
 * {@linkcode LlmEndpointSchema}, but the base URL and the model may instead
 * name environment variables (`base_url_env`, `model_env`), so one experiment
 * file runs against whatever endpoint the user configures. The URL and model
 * read from the environment enter the node's key (they are not secrets and
 * they decide the result); the API key never does. Likewise a GGUF model
 * file may be given by `gguf_env` (e.g. `ENVSMITH_LLM_GGUF`): then the
 * file's sha256 enters the key, not its path.
 */
export const LlmEndpointSpecSchema = v.pipe(
  v.strictObject({
    ...LlmEndpointSchema.pipe[0].entries,
    base_url_env: v.optional(_envName("base_url_env")),
    model_env: v.optional(_envName("model_env")),
    gguf_env: v.optional(_envName("gguf_env")),
  }),
  v.check(
    (e) => _kindCheck(e) === null,
    (i) => _kindCheck(i.input as Record<string, unknown>) ?? "",
  ),
);

/** An endpoint as written, see {@linkcode LlmEndpointSpecSchema}. */
export type LlmEndpointSpec = v.InferOutput<typeof LlmEndpointSpecSchema>;

/**
 * Resolve `base_url_env`/`model_env` of an endpoint spec from the environment.
 *
 * @throws {TypeError} naming the variable when it is unset or not a URL.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveLlmEndpoint } from "./llm.ts";
 * const env = (n: string) => n === "URL" ? "http://127.0.0.1:8000/v1" : undefined;
 * const e = resolveLlmEndpoint({ base_url_env: "URL", model: "qwen3-4b" }, env);
 * assert.equal(e.base_url, "http://127.0.0.1:8000/v1");
 * ```
 */
export function resolveLlmEndpoint(
  spec: LlmEndpointSpec,
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
  baseDir?: string,
): LlmEndpoint {
  const { base_url_env, model_env, gguf_env, ...rest } = spec;
  const read = (name: string, what: string): string => {
    const value = env(name);
    if (value === undefined || value === "") {
      throw new TypeError(
        `The LLM endpoint's ${what} comes from the environment variable ${name}, which is not set: export ${name}=... or write ${what} in the experiment file.`,
      );
    }
    return value;
  };
  const candidate: Record<string, unknown> = { ...rest };
  if (base_url_env !== undefined) {
    candidate.base_url = read(base_url_env, "base_url");
  }
  if (model_env !== undefined) candidate.model = read(model_env, "model");
  if (gguf_env !== undefined) candidate.gguf = read(gguf_env, "gguf");
  if (typeof candidate.gguf === "string" && baseDir !== undefined) {
    candidate.gguf = resolvePath(baseDir, candidate.gguf);
  }
  const r = v.safeParse(LlmEndpointSchema, candidate);
  if (!r.success) {
    throw new TypeError(
      `LLM endpoint: ${
        r.issues.map((i) => `${v.getDotPath(i) ?? ""} ${i.message}`.trim())
          .join("; ")
      }`,
    );
  }
  return r.output;
}

/** Whether an endpoint is a local GGUF model file. */
export function isLocalEndpoint(
  e: LlmEndpoint,
): e is LlmEndpoint & { gguf: string } {
  return e.gguf !== undefined;
}

/** Longest rationale an engineer reply may carry (characters). */
export const RATIONALE_MAX_CHARS = 400;

/**
 * The reply the llm engineer asks for: a short rationale, then a full
 * configuration (one component or a mixture, every field given). The JSON
 * Schema and the llama.cpp grammar of constrained replies are derived from
 * it (`engineer/reply_format.ts`), bounds included.
 */
export const EngineerReplySchema = v.strictObject({
  /** Why this configuration, in a few sentences. */
  rationale: v.pipe(v.string(), v.maxLength(RATIONALE_MAX_CHARS)),
  /** The next configuration. */
  config: AnyEnvConfigSchema,
});
