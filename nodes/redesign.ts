/**
 * The `redesign` node kind: an environment engineer proposes the next
 * training configuration from the current one and a diagnosis.
 *
 * ```yaml
 * config:
 *   kind: redesign
 *   with:
 *     engineer: rules            # a registered engineer: fixed | random | rules | replay | llm | scripted | blind | exec | a plugin's
 *     # or { name, ...its parameters }: e.g. { name: scripted, script: $config[variant=full,seed=+1] }
 *     #    { name: llm, llm: { base_url: http://127.0.0.1:11434/v1, model: qwen3:4b, api_key_env: OPENAI_API_KEY }, prompt: neutral }
 *     #    { name: exec, command: [python3, engineers/threshold.py], timeout: 60 }
 *     context: $matrix.context   # none | stats | failures | behavior | full (default full)
 *     config: $prev.config       # the current config
 *     findings: $findings        # this stage's diagnosis
 *     history: $earlier.findings # earlier stages' findings (read by `full`)
 *     stage: $stage
 * ```
 *
 * Engineers are registered kinds (`engineer/engineer_kind.ts`): the
 * built-ins and a plugin module's `engineers` go through one
 * {@linkcode EngineerRegistry}, and {@linkcode redesignKind} builds this
 * node kind over a registry, so its parameter schema (the JSON Schema,
 * did-you-mean, `--help`) lists every registered engineer with its own
 * parameters. An engineer's parameters are written in its block
 * `engineer: { name, ...parameters }`; a `context` there wins over the
 * node's.
 *
 * Keys: this module imports no engineer. Its code digest covers the shared
 * code (context building, config validation, diff), and the
 * {@linkcode NodeKind.codeModules} hook adds the chosen engineer's module
 * graph only, so editing `engineer/rules.ts` recomputes the redesigns that
 * use `rules` and what follows them, and nothing else. An engineer's
 * `fingerprint` (the `llm` engineer's prompts and model file, the `exec`
 * engineer's program files) enters the key too.
 *
 * Value: the next configuration (what `$prev.config` gives the next stage).
 * Report: the engineer, context type, rationale, structured diff against the
 * current config, events (rules fired, re-asks, clamps, fallbacks, cache
 * hits, truncated replies, program errors), the context fields the engineer
 * read, LLM usage, `prompt`, `prompt_digest` and `model` (the `llm`
 * engineer's; null otherwise), and for engineers whose replies are
 * untrusted (`llm`, `exec`) the tally `llm: { calls, requests, reasks,
 * clamped, truncated, fallback, cached }` whose means per row the tables
 * show (`report.llm.fallback` is the fallback rate).
 *
 * @module
 */
import * as v from "valibot";
import { didYouMean } from "@envsmith/engine/suggest";
import { UserError } from "@envsmith/engine/errors";
import type { BlobRef, Json, NodeKind } from "@envsmith/engine/kind";
import { runChild } from "@envsmith/engine/run";
import { type AnyEnvConfig, parseEnvConfig } from "../schemas/env_config.ts";
import { type Findings, parseFindings } from "../schemas/findings.ts";
import {
  buildContext,
  CONTEXT_TYPES,
  type ContextType,
  type HistoryInput,
} from "../engineer/context.ts";
import { diffConfigs } from "../engineer/diff.ts";
import {
  EngineerConfigError,
  type EngineerKind,
} from "../engineer/engineer_kind.ts";
import {
  createFromKind,
  engineerFamilyProblem,
  type EngineerRegistry,
  requiredParams,
} from "../engineer/registry.ts";
import { configOf, ConfigOrLevelSetSchema, isLevelSet } from "./level_set.ts";
import { DEFAULT_FAMILY, type EnvironmentFamily } from "../families/family.ts";
import type { FamilyRegistry } from "../families/registry.ts";
import { genericContext, genericDiff } from "./redesign_family.ts";

const _Context = v.picklist(
  CONTEXT_TYPES,
  `context must be one of ${CONTEXT_TYPES.join(", ")}`,
);

/**
 * A configuration of any family: MAPF-FrozenLake's form (so editors
 * complete it) or another family's mapping; the node's `family` checks it.
 */
const _AnyFamilyConfig = v.union([
  ConfigOrLevelSetSchema,
  v.record(v.string(), v.unknown()),
], "config must be a mapping (a configuration of the node's family)");

