/**
 * The `llm` engineer: asks a language model for the next configuration, an
 * OpenAI-compatible chat endpoint or a local GGUF model file (node-llama-cpp).
 *
 * Prompts are the files `engineer/prompts/<variant>/system.md`,
 * `engineer/prompts/user.md` and `engineer/prompts/retry.md` (placeholders
 * `{{dimensions}}`, `{{context_type}}`, `{{context}}`, `{{error}}`). The
 * variant `neutral` (the default) describes the task, the dimensions and the
 * answer format only: no benchmark contents and no conclusions to confirm.
 * The variant `informed` names what the held-out suites contain and states
 * the paper's "principles that work", so its effect can itself be ablated.
 * {@linkcode promptDigest} hashes a variant's files, and the redesign node
 * puts that digest in its key, so editing a prompt re-runs the llm stages.
 *
 * Replies are constrained where the endpoint allows it: a local model
 * decodes under a grammar derived from the configuration schema, ranges
 * included (`reply_format.ts`), so its reply is an in-range configuration by
 * construction; a server is sent the schema as `response_format`
 * (`json_schema`). Every reply is still checked as untrusted input:
 * 1. the JSON object is extracted (also from code fences and after
 *    `<think>` blocks);
 * 2. `{"config": ..., "rationale": ...}` is unwrapped (a bare config is
 *    accepted too);
 * 3. non-finite numbers, unknown fields, wrong types or values far outside
 *    the bounds (beyond one range-width) reject the reply;
 * 4. values mildly out of bounds are clamped (event `clamped`);
 * 4b. a config the generator cannot realise (one trial instance per
 *    component) is rejected with the generator's message;
 * 5. a rejected reply is re-asked (default twice) with the error shown to the
 *    model (event `retry`); after that, the previous config is kept (event
 *    `fallback`).
 *
 * A reply cut off at `max_tokens` before its JSON was complete (a thinking
 * model still reasoning) is the event `truncated`, never a silent fallback.
 * The proposal's `llm` tally (requests, re-asks, clamps, truncations,
 * fallback) is what the tables show per row.
 *
 * Endpoint failures (unreachable, timeout, HTTP errors) throw by default, so
 * a node fails (and is not cached) rather than record a silent fallback;
 * `onEndpointError: "fallback"` keeps the previous config instead (the CLI).
 *
 * @module
 */
import { ENV_CONFIG_BOUNDS, PAPER_NAMES } from "../schemas/env_config.ts";
import type { ChatMessage, ChatOptions, ChatReply } from "../llm/client.ts";
import {
  type AnyChatOptions,
  type ChatBackend,
  createChatClient,
  isLocalChatOptions,
} from "../llm/endpoint.ts";
import { ServedChatClient, servedLabel } from "../llm/served_client.ts";
import {
  checkServe,
  servedChat,
  ServedLlmSettingsSchema,
  serveFingerprint,
  type ServeSpec,
  ServeSpecSchema,
} from "./llm_serve.ts";
import { LlmContextOverflowError, LlmError } from "../llm/errors.ts";
import { heaviest } from "./config_ops.ts";
import type { BuiltContext } from "./context.ts";
import type {
  Engineer,
  EngineerEvent,
  LlmTally,
  Proposal,
  ProposeInput,
} from "./engineer.ts";
import {
  familyConfigJsonSchema,
  familyReplyGrammar,
  familyReplyResponseFormat,
  replyGrammar,
  replyResponseFormat,
} from "./reply_format.ts";
import { checkFamilyReply } from "./family_reply.ts";
import { DEFAULT_FAMILY, type EnvironmentFamily } from "../families/family.ts";
import { checkReply } from "./reply_check.ts";
import type { EngineerEnv, EngineerKind } from "./engineer_kind.ts";
import { EngineerConfigError } from "./engineer_kind.ts";
import {
  type LlmEndpoint,
  LlmEndpointSpecSchema,
  resolveLlmEndpoint,
} from "../schemas/llm.ts";
import { chatOptionsFromEndpoint } from "../llm/endpoint.ts";
import { ggufDigestSync } from "../llm/gguf_digest.ts";
import * as v from "valibot";
import { basename, join } from "node:path";
import { createHash } from "node:crypto";

export {
  checkReply,
  type CheckReplyOptions,
  type ReplyCheck,
  ungeneratable,
} from "./reply_check.ts";

