/**
 * The per-size form: the paper's configuration space as a configuration an
 * engineer edits. Per map size (3x3 .. 10x10) it has
 *
 * | field | range | meaning | paper |
 * |---|---|---|---|
 * | `data_ratio` | 0..1 | share of the stage's training instances drawn at this size (the ratios are normalised by their sum) | data ratio |
 * | `hole_ratio` | 0..0.6 | fraction of the board's cells that are holes (our `hole_density`) | hole ratio |
 * | `wait_ratio` | 0..1 | share of this size's instances that need a wait: every sum-of-costs-optimal plan has an agent stay before its arrival (mapf/needs_wait.ts) | wait ratio |
 *
 * and, for the whole form, `agents` (default 2: the paper trains on 2-agent
 * boards only), `holes` (`lethal` or `blocked`, default `lethal`) and
 * `horizon` (default `{ factor: 3 }`). Written in YAML:
 *
 * ```yaml
 * config:
 *   agents: 2
 *   sizes:
 *     3x3: { data_ratio: 0.5, hole_ratio: 0.1, wait_ratio: 0.2 }
 *     5x5: { data_ratio: 0.5, hole_ratio: 0.2, wait_ratio: 0.5 }
 * ```
 *
 * Sizes left out are not drawn (`data_ratio` 0, `hole_ratio` 0.1,
 * `wait_ratio` 0 once resolved, so an engineer can add them). The form is a
 * configuration of its own, beside `schemas/env_config.ts` (whose shape and
 * keys it leaves untouched): `generate.sizes` draws from it and
 * `redesign.sizes` edits it. {@linkcode sizeFormMixture} gives the
 * equivalent weighted mixture of ordinary components, one per size and
 * wait class, which is what `diagnose` breaks results down by.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSizeForm } from "./size_form.ts";
 * const form = parseSizeForm({ sizes: { "4x4": { data_ratio: 1, wait_ratio: 0.5 } } });
 * assert.equal(form.agents, 2);
 * assert.equal(form.sizes["4x4"].hole_ratio, 0.1);
 * assert.equal(form.sizes["9x9"].data_ratio, 0);
 * ```
 *
 * @module
 */
import * as v from "valibot";
import { canonicalJson, sha256Hex } from "@envsmith/engine/hash";
import { didYouMean } from "@envsmith/engine/suggest";
import {
  ENV_CONFIG_BOUNDS,
  type EnvConfig,
  type HoleMode,
  type Horizon,
  HorizonSchema,
  type MixtureConfig,
} from "./env_config.ts";

/** The map sizes of the form (square boards), smallest first. */
export const FORM_SIZES = [3, 4, 5, 6, 7, 8, 9, 10] as const;

/** A size key: `3x3` .. `10x10`. */
export type SizeKey =
  | "3x3"
  | "4x4"
  | "5x5"
  | "6x6"
  | "7x7"
  | "8x8"
  | "9x9"
  | "10x10";

/** The size keys, smallest first. */
export const SIZE_KEYS: readonly SizeKey[] = FORM_SIZES.map((s) =>
  `${s}x${s}` as SizeKey
);

/** The side of a size key (`"7x7"` -> 7). */
export function sideOf(key: SizeKey): number {
  return Number(key.split("x")[0]);
}

/** The three ratios of one map size. */
export interface SizeRatios {
  /** Share of the training instances drawn at this size (normalised by the sum over sizes). */
  readonly data_ratio: number;
  /** Fraction of the cells that are holes, 0..0.6. */
  readonly hole_ratio: number;
  /** Share of this size's instances that need a wait. */
  readonly wait_ratio: number;
}

/** A resolved form: every size present. */
export interface SizeForm {
  /** Agents per board, 1..8. */
  readonly agents: number;
  /** Hole mode. */
  readonly holes: HoleMode;
  /** Episode length. */
  readonly horizon: Horizon;
  /** Every size, `3x3` .. `10x10`. */
  readonly sizes: Readonly<Record<SizeKey, SizeRatios>>;
}

/** The input form: `sizes` required (any subset), the rest optional. */
export interface SizeFormInput {
  /** Agents per board. @default 2 */
  agents?: number;
  /** Hole mode. @default "lethal" */
  holes?: HoleMode;
  /** Episode length. @default { factor: 3 } */
  horizon?: Horizon;
  /** Per size; sizes left out are not drawn. */
  sizes: { [K in SizeKey]?: Partial<SizeRatios> };
}

