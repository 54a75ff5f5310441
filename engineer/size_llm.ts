/**
 * The `llm` engineer of the per-size form: a language model reads the
 * per-size context and replies with the next form's ratios.
 *
 * - Prompt: `size_prompts/` (system, user, retry), neutral: the form's
 *   fields and bounds, no suite contents, no conclusions; the field list is
 *   generated from the bounds ({@linkcode sizeFieldsText}).
 * - Reply: `{"rationale": "...", "config": {"sizes": {"3x3": {...}, ...,
 *   "10x10": {...}}}}`, every size with its three ratios. Its JSON Schema
 *   ({@linkcode sizeReplyJsonSchema}) constrains a server's replies
 *   (`response_format`, strict) and, as a llama.cpp grammar, a local
 *   model's.
 * - Validation: the reply is parsed as JSON (fences and think blocks are
 *   skipped), checked against the reply schema, then repaired by
 *   `clampSizeForm` (values clamped to their bounds, sizes that cannot be
 *   drawn made drawable; event `clamped`). A reply that is not JSON or has
 *   no `config.sizes` is asked again with the error (`reasks`, default 2);
 *   after that the current form is kept (event `fallback`). Agents, hole
 *   mode and horizon are never taken from a reply.
 * - Replies are cached by request in the cache's `llm/` directory, so a run
 *   replays offline; API keys never reach the cache.
 *
 * @module
 */
import * as v from "valibot";
import { toJsonSchema } from "@valibot/to-json-schema";
import { createHash } from "node:crypto";
import { join } from "node:path";
import {
  clampSizeForm,
  SIZE_FORM_BOUNDS,
  SIZE_FORM_PAPER_NAMES,
  SIZE_KEYS,
} from "../schemas/size_form.ts";
import {
  LlmEndpointSpecSchema,
  RATIONALE_MAX_CHARS,
  resolveLlmEndpoint,
} from "../schemas/llm.ts";
import type { ChatMessage, ChatOptions } from "../llm/client.ts";
import { ServedChatClient, servedLabel } from "../llm/served_client.ts";
import {
  checkServe,
  servedChat,
  ServedLlmSettingsSchema,
  serveFingerprint,
  type ServeSpec,
  ServeSpecSchema,
} from "./llm_serve.ts";
import {
  type AnyChatOptions,
  type ChatBackend,
  chatOptionsFromEndpoint,
  createChatClient,
  isLocalChatOptions,
} from "../llm/endpoint.ts";
import { type JsonSchema, jsonSchemaToGbnf } from "../llm/gbnf.ts";
import { extractJson } from "../llm/json_extract.ts";
import { LlmContextOverflowError, LlmError } from "../llm/errors.ts";
import type { EngineerEvent, LlmTally } from "./engineer.ts";
import { EngineerConfigError, type EngineerEnv } from "./engineer_kind.ts";
import type {
  SizeEngineer,
  SizeEngineerKind,
  SizeProposal,
  SizeProposeInput,
} from "./size_engineer.ts";

/** The prompt templates of the form. */
export interface SizePrompts {
  /** System prompt (`{{fields}}`). */
  system: string;
  /** User prompt (`{{context_type}}`, `{{context}}`). */
  user: string;
  /** Re-ask prompt (`{{error}}`). */
  retry: string;
}

/** Read the form's prompt templates. */
export function loadSizePrompts(): SizePrompts {
  const read = (u: URL) => Deno.readTextFileSync(u);
  return {
    system: read(new URL("./size_prompts/system.md", import.meta.url)),
    user: read(new URL("./size_prompts/user.md", import.meta.url)),
    retry: read(new URL("./size_prompts/retry.md", import.meta.url)),
  };
}

/** sha256 (hex) of the prompt templates. */
export function sizePromptDigest(): string {
  const h = createHash("sha256");
  const t = loadSizePrompts();
  for (const f of ["system", "user", "retry"] as const) {
    h.update(`${f}.md\0${t[f].length}\0${t[f]}`);
  }
  return h.digest("hex");
}