/** The redesign node's own parameters (besides `engineer`). */
const _nodeEntries = {
  /** What the engineer sees; default `full`. */
  context: v.optional(v.pipe(
    _Context,
    v.description(
      "what the engineer sees: none, stats, failures, behavior or full (default)",
    ),
  )),
  /**
   * The current configuration (or the level set a plr/accel redesign
   * made), checked against the family's configuration space.
   */
  config: v.pipe(
    _AnyFamilyConfig,
    v.description(
      "the current configuration (usually $prev.config), or a plr/accel level set",
    ),
  ),
  /** The environment family (default `mapf-frozenlake`). */
  family: v.optional(v.pipe(
    v.string(),
    v.description(
      "the environment family (default mapf-frozenlake; ./envsmith families lists them)",
    ),
  )),
  /** This stage's findings (null/absent: nothing to see). */
  findings: v.optional(v.pipe(
    v.nullable(v.unknown()),
    v.description("this stage's diagnosis (null: nothing to see)"),
  )),
  /** Earlier stages: findings, or `{ findings, config }`, oldest first. */
  history: v.optional(v.pipe(
    v.array(v.unknown()),
    v.description(
      "earlier stages' findings, or { findings, config }, oldest first (read by full)",
    ),
  )),
  /** Stage index. */
  stage: v.optional(v.pipe(
    v.number(),
    v.integer(),
    v.minValue(0),
    v.description("stage index"),
  )),
  /** Seed (default: the node's seed). */
  seed: v.optional(v.pipe(
    v.number(),
    v.integer(),
    v.description("seed of engineers that draw random numbers"),
  )),
  /** Character budget of the context text; default 6000. */
  budget: v.optional(v.pipe(
    v.number(),
    v.integer(),
    v.minValue(200),
    v.description("character budget of the context text; default 6000"),
  )),
};

/** One line per parameter of the redesign kind, for editors (the JSON Schema's descriptions). */
export const REDESIGN_PARAM_DOCS: Readonly<Record<string, string>> = {
  engineer:
    "which engineer: a name, or { name, ...its parameters } (its context wins over the node's)",
  context:
    "what the engineer sees: none, stats, failures, behavior or full (default)",
  config:
    "the current configuration (usually $prev.config), or a plr/accel level set",
  findings: "this stage's diagnosis (null: nothing to see)",
  history:
    "earlier stages' findings, or { findings, config }, oldest first (read by full)",
  stage: "stage index",
  seed: "seed of engineers that draw random numbers (default: the node's seed)",
  budget: "character budget of the context text; default 6000",
  family:
    "the environment family (default mapf-frozenlake; ./envsmith families lists them)",
};

/** An engineer block: `{ name, context?, ...the engineer's parameters }`. */
export interface EngineerBlock {
  /** The engineer's name. */
  readonly name: string;
  /** What it sees (wins over the node's `context`). */
  readonly context?: ContextType | undefined;
  /** Its parameters. */
  readonly [param: string]: unknown;
}

/** Parameters of the redesign kind. */
export interface RedesignParams {
  /** Which engineer: a name, or `{ name, ...parameters }`. */
  readonly engineer: string | EngineerBlock;
  /** What it sees; default `full`. */
  readonly context?: ContextType | undefined;
  /** The current configuration. */
  readonly config: unknown;
  /** This stage's findings. */
  readonly findings?: unknown;
  /** Earlier stages. */
  readonly history?: readonly unknown[] | undefined;
  /** Stage index. */
  readonly stage?: number | undefined;
  /** Seed. */
  readonly seed?: number | undefined;
  /** Character budget of the context text. */
  readonly budget?: number | undefined;
  /** The environment family (default `mapf-frozenlake`). */
  readonly family?: string | undefined;
}

/**
 * The schema of `engineer:`: a registered name (for an engineer without
 * required parameters) or a block `{ name, context?, ...parameters }`
 * checked against that engineer's own parameter schema.
 */