/** Bounds of the form's numbers. */
export const SIZE_FORM_BOUNDS = {
  agents: { min: 1, max: 8 },
  data_ratio: { min: 0, max: 1 },
  hole_ratio: { min: 0, max: ENV_CONFIG_BOUNDS.hole_density.max },
  wait_ratio: { min: 0, max: 1 },
} as const;

/** What a size left out of an input resolves to. */
export const ABSENT_SIZE: SizeRatios = {
  data_ratio: 0,
  hole_ratio: 0.1,
  wait_ratio: 0,
};

/** The paper's names of the form's fields, beside ours (docs, prompts). */
export const SIZE_FORM_PAPER_NAMES: Readonly<Record<string, string>> = {
  data_ratio: "data ratio",
  hole_ratio: "hole ratio (our hole_density)",
  wait_ratio: "wait ratio",
  agents: "number of agents (2 in training)",
};

/** Whether a value is written in the per-size form (has a `sizes` key). */
export function isSizeForm(x: unknown): boolean {
  return typeof x === "object" && x !== null && !Array.isArray(x) &&
    "sizes" in x;
}

function _fmt(x: unknown): string {
  return typeof x === "string" ? JSON.stringify(x) : String(x);
}

function _ratio(field: string, max: number, why = "") {
  return v.pipe(
    v.number((i) =>
      `${field} must be a number in 0..${max} (got ${_fmt(i.input)})`
    ),
    v.minValue(
      0,
      (i) =>
        `${field} must be in 0..${max} (got ${
          _fmt(i.input)
        }): a ratio is a share`,
    ),
    v.maxValue(
      max,
      (i) => `${field} must be in 0..${max} (got ${_fmt(i.input)})${why}`,
    ),
  );
}

const _ratioKeys = ["data_ratio", "hole_ratio", "wait_ratio"];
const _formKeys = ["agents", "holes", "horizon", "sizes"];