/** The prompt variants: `neutral` (default) and `informed`. */
export const PROMPT_VARIANTS = ["neutral", "informed"] as const;
/** A prompt variant. */
export type PromptVariant = typeof PROMPT_VARIANTS[number];

/** The prompt templates, read from `engineer/prompts/`. */
export interface PromptTemplates {
  /** System prompt. */
  system: string;
  /** User prompt. */
  user: string;
  /** Re-ask prompt. */
  retry: string;
  /**
   * System prompt on a family other than MAPF-FrozenLake (its name,
   * description, dimensions and configuration schema filled in).
   * @default the file prompts/family/system.md
   */
  familySystem?: string;
}

/** Read a variant's prompt templates (synchronously: also used while planning). */
export function loadPrompts(
  variant: PromptVariant = "neutral",
): PromptTemplates {
  if (!(PROMPT_VARIANTS as readonly string[]).includes(variant)) {
    throw new RangeError(
      `unknown prompt variant "${variant}"; use ${
        PROMPT_VARIANTS.join(" or ")
      }`,
    );
  }
  const dir = new URL("./prompts/", import.meta.url);
  const read = (f: string) => Deno.readTextFileSync(new URL(f, dir));
  // Each variant is a directory literal, so the code digest sees the files.
  const system = variant === "informed"
    ? Deno.readTextFileSync(
      new URL("./prompts/informed/system.md", import.meta.url),
    )
    : Deno.readTextFileSync(
      new URL("./prompts/neutral/system.md", import.meta.url),
    );
  return {
    system,
    user: read("user.md"),
    retry: read("retry.md"),
    familySystem: Deno.readTextFileSync(
      new URL("./prompts/family/system.md", import.meta.url),
    ),
  };
}

/**
 * The dimensions of `family` as the model is shown them: bounds, step,
 * direction of difficulty and meaning.
 */
export function familyDimensionsText(family: EnvironmentFamily): string {
  return family.dimensions.map((d) =>
    `- ${d.path}: ${
      d.integer ? "integer" : "number"
    } ${d.min}..${d.max}, step ${d.step}, harder ${d.harder}: ${d.description}`
  ).join("\n");
}

/** sha256 (hex) of a variant's prompt templates. */
export function promptDigest(variant: PromptVariant = "neutral"): string {
  const h = createHash("sha256");
  const t = loadPrompts(variant);
  for (const f of ["system", "user", "retry"] as const) {
    h.update(`${f}.md\0${t[f].length}\0${t[f]}`);
  }
  return h.digest("hex");
}

const DESCRIPTIONS: Readonly<Record<string, string>> = {
  width: "grid width in cells",
  height: "grid height in cells",
  agents: "number of agents",
  hole_density: "fraction of non-wall cells that are holes",
  hole_clustering: "0 = holes scattered, 1 = holes in clumps",
  walls: "fraction of cells covered by wall blocks",
  corridors:
    "corridor/bottleneck structure (wall partitions with narrow doors)",
  slip: "probability that a move slips to a perpendicular move",
  interaction: "how much the agents' shortest paths cross",
};

/** The dimension list shown to the model, generated from the schema's bounds. */
export function dimensionsText(): string {
  const B = ENV_CONFIG_BOUNDS;
  const lines: string[] = [];
  for (const [k, d] of Object.entries(DESCRIPTIONS)) {
    const b = B[k as keyof typeof B];
    const paper = PAPER_NAMES[k] ? ` (paper: ${PAPER_NAMES[k]})` : "";
    lines.push(
      `- ${k}: ${
        b.integer ? "integer" : "number"
      } ${b.min}..${b.max}: ${d}${paper}`,
    );
  }
  lines.push(
    `- horizon: {"factor": ${B.horizon_factor.min}..${B.horizon_factor.max}} (times the reference makespan) or {"steps": ${B.horizon_steps.min}..${B.horizon_steps.max}}`,
    `- distance: {"min": ${B.distance.min}.., "max": ..${B.distance.max}}: range of each agent's start-goal shortest distance`,
    `- collision: "fail" (a collision ends the episode) or "block" (conflicting moves are cancelled)`,
    `- holes: "lethal" (entering a hole fails the episode) or "blocked" (holes are impassable)`,
    `- agents must fit: 2 * agents <= width * height`,
  );
  return lines.join("\n");
}

function _fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (m, k: string) => values[k] ?? m);
}