/** The field list shown to the model, from the bounds. */
export function sizeFieldsText(): string {
  const B = SIZE_FORM_BOUNDS;
  return [
    `- data_ratio: number ${B.data_ratio.min}..${B.data_ratio.max}: the share of the stage's training instances drawn at this size (normalised by the sum over sizes; 0 = the size is not trained on) (paper: ${SIZE_FORM_PAPER_NAMES.data_ratio})`,
    `- hole_ratio: number ${B.hole_ratio.min}..${B.hole_ratio.max}: the fraction of the board's cells that are holes (paper: hole ratio)`,
    `- wait_ratio: number ${B.wait_ratio.min}..${B.wait_ratio.max}: the share of this size's instances whose optimal solution needs at least one agent to wait to resolve a conflict (paper: ${SIZE_FORM_PAPER_NAMES.wait_ratio})`,
  ].join("\n");
}

const _ratio = (max: number) =>
  v.pipe(v.number(), v.minValue(0), v.maxValue(max));
const _sizeReply = v.strictObject({
  data_ratio: _ratio(1),
  hole_ratio: _ratio(SIZE_FORM_BOUNDS.hole_ratio.max),
  wait_ratio: _ratio(1),
});

/** The reply the form's llm engineer asks for. */
export const SizeReplySchema = v.strictObject({
  rationale: v.pipe(v.string(), v.maxLength(RATIONALE_MAX_CHARS)),
  config: v.strictObject({
    sizes: v.strictObject(
      Object.fromEntries(SIZE_KEYS.map((k) => [k, _sizeReply])) as Record<
        string,
        typeof _sizeReply
      >,
    ),
  }),
});

let _schema: JsonSchema | undefined;

/** The JSON Schema of a reply. */
export function sizeReplyJsonSchema(): JsonSchema {
  if (_schema === undefined) {
    const s = toJsonSchema(SizeReplySchema, {
      errorMode: "ignore",
    }) as JsonSchema;
    delete s.$schema;
    _schema = s;
  }
  return structuredClone(_schema);
}

let _grammar: string | undefined;

/** The llama.cpp grammar of a reply. */
export function sizeReplyGrammar(): string {
  _grammar ??= jsonSchemaToGbnf(sizeReplyJsonSchema());
  return _grammar;
}

function _fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (m, k: string) => values[k] ?? m);
}

/** Options of {@linkcode sizeLlmEngineer}. */
export interface SizeLlmOptions {
  /**
   * The chat client (built from the endpoint; tests pass a fake), or a
   * function that starts one per proposal (a served model: its `close`
   * stops the server when the proposal ends).
   */
  client: ChatBackend | (() => ChatBackend & { close?(): Promise<void> });
  /** Re-asks after a rejected reply. @default 2 */
  reasks?: number;
  /** What an endpoint failure does. @default "throw" */
  onEndpointError?: "throw" | "fallback";
  /** Prompt templates. @default loadSizePrompts() */
  prompts?: SizePrompts;
}

/** What a reply gives: a form, or the error to show the model. */
function _readReply(
  text: string,
  input: SizeProposeInput,
): {
  ok: true;
  proposal: Omit<SizeProposal, "reads" | "events">;
  adjustments: readonly string[];
} | {
  ok: false;
  error: string;
} {
  let json: unknown;
  try {
    json = extractJson(text);
  } catch (e) {
    return { ok: false, error: `not a JSON object (${(e as Error).message})` };
  }
  const o = json as { rationale?: unknown; config?: unknown };
  const config = o.config as { sizes?: unknown } | undefined;
  if (
    typeof config !== "object" || config === null || config.sizes === undefined
  ) {
    return { ok: false, error: 'the reply has no "config": {"sizes": {...}}' };
  }
  const strict = v.safeParse(SizeReplySchema, json);
  const clamp = clampSizeForm({ sizes: config.sizes }, input.form);
  const adjustments = [
    ...(strict.success ? [] : [
      `reply off the schema: ${strict.issues[0]?.message ?? "?"} (${
        v.getDotPath(strict.issues[0]!) ?? ""
      })`,
    ]),
    ...clamp.adjustments,
  ];
  return {
    ok: true,
    proposal: {
      form: { ...input.form, sizes: clamp.form.sizes },
      rationale: `llm engineer: ${
        typeof o.rationale === "string" && o.rationale
          ? o.rationale.slice(0, RATIONALE_MAX_CHARS)
          : "(no rationale given)"
      }`,
    },
    adjustments,
  };
}