function _unknown(where: string, allowed: readonly string[]) {
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

const _sizeSchema = v.strictObject({
  data_ratio: v.optional(_ratio("data_ratio", 1)),
  hole_ratio: v.optional(
    _ratio(
      "hole_ratio",
      SIZE_FORM_BOUNDS.hole_ratio.max,
      "; the generator draws at most 0.6 of a board as holes",
    ),
  ),
  wait_ratio: v.optional(_ratio("wait_ratio", 1)),
}, _unknown("size", _ratioKeys));

const _sizesEntries = Object.fromEntries(
  SIZE_KEYS.map((k) => [k, v.optional(_sizeSchema)]),
) as { [K in SizeKey]: v.OptionalSchema<typeof _sizeSchema, undefined> };

/** Cross-field checks of an input, or null. */
function _crossCheck(input: SizeFormInput): string | null {
  const form = resolveSizeForm(input);
  let total = 0;
  for (const key of SIZE_KEYS) total += form.sizes[key].data_ratio;
  if (total <= 0) {
    return "sizes: every data_ratio is 0, so no instance can be drawn; give at least one size a data_ratio above 0";
  }
  for (const key of SIZE_KEYS) {
    const r = form.sizes[key];
    if (r.data_ratio === 0) continue;
    const why = staticSizeProblem(form, key);
    if (why) return `sizes.${key}: ${why}`;
  }
  return null;
}

/**
 * Why size `key` of a form cannot be drawn as asked, found without drawing
 * (the board is too small for the agents, or one agent alone can never need
 * a wait), or null. The generator's probe (`mapf/size_generator.ts`) checks
 * what this cannot.
 */
export function staticSizeProblem(form: SizeForm, key: SizeKey): string | null {
  const side = sideOf(key);
  const r = form.sizes[key];
  const free = side * side - Math.round(r.hole_ratio * side * side);
  if (2 * form.agents > free) {
    return `${form.agents} agents need ${
      2 * form.agents
    } distinct start and goal cells, but a ${key} board with hole_ratio ${r.hole_ratio} has ${free} free cells; lower hole_ratio or agents, or set data_ratio 0`;
  }
  if (form.agents === 1 && r.wait_ratio > 0) {
    return `wait_ratio ${r.wait_ratio} cannot be reached: a single agent never needs a wait (only conflicts between agents do); set wait_ratio 0 or agents >= 2`;
  }
  return null;
}

/** Schema of the input form (what YAML files and node parameters use). */
export const SizeFormInputSchema = v.pipe(
  v.strictObject({
    agents: v.optional(v.pipe(
      v.number(),
      v.integer(
        (i) => `agents must be an integer in 1..8 (got ${_fmt(i.input)})`,
      ),
      v.minValue(1, (i) => `agents must be in 1..8 (got ${_fmt(i.input)})`),
      v.maxValue(8, (i) => `agents must be in 1..8 (got ${_fmt(i.input)})`),
    )),
    holes: v.optional(v.picklist(
      ["lethal", "blocked"],
      (i) => `holes must be "lethal" or "blocked" (got ${_fmt(i.input)})`,
    )),
    horizon: v.optional(HorizonSchema),
    sizes: v.strictObject(_sizesEntries, _unknown("sizes", SIZE_KEYS)),
  }, _unknown("per-size form", _formKeys)),
  v.check(
    (c) => _crossCheck(c as SizeFormInput) === null,
    (i) => _crossCheck(i.input as SizeFormInput) ?? "",
  ),
);

/** An invalid per-size form; carries every issue found. */
export class SizeFormError extends TypeError {
  /** Every problem found: dot path and message. */
  readonly issues: readonly { path: string; message: string }[];
  /** Build from a list of issues. */
  constructor(issues: readonly { path: string; message: string }[]) {
    super(
      `Invalid per-size form: ${
        issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message))
          .join("; ")
      }`,
    );
    this.name = "SizeFormError";
    this.issues = issues;
  }
}

/** Resolve an already-valid input (defaults, absent sizes). */
export function resolveSizeForm(input: SizeFormInput): SizeForm {
  const sizes = {} as Record<SizeKey, SizeRatios>;
  for (const key of SIZE_KEYS) {
    const r = input.sizes?.[key];
    sizes[key] = {
      data_ratio: r?.data_ratio ?? (r ? 1 : ABSENT_SIZE.data_ratio),
      hole_ratio: r?.hole_ratio ?? ABSENT_SIZE.hole_ratio,
      wait_ratio: r?.wait_ratio ?? ABSENT_SIZE.wait_ratio,
    };
  }
  return {
    agents: input.agents ?? 2,
    holes: input.holes ?? "lethal",
    horizon: input.horizon ? { ...input.horizon } : { factor: 3 },
    sizes,
  };
}

/**
 * Validate an input form and resolve its defaults.
 *
 * @throws {SizeFormError} naming each field, its bound and the fix.
 */
export function parseSizeForm(input: unknown): SizeForm {
  const r = v.safeParse(SizeFormInputSchema, input);
  if (!r.success) {
    throw new SizeFormError(r.issues.map((i) => ({
      path: v.getDotPath(i) ?? "",
      message: i.message,
    })));
  }
  return resolveSizeForm(r.output as SizeFormInput);
}

/** The sizes a form draws (data_ratio above 0), smallest first. */
export function drawnSizes(form: SizeForm): SizeKey[] {
  return SIZE_KEYS.filter((k) => form.sizes[k].data_ratio > 0);
}

/** A short stable id of a resolved form (12 hex digits). */
export function sizeFormId(form: SizeForm): string {
  return sha256Hex(canonicalJson(form)).slice(0, 12);
}

/** One component of a form: a size and a wait class. */
export interface FormComponent {
  /** The size. */
  readonly size: SizeKey;
  /** Instances of this component need a wait (or need none). */
  readonly wait: boolean;
  /** Its share of the stage's instances (data share times wait share). */
  readonly weight: number;
  /** The ordinary component the generator draws it from. */
  readonly config: EnvConfig;
}

/**
 * The generator component of a size: a square board of that side with the
 * form's agents, holes and horizon; start-goal distances anywhere from 1
 * to the board's diameter; `interaction` 1 for the wait class (the agents'
 * shortest paths are made to cross, so that a draw needing a wait comes
 * early; whether it needs one is still decided by the solver) and 0.5 for
 * the other (about what uniform placement gives).
 */
export function sizeComponent(
  form: SizeForm,
  key: SizeKey,
  wait: boolean,
): EnvConfig {
  const side = sideOf(key);
  return {
    width: side,
    height: side,
    agents: form.agents,
    hole_density: form.sizes[key].hole_ratio,
    hole_clustering: 0,
    walls: 0,
    corridors: 0,
    slip: 0,
    horizon: form.horizon,
    distance: { min: 1, max: 2 * side - 2 },
    interaction: wait ? 1 : 0.5,
    collision: "fail",
    holes: form.holes,
  };
}

/**
 * The form's components, in a fixed order (sizes smallest first, the wait
 * class before the other), leaving out those of weight 0. Their index is
 * the `component` of the instances drawn from them and of `diagnose`'s
 * per-component results.
 */
export function formComponents(form: SizeForm): FormComponent[] {
  let total = 0;
  for (const key of SIZE_KEYS) total += form.sizes[key].data_ratio;
  const out: FormComponent[] = [];
  for (const key of SIZE_KEYS) {
    const r = form.sizes[key];
    if (r.data_ratio <= 0) continue;
    const share = r.data_ratio / total;
    for (const wait of [true, false]) {
      const w = share * (wait ? r.wait_ratio : 1 - r.wait_ratio);
      if (w <= 0) continue;
      out.push({
        size: key,
        wait,
        weight: Math.round(w * 1e6) / 1e6 || 1e-6,
        config: sizeComponent(form, key, wait),
      });
    }
  }
  return out;
}

/**
 * The equivalent weighted mixture of ordinary components (at most 16:
 * 8 sizes x 2 wait classes), for `diagnose` and reports.
 */
export function sizeFormMixture(form: SizeForm): MixtureConfig {
  return {
    mixture: formComponents(form).map((c) => ({
      weight: c.weight,
      config: c.config,
    })),
  };
}

/** One line per drawn size, e.g. `3x3 data 0.5 holes 0.1 wait 0.2`. */
export function describeSizeForm(form: SizeForm): string {
  return `agents ${form.agents}, holes ${form.holes}: ` +
    drawnSizes(form).map((k) => {
      const r = form.sizes[k];
      return `${k} data ${r.data_ratio} holes ${r.hole_ratio} wait ${r.wait_ratio}`;
    }).join("; ");
}

function _num(
  notes: string[],
  at: string,
  value: unknown,
  min: number,
  max: number,
  fallback: number,
  integer = false,
): number {
  let x: number;
  if (typeof value === "number" && Number.isFinite(value)) x = value;
  else if (
    typeof value === "string" && value.trim() !== "" &&
    Number.isFinite(Number(value))
  ) {
    x = Number(value);
    notes.push(`${at}: converted string ${JSON.stringify(value)} to ${x}`);
  } else {
    if (value !== undefined) {
      notes.push(
        `${at}: ${JSON.stringify(value)} is not a number; kept ${fallback}`,
      );
    }
    return fallback;
  }
  let y = integer ? Math.round(x) : x;
  y = Math.min(max, Math.max(min, y));
  if (y !== x) {
    notes.push(`${at}: ${x} clamped to ${y} (allowed ${min}..${max})`);
  }
  return y;
}

/** What {@linkcode clampSizeForm} returns. */
export interface SizeFormClamp {
  /** A valid resolved form. */
  readonly form: SizeForm;
  /** One note per repair; empty when nothing changed. */
  readonly adjustments: readonly string[];
}

/**
 * Repair untrusted input (an LLM's reply) into a valid form: ratios clamped
 * to their bounds, unknown sizes and fields dropped, missing values taken
 * from `fallback`; a form whose data ratios are all 0 keeps the fallback's,
 * and a size that cannot be drawn as asked (too many agents for the free
 * cells, a wait ratio a single agent cannot reach) is repaired the way its
 * note says. Never throws.
 */
export function clampSizeForm(
  input: unknown,
  fallback: SizeForm,
): SizeFormClamp {
  const notes: string[] = [];
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    notes.push("config: not an object; kept the previous form");
    return { form: fallback, adjustments: notes };
  }
  const o = input as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!_formKeys.includes(k)) {
      notes.push(`${k}: unknown field dropped${didYouMean(k, _formKeys)}`);
    }
  }
  const agents = _num(notes, "agents", o.agents, 1, 8, fallback.agents, true);
  let holes = fallback.holes;
  if (o.holes === "lethal" || o.holes === "blocked") holes = o.holes;
  else if (o.holes !== undefined) {
    notes.push(`holes: ${JSON.stringify(o.holes)} ignored; kept ${holes}`);
  }
  let horizon = fallback.horizon;
  if (o.horizon !== undefined) {
    const h = v.safeParse(HorizonSchema, o.horizon);
    if (h.success) horizon = h.output;
    else {notes.push(
        `horizon: ${JSON.stringify(o.horizon)} ignored; kept ${
          JSON.stringify(horizon)
        }`,
      );}
  }
  const raw = (typeof o.sizes === "object" && o.sizes !== null &&
      !Array.isArray(o.sizes)
    ? o.sizes
    : {}) as Record<string, unknown>;
  if (o.sizes === undefined || raw !== o.sizes) {
    notes.push("sizes: missing or not an object; kept the previous sizes");
  }
  for (const k of Object.keys(raw)) {
    if (!(SIZE_KEYS as readonly string[]).includes(k)) {
      notes.push(`sizes.${k}: unknown size dropped${didYouMean(k, SIZE_KEYS)}`);
    }
  }
  const sizes = {} as Record<SizeKey, SizeRatios>;
  for (const key of SIZE_KEYS) {
    const prev = fallback.sizes[key];
    const r = raw[key];
    if (r === undefined) {
      sizes[key] = prev;
      continue;
    }
    if (typeof r !== "object" || r === null || Array.isArray(r)) {
      notes.push(`sizes.${key}: not an object; kept the previous ratios`);
      sizes[key] = prev;
      continue;
    }
    const rr = r as Record<string, unknown>;
    for (const f of Object.keys(rr)) {
      if (!_ratioKeys.includes(f)) {
        notes.push(`sizes.${key}.${f}: unknown field dropped`);
      }
    }
    const at = `sizes.${key}`;
    sizes[key] = {
      data_ratio: _num(
        notes,
        `${at}.data_ratio`,
        rr.data_ratio,
        0,
        1,
        prev.data_ratio,
      ),
      hole_ratio: _num(
        notes,
        `${at}.hole_ratio`,
        rr.hole_ratio,
        0,
        SIZE_FORM_BOUNDS.hole_ratio.max,
        prev.hole_ratio,
      ),
      wait_ratio: _num(
        notes,
        `${at}.wait_ratio`,
        rr.wait_ratio,
        0,
        1,
        prev.wait_ratio,
      ),
    };
  }
  let form: SizeForm = { agents, holes, horizon, sizes };
  if (SIZE_KEYS.every((k) => form.sizes[k].data_ratio === 0)) {
    notes.push("sizes: every data_ratio is 0; kept the previous data ratios");
    const s = { ...form.sizes };
    for (const k of SIZE_KEYS) {
      s[k] = { ...s[k], data_ratio: fallback.sizes[k].data_ratio };
    }
    form = { ...form, sizes: s };
  }
  const s = { ...form.sizes };
  for (const k of SIZE_KEYS) {
    if (s[k].data_ratio === 0) continue;
    if (form.agents === 1 && s[k].wait_ratio > 0) {
      notes.push(
        `sizes.${k}.wait_ratio: a single agent never needs a wait; set to 0`,
      );
      s[k] = { ...s[k], wait_ratio: 0 };
    }
    const side = sideOf(k);
    const cells = side * side;
    if (2 * form.agents > cells - Math.round(s[k].hole_ratio * cells)) {
      // the largest hole ratio that leaves room for the agents
      const most = Math.floor(((cells - 2 * form.agents) / cells) * 100) / 100;
      if (most < 0) {
        notes.push(
          `sizes.${k}: ${form.agents} agents do not fit a ${k} board; data_ratio set to 0`,
        );
        s[k] = { ...s[k], data_ratio: 0 };
      } else {
        notes.push(
          `sizes.${k}.hole_ratio: ${
            s[k].hole_ratio
          } leaves no room for ${form.agents} agents; lowered to ${most}`,
        );
        s[k] = { ...s[k], hole_ratio: most };
      }
    }
  }
  form = { ...form, sizes: s };
  if (SIZE_KEYS.every((k) => form.sizes[k].data_ratio === 0)) {
    notes.push("sizes: no size fits the agents; kept the previous form");
    return { form: fallback, adjustments: notes };
  }
  return { form, adjustments: notes };
}
