/**
 * The MAPF-FrozenLake generator configuration: what an environment engineer
 * edits between training stages.
 *
 * A configuration is either one component ({@linkcode EnvConfig}) or a
 * weighted mixture of components ({@linkcode MixtureConfig}). Users, YAML
 * files and LLM engineers write the lenient input form
 * ({@linkcode EnvConfigSpec}): every field of a component is optional and a
 * component may name a preset (`{ preset: "easy", agents: 3 }`); missing
 * fields come from the preset, or from the `easy` preset when none is named.
 * {@linkcode parseEnvConfig} validates such an input and resolves it into a
 * full configuration; {@linkcode clampEnvConfig} repairs untrusted input
 * instead of rejecting it; {@linkcode configId} gives a short stable hash.
 *
 * Dimensions, with the paper's names where it has one:
 *
 * | field | range | meaning | paper |
 * |---|---|---|---|
 * | `width`, `height` | 2..64 | grid size in cells | grid size |
 * | `agents` | 1..64 | number of agents | number of agents |
 * | `hole_density` | 0..0.6 | fraction of non-wall cells that are holes | obstacle density |
 * | `hole_clustering` | 0..1 | 0 = holes scattered uniformly, 1 = holes grow in clumps | - |
 * | `walls` | 0..0.5 | fraction of cells covered by scattered wall blocks | (obstacle density) |
 * | `corridors` | 0..1 | corridor/bottleneck structure: wall partitions with narrow doors | - |
 * | `slip` | 0..1 | probability that a move slips to a perpendicular move | (FrozenLake `is_slippery` = 2/3) |
 * | `horizon` | `{factor: 1..10}` or `{steps: 1..4096}` | episode length, relative to the reference makespan or absolute | - |
 * | `distance` | `{min, max}` in 1..512 | range of each agent's start-goal shortest-path distance | - |
 * | `interaction` | 0..1 | how much the agents' shortest paths cross in space-time | conflict density |
 * | `collision` | `fail` or `block` | a collision ends the episode, or cancels the moves | - |
 * | `holes` | `lethal` or `blocked` | entering a hole is a failure (FrozenLake), or holes are impassable (paper benchmark) | - |
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { configId, parseEnvConfig } from "./env_config.ts";
 * const config = parseEnvConfig({ preset: "easy", agents: 3 });
 * assert.equal(configId(config).length, 12);
 * ```
 *
 * @module
 */
import * as v from "valibot";
import { canonicalJson, sha256Hex } from "@envsmith/engine/hash";
import { didYouMean } from "@envsmith/engine/suggest";

/** What a collision does: end the episode as a failure, or cancel the conflicting moves. */
export type CollisionMode = "fail" | "block";
/** What a hole is: a lethal cell (FrozenLake), or an impassable obstacle (the paper's benchmark). */
export type HoleMode = "lethal" | "blocked";
/** The names of the built-in presets. */
export type PresetName = "easy" | "medium" | "hard";

/**
 * Episode length: a factor of the instance's reference makespan
 * (`ceil(factor * makespan)` steps), or an absolute number of steps.
 */
export type Horizon = { readonly factor: number } | { readonly steps: number };

/** An inclusive range of start-goal shortest-path distances (in moves). */
export interface DistanceRange {
  /** Smallest allowed distance. */
  readonly min: number;
  /** Largest allowed distance. */
  readonly max: number;
}