/** Options of {@linkcode llmEngineer}. */
export interface LlmEngineerOptions {
  /** How to reach the server or model file (and where the reply cache is). */
  chat: AnyChatOptions;
  /** Re-asks after a rejected reply. @default {2} */
  reasks?: number;
  /** What an endpoint failure does. @default {"throw"} */
  onEndpointError?: "throw" | "fallback";
  /** The prompt variant. @default {"neutral"} */
  prompt?: PromptVariant;
  /** Prompt templates (tests inject some). @default loadPrompts(prompt) */
  prompts?: PromptTemplates;
  /**
   * How replies are constrained: `json_schema` (local: the grammar; server:
   * `response_format` with the reply schema), `json_object` (server:
   * `response_format: {type: "json_object"}`; local: the grammar), `none`.
   * A local model with `thinking: "on"` decodes without a grammar (llama.cpp
   * would apply it from the first token, leaving no room to think).
   * @default {"json_schema"}
   */
  constrain?: "json_schema" | "json_object" | "none";
  /**
   * Builds the client from the (constrained) chat options, instead of
   * `createChatClient`; its `close`, if any, runs when the proposal ends
   * (served models stop their server there).
   */
  connect?: (chat: AnyChatOptions) => ChatSession;
  /**
   * The family the configuration belongs to: its schema in the prompt, the
   * grammar and the reply check. @default MAPF-FrozenLake
   */
  family?: EnvironmentFamily;
}

/** A client whose resources end with the proposal (a served model's server). */
export type ChatSession = ChatBackend & { close?(): Promise<void> };

/** Default `max_tokens` of the engineer on a server (room for a reasoning block). */
export const ENGINEER_MAX_TOKENS = 4096;

/**
 * The llm engineer.
 *
 * Long by design: one proposal (prompt, ask, check, re-ask, fall back) reads in order in `_propose`.
 *
 * @example
 * Not run: it needs an OpenAI-compatible server; llm_test.ts runs it against a local stub.
 * ```ts ignore
 * import { llmEngineer } from "./llm.ts";
 * const eng = llmEngineer({ chat: { baseURL: "http://127.0.0.1:11434/v1", model: "qwen3:4b" } });
 * ```
 */
export function llmEngineer(options: LlmEngineerOptions): Engineer {
  const reasks = options.reasks ?? 2;
  const onError = options.onEndpointError ?? "throw";
  const constrain = options.constrain ?? "json_schema";
  const family = options.family !== undefined &&
      options.family.name !== DEFAULT_FAMILY
    ? options.family
    : undefined;
  return {
    name: "llm",
    async propose(input: ProposeInput): Promise<Proposal> {
      const prompts = options.prompts ?? loadPrompts(options.prompt);
      const client: ChatSession = (options.connect ?? createChatClient)(
        _constrained(options.chat, constrain, family),
      );
      try {
        return await _propose(client, prompts, input);
      } finally {
        await client.close?.();
      }
    },
  };

  // Long by design: one proposal (prompt, ask, check, re-ask, fall back) in the order it happens.
  async function _propose(
    client: ChatSession,
    prompts: PromptTemplates,
    input: ProposeInput,
  ): Promise<Proposal> {
    const messages = _firstMessages(prompts, input.context, family);
    const run = _newRun(input.context);
    const previous = family === undefined ? heaviest(input.config) : undefined;
    const keep = (rationale: string): Proposal => {
      run.llm.fallback = 1;
      return { config: input.config, rationale, ...run };
    };
    for (let attempt = 0; attempt <= reasks; attempt++) {
      let reply: ChatReply;
      try {
        reply = await client.chat(messages);
      } catch (e) {
        if (
          !(e instanceof LlmError) || onError === "throw" ||
          e instanceof LlmContextOverflowError
        ) throw e;
        run.events.push({ type: "llm_error", detail: e.message });
        run.events.push({
          type: "fallback",
          detail: "the endpoint failed; kept the previous config",
        });
        return keep(
          `llm engineer: no usable reply (${e.name}); kept the previous config.`,
        );
      }
      _recordReply(run, reply);
      const text = reply.text;
      const check = family === undefined
        ? checkReply(text, previous!, { seed: input.seed })
        : checkFamilyReply(family, text, input.config);
      if (check.ok) {
        if (check.adjustments.length > 0) {
          run.llm.clamped = 1;
          run.events.push({
            type: "clamped",
            detail: check.adjustments.join("; "),
          });
        }
        return {
          config: check.config,
          rationale: `llm engineer: ${
            check.rationale || "(no rationale given)"
          }`,
          ...run,
        };
      }
      let error = check.error;
      if (reply.finishReason === "length") {
        run.llm.truncated++;
        run.events.push({
          type: "truncated",
          detail: _truncation(text, attempt, options.chat),
        });
        error =
          `your reply was cut off at the token limit before the JSON was complete; answer with the JSON object only, without reasoning first`;
      }
      if (attempt < reasks) {
        run.llm.reasks++;
        run.events.push({
          type: "retry",
          detail: `reply ${attempt + 1} rejected: ${check.error}`,
        });
        messages.push({ role: "assistant", content: text.slice(0, 4000) });
        messages.push({
          role: "user",
          content: _fill(prompts.retry, { error }),
        });
      } else {
        run.events.push({
          type: "fallback",
          detail: `reply ${
            attempt + 1
          } rejected: ${check.error}; kept the previous config`,
        });
      }
    }
    return keep(
      `llm engineer: no usable reply after ${
        reasks + 1
      } attempts; kept the previous config.`,
    );
  }
}