/** The form's llm engineer over a chat client. */
// Long by design: one proposal (prompt, ask, check, re-ask, fall back) reads in order inside `propose`.
export function sizeLlmEngineer(options: SizeLlmOptions): SizeEngineer {
  const reasks = options.reasks ?? 2;
  const onError = options.onEndpointError ?? "throw";
  return {
    name: "llm",
    // Long by design: one proposal (prompt, ask, check, re-ask, fall back) in the order it happens.
    async propose(input) {
      const prompts = options.prompts ?? loadSizePrompts();
      const ctx = input.context;
      const messages: ChatMessage[] = [
        {
          role: "system",
          content: _fill(prompts.system, { fields: sizeFieldsText() }),
        },
        {
          role: "user",
          content: _fill(prompts.user, {
            context_type: ctx.json.type,
            context: ctx.text,
          }),
        },
      ];
      const events: EngineerEvent[] = [];
      const usage = {
        promptTokens: 0,
        completionTokens: 0,
        totalTokens: 0,
        requests: 0,
      };
      const llm: LlmTally = {
        calls: 1,
        requests: 0,
        reasks: 0,
        clamped: 0,
        truncated: 0,
        fallback: 0,
        cached: 0,
      };
      const reads = ctx.json.type === "none"
        ? []
        : [`context.${ctx.json.type} (text)`];
      const keep = (why: string): SizeProposal => {
        llm.fallback = 1;
        return {
          form: input.form,
          rationale: `llm engineer: ${why}; kept the current form.`,
          events,
          reads,
          llm,
          usage,
        };
      };
      const client = typeof options.client === "function"
        ? options.client()
        : options.client;
      try {
        return await ask(client);
      } finally {
        await (client as { close?(): Promise<void> }).close?.();
      }

      async function ask(client: ChatBackend): Promise<SizeProposal> {
        for (let attempt = 0; attempt <= reasks; attempt++) {
          let reply;
          try {
            reply = await client.chat(messages);
          } catch (e) {
            if (
              !(e instanceof LlmError) || onError === "throw" ||
              e instanceof LlmContextOverflowError
            ) throw e;
            events.push({ type: "llm_error", detail: e.message });
            events.push({
              type: "fallback",
              detail: "the endpoint failed; kept the current form",
            });
            return keep(`no usable reply (${e.name})`);
          }
          usage.requests++;
          llm.requests++;
          usage.promptTokens += reply.usage.promptTokens;
          usage.completionTokens += reply.usage.completionTokens;
          usage.totalTokens += reply.usage.totalTokens;
          if (reply.cached) {
            llm.cached++;
            events.push({
              type: "cached",
              detail: `reply ${reply.requestHash.slice(0, 12)} from the cache`,
            });
          }
          const r = _readReply(reply.text, input);
          if (r.ok) {
            if (r.adjustments.length > 0) {
              llm.clamped = 1;
              events.push({
                type: "clamped",
                detail: r.adjustments.join("; "),
              });
            }
            return { ...r.proposal, events, reads, llm, usage };
          }
          let error = r.error;
          if (reply.finishReason === "length") {
            llm.truncated++;
            events.push({
              type: "truncated",
              detail: `reply ${attempt + 1} was cut off at max_tokens`,
            });
            error =
              "your reply was cut off at the token limit before the JSON was complete; answer with the JSON object only";
          }
          if (attempt < reasks) {
            llm.reasks++;
            events.push({
              type: "retry",
              detail: `reply ${attempt + 1} rejected: ${r.error}`,
            });
            messages.push({
              role: "assistant",
              content: reply.text.slice(0, 4000),
            });
            messages.push({
              role: "user",
              content: _fill(prompts.retry, { error }),
            });
          } else {
            events.push({
              type: "fallback",
              detail: `reply ${attempt + 1} rejected: ${r.error}`,
            });
          }
        }
        return keep(`no usable reply after ${reasks + 1} attempts`);
      }
    },
  };
}

/** Parameters of the form's llm engineer kind. */
export interface SizeLlmParams {
  /** The endpoint: a server or a GGUF file; with `serve`, request settings only. */
  llm?:
    | v.InferOutput<typeof LlmEndpointSpecSchema>
    | v.InferOutput<typeof ServedLlmSettingsSchema>
    | undefined;
  /** A model server each redesign starts and stops (e.g. `{ gguf: $policy.gguf }`: the stage's checkpoint as the engineer). */
  serve?: ServeSpec | undefined;
  /** Re-asks after a rejected reply. */
  reasks?: number | undefined;
}

