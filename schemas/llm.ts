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