export function engineerSchema(
  engineers: EngineerRegistry,
): v.GenericSchema<unknown, string | EngineerBlock> {
  const kinds = engineers.list();
  const names = kinds.map((k) => k.name);
  const unknownName = (name: unknown) =>
    `unknown engineer ${JSON.stringify(name)}${
      typeof name === "string" ? didYouMean(name, names) : ""
    } (engineers: ${names.join(", ")})`;
  const byName = v.pipe(
    v.picklist(names, (issue) => unknownName(issue.input)),
    v.check(
      (name) => requiredParams(engineers.get(name)!).length === 0,
      (issue) => {
        const kind = engineers.get(String(issue.input))!;
        return `the ${kind.name} engineer needs ${
          requiredParams(kind).join(", ")
        }: write engineer: { name: ${kind.name}, ${
          requiredParams(kind).map((k) => `${k}: ...`).join(", ")
        } }`;
      },
    ),
    v.description(
      `a registered engineer: ${names.join(", ")}`,
    ),
  );
  const blocks = kinds.map((k) => {
    const keys = ["context", ...Object.keys(k.params.entries)];
    return v.pipe(
      v.strictObject(
        {
          name: v.pipe(v.literal(k.name), v.description(k.description)),
          context: v.optional(v.pipe(
            _Context,
            v.description("what this engineer sees (wins over the node's)"),
          )),
          ...k.params.entries,
        },
        (issue) =>
          issue.expected === "never"
            ? `unknown parameter ${
              JSON.stringify(issue.input)
            } of the ${k.name} engineer${
              didYouMean(String(issue.input), keys)
            } (it takes ${keys.join(", ")})`
            : "an engineer block is a mapping { name, ...parameters }",
      ),
      v.description(`${k.name}: ${k.description}`),
    );
  });
  const block = v.variant(
    "name",
    // deno-lint-ignore no-explicit-any
    blocks as any,
    (issue) =>
      typeof issue.input === "string"
        ? unknownName(issue.input)
        : "an engineer block names its engineer: { name: ENGINEER, ...parameters }",
  );
  const either = v.union([byName, block]);
  // A name is checked as a name and a block as a block (one message each,
  // not both alternatives'); the JSON Schema (which asks with no input)
  // gets the union of both.
  return v.lazy((input) =>
    input === undefined
      ? either
      : typeof input === "string"
      ? byName
      : input !== null && typeof input === "object" && !Array.isArray(input)
      ? block
      : either
  ) as unknown as v.GenericSchema<unknown, string | EngineerBlock>;
}

/**
 * The schema of a configuration of `family`, or of a plr/accel level set
 * (another family's names that family and holds a configuration of it);
 * `null` for an unknown family.
 */
function _configSchema(
  families: FamilyRegistry | undefined,
  name: string,
): v.GenericSchema | null {
  if (name === DEFAULT_FAMILY) return ConfigOrLevelSetSchema;
  const f = families?.get(name);
  if (f === undefined) return null;
  const levelSet = v.looseObject({
    level_set: v.looseObject({
      family: v.literal(
        name,
        `a level set of another family (the node's family is ${name})`,
      ),
      source: f.schema,
    }),
  });
  return v.lazy((input) =>
    isLevelSet(input) ? levelSet : f.schema
  ) as unknown as v.GenericSchema;
}

/**
 * The parameter schema of the redesign kind over `engineers`; `config` is
 * checked against the configuration space of the node's `family` (one of
 * `families`).
 */
export function redesignParamsSchema(
  engineers: EngineerRegistry,
  families?: FamilyRegistry,
): v.GenericSchema<unknown, RedesignParams> & {
  readonly entries: Readonly<Record<string, v.GenericSchema>>;
} {
  return v.pipe(
    v.strictObject({
      engineer: v.pipe(
        engineerSchema(engineers),
        v.description(
          "which engineer: a name, or { name, ...its parameters } (its context wins over the node's)",
        ),
      ),
      ..._nodeEntries,
    }),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      const p = dataset.value as { config: unknown; family?: string };
      const name = p.family ?? DEFAULT_FAMILY;
      const schema = _configSchema(families, name);
      if (schema === null) {
        addIssue({
          message: `unknown family "${name}"${
            didYouMean(name, families?.names() ?? [])
          } (families: ${(families?.names() ?? [DEFAULT_FAMILY]).join(", ")})`,
          path: [_pathItem(p, "family")],
        });
        return;
      }
      const r = v.safeParse(schema, p.config);
      if (r.success) return;
      for (const i of r.issues) {
        addIssue({
          message: i.message,
          path: [_pathItem(p, "config"), ...(i.path ?? [])] as never,
        });
      }
    }),
  ) as unknown as ReturnType<typeof redesignParamsSchema>;
}