/** One full configuration component: every dimension set. */
export interface EnvConfig {
  /** Grid width (columns), 2..64. */
  readonly width: number;
  /** Grid height (rows), 2..64. */
  readonly height: number;
  /** Number of agents, 1..64. */
  readonly agents: number;
  /** Fraction of non-wall cells that are holes, 0..0.6 (the paper's obstacle density). */
  readonly hole_density: number;
  /** 0 = holes uniformly scattered, 1 = holes grow in clumps. */
  readonly hole_clustering: number;
  /** Fraction of cells covered by scattered wall blocks, 0..0.5. */
  readonly walls: number;
  /** Corridor/bottleneck structure, 0..1: wall partitions with narrow doors. */
  readonly corridors: number;
  /** Probability that a move slips to one of the two perpendicular moves, 0..1. */
  readonly slip: number;
  /** Episode length. */
  readonly horizon: Horizon;
  /** Range of each agent's start-goal shortest-path distance. */
  readonly distance: DistanceRange;
  /** Path-interaction level, 0..1 (the paper's conflict density). */
  readonly interaction: number;
  /** Collision mode. */
  readonly collision: CollisionMode;
  /** Hole mode. */
  readonly holes: HoleMode;
}

/** One weighted component of a mixture. */
export interface MixtureComponent {
  /** Relative weight (> 0); components are drawn with probability weight / total. */
  readonly weight: number;
  /** The component's configuration. */
  readonly config: EnvConfig;
}

/** A weighted mixture of configuration components. */
export interface MixtureConfig {
  /** 1..16 components. */
  readonly mixture: readonly MixtureComponent[];
}

/** A resolved configuration: one component or a mixture. */
export type AnyEnvConfig = EnvConfig | MixtureConfig;

/** The lenient input form of a component: any subset of fields, optionally on top of a preset. */
export type EnvConfigInput =
  & { -readonly [K in keyof EnvConfig]?: EnvConfig[K] }
  & {
    /** Preset to start from; the other fields override it. @default "easy" */
    preset?: PresetName;
  };

/** The input form of a mixture. */
export interface MixtureConfigInput {
  /** Weighted components. */
  mixture: { weight: number; config: EnvConfigInput }[];
}

/** What users, YAML files and engineers write: a component or a mixture, in input form. */
export type EnvConfigSpec = EnvConfigInput | MixtureConfigInput;

/** A numeric bound of the configuration. */
export interface Bound {
  /** Smallest allowed value. */
  readonly min: number;
  /** Largest allowed value. */
  readonly max: number;
  /** Whether the value must be an integer. */
  readonly integer: boolean;
}

/**
 * The safe bounds of every numeric field. Values outside them are validation
 * errors ({@linkcode parseEnvConfig}) or are clamped ({@linkcode clampEnvConfig}).
 */
export const ENV_CONFIG_BOUNDS: {
  readonly width: Bound;
  readonly height: Bound;
  readonly agents: Bound;
  readonly hole_density: Bound;
  readonly hole_clustering: Bound;
  readonly walls: Bound;
  readonly corridors: Bound;
  readonly slip: Bound;
  readonly interaction: Bound;
  readonly horizon_factor: Bound;
  readonly horizon_steps: Bound;
  readonly distance: Bound;
  readonly weight: Bound;
  readonly components: Bound;
} = {
  width: { min: 2, max: 64, integer: true },
  height: { min: 2, max: 64, integer: true },
  agents: { min: 1, max: 64, integer: true },
  hole_density: { min: 0, max: 0.6, integer: false },
  hole_clustering: { min: 0, max: 1, integer: false },
  walls: { min: 0, max: 0.5, integer: false },
  corridors: { min: 0, max: 1, integer: false },
  slip: { min: 0, max: 1, integer: false },
  interaction: { min: 0, max: 1, integer: false },
  horizon_factor: { min: 1, max: 10, integer: false },
  horizon_steps: { min: 1, max: 4096, integer: true },
  distance: { min: 1, max: 512, integer: true },
  weight: { min: 0.000001, max: 1_000_000, integer: false },
  components: { min: 1, max: 16, integer: true },
};

/**
 * The paper's names for our dimensions (for docs, prompts and reports).
 * Ours are a superset; dimensions without a paper name are absent.
 */
export const PAPER_NAMES: Readonly<Record<string, string>> = {
  width: "grid size",
  height: "grid size",
  agents: "number of agents",
  hole_density: "obstacle density",
  interaction: "conflict density",
};

