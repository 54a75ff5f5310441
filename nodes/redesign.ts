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
import type { BlobRef, Json, NodeKind } from "@envsmith/engine";
import { basename } from "node:path";
import {
  type AnyEnvConfig,
  EnvConfigSpecSchema,
  parseEnvConfig,
} from "../schemas/env_config.ts";
import { CURRICULUM_DIMS } from "../engineer/config_ops.ts";
import { boxProblem, DEFAULT_BOX, type DrBox } from "../engineer/dr.ts";
import { PROBE_CRITERIA } from "../engineer/probe.ts";
import type { Level } from "../engineer/levels.ts";
import { RewardParamsSchema } from "./reward_params.ts";
import {
  checkpointLevelIo,
  checkpointProber,
  type TrainLevelScores,
} from "./engineer_rollouts.ts";
import {
  configOf,
  ConfigOrLevelSetSchema,
  isLevelSet,
  readLevelSet,
  writeLevelSet,
} from "./level_set.ts";
import { field } from "./_values.ts";
import { readCheckpoint, readInstances } from "./policy_io.ts";
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
  /**
   * dr: the box configurations are drawn from, dimension -> [lo, hi]
   * (size, agents, hole_density, hole_clustering, walls, corridors, slip,
   * interaction, horizon); plr, accel: the box new levels are drawn from.
   * Default: the range the benchmark suites span.
   */
  box: v.optional(
    v.pipe(
      v.record(v.string(), v.unknown()),
      v.check((b) => boxProblem(b) === null, (i) => boxProblem(i.input)!),
    ),
  ),
  /** dr: configurations drawn per stage (a mixture), 1..16; default 16. */
  draws: v.optional(_int("draws", 1, 16)),
  /** band: the lower edge; below it, one step easier. Default 0.5. */
  lo: v.optional(_unit("lo")),
  /** band: the upper edge; above it, one step harder. Default 0.8. */
  hi: v.optional(_unit("hi")),
  /** band: the dimensions stepped, in order. */
  order: v.optional(
    v.pipe(
      v.array(
        v.picklist(
          CURRICULUM_DIMS,
          `order must list curriculum dimensions: ${CURRICULUM_DIMS.join(", ")}`,
        ),
      ),
      v.minLength(1, "order must name at least one dimension"),
    ),
  ),
  /** probe: candidate configurations, the current one included (1..16); default 6. */
  candidates: v.optional(_int("candidates", 1, 16)),
  /** probe: pick by success closest to `target`, or by the largest learnable share. */
  criterion: v.optional(
    v.picklist(
      PROBE_CRITERIA,
      `criterion must be one of ${PROBE_CRITERIA.join(", ")}`,
    ),
  ),
  /** probe: the target success of criterion `target`; default 0.5. */
  target: v.optional(_unit("target")),
  /** probe: fresh instances rolled out per candidate (1..512); default 32. */
  probe_instances: v.optional(_int("probe_instances", 1, 512)),
  /** probe: episodes per probe instance (1..16); default 2. */
  probe_episodes: v.optional(_int("probe_episodes", 1, 16)),
  /**
   * probe: the probing policy ($policy: the current checkpoint; probe-base:
   * $start, the stage-0 policy); plr, accel: this stage's train node (its
   * checkpoint scores new levels, its level_scores rescore replayed ones).
   */
  policy: v.optional(v.unknown()),
  /** plr, accel: this stage's training instances ($envs). */
  envs: v.optional(v.unknown()),
  /** plr, accel: buffer capacity in levels (instances); default 1024. */
  buffer: v.optional(_int("buffer", 1, 100_000)),
  /** plr, accel: replay probability p; round(n (1-p)/p) new levels are scored per stage. Default 0.5. */
  replay_prob: v.optional(
    v.pipe(
      v.number("replay_prob must be a number in (0, 1]"),
      v.gtValue(0, "replay_prob must be > 0 (p = 0 would never replay)"),
      v.maxValue(1, "replay_prob must be at most 1"),
    ),
  ),
  /** plr, accel: rank temperature beta (> 0); default 1. */
  beta: v.optional(
    v.pipe(
      v.number("beta must be a number > 0"),
      v.gtValue(0, "beta must be > 0"),
      v.maxValue(100, "beta must be at most 100"),
    ),
  ),
  /** plr, accel: staleness mixing rho (0..1); default 0.3. */
  rho: v.optional(_unit("rho")),
  /** accel: highest-scored replayed levels edited per stage; default 64. */
  edits: v.optional(_int("edits", 0, 4096)),
  /** accel: edits applied to each; default 2. */
  edit_steps: v.optional(_int("edit_steps", 1, 16)),
  /** accel: the most agents an add-agent edit makes; default 8. */
  max_agents: v.optional(_int("max_agents", 1, 64)),
  /** probe, plr, accel: the trainer's reward coefficients (PVL and success use them). */
  reward: v.optional(RewardParamsSchema),
};