function _pathItem(input: Record<string, unknown>, key: string) {
  return {
    type: "object" as const,
    origin: "value" as const,
    input,
    key,
    value: input[key],
  };
}

/**
 * The engineer's name, context and own parameters, from (literal or
 * validated) parameters; `null` when `engineer` is not written literally
 * (a node reference, unknown until it runs).
 */
export function engineerOf(
  params: unknown,
): {
  name: string;
  context: ContextType | undefined;
  params: Record<string, unknown>;
} | null {
  const e = (params as { engineer?: unknown } | null)?.engineer;
  if (typeof e === "string") {
    return e.startsWith("$")
      ? null
      : { name: e, context: undefined, params: {} };
  }
  if (e === null || typeof e !== "object" || Array.isArray(e)) return null;
  const { name, context, ...own } = e as Record<string, unknown>;
  if (typeof name !== "string" || name.startsWith("$")) return null;
  return {
    name,
    context: typeof context === "string" ? context as ContextType : undefined,
    params: own,
  };
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
  /** The engineers `engineer:` may name. */
  engineers: EngineerRegistry;
  /** The redesign kind's aux directory (the `llm` engineer's reply cache is `llm/` below it). */
  auxDir?: string;
  /** What an LLM endpoint failure does. @default {"throw"} */
  onEndpointError?: "throw" | "fallback";
  /** Reads environment variables (tests). */
  env?: (name: string) => string | undefined;
  /** Directory relative paths resolve against (the experiment file's). @default "." */
  baseDir?: string;
  /** Where the engineer's log lines go (an `exec` program's stderr). */
  log?: (line: string) => void;
  /** Aborted when the run is cancelled. */
  signal?: AbortSignal;
  /** Reads a cache blob (engineers that consult a policy: probe, plr, accel). */
  readBlob?: (ref: BlobRef) => Promise<Uint8Array>;
  /** Writes a cache blob (the level set of plr and accel). */
  writeBlob?: (bytes: Uint8Array, media: string) => Promise<BlobRef>;
  /** The families `family:` may name (absent: MAPF-FrozenLake only). */
  families?: FamilyRegistry;
}

/** The result of {@linkcode redesign}: the next config and a JSON report. */
export interface RedesignResult {
  /** The next configuration (a level set's source for plr and accel). */
  config: AnyEnvConfig;
  /** Rationale. */
  rationale: string;
  /** Report (JSON). */
  report: { [key: string]: Json };
  /** The node's value when it is not `config`: a plr/accel level set. */
  value?: Json;
}

/**
 * Run one redesign (shared by the node kind and the CLI).
 *
 * @throws {EngineerConfigError} for an unknown engineer or parameters that
 * cannot work (an `llm` engineer without an endpoint).
 */
export async function redesign(
  params: RedesignParams,
  seed: number,
  options: RedesignOptions,
): Promise<RedesignResult> {
  const chosen = engineerOf(params);
  if (chosen === null) {
    throw new EngineerConfigError(
      `engineer must be a name or { name, ...parameters }, got ${
        JSON.stringify(params.engineer)
      }`,
    );
  }
  const familyName = params.family ?? DEFAULT_FAMILY;
  const family = familyName === DEFAULT_FAMILY && options.families === undefined
    ? undefined
    : _family(options.families, familyName);
  const type = chosen.context ?? params.context ?? "full";
  const kind = options.engineers.get(chosen.name);
  if (kind === undefined) {
    throw new EngineerConfigError(
      `Unknown engineer "${chosen.name}"; use one of ${
        options.engineers.names().join(", ")
      }`,
    );
  }
  const refused = engineerFamilyProblem(kind, chosen.params, {
    ...family,
    name: familyName,
  });
  if (refused !== null) throw new EngineerConfigError(refused);
  if (family !== undefined && familyName !== DEFAULT_FAMILY) {
    return await _redesignOther(params, seed, options, {
      chosen,
      kind,
      family,
      type,
    });
  }
  const current = configOf(params.config);
  const findings: Findings | null =
    params.findings === undefined || params.findings === null
      ? null
      : parseFindings(params.findings);
  const context = buildContext(type, findings, current, {
    history: historyFrom(params.history),
    ...(params.stage === undefined ? {} : { stage: params.stage }),
    ...(params.budget === undefined ? {} : { budget: params.budget }),
  });
  const engineer = createFromKind(kind, chosen.params, {
    ...(family === undefined ? {} : { family }),
    baseDir: options.baseDir ?? ".",
    log: options.log ?? (() => {}),
    runProgram: runChild,
    ...(options.auxDir === undefined ? {} : { auxDir: options.auxDir }),
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.onEndpointError === undefined
      ? {}
      : { onEndpointError: options.onEndpointError }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.readBlob === undefined ? {} : {
      readBlob: options.readBlob as (
        ref: { $blob: string },
      ) => Promise<Uint8Array>,
    }),
    ...(options.writeBlob === undefined
      ? {}
      : { writeBlob: options.writeBlob }),
    ...(isLevelSet(params.config) ? { levelSet: params.config } : {}),
  });
  const proposal = await engineer.propose({ context, config: current, seed });
  const next = parseEnvConfig(proposal.config);
  const diff = diffConfigs(current, next);
  const report: { [key: string]: Json } = {
    engineer: chosen.name,
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
    prompt: null,
    prompt_digest: null,
    model: null,
    engineer_cost: proposal.cost === undefined ? null : {
      episodes: proposal.cost.episodes,
      agent_steps: proposal.cost.agentSteps,
    },
    ...(proposal.report as { [key: string]: Json } | undefined),
  };
  if (proposal.value !== undefined) {
    return {
      config: next,
      rationale: proposal.rationale,
      report,
      value: proposal.value as Json,
    };
  }
  return { config: next, rationale: proposal.rationale, report };
}