/**
 * Built-in presets. `easy` is the usual start of a curriculum and the source
 * of defaults for fields an input leaves out; it deliberately lacks what makes
 * agents interact (crowding, corridors, crossing paths, slip, tight horizons),
 * so a curriculum has something to add.
 */
export const PRESETS: Readonly<Record<PresetName, EnvConfig>> = {
  easy: {
    width: 8,
    height: 8,
    agents: 2,
    hole_density: 0.1,
    hole_clustering: 0,
    walls: 0,
    corridors: 0,
    slip: 0,
    horizon: { factor: 3 },
    distance: { min: 2, max: 10 },
    interaction: 0,
    collision: "fail",
    holes: "lethal",
  },
  medium: {
    width: 10,
    height: 10,
    agents: 4,
    hole_density: 0.15,
    hole_clustering: 0.3,
    walls: 0.05,
    corridors: 0.25,
    slip: 0.05,
    horizon: { factor: 2 },
    distance: { min: 3, max: 14 },
    interaction: 0.4,
    collision: "fail",
    holes: "lethal",
  },
  hard: {
    width: 16,
    height: 16,
    agents: 8,
    hole_density: 0.2,
    hole_clustering: 0.5,
    walls: 0.08,
    corridors: 0.5,
    slip: 0.1,
    horizon: { factor: 1.5 },
    distance: { min: 4, max: 24 },
    interaction: 0.7,
    collision: "fail",
    holes: "lethal",
  },
};

/** The names of the presets, in order of difficulty. */
export const PRESET_NAMES: readonly PresetName[] = ["easy", "medium", "hard"];

/** The fields of a component, in canonical order. */
export const ENV_CONFIG_FIELDS: readonly (keyof EnvConfig)[] = [
  "width",
  "height",
  "agents",
  "hole_density",
  "hole_clustering",
  "walls",
  "corridors",
  "slip",
  "horizon",
  "distance",
  "interaction",
  "collision",
  "holes",
];

// ---------------------------------------------------------------------------
// Schemas

function _fmt(x: unknown): string {
  return typeof x === "string" ? JSON.stringify(x) : String(x);
}

function _numberSchema(field: string, bound: Bound, unit = "") {
  const range = `${bound.min}..${bound.max}${unit}`;
  const kind = bound.integer ? "an integer" : "a number";
  const number = v.number((i) =>
    `${field} must be ${kind} in ${range} (got ${_fmt(i.input)})`
  );
  const min = v.minValue<
    number,
    number,
    (i: v.MinValueIssue<number, number>) => string
  >(
    bound.min,
    (i) =>
      `${field} must be at least ${bound.min} (got ${
        _fmt(i.input)
      }); allowed ${range}`,
  );
  const max = v.maxValue<
    number,
    number,
    (i: v.MaxValueIssue<number, number>) => string
  >(
    bound.max,
    (i) =>
      `${field} must be at most ${bound.max} (got ${
        _fmt(i.input)
      }); allowed ${range}`,
  );
  if (!bound.integer) return v.pipe(number, min, max);
  const integer = v.integer<number, (i: v.IntegerIssue<number>) => string>(
    (i) => `${field} must be an integer in ${range} (got ${_fmt(i.input)})`,
  );
  return v.pipe(number, integer, min, max);
}

function _unknownKey(where: string, allowed: readonly string[]) {
  return (issue: v.StrictObjectIssue) => {
    if (issue.expected !== "never") {
      return `${where} must be an object (got ${JSON.stringify(issue.input)})`;
    }
    const key = String(issue.input);
    return `unknown ${where} field "${key}"${
      didYouMean(key, allowed)
    } (allowed: ${allowed.join(", ")})`;
  };
}

const B = ENV_CONFIG_BOUNDS;

