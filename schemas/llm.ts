/**
 * Schema of an LLM endpoint as experiment files and CLI flags give it.
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

/** An OpenAI-compatible endpoint and its sampling settings. */
export const LlmEndpointSchema = v.strictObject({
  /** Base URL, e.g. `http://127.0.0.1:8000/v1`. */
  base_url: v.pipe(v.string(), v.url("base_url must be an http(s) URL")),
  /** Model name. */
  model: v.pipe(v.string(), v.nonEmpty("model must not be empty")),
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
  /** Sampling temperature; default 0. */
  temperature: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(2))),
  /** Sampling seed sent to the endpoint. */
  seed: v.optional(v.pipe(v.number(), v.integer())),
  /** Maximum reply tokens; default 1024. */
  max_tokens: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  /** Timeout per HTTP attempt in ms; default 60000. */
  timeout_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  /** Retries on connection errors, timeouts, 429 and 5xx; default 2. */
  max_retries: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10)),
  ),
  /** Answer only from the reply cache (offline replay); default false. */
  offline: v.optional(v.boolean()),
});

/** An LLM endpoint, as parsed by {@linkcode LlmEndpointSchema}. */
export type LlmEndpoint = v.InferOutput<typeof LlmEndpointSchema>;

const _envName = (what: string) =>
  v.pipe(
    v.string(),
    v.regex(
      /^[A-Za-z_][A-Za-z0-9_]*$/,
      `${what} is the NAME of an environment variable (letters, digits, _)`,
    ),
  );

/**
 * An endpoint as an experiment file may write it: like
 * {@linkcode LlmEndpointSchema}, but the base URL and the model may instead
 * name environment variables (`base_url_env`, `model_env`), so one experiment
 * file runs against whatever endpoint the user configures. The URL and model
 * read from the environment enter the node's key (they are not secrets and
 * they decide the result); the API key never does.
 */
export const LlmEndpointSpecSchema = v.pipe(
  v.strictObject({
    ...v.omit(LlmEndpointSchema, ["base_url", "model"]).entries,
    base_url: v.optional(LlmEndpointSchema.entries.base_url),
    base_url_env: v.optional(_envName("base_url_env")),
    model: v.optional(LlmEndpointSchema.entries.model),
    model_env: v.optional(_envName("model_env")),
  }),
  v.check(
    (e) => (e.base_url === undefined) !== (e.base_url_env === undefined),
    "give exactly one of base_url and base_url_env",
  ),
  v.check(
    (e) => (e.model === undefined) !== (e.model_env === undefined),
    "give exactly one of model and model_env",
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
): LlmEndpoint {
  const { base_url_env, model_env, ...rest } = spec;
  const read = (name: string, what: string): string => {
    const value = env(name);
    if (value === undefined || value === "") {
      throw new TypeError(
        `The LLM endpoint's ${what} comes from the environment variable ${name}, which is not set: export ${name}=... or write ${what} in the experiment file.`,
      );
    }
    return value;
  };
  const candidate = {
    ...rest,
    base_url: base_url_env === undefined
      ? spec.base_url
      : read(base_url_env, "base_url"),
    model: model_env === undefined ? spec.model : read(model_env, "model"),
  };
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