function _int(name: string, min: number, max: number) {
  return v.pipe(
    v.number(`${name} must be an integer in ${min}..${max}`),
    v.integer(`${name} must be an integer in ${min}..${max}`),
    v.minValue(min, `${name} must be at least ${min}`),
    v.maxValue(max, `${name} must be at most ${max}`),
  );
}

function _unit(name: string) {
  return v.pipe(
    v.number(`${name} must be a number in 0..1`),
    v.minValue(0, `${name} must be at least 0`),
    v.maxValue(1, `${name} must be at most 1`),
  );
}

/**
 * Cross-parameter problems of the baseline engineers, in one line naming
 * the parameter (checked at plan on the flattened parameters).
 */
export function baselineProblem(p: Record<string, unknown>): string | null {
  const name = p.engineer;
  const lo = p.lo as number | undefined, hi = p.hi as number | undefined;
  if (name === "band" && (lo ?? 0.5) > (hi ?? 0.8)) {
    return `lo ${lo ?? 0.5} > hi ${hi ?? 0.8}: the band is empty; give lo <= hi`;
  }
  if (
    (name === "probe" || name === "probe-base") &&
    p.criterion === "learnable" && (p.probe_episodes as number ?? 2) < 2
  ) {
    return "probe_episodes must be at least 2 with criterion learnable (an instance played once is never partly solved)";
  }
  if (name === "accel" && p.max_agents !== undefined) {
    const box = (p.box ?? DEFAULT_BOX) as DrBox;
    const side = box.size?.[0] ?? 8;
    const m = p.max_agents as number;
    if (2 * m > side * side) {
      return `max_agents ${m} can never keep a level solvable: ${m} agents need ${
        2 * m
      } distinct start and goal cells and the smallest map of the box (${side}x${side}) has ${
        side * side
      }; use at most ${Math.floor(side * side / 2)}`;
    }
  }
  return null;
}