/** Schema of `horizon`: `{ factor }` or `{ steps }`. */
export const HorizonSchema = v.union(
  [
    v.strictObject(
      {
        factor: _numberSchema(
          "horizon.factor",
          B.horizon_factor,
          " x reference makespan",
        ),
      },
      _unknownKey("horizon", ["factor"]),
    ),
    v.strictObject(
      { steps: _numberSchema("horizon.steps", B.horizon_steps, " steps") },
      _unknownKey("horizon", ["steps"]),
    ),
  ],
  (i) =>
    `horizon must be { factor: ${B.horizon_factor.min}..${B.horizon_factor.max} } (times the reference makespan) or { steps: ${B.horizon_steps.min}..${B.horizon_steps.max} } (got ${
      JSON.stringify(i.input)
    })`,
);

/** Schema of `distance`: `{ min, max }` with `min <= max`. */
export const DistanceSchema = v.pipe(
  v.strictObject(
    {
      min: _numberSchema("distance.min", B.distance),
      max: _numberSchema("distance.max", B.distance),
    },
    _unknownKey("distance", ["min", "max"]),
  ),
  v.check(
    (d: { min: number; max: number }) => d.min <= d.max,
    (i) =>
      `distance.min must be <= distance.max (got min ${
        (i.input as DistanceRange).min
      }, max ${(i.input as DistanceRange).max})`,
  ),
);

const _componentEntries = {
  width: _numberSchema("width", B.width, " cells"),
  height: _numberSchema("height", B.height, " cells"),
  agents: _numberSchema("agents", B.agents),
  hole_density: _numberSchema("hole_density", B.hole_density),
  hole_clustering: _numberSchema("hole_clustering", B.hole_clustering),
  walls: _numberSchema("walls", B.walls),
  corridors: _numberSchema("corridors", B.corridors),
  slip: _numberSchema("slip", B.slip),
  horizon: HorizonSchema,
  distance: DistanceSchema,
  interaction: _numberSchema("interaction", B.interaction),
  collision: v.picklist(
    ["fail", "block"],
    (i) => `collision must be "fail" or "block" (got ${_fmt(i.input)})`,
  ),
  holes: v.picklist(
    ["lethal", "blocked"],
    (i) => `holes must be "lethal" or "blocked" (got ${_fmt(i.input)})`,
  ),
};

const _presetSchema = v.picklist(
  ["easy", "medium", "hard"],
  (i) =>
    `preset must be one of "easy", "medium", "hard" (got ${_fmt(i.input)})`,
);

const _componentKeys = [...ENV_CONFIG_FIELDS];

/**
 * Cross-field checks shared by input and full forms, on the values the
 * component will have once resolved (input values over preset values).
 */
function _crossCheck(input: EnvConfigInput): string | null {
  const base = PRESETS[input.preset ?? "easy"];
  const width = input.width ?? base.width;
  const height = input.height ?? base.height;
  const agents = input.agents ?? base.agents;
  const cells = width * height;
  if (2 * agents > cells) {
    return `agents: ${agents} agents need ${
      2 * agents
    } distinct start and goal cells but a ${width}x${height} grid has ${cells}; use at most ${
      Math.floor(cells / 2)
    } agents or a larger grid`;
  }
  const distance = input.distance ?? base.distance;
  if (distance.min > cells - 1) {
    return `distance.min ${distance.min} cannot be reached on a ${width}x${height} grid (${cells} cells); use at most ${
      cells - 1
    }`;
  }
  return null;
}

/** Schema of a full component: every field required, no preset. */
export const EnvConfigSchema = v.pipe(
  v.strictObject(_componentEntries, _unknownKey("config", _componentKeys)),
  v.check(
    (c) => _crossCheck(c) === null,
    (i) => _crossCheck(i.input as EnvConfigInput) ?? "",
  ),
);

