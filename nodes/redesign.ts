/**
 * The `redesign` node kind: an environment engineer proposes the next
 * training configuration from the current one and a diagnosis.
 *
 * ```yaml
 * config:
 *   kind: redesign
 *   with:
 *     engineer: rules            # fixed | random | rules | replay | llm | scripted | blind
 *     # or { name, ...parameters }: e.g. { name: scripted, script: $config[variant=full,seed=+1] }
 *     context: $matrix.context   # none | stats | failures | behavior | full
 *     config: $prev.config       # the current config
 *     findings: $findings        # this stage's diagnosis
 *     history: $earlier.findings # earlier stages' findings (read by `full`)
 *     stage: $stage
 *     llm: { base_url: http://127.0.0.1:11434/v1, model: qwen3:4b, api_key_env: OPENAI_API_KEY }
 *     # or a local model file: llm: { gguf_env: ENVSMITH_LLM_GGUF } (or gguf: FILE)
 *     prompt: neutral            # neutral (default) | informed
 * ```
 *
 * The controls read no context: `scripted` proposes `script` (a config,
 * usually another run's redesign output); `blind` copies the pace of
 * `pace: [FROM, TO]` (an informed run's config before and after this
 * stage's redesign) along blindly chosen dimensions.
 *
 * Value: the next configuration (what `$prev.config` gives the next stage).
 * Report: the engineer, context type, rationale, structured diff against the
 * current config, events (rules fired, re-asks, clamps, fallbacks, cache
 * hits, truncated replies), the context fields the engineer read, LLM usage,
 * the prompt variant and digest, and for `llm` the tally `llm: { calls,
 * requests, reasks, clamped, truncated, fallback, cached }` whose means per
 * row the tables show (`report.llm.fallback` is the fallback rate). For
 * `llm`, the prompt templates' digest enters the key (`fingerprint`), and so
 * do a base URL and model read from the environment and the sha256 of a GGUF
 * model file (never its path when it comes from `gguf_env`). Replies are
 * cached in the kind's aux directory, so a run replays offline. An
 * unreachable endpoint fails the node (nothing is cached); a reply that
 * stays invalid after the re-asks keeps the current config and records a
 * `fallback` event.
 *
 * @module
 */
import * as v from "valibot";
import type { Json, NodeKind } from "@envsmith/engine/kind";
import { basename } from "node:path";
import {
  type AnyEnvConfig,
  EnvConfigSpecSchema,
  parseEnvConfig,
} from "../schemas/env_config.ts";
import { type Findings, parseFindings } from "../schemas/findings.ts";
import {
  type LlmEndpoint,
  LlmEndpointSpecSchema,
  resolveLlmEndpoint,
} from "../schemas/llm.ts";
import { buildContext, CONTEXT_TYPES } from "../engineer/context.ts";
import { createEngineer } from "../engineer/registry.ts";
import { diffConfigs } from "../engineer/diff.ts";
import { ENGINEER_NAMES } from "../engineer/engineer.ts";
import type { HistoryInput } from "../engineer/context.ts";
import { PROMPT_VARIANTS, promptDigest } from "../engineer/llm.ts";
import { chatOptionsFromEndpoint } from "../llm/endpoint.ts";
import { ggufDigestSync } from "../llm/gguf_digest.ts";

const _EngineerName = v.picklist(
  ENGINEER_NAMES,
  `engineer must be one of ${ENGINEER_NAMES.join(", ")}`,
);

/** The informed move a `blind` engineer copies the pace of: `[FROM, TO]`. */
const _Pace = v.pipe(
  v.array(EnvConfigSpecSchema),
  v.length(2, "pace is [FROM, TO]: the informed run's config before and after"),
);

/** What an engineer may be given besides its name (also inside `engineer: {...}`). */
const _engineerEntries = {
  /** What it sees; default `full`. */
  context: v.optional(
    v.picklist(
      CONTEXT_TYPES,
      `context must be one of ${CONTEXT_TYPES.join(", ")}`,
    ),
  ),
  /** The configuration the `scripted` engineer proposes. */
  script: v.optional(EnvConfigSpecSchema),
  /** The informed run's config before and after this stage (`blind`). */
  pace: v.optional(_Pace),
  /** Re-asks of the llm engineer after a rejected reply; default 2. */
  reasks: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(5)),
  ),
  /** Server or model file of the llm engineer (null: none, for other engineers). */
  llm: v.optional(v.nullable(LlmEndpointSpecSchema)),
  /** Prompt variant of the llm engineer: neutral (default) or informed. */
  prompt: v.optional(
    v.picklist(
      PROMPT_VARIANTS,
      `prompt must be one of ${PROMPT_VARIANTS.join(", ")}`,
    ),
  ),
};