/** What one proposal of the llm engineer records besides its config. */
interface _Run {
  events: EngineerEvent[];
  reads: string[];
  usage: {
    promptTokens: number;
    completionTokens: number;
    totalTokens: number;
    requests: number;
  };
  llm: LlmTally;
}

function _newRun(ctx: BuiltContext): _Run {
  return {
    events: [],
    reads: ctx.json.type === "none" ? [] : [`context.${ctx.json.type} (text)`],
    usage: {
      promptTokens: 0,
      completionTokens: 0,
      totalTokens: 0,
      requests: 0,
    },
    llm: {
      calls: 1,
      requests: 0,
      reasks: 0,
      clamped: 0,
      truncated: 0,
      fallback: 0,
      cached: 0,
    },
  };
}

/** The system prompt and the context as the first user message. */
function _firstMessages(
  prompts: PromptTemplates,
  ctx: BuiltContext,
  family: EnvironmentFamily | undefined,
): ChatMessage[] {
  return [
    {
      role: "system",
      content: family === undefined
        ? _fill(prompts.system, { dimensions: dimensionsText() })
        : _fill(prompts.familySystem ?? loadPrompts().familySystem!, {
          family: family.name,
          description: family.description,
          dimensions: familyDimensionsText(family),
          schema: JSON.stringify(familyConfigJsonSchema(family)),
        }),
    },
    {
      role: "user",
      content: _fill(prompts.user, {
        context_type: ctx.json.type,
        context: ctx.text,
      }),
    },
  ];
}

/** Counts a reply's tokens and notes how it came (format notes, cache, HTTP retries). */
function _recordReply(run: _Run, reply: ChatReply): void {
  run.usage.requests++;
  run.llm.requests++;
  run.usage.promptTokens += reply.usage.promptTokens;
  run.usage.completionTokens += reply.usage.completionTokens;
  run.usage.totalTokens += reply.usage.totalTokens;
  for (const note of reply.notes ?? []) {
    run.events.push({ type: "format_rejected", detail: note });
  }
  if (reply.cached) {
    run.llm.cached++;
    run.events.push({
      type: "cached",
      detail: `reply ${reply.requestHash.slice(0, 12)} from the cache`,
    });
  }
  const retried = reply.attempts.filter((a) => a.status !== 200);
  if (retried.length > 0) {
    run.events.push({
      type: "http_retry",
      detail: `${reply.attempts.length} HTTP attempts (${
        reply.attempts.map((a) => a.status || a.error).join(", ")
      })`,
    });
  }
}

/** The `truncated` event's text: where the reply was cut off and what to do. */
function _truncation(
  text: string,
  attempt: number,
  chat: AnyChatOptions,
): string {
  const thinking = /<think>(?![\s\S]*<\/think>)/i.test(text);
  return `reply ${attempt + 1} was cut off at max_tokens ${
    _maxTokens(chat)
  } before its JSON was complete${
    thinking ? " (inside an unfinished <think> block)" : ""
  }: raise max_tokens, or set thinking: off`;
}

function _maxTokens(chat: AnyChatOptions): string {
  if (chat.maxTokens !== undefined) return String(chat.maxTokens);
  return isLocalChatOptions(chat) ? "(the rest of the context)" : "1024";
}