/** Schema of a component in input form: any subset of fields, optional preset. */
export const EnvConfigInputSchema = v.pipe(
  v.strictObject(
    {
      preset: v.optional(_presetSchema),
      ...Object.fromEntries(
        Object.entries(_componentEntries).map(([k, s]) => [k, v.optional(s)]),
      ) as {
        [K in keyof typeof _componentEntries]: v.OptionalSchema<
          typeof _componentEntries[K],
          undefined
        >;
      },
    },
    _unknownKey("config", ["preset", ..._componentKeys, "mixture"]),
  ),
  v.check(
    (c) => _crossCheck(c as EnvConfigInput) === null,
    (i) => _crossCheck(i.input as EnvConfigInput) ?? "",
  ),
);

const _weightSchema = _numberSchema("weight", B.weight);

function _mixtureSchema<S extends v.GenericSchema>(component: S) {
  return v.strictObject(
    {
      mixture: v.pipe(
        v.array(
          v.strictObject(
            { weight: _weightSchema, config: component },
            _unknownKey("mixture component", ["weight", "config"]),
          ),
          (i) =>
            `mixture must be a list of { weight, config } components (got ${
              JSON.stringify(i.input)
            })`,
        ),
        v.minLength(1, "mixture must have at least 1 component"),
        v.maxLength(
          B.components.max,
          (i) =>
            `mixture must have at most ${B.components.max} components (got ${
              (i.input as unknown[]).length
            })`,
        ),
      ),
    },
    _unknownKey("mixture", ["mixture"]),
  );
}

/** Schema of a resolved mixture. */
export const MixtureConfigSchema = _mixtureSchema(EnvConfigSchema);

/** Schema of a mixture in input form. */
export const MixtureConfigInputSchema = _mixtureSchema(EnvConfigInputSchema);

function _isMixtureLike(x: unknown): boolean {
  return typeof x === "object" && x !== null && "mixture" in x;
}

/** Schema of a resolved configuration (component or mixture). */
export const AnyEnvConfigSchema = v.union(
  [MixtureConfigSchema, EnvConfigSchema],
  "config must be a full component or { mixture: [...] }",
);

const _specUnion = v.union(
  [MixtureConfigInputSchema, EnvConfigInputSchema],
  'config must be an object such as { preset: "easy" } or { mixture: [...] }',
);

/**
 * Schema of the input form (what node parameters and YAML files use). Choose
 * the mixture branch when the object has a `mixture` key, so error messages
 * come from the branch the author meant. (Without an input, e.g. when a JSON
 * Schema is derived, it is the union of both forms.)
 */
export const EnvConfigSpecSchema: v.GenericSchema<unknown, EnvConfigSpec> = v
  .lazy((input) =>
    input === undefined
      ? _specUnion
      : _isMixtureLike(input)
      ? MixtureConfigInputSchema
      : EnvConfigInputSchema
  ) as unknown as v.GenericSchema<unknown, EnvConfigSpec>;

// ---------------------------------------------------------------------------
// Errors

/** One validation problem: where (dot path) and what. */
export interface ConfigIssue {
  /** Dot path of the field, e.g. `mixture.1.config.width`; empty for the whole config. */
  readonly path: string;
  /** What is wrong and how to fix it. */
  readonly message: string;
}

/** An invalid environment configuration; carries every issue found. */
export class EnvConfigError extends TypeError {
  /** Every problem found. */
  readonly issues: readonly ConfigIssue[];
  /** Build from a list of issues. */
  constructor(issues: readonly ConfigIssue[]) {
    super(
      `Invalid environment config: ${
        issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message))
          .join("; ")
      }`,
    );
    this.name = "EnvConfigError";
    this.issues = issues;
  }
}