/** The constrained client options: the reply schema on a server, the grammar locally. */
function _constrained(chat: AnyChatOptions): AnyChatOptions {
  if (isLocalChatOptions(chat)) {
    return chat.thinking === "on"
      ? chat
      : { ...chat, grammar: sizeReplyGrammar() };
  }
  return {
    ...chat,
    maxTokens: chat.maxTokens ?? 4096,
    responseFormat: {
      type: "json_schema",
      json_schema: {
        name: "size_form",
        strict: true,
        schema: sizeReplyJsonSchema(),
      },
    },
  };
}

/** The `llm` form engineer kind: `engineer: { name: llm, llm: ENDPOINT, reasks }`. */
export const sizeEngineer: SizeEngineerKind<SizeLlmParams> = {
  name: "llm",
  description:
    "asks a language model (an OpenAI-compatible server or a GGUF file) for the next per-size ratios",
  params: v.strictObject({
    llm: v.optional(v.pipe(
      v.union([LlmEndpointSpecSchema, ServedLlmSettingsSchema]),
      v.description(
        "server ({ base_url, model, api_key_env } or base_url_env/model_env) or model file ({ gguf } or { gguf_env }); with serve, request settings only",
      ),
    )),
    serve: v.optional(v.pipe(
      ServeSpecSchema,
      v.description(
        'a model server each redesign starts and stops: { gguf: $policy.gguf } (the stage\'s checkpoint) or { command: [vllm, serve, "{model}", --port, "{port}"], model }',
      ),
    )),
    reasks: v.optional(v.pipe(
      v.number(),
      v.integer(),
      v.minValue(0),
      v.maxValue(5),
      v.description("re-asks after a rejected reply; default 2"),
    )),
  }),
  module: import.meta.url,
  fingerprint(params, info) {
    const p = params as { llm?: unknown; serve?: unknown } | null;
    if (p?.serve !== undefined && p.serve !== null) {
      // a node reference ($policy.gguf) is not a file yet: checked at run
      const serve = v.safeParse(ServeSpecSchema, p.serve);
      if (!serve.success) return { prompts: sizePromptDigest() };
      const llm = p.llm as Record<string, unknown> | null | undefined;
      checkServe(serve.output, llm, info.baseDir, false);
      return {
        prompts: sizePromptDigest(),
        served: serveFingerprint(serve.output, info.baseDir),
        llm: p.llm ?? null,
      };
    }
    return { prompts: sizePromptDigest(), llm: p?.llm ?? null };
  },
  create(params, env) {
    if (params.serve !== undefined) return _served(params, env);
    if (params.llm === undefined) {
      throw new EngineerConfigError(
        "The llm engineer of redesign.sizes needs an endpoint: engineer: { name: llm, llm: { base_url, model, api_key_env } } or llm: { gguf: FILE }",
      );
    }
    const endpoint = resolveLlmEndpoint(
      params.llm as v.InferOutput<typeof LlmEndpointSpecSchema>,
      env.env,
      env.baseDir,
    );
    const options = chatOptionsFromEndpoint(
      endpoint,
      env.auxDir === undefined ? undefined : join(env.auxDir, "llm"),
    );
    const chat = "gguf" in options || env.env === undefined
      ? options
      : { ...options, env: env.env };
    return _reporting(
      createChatClient(_constrained(chat)),
      params,
      env,
      endpoint.gguf ?? endpoint.model ?? "",
    );
  },
};

/** The engineer over `client`, each proposal's report naming the prompts and `model`. */
function _reporting(
  client: SizeLlmOptions["client"],
  params: SizeLlmParams,
  env: EngineerEnv,
  model: string,
): SizeEngineer {
  const inner = sizeLlmEngineer({
    client,
    ...(params.reasks === undefined ? {} : { reasks: params.reasks }),
    ...(env.onEndpointError === undefined
      ? {}
      : { onEndpointError: env.onEndpointError }),
  });
  const report = { prompt_digest: sizePromptDigest(), model };
  return {
    name: "llm",
    async propose(input) {
      return { ...await inner.propose(input), report };
    },
  };
}

/** The form's llm engineer on a server each proposal starts and stops. */
function _served(params: SizeLlmParams, env: EngineerEnv): SizeEngineer {
  const { served, chat: base, cacheDir } = servedChat(
    params.serve!,
    (params.llm ?? {}) as Record<string, unknown>,
    env,
  );
  const chat = _constrained(base) as ChatOptions;
  return _reporting(
    () =>
      new ServedChatClient({
        served,
        chat,
        cacheDir,
        log: env.log,
        signal: env.signal,
      }),
    params,
    env,
    `${servedLabel(served)} (served)`,
  );
}