/** The client options with the reply constraint and the engineer's defaults. */
function _constrained(
  chat: AnyChatOptions,
  constrain: "json_schema" | "json_object" | "none",
  family: EnvironmentFamily | undefined,
): AnyChatOptions {
  if (isLocalChatOptions(chat)) {
    if (constrain === "none" || chat.thinking === "on") return chat;
    return {
      ...chat,
      grammar: family === undefined
        ? replyGrammar()
        : familyReplyGrammar(family),
    };
  }
  return {
    ...chat,
    maxTokens: chat.maxTokens ?? ENGINEER_MAX_TOKENS,
    ...(constrain === "json_schema"
      ? {
        responseFormat: family === undefined
          ? replyResponseFormat()
          : familyReplyResponseFormat(family),
      }
      : constrain === "json_object"
      ? { jsonMode: true }
      : {}),
  };
}

/** Parameters of the `llm` engineer kind. */
export interface LlmEngineerParams {
  /** Server or model file; with `serve`, request settings only. */
  llm?:
    | v.InferOutput<typeof LlmEndpointSpecSchema>
    | v.InferOutput<typeof ServedLlmSettingsSchema>
    | null
    | undefined;
  /** A model server each redesign starts and stops. */
  serve?: ServeSpec | undefined;
  /** Prompt variant. */
  prompt?: PromptVariant | undefined;
  /** Re-asks after a rejected reply. */
  reasks?: number | undefined;
}

const _LlmParams = v.strictObject({
  llm: v.optional(v.pipe(
    v.nullable(v.union([LlmEndpointSpecSchema, ServedLlmSettingsSchema])),
    v.description(
      "server ({ base_url, model, api_key_env } or base_url_env/model_env) or model file ({ gguf } or { gguf_env }); with serve, request settings only ({ max_tokens, temperature, seed, timeout_ms, ... })",
    ),
  )),
  serve: v.optional(v.pipe(
    ServeSpecSchema,
    v.description(
      'a model server each redesign starts on a free port and stops: { gguf: $policy.gguf, threads } (envsmith\'s own) or { command: [vllm, serve, "{model}", --port, "{port}"], model, ready_timeout_s }',
    ),
  )),
  prompt: v.optional(v.pipe(
    v.picklist(
      PROMPT_VARIANTS,
      `prompt must be one of ${PROMPT_VARIANTS.join(", ")}`,
    ),
    v.description("prompt variant: neutral (default) or informed"),
  )),
  reasks: v.optional(v.pipe(
    v.number(),
    v.integer(),
    v.minValue(0),
    v.maxValue(5),
    v.description("re-asks after a rejected reply; default 2"),
  )),
});

/**
 * How a report names the model: the server's model name, or a GGUF file's
 * name and digest prefix (`qwen.gguf sha256:3f2a...`).
 */
export function modelLabel(endpoint: LlmEndpoint): string {
  return endpoint.gguf === undefined
    ? endpoint.model ?? ""
    : _ggufLabel(endpoint.gguf);
}

function _ggufLabel(path: string): string {
  return `${basename(path)} sha256:${ggufDigestSync(path).slice(0, 12)}`;
}

/**
 * The llm engineer with what both endpoint forms share (prompt, re-asks,
 * endpoint errors) and its report (prompt, prompt digest, `model`) added to
 * every proposal.
 */
function _reportingEngineer(
  params: LlmEngineerParams,
  env: EngineerEnv,
  options: Omit<LlmEngineerOptions, "prompt" | "reasks" | "onEndpointError">,
  model: string,
): Engineer {
  const prompt = params.prompt ?? "neutral";
  const inner = llmEngineer({
    ...options,
    ...(env.family === undefined ? {} : { family: env.family }),
    prompt,
    ...(params.reasks === undefined ? {} : { reasks: params.reasks }),
    ...(env.onEndpointError === undefined
      ? {}
      : { onEndpointError: env.onEndpointError }),
  });
  const report = { prompt, prompt_digest: promptDigest(prompt), model };
  return {
    name: inner.name,
    async propose(input: ProposeInput) {
      return { ...await inner.propose(input), report };
    },
  };
}