function _issues(issues: readonly v.BaseIssue<unknown>[]): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  const seen = new Set<string>();
  for (const issue of issues) {
    // A failed union (e.g. `horizon`) reports its own message, which lists the accepted shapes.
    const item = { path: v.getDotPath(issue) ?? "", message: issue.message };
    // One message per field and kind: "not an integer" already says the bound.
    const key = item.path + "\0" +
      (issue.kind === "validation" && item.path ? "v" : item.message);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(item);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Parse, resolve, clamp, id

/** Whether a resolved config is a mixture. */
export function isMixture(config: AnyEnvConfig): config is MixtureConfig;
/** Whether an input config is a mixture. */
export function isMixture(config: EnvConfigSpec): config is MixtureConfigInput;
export function isMixture(config: AnyEnvConfig | EnvConfigSpec): boolean {
  return _isMixtureLike(config);
}

function _resolveComponent(input: EnvConfigInput): EnvConfig {
  const base = PRESETS[input.preset ?? "easy"];
  const out: Record<string, unknown> = {};
  for (const field of ENV_CONFIG_FIELDS) {
    const value = input[field] ?? base[field];
    out[field] = typeof value === "object" ? { ...value } : value;
  }
  return out as unknown as EnvConfig;
}

/**
 * Resolve an already-valid input (presets and defaults) into a full
 * configuration. Use {@linkcode parseEnvConfig} for untrusted input.
 */
export function resolveEnvConfig(spec: EnvConfigSpec): AnyEnvConfig {
  if (isMixture(spec)) {
    return {
      mixture: spec.mixture.map((c) => ({
        weight: c.weight,
        config: _resolveComponent(c.config),
      })),
    };
  }
  return _resolveComponent(spec);
}

/** Result of {@linkcode safeParseEnvConfig}. */
export type EnvConfigParseResult =
  | { readonly success: true; readonly config: AnyEnvConfig }
  | { readonly success: false; readonly issues: readonly ConfigIssue[] };

/** Validate and resolve without throwing. */
export function safeParseEnvConfig(input: unknown): EnvConfigParseResult {
  const r = v.safeParse(EnvConfigSpecSchema, input);
  if (!r.success) return { success: false, issues: _issues(r.issues) };
  return { success: true, config: resolveEnvConfig(r.output) };
}

/**
 * Validate an input configuration and resolve presets and defaults.
 *
 * @throws {EnvConfigError} listing every problem, each naming the field and bound.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseEnvConfig } from "./env_config.ts";
 * const c = parseEnvConfig({ preset: "medium", slip: 0.2 });
 * assert.equal("width" in c && c.width, 10);
 * ```
 */
export function parseEnvConfig(input: unknown): AnyEnvConfig {
  const r = safeParseEnvConfig(input);
  if (!r.success) throw new EnvConfigError(r.issues);
  return r.config;
}

/** The list of components of a config (a single component is a mixture of one with weight 1). */
export function components(config: AnyEnvConfig): readonly MixtureComponent[] {
  return isMixture(config) ? config.mixture : [{ weight: 1, config }];
}

function _clampNumber(
  field: string,
  value: unknown,
  bound: Bound,
  fallback: number,
  notes: string[],
): number {
  let x: number;
  if (typeof value === "number" && Number.isFinite(value)) x = value;
  else if (
    typeof value === "string" && value.trim() !== "" &&
    Number.isFinite(Number(value))
  ) {
    x = Number(value);
    notes.push(`${field}: converted string ${JSON.stringify(value)} to ${x}`);
  } else {
    if (value !== undefined) {
      notes.push(
        `${field}: ${JSON.stringify(value)} is not a number; kept ${fallback}`,
      );
    }
    return fallback;
  }
  let y = bound.integer ? Math.round(x) : x;
  if (y < bound.min) y = bound.min;
  if (y > bound.max) y = bound.max;
  if (y !== x) {
    notes.push(
      `${field}: ${x} clamped to ${y} (allowed ${bound.min}..${bound.max})`,
    );
  }
  return y;
}

function _clampComponent(
  input: unknown,
  fallback: EnvConfig,
  notes: string[],
  at: string,
): EnvConfig {
  const p = at ? `${at}.` : "";
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    notes.push(`${at || "config"}: not an object; kept the previous config`);
    return fallback;
  }
  const o = input as Record<string, unknown>;
  let base = fallback;
  if ("preset" in o) {
    if (typeof o.preset === "string" && o.preset in PRESETS) {
      base = PRESETS[o.preset as PresetName];
    } else {notes.push(
        `${p}preset: unknown preset ${JSON.stringify(o.preset)} ignored`,
      );}
  }
  for (const k of Object.keys(o)) {
    if (
      k !== "preset" && !(ENV_CONFIG_FIELDS as readonly string[]).includes(k)
    ) {
      notes.push(
        `${p}${k}: unknown field dropped${didYouMean(k, _componentKeys)}`,
      );
    }
  }
  const num = (f: keyof typeof B & keyof EnvConfig) =>
    _clampNumber(p + f, o[f], B[f], base[f] as number, notes);
  const width = num("width");
  const height = num("height");
  let agents = num("agents");
  const cells = width * height;
  if (2 * agents > cells) {
    const a = Math.floor(cells / 2);
    notes.push(
      `${p}agents: ${agents} agents do not fit a ${width}x${height} grid; reduced to ${a}`,
    );
    agents = a;
  }
  let horizon: Horizon = base.horizon;
  const h = o.horizon;
  if (typeof h === "object" && h !== null && "factor" in h) {
    horizon = {
      factor: _clampNumber(
        `${p}horizon.factor`,
        (h as { factor: unknown }).factor,
        B.horizon_factor,
        "factor" in base.horizon ? base.horizon.factor : 2,
        notes,
      ),
    };
  } else if (typeof h === "object" && h !== null && "steps" in h) {
    horizon = {
      steps: _clampNumber(
        `${p}horizon.steps`,
        (h as { steps: unknown }).steps,
        B.horizon_steps,
        "steps" in base.horizon ? base.horizon.steps : 64,
        notes,
      ),
    };
  } else if (h !== undefined) {
    notes.push(
      `${p}horizon: ${
        JSON.stringify(h)
      } is neither { factor } nor { steps }; kept ${
        JSON.stringify(base.horizon)
      }`,
    );
  }
  let distance: DistanceRange = base.distance;
  const d = o.distance;
  if (typeof d === "object" && d !== null) {
    const dd = d as Record<string, unknown>;
    let min = _clampNumber(
      `${p}distance.min`,
      dd.min,
      B.distance,
      base.distance.min,
      notes,
    );
    let max = _clampNumber(
      `${p}distance.max`,
      dd.max,
      B.distance,
      base.distance.max,
      notes,
    );
    if (min > max) {
      notes.push(`${p}distance: min ${min} > max ${max}; swapped`);
      [min, max] = [max, min];
    }
    if (min > cells - 1) {
      notes.push(
        `${p}distance.min: ${min} unreachable on ${width}x${height}; reduced to ${
          cells - 1
        }`,
      );
      min = cells - 1;
      if (max < min) max = min;
    }
    distance = { min, max };
  } else if (d !== undefined) {
    notes.push(
      `${p}distance: ${JSON.stringify(d)} is not { min, max }; kept ${
        JSON.stringify(base.distance)
      }`,
    );
  }
  const pick = <T extends string>(
    f: string,
    value: unknown,
    allowed: readonly T[],
    fb: T,
  ): T => {
    if (value === undefined) return fb;
    if (
      typeof value === "string" &&
      (allowed as readonly string[]).includes(value)
    ) return value as T;
    notes.push(
      `${p}${f}: ${JSON.stringify(value)} is not one of ${
        allowed.join(", ")
      }; kept ${fb}`,
    );
    return fb;
  };
  return {
    width,
    height,
    agents,
    hole_density: num("hole_density"),
    hole_clustering: num("hole_clustering"),
    walls: num("walls"),
    corridors: num("corridors"),
    slip: num("slip"),
    horizon,
    distance,
    interaction: num("interaction"),
    collision: pick(
      "collision",
      o.collision,
      ["fail", "block"],
      base.collision,
    ),
    holes: pick("holes", o.holes, ["lethal", "blocked"], base.holes),
  };
}