/** Parameters of the redesign kind. */
export const RedesignParamsSchema = v.strictObject({
  /**
   * Which engineer: a name, or `{ name, ...parameters }` whose parameters
   * (context, script, pace, llm, prompt, reasks) take precedence over the
   * node's own, so a matrix value can carry an engineer with its inputs.
   */
  engineer: v.union([
    _EngineerName,
    v.strictObject({ name: _EngineerName, ..._engineerEntries }),
  ]),
  ..._engineerEntries,
  /** The current configuration. */
  config: EnvConfigSpecSchema,
  /** This stage's findings (null/absent: nothing to see). */
  findings: v.optional(v.nullable(v.unknown())),
  /** Earlier stages: findings, or `{ findings, config }`, oldest first. */
  history: v.optional(v.array(v.unknown())),
  /** Stage index. */
  stage: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  /** Seed (default: the node's seed). */
  seed: v.optional(v.pipe(v.number(), v.integer())),
  /** Character budget of the context text; default 6000. */
  budget: v.optional(v.pipe(v.number(), v.integer(), v.minValue(200))),
});

/** Parameters of the redesign kind. */
export type RedesignParams = v.InferOutput<typeof RedesignParamsSchema>;

/** Parameters with `engineer: { name, ... }` flattened: the engineer's own parameters win. */
export type FlatRedesignParams = Omit<RedesignParams, "engineer"> & {
  engineer: RedesignParams["engineer"] & string;
};

/** Flattens `engineer: { name, ...parameters }` into the node's parameters. */
export function flattenEngineer(params: RedesignParams): FlatRedesignParams {
  const e = params.engineer;
  if (typeof e === "string") return params as FlatRedesignParams;
  const { name, ...own } = e;
  const out: Record<string, unknown> = { ...params, engineer: name };
  for (const [k, x] of Object.entries(own)) if (x !== undefined) out[k] = x;
  return out as FlatRedesignParams;
}

/** Turn the `history` parameter into context history entries. */
export function historyFrom(
  items: readonly unknown[] | undefined,
): HistoryInput[] {
  return (items ?? []).map((item, i) => {
    const o = item as Record<string, unknown> | null;
    if (
      o !== null && typeof o === "object" && "findings" in o &&
      !("version" in o)
    ) {
      const f = parseFindings(o.findings, `history[${i}].findings`);
      const c = o.config === undefined || o.config === null
        ? null
        : parseEnvConfig(o.config);
      return { findings: f, config: c };
    }
    return { findings: parseFindings(item, `history[${i}]`) };
  });
}

/** Options of {@linkcode redesign}. */
export interface RedesignOptions {
  /** Directory of the LLM reply cache. */
  cacheDir?: string;
  /** What an LLM endpoint failure does. @default {"throw"} */
  onEndpointError?: "throw" | "fallback";
  /** Reads environment variables (tests). */
  env?: (name: string) => string | undefined;
  /** Directory relative GGUF paths resolve against (the experiment file's). */
  baseDir?: string;
}

/** The result of {@linkcode redesign}: the next config and a JSON report. */
export interface RedesignResult {
  /** The next configuration. */
  config: AnyEnvConfig;
  /** Rationale. */
  rationale: string;
  /** Report (JSON). */
  report: { [key: string]: Json };
}

