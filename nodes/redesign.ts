/**
 * The `redesign` node kind: an environment engineer proposes the next
 * training configuration from the current one and a diagnosis.
 *
 * ```yaml
 * config:
 *   kind: redesign
 *   with:
 *     engineer: rules            # fixed | random | rules | replay | llm
 *     context: $matrix.context   # none | stats | failures | behavior | full
 *     config: $prev.config       # the current config
 *     findings: $findings        # this stage's diagnosis
 *     history: $earlier.findings # earlier stages' findings (read by `full`)
 *     stage: $stage
 *     llm: { base_url: http://127.0.0.1:11434/v1, model: qwen3:4b, api_key_env: OPENAI_API_KEY }
 * ```
 *
 * Value: the next configuration (what `$prev.config` gives the next stage).
 * Report: the engineer, context type, rationale, structured diff against the
 * current config, events (rules fired, re-asks, clamps, fallbacks, cache
 * hits), the context fields the engineer read, LLM usage and the prompt
 * digest. For `llm`, the prompt templates' digest enters the key
 * (`fingerprint`), and replies are cached in the kind's aux directory, so a
 * run replays offline. An unreachable endpoint fails the node (nothing is
 * cached); a reply that stays invalid after the re-asks keeps the current
 * config and records a `fallback` event.
 *
 * @module
 */
import * as v from "valibot";
import type { Json, NodeKind } from "@envsmith/engine";
import {
  type AnyEnvConfig,
  EnvConfigSpecSchema,
  parseEnvConfig,
} from "../schemas/env_config.ts";
import { type Findings, parseFindings } from "../schemas/findings.ts";
import { LlmEndpointSpecSchema, resolveLlmEndpoint } from "../schemas/llm.ts";
import {
  buildContext,
  CONTEXT_TYPES,
  type HistoryInput,
} from "../engineer/context.ts";
import { diffConfigs } from "../engineer/diff.ts";
import { ENGINEER_NAMES } from "../engineer/engineer.ts";
import { promptDigest } from "../engineer/llm.ts";
import { createEngineer } from "../engineer/registry.ts";
import { chatOptionsFromEndpoint } from "../llm/endpoint.ts";

/** Parameters of the redesign kind. */
export const RedesignParamsSchema = v.strictObject({
  /** Which engineer. */
  engineer: v.picklist(
    ENGINEER_NAMES,
    `engineer must be one of ${ENGINEER_NAMES.join(", ")}`,
  ),
  /** What it sees; default `full`. */
  context: v.optional(
    v.picklist(
      CONTEXT_TYPES,
      `context must be one of ${CONTEXT_TYPES.join(", ")}`,
    ),
  ),
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
  /** Re-asks of the llm engineer after a rejected reply; default 2. */
  reasks: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(5)),
  ),
  /** Endpoint of the llm engineer. */
  llm: v.optional(LlmEndpointSpecSchema),
});

/** Parameters of the redesign kind. */
export type RedesignParams = v.InferOutput<typeof RedesignParamsSchema>;

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
  params: RedesignParams,
  seed: number,
  options: RedesignOptions = {},
): Promise<RedesignResult> {
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
  const endpoint = params.engineer === "llm" && params.llm !== undefined
    ? resolveLlmEndpoint(params.llm, options.env)
    : undefined;
  const chat = endpoint === undefined ? undefined : {
    ...chatOptionsFromEndpoint(endpoint, options.cacheDir),
    ...(options.env === undefined ? {} : { env: options.env }),
  };
  const engineer = createEngineer(params.engineer, {
    ...(chat === undefined ? {} : { chat }),
    ...(params.reasks === undefined ? {} : { reasks: params.reasks }),
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
    prompt_digest: params.engineer === "llm" ? promptDigest() : null,
    model: endpoint?.model ?? null,
  };
  return { config: next, rationale: proposal.rationale, report };
}

/** The redesign node kind. */
export const kind: NodeKind<RedesignParams, Json> = {
  name: "redesign",
  description:
    "An environment engineer (fixed, random, rules, replay, llm) proposes the next training config from a diagnosis",
  params: RedesignParamsSchema,
  module: import.meta.url,
  fingerprint(params) {
    // The llm engineer's prompts are files, not code: their digest enters the
    // key, and so do a base URL and model read from the environment (never the
    // API key). Matrix values are already substituted here.
    const p = params as { engineer?: unknown; llm?: unknown } | null;
    if (p?.engineer !== "llm") return null;
    const spec = v.safeParse(LlmEndpointSpecSchema, p.llm);
    const env = spec.success &&
        (spec.output.base_url_env !== undefined ||
          spec.output.model_env !== undefined)
      ? resolveLlmEndpoint(spec.output)
      : undefined;
    return {
      prompts: promptDigest(),
      ...(env
        ? { endpoint: { base_url: env.base_url, model: env.model } }
        : {}),
    };
  },
  async run(params, ctx) {
    const result = await redesign(params, params.seed ?? ctx.seed, {
      cacheDir: `${ctx.auxDir}/llm`,
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