/** Result of {@linkcode clampEnvConfig}: a valid config and what was changed. */
export interface ClampResult {
  /** A resolved configuration that passes validation. */
  readonly config: AnyEnvConfig;
  /** One note per repair, e.g. `width: 100 clamped to 64 (allowed 2..64)`; empty if nothing changed. */
  readonly adjustments: readonly string[];
}

/**
 * Repair untrusted input (e.g. an LLM reply) into a valid configuration:
 * numbers are clamped to {@linkcode ENV_CONFIG_BOUNDS} (integers rounded),
 * unknown fields dropped, invalid enum values and shapes replaced by the
 * fallback's, too many agents reduced to what fits. Never throws.
 *
 * @param input The untrusted value.
 * @param fallback Values for missing or unusable fields. @default PRESETS.easy
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { clampEnvConfig } from "./env_config.ts";
 * const { config, adjustments } = clampEnvConfig({ width: 100, slip: -1 });
 * assert.equal(adjustments.length, 2);
 * ```
 */
export function clampEnvConfig(
  input: unknown,
  fallback: EnvConfig = PRESETS.easy,
): ClampResult {
  const notes: string[] = [];
  if (_isMixtureLike(input)) {
    const list = (input as { mixture: unknown }).mixture;
    if (!Array.isArray(list) || list.length === 0) {
      notes.push("mixture: not a non-empty list; used the fallback config");
      return { config: fallback, adjustments: notes };
    }
    let items = list;
    if (items.length > B.components.max) {
      notes.push(
        `mixture: ${items.length} components truncated to ${B.components.max}`,
      );
      items = items.slice(0, B.components.max);
    }
    const mixture = items.map((item, i) => {
      const it =
        (typeof item === "object" && item !== null ? item : {}) as Record<
          string,
          unknown
        >;
      const weight = _clampNumber(
        `mixture.${i}.weight`,
        it.weight,
        B.weight,
        1,
        notes,
      );
      const config = _clampComponent(
        it.config,
        fallback,
        notes,
        `mixture.${i}.config`,
      );
      return { weight, config };
    });
    return { config: { mixture }, adjustments: notes };
  }
  return {
    config: _clampComponent(input, fallback, notes, ""),
    adjustments: notes,
  };
}