/** Run one redesign (shared by the node kind and the CLI). */
export async function redesign(
  given: RedesignParams,
  seed: number,
  options: RedesignOptions = {},
): Promise<RedesignResult> {
  const params = flattenEngineer(given);
  const current = parseEnvConfig(params.config);
  const findings: Findings | null =
    params.findings === undefined || params.findings === null
      ? null
      : parseFindings(params.findings);
  const type = params.context ?? "full";
  const context = buildContext(type, findings, current, {
    history: historyFrom(params.history),
    ...(params.stage === undefined ? {} : { stage: params.stage }),
    ...(params.budget === undefined ? {} : { budget: params.budget }),
  });
  const endpoint = params.engineer === "llm" && params.llm
    ? resolveLlmEndpoint(params.llm, options.env, options.baseDir)
    : undefined;
  const chatOptions = endpoint === undefined
    ? undefined
    : chatOptionsFromEndpoint(endpoint, options.cacheDir);
  const chat = chatOptions === undefined
    ? undefined
    : "gguf" in chatOptions || options.env === undefined
    ? chatOptions
    : { ...chatOptions, env: options.env };
  const prompt = params.prompt ?? "neutral";
  const engineer = createEngineer(params.engineer, {
    ...(chat === undefined ? {} : { chat }),
    prompt,
    ...(endpoint?.response_format === undefined
      ? {}
      : { constrain: endpoint.response_format }),
    ...(params.reasks === undefined ? {} : { reasks: params.reasks }),
    ...(params.script === undefined ? {} : { script: params.script }),
    ...(params.pace === undefined
      ? {}
      : { pace: { from: params.pace[0]!, to: params.pace[1]! } }),
    ...(options.onEndpointError === undefined
      ? {}
      : { onEndpointError: options.onEndpointError }),
  });
  const proposal = await engineer.propose({ context, config: current, seed });
  const next = parseEnvConfig(proposal.config);
  const diff = diffConfigs(current, next);
  const report: { [key: string]: Json } = {
    engineer: params.engineer,
    context: type,
    stage: params.stage ?? null,
    rationale: proposal.rationale,
    diff: diff as unknown as Json,
    events: proposal.events as unknown as Json,
    reads: proposal.reads,
    context_chars: context.text.length,
    context_truncated: {
      cases: context.json.failures?.dropped_cases ?? 0,
      history: context.json.history?.dropped_entries ?? 0,
      dimensions: context.json.stats?.dropped_dimensions ?? 0,
      cut: context.json.cut,
    },
    usage: (proposal.usage ?? null) as Json,
    llm: (proposal.llm ?? null) as Json,
    prompt: params.engineer === "llm" ? prompt : null,
    prompt_digest: params.engineer === "llm" ? promptDigest(prompt) : null,
    model: endpoint === undefined ? null : modelLabel(endpoint),
  };
  return { config: next, rationale: proposal.rationale, report };
}

/**
 * How a report names the model: the server's model name, or a GGUF file's
 * name and digest prefix (`qwen.gguf sha256:3f2a...`).
 */
export function modelLabel(endpoint: LlmEndpoint): string {
  if (endpoint.gguf === undefined) return endpoint.model ?? "";
  return `${basename(endpoint.gguf)} sha256:${
    ggufDigestSync(endpoint.gguf).slice(0, 12)
  }`;
}

/** The redesign node kind. */
export const kind: NodeKind<RedesignParams, Json> = {
  name: "redesign",
  description:
    "An environment engineer (fixed, random, rules, replay, llm) proposes the next training config from a diagnosis",
  params: RedesignParamsSchema,
  module: import.meta.url,
  fingerprint(params, info) {
    // The llm engineer's prompts are files, not code: their digest enters the
    // key, and so do a base URL and model read from the environment and the
    // sha256 of a GGUF model file (never the API key; never a path read from
    // the environment). Matrix values are already substituted here.
    const given = params as { engineer?: unknown } | null;
    const e = given?.engineer;
    const p =
      (e !== null && typeof e === "object"
        ? { ...given, ...e, engineer: (e as { name?: unknown }).name }
        : given) as
          | { engineer?: unknown; llm?: unknown; prompt?: unknown }
          | null;
    if (p?.engineer !== "llm") return null;
    const variant = p.prompt === "informed" ? "informed" : "neutral";
    const spec = v.safeParse(LlmEndpointSpecSchema, p.llm);
    if (!spec.success) return { prompts: promptDigest(variant) };
    const s = spec.output;
    const fromEnv = s.base_url_env !== undefined ||
      s.model_env !== undefined || s.gguf_env !== undefined;
    const local = s.gguf !== undefined || s.gguf_env !== undefined;
    let endpoint: Json | undefined;
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
  async run(params, ctx) {
    const result = await redesign(params, params.seed ?? ctx.seed, {
      cacheDir: `${ctx.auxDir}/llm`,
      baseDir: ctx.baseDir,
    });
    ctx.log(result.rationale);
    for (
      const e of result.report.events as { type: string; detail: string }[]
    ) {
      ctx.log(`event ${e.type}: ${e.detail}`);
    }
    return { value: result.config as unknown as Json, report: result.report };
  },
};