/** Parameters of the redesign kind. */
export const RedesignParamsSchema = v.strictObject({
  /**
   * Which engineer: a name, or `{ name, ...parameters }` whose parameters
   * (context, script, pace, llm, prompt, reasks) take precedence over the
   * node's own, so a matrix value can carry an engineer with its inputs.
   */
  engineer: v.union([
    _EngineerName,
    v.pipe(
      v.strictObject({ name: _EngineerName, ..._engineerEntries }),
      v.check(
        (e) => baselineProblem({ ...e, engineer: e.name }) === null,
        (i) => {
          const e = i.input as { name: string };
          return baselineProblem({ ...e, engineer: e.name }) ?? "";
        },
      ),
    ),
  ]),
  ..._engineerEntries,
  /** The current configuration (or a plr/accel level set). */
  config: ConfigOrLevelSetSchema,
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
  /**
   * Blob access of the node (required by `probe`, `probe-base`, `plr`,
   * `accel`, which read a policy and instances and store a level set).
   */
  io?: {
    readBlob(ref: BlobRef): Promise<Uint8Array>;
    writeBlob(bytes: Uint8Array, media: string): Promise<BlobRef>;
    baseDir: string;
  };
}

/** The result of {@linkcode redesign}: the next config and a JSON report. */
export interface RedesignResult {
  /** The next configuration. */
  config: AnyEnvConfig;
  /** Rationale. */
  rationale: string;
  /** Report (JSON). */
  report: { [key: string]: Json };
  /** The node's value when it is not `config` (a plr/accel level set). */
  value?: Json;
}

const _CONSULTS_POLICY = ["probe", "probe-base", "plr", "accel"];

/** Run one redesign (shared by the node kind and the CLI). */
export async function redesign(
  given: RedesignParams,
  seed: number,
  options: RedesignOptions = {},
): Promise<RedesignResult> {
  const params = flattenEngineer(given);
  const problem = baselineProblem(params);
  if (problem !== null) throw new TypeError(`redesign: ${problem}`);
  const current = configOf(params.config);
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
  const consults = await _policyInputs(params, seed, options);
  const engineer = createEngineer(params.engineer, {
    ...consults,
    ...(params.box === undefined ? {} : { box: params.box as DrBox }),
    ...(params.draws === undefined ? {} : { draws: params.draws }),
    ...(params.lo === undefined ? {} : { lo: params.lo }),
    ...(params.hi === undefined ? {} : { hi: params.hi }),
    ...(params.order === undefined ? {} : { order: params.order }),
    ...(params.candidates === undefined
      ? {}
      : { candidates: params.candidates }),
    ...(params.criterion === undefined ? {} : { criterion: params.criterion }),
    ...(params.target === undefined ? {} : { target: params.target }),
    ...(params.buffer === undefined ? {} : { buffer: params.buffer }),
    ...(params.replay_prob === undefined
      ? {}
      : { replayProb: params.replay_prob }),
    ...(params.beta === undefined ? {} : { beta: params.beta }),
    ...(params.rho === undefined ? {} : { rho: params.rho }),
    ...(params.edits === undefined ? {} : { edits: params.edits }),
    ...(params.edit_steps === undefined
      ? {}
      : { editSteps: params.edit_steps }),
    ...(params.max_agents === undefined
      ? {}
      : { maxAgents: params.max_agents }),
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
  const next = parseEnvConfig(
    proposal.levels === undefined ? proposal.config : proposal.levels.source,
  );
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
    engineer_cost: proposal.cost === undefined ? null : {
      episodes: proposal.cost.episodes,
      agent_steps: proposal.cost.agentSteps,
    },
  };
  if (proposal.levels !== undefined) {
    const origins = { start: 0, new: 0, edit: 0 };
    for (const l of proposal.levels.levels) origins[l.origin]++;
    report.levels = { buffer: proposal.levels.levels.length, origins };
    const value = await writeLevelSet(proposal.levels, options.io!.writeBlob);
    return { config: next, rationale: proposal.rationale, report, value };
  }
  return { config: next, rationale: proposal.rationale, report };
}

/**
 * The policy-backed inputs of `probe`, `probe-base`, `plr` and `accel`: a
 * prober or a level io over the checkpoint named by `policy`; nothing for
 * the other engineers.
 */
async function _policyInputs(
  params: FlatRedesignParams,
  seed: number,
  options: RedesignOptions,
): Promise<Parameters<typeof createEngineer>[1]> {
  if (!_CONSULTS_POLICY.includes(params.engineer)) return {};
  const name = params.engineer;
  if (params.policy === undefined || params.policy === null) {
    return {}; // the registry names what is missing
  }
  const io = options.io;
  if (io === undefined) {
    throw new TypeError(
      `engineer ${name} rolls a policy out: run it as a redesign node in an experiment (the redesign command cannot)`,
    );
  }
  const ck = await readCheckpoint(params.policy, io);
  const reward = params.reward === undefined
    ? {}
    : { reward: params.reward as Record<string, number> };
  if (name === "probe" || name === "probe-base") {
    return {
      prober: checkpointProber(ck, {
        instances: params.probe_instances ?? 32,
        episodes: params.probe_episodes ?? 2,
        ...reward,
      }),
    };
  }
  if (params.envs === undefined || params.envs === null) return {};
  const scores = field(params.policy, "level_scores") as
    | TrainLevelScores
    | undefined;
  if (scores === undefined) {
    throw new TypeError(
      `engineer ${name}: policy carries no level_scores; give this stage's train node ($policy)`,
    );
  }
  let buffer: Level[] | null = null;
  if (isLevelSet(params.config)) {
    buffer = (await readLevelSet(params.config, io.readBlob)).levels;
  }
  const { io: levels } = checkpointLevelIo(ck, {
    buffer,
    trained: await readInstances(params.envs, io),
    scores,
    box: (params.box ?? DEFAULT_BOX) as DrBox,
    stage: params.stage ?? 0,
    seed,
    ...reward,
  });
  return { levels };
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
      io: {
        readBlob: ctx.readBlob,
        writeBlob: ctx.writeBlob,
        baseDir: ctx.baseDir,
      },
    });
    ctx.log(result.rationale);
    for (
      const e of result.report.events as { type: string; detail: string }[]
    ) {
      ctx.log(`event ${e.type}: ${e.detail}`);
    }
    return {
      value: result.value ?? result.config as unknown as Json,
      report: result.report,
    };
  },
};