/**
 * The `llm` engineer kind: `engineer: { name: llm, llm: ENDPOINT, prompt,
 * reasks }`. Its fingerprint is the prompt templates' digest and, for an
 * endpoint read from the environment or a local model file, the resolved
 * base URL and model or the GGUF file's sha256 (never an API key, never a
 * path read from the environment). Replies are cached in `llm/` under the
 * redesign kind's aux directory, so a run replays offline.
 */
export const engineer: EngineerKind<LlmEngineerParams> = {
  name: "llm",
  description:
    "asks a language model (an OpenAI-compatible server or a local GGUF file) for the next configuration",
  params: _LlmParams,
  module: import.meta.url,
  families: "any",
  fingerprint(params, info) {
    const p = params as
      | { llm?: unknown; prompt?: unknown; serve?: unknown }
      | null;
    const variant = p?.prompt === "informed" ? "informed" : "neutral";
    if (p?.serve !== undefined && p.serve !== null) {
      // node references (a $policy.gguf) are absent here: checked at run
      const serve = v.safeParse(ServeSpecSchema, p.serve);
      if (!serve.success) return { prompts: promptDigest(variant) };
      const llm = p.llm as Record<string, unknown> | null | undefined;
      checkServe(serve.output, llm, info.baseDir, false);
      return {
        prompts: promptDigest(variant),
        served: serveFingerprint(serve.output, info.baseDir),
      };
    }
    const spec = v.safeParse(LlmEndpointSpecSchema, p?.llm);
    if (!spec.success) return { prompts: promptDigest(variant) };
    const s = spec.output;
    const fromEnv = s.base_url_env !== undefined ||
      s.model_env !== undefined || s.gguf_env !== undefined;
    const local = s.gguf !== undefined || s.gguf_env !== undefined;
    let endpoint: Record<string, unknown> | undefined;
    if (fromEnv || local) {
      const e = resolveLlmEndpoint(s, undefined, info.baseDir);
      endpoint = e.gguf !== undefined
        ? { gguf_sha256: ggufDigestSync(e.gguf) }
        : { base_url: e.base_url ?? null, model: e.model ?? null };
    }
    return {
      prompts: promptDigest(variant),
      ...(endpoint === undefined ? {} : { endpoint }),
    };
  },
  create(params, env) {
    if (params.serve !== undefined) return _servedEngineer(params, env);
    if (params.llm === undefined || params.llm === null) {
      throw new EngineerConfigError(
        "The llm engineer needs an endpoint: a server (YAML: engineer: { name: llm, llm: { base_url, model, api_key_env } }; CLI: --base-url URL --model M [--api-key-env VAR]) or a GGUF model file (YAML: llm: { gguf: FILE } or { gguf_env: ENVSMITH_LLM_GGUF }; CLI: --gguf FILE, or ENVSMITH_LLM_GGUF=FILE).",
      );
    }
    const spec = v.safeParse(LlmEndpointSpecSchema, params.llm);
    if (!spec.success) {
      throw new EngineerConfigError(
        `engineer.llm: ${
          spec.issues[0]?.message ?? "not an endpoint"
        }; or add serve: { gguf: $policy.gguf } to start a server`,
      );
    }
    const endpoint = resolveLlmEndpoint(spec.output, env.env, env.baseDir);
    const options = chatOptionsFromEndpoint(
      endpoint,
      env.auxDir === undefined ? undefined : join(env.auxDir, "llm"),
    );
    const chat = "gguf" in options || env.env === undefined
      ? options
      : { ...options, env: env.env };
    return _reportingEngineer(params, env, {
      chat,
      ...(endpoint.response_format === undefined
        ? {}
        : { constrain: endpoint.response_format }),
    }, modelLabel(endpoint));
  },
};

/** The llm engineer on a model server each proposal starts and stops. */
function _servedEngineer(params: LlmEngineerParams, env: EngineerEnv) {
  const { settings, served, chat, cacheDir } = servedChat(
    params.serve!,
    (params.llm ?? {}) as Record<string, unknown>,
    env,
  );
  return _reportingEngineer(
    params,
    env,
    {
      chat,
      ...(settings.response_format === undefined
        ? {}
        : { constrain: settings.response_format }),
      connect: (c) =>
        new ServedChatClient({
          served,
          chat: c as ChatOptions,
          cacheDir,
          log: env.log,
          signal: env.signal,
        }),
    },
    "gguf" in served
      ? `${_ggufLabel(served.gguf)} (served)`
      : servedLabel(served),
  );
}