/** The family named `name` in `families` (one line naming the known ones). */
function _family(
  families: FamilyRegistry | undefined,
  name: string,
): EnvironmentFamily {
  const f = families?.get(name);
  if (f === undefined) {
    throw new EngineerConfigError(
      `unknown family "${name}"${
        didYouMean(name, families?.names() ?? [])
      }; known families: ${(families?.names() ?? [DEFAULT_FAMILY]).join(", ")}`,
    );
  }
  return f;
}

/**
 * A redesign on a family other than MAPF-FrozenLake: the context is the
 * family's configuration (as JSON and its own text) and the statistics of
 * `findings`; the next configuration is checked against the family's
 * space.
 */
async function _redesignOther(
  params: RedesignParams,
  seed: number,
  options: RedesignOptions,
  chosen: {
    chosen: { name: string; params: Record<string, unknown> };
    kind: EngineerKind;
    family: EnvironmentFamily;
    type: ContextType;
  },
): Promise<RedesignResult> {
  const { family, type } = chosen;
  // a plr/accel level set stands for its source configuration
  const levelSet = isLevelSet(params.config) ? params.config : undefined;
  const current = v.parse(
    family.schema,
    levelSet === undefined
      ? params.config
      : (levelSet.level_set as { source: unknown }).source,
  );
  const context = genericContext(family, type, current, params.findings, {
    ...(params.stage === undefined ? {} : { stage: params.stage }),
  });
  const engineer = createFromKind(chosen.kind, chosen.chosen.params, {
    family,
    baseDir: options.baseDir ?? ".",
    log: options.log ?? (() => {}),
    runProgram: runChild,
    ...(options.auxDir === undefined ? {} : { auxDir: options.auxDir }),
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.readBlob === undefined ? {} : {
      readBlob: options.readBlob as (
        ref: { $blob: string },
      ) => Promise<Uint8Array>,
    }),
    ...(options.writeBlob === undefined
      ? {}
      : { writeBlob: options.writeBlob }),
    ...(levelSet === undefined ? {} : { levelSet }),
  });
  const proposal = await engineer.propose({
    context,
    config: current as AnyEnvConfig,
    seed,
  });
  const checked = v.safeParse(family.schema, proposal.config);
  if (!checked.success) {
    throw new EngineerConfigError(
      `engineer ${chosen.chosen.name} on family ${family.name} proposed a configuration outside the family's space (${
        checked.issues[0]!.message
      }); fix the engineer or the family's bounds`,
    );
  }
  const report: { [key: string]: Json } = {
    engineer: chosen.chosen.name,
    family: family.name,
    context: type,
    stage: params.stage ?? null,
    rationale: proposal.rationale,
    diff: genericDiff(family, current, checked.output) as unknown as Json,
    events: proposal.events as unknown as Json,
    reads: proposal.reads,
    context_chars: context.text.length,
    usage: (proposal.usage ?? null) as Json,
    llm: (proposal.llm ?? null) as Json,
    prompt: null,
    prompt_digest: null,
    model: null,
    engineer_cost: proposal.cost === undefined ? null : {
      episodes: proposal.cost.episodes,
      agent_steps: proposal.cost.agentSteps,
    },
    ...(proposal.report as { [key: string]: Json } | undefined),
  };
  return {
    config: checked.output as AnyEnvConfig,
    rationale: proposal.rationale,
    report,
    ...(proposal.value === undefined ? {} : { value: proposal.value as Json }),
  };
}