/**
 * A short stable id of a configuration: the first 12 hex digits of the
 * sha256 of its resolved canonical JSON. Equal configs written differently
 * (key order, preset plus overrides vs. explicit fields) get the same id.
 *
 * @param config A resolved config, or a valid input (resolved first).
 */
export function configId(config: AnyEnvConfig | EnvConfigSpec): string {
  const resolved = isMixture(config as AnyEnvConfig)
    ? resolveEnvConfig(config as EnvConfigSpec)
    : _resolveComponent(config as EnvConfigInput);
  return sha256Hex(canonicalJson(resolved)).slice(0, 12);
}

/**
 * One line describing a component for logs and prompts, e.g.
 * `8x8 a2 holes0.1 ... slip0 hz x3 d2-10 int0 fail/lethal`.
 */
export function describeEnvConfig(config: AnyEnvConfig): string {
  const one = (c: EnvConfig) =>
    `${c.width}x${c.height} agents=${c.agents} holes=${c.hole_density}` +
    (c.hole_clustering ? `(clust ${c.hole_clustering})` : "") +
    ` walls=${c.walls} corridors=${c.corridors} slip=${c.slip} horizon=${
      "factor" in c.horizon ? `x${c.horizon.factor}` : `${c.horizon.steps}`
    } dist=${c.distance.min}-${c.distance.max} interaction=${c.interaction} ${c.collision}/${c.holes}`;
  if (!isMixture(config)) return one(config);
  return config.mixture.map((m) => `${m.weight}: ${one(m.config)}`).join(" | ");
}