/**
 * The redesign node kind over `engineers`: its parameter schema is built
 * from the registry when read (so engineers registered later, by a plugin
 * module, are in it), and its code and fingerprint follow the chosen
 * engineer only.
 */
export function redesignKind(
  engineers: EngineerRegistry,
  families?: FamilyRegistry,
): NodeKind<RedesignParams, Json> {
  let built: { version: number; schema: NodeKind["params"] } | undefined;
  const kindOf = (literal: unknown): EngineerKind => {
    const chosen = engineerOf(literal);
    if (chosen === null) {
      // Not a silent partial key: without the engineer there is no code.
      throw new Error(
        "the engineer is not written literally (nor given by the matrix), so its code cannot be digested",
      );
    }
    const kind = engineers.get(chosen.name);
    if (kind === undefined) {
      throw new UserError(
        `engineer "${chosen.name}" is not registered${
          didYouMean(chosen.name, engineers.names())
        }`,
      );
    }
    return kind;
  };
  // The family's module joins the key (its code runs); a family named by a
  // reference cannot be digested, so it must be written literally.
  const familyOf = (literal: unknown): EnvironmentFamily | undefined => {
    const name = (literal as { family?: unknown } | null)?.family ??
      DEFAULT_FAMILY;
    if (typeof name !== "string" || name.startsWith("$")) {
      throw new UserError(
        "family must be written literally (a family name), not a reference: its code is part of the key",
      );
    }
    if (families === undefined) {
      if (name === DEFAULT_FAMILY) return undefined;
      throw new UserError(
        `unknown family "${name}"; known families: ${DEFAULT_FAMILY}`,
      );
    }
    try {
      return families.lookup(name, "family");
    } catch (e) {
      throw new UserError((e as Error).message);
    }
  };
  return {
    name: "redesign",
    description:
      "An environment engineer (fixed, random, rules, replay, llm, exec, a plugin's) proposes the next training config from a diagnosis",
    get params() {
      if (built?.version !== engineers.version) {
        built = {
          version: engineers.version,
          schema: redesignParamsSchema(
            engineers,
            families,
          ) as NodeKind["params"],
        };
      }
      return built.schema as NodeKind<RedesignParams, Json>["params"];
    },
    paramDocs: REDESIGN_PARAM_DOCS,
    module: import.meta.url,
    codeModules(literal) {
      const family = familyOf(literal);
      return [
        kindOf(literal).module,
        ...(family === undefined ? [] : [family.module]),
      ];
    },
    fingerprint(literal, info) {
      const kind = kindOf(literal);
      const family = familyOf(literal);
      // an engineer that does not support the family is refused at plan
      const refused = engineerFamilyProblem(
        kind,
        engineerOf(literal)!.params,
        family ?? { name: DEFAULT_FAMILY },
      );
      if (refused !== null) throw new UserError(refused);
      if (kind.fingerprint === undefined) return null;
      try {
        return (kind.fingerprint(engineerOf(literal)!.params, info) ??
          null) as Json;
      } catch (e) {
        // A mistake in the experiment (a program that does not exist) is
        // refused at plan, before anything runs.
        if (e instanceof EngineerConfigError) throw new UserError(e.message);
        throw e;
      }
    },
    async run(params, ctx) {
      const result = await redesign(params, params.seed ?? ctx.seed, {
        engineers,
        ...(families === undefined ? {} : { families }),
        auxDir: ctx.auxDir,
        baseDir: ctx.baseDir,
        log: (line) => ctx.log(line),
        signal: ctx.signal,
        readBlob: (ref) => ctx.readBlob(ref),
        writeBlob: (bytes, media) => ctx.writeBlob(bytes, media),
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
}
