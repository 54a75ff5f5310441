/**
 * The environment-family interface: what every engineer and node kind needs
 * to know about a family of training environments (MAPF-FrozenLake, the
 * maze of the environment-design literature, a plugin's own).
 *
 * A family is a registered kind, like node kinds and engineers: a name; a
 * configuration space (a valibot schema with bounds, presets, and per
 * dimension its bounds, step and direction of difficulty); a deterministic
 * generator (configuration, seed, count -> instances); a mutation operator on
 * instances (what ACCEL edits); text renderings of instances and
 * configurations for language-model contexts; evaluation suites with their
 * splits; and diagnosis hooks (which statistics, which failure cases).
 *
 * Generic engineers (`dr`, `plr`, `accel`, `band`, `random`, `probe`, `llm`,
 * `exec`, ...) work through this interface only: `dimensions` is the space
 * they move in, `get`/`set` read and write one dimension of a
 * configuration, `generate` and `mutate` make levels.
 *
 * This file imports no family: the code digest of a kind that uses a family
 * covers the family's own `module` graph, never another family's.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { EnvironmentFamily } from "./family.ts";
 *
 * type Line = { length: number };
 * const line: EnvironmentFamily<Line, number> = {
 *   name: "line",
 *   description: "walk to the end of a line",
 *   module: import.meta.url,
 *   schema: v.strictObject({ length: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(9)) }),
 *   dimensions: [{ path: "length", description: "cells", min: 1, max: 9, step: 1, integer: true, harder: "up" }],
 *   presets: { easy: { length: 2 }, medium: { length: 5 }, hard: { length: 9 } },
 *   get: (c) => c.length,
 *   set: (_c, _path, value) => ({ length: value }),
 *   generate: (c, _seed, count) => Array.from({ length: count }, () => c.length),
 *   check: (n) => n >= 1 ? undefined : "a line needs a cell",
 *   instanceId: (n) => `line-${n}`,
 *   renderInstance: (n) => "S" + ".".repeat(n - 1) + "G",
 *   renderConfig: (c) => `length ${c.length}`,
 *   suites: { base: { description: "length 4", split: "test", instances: () => [4, 4] } },
 *   diagnosis: {
 *     statistics: (eps) => ({ success_rate: eps.filter((e) => e.success).length / Math.max(1, eps.length) }),
 *     failureCases: () => [],
 *   },
 * };
 * assert.equal(line.generate(line.presets.hard!, 1, 2).length, 2);
 * ```
 *
 * @module
 */
import type * as v from "valibot";

/** The family every node and engineer uses unless it names another. */
export const DEFAULT_FAMILY = "mapf-frozenlake";

/** One dimension of a family's configuration space. */
export interface Dimension {
  /**
   * Its name in the family's `get`/`set` (a dotted path into the
   * configuration, or a name the family maps onto several fields, e.g.
   * MAPF-FrozenLake's `size` sets width, height and the distance range).
   */
  readonly path: string;
  /** What it means, in one line (prompts, `families`, the JSON Schema). */
  readonly description: string;
  /** Smallest value engineers may set. */
  readonly min: number;
  /** Largest value engineers may set. */
  readonly max: number;
  /** One step of a curriculum along it (`band`, `blind`, `random`). */
  readonly step: number;
  /** Whether values are integers. */
  readonly integer: boolean;
  /** Direction of difficulty: `up` when a larger value is harder. */
  readonly harder: "up" | "down";
}

/**
 * A source of random numbers given to a family's `mutate` (the project's
 * seeded generator satisfies it).
 */
export interface FamilyRng {
  /** Uniform float in [0, 1). */
  float(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
}

/** The split a suite belongs to. */
export type FamilySplit = "train" | "validation" | "test";

/** A named, fixed, seeded set of instances (a benchmark suite). */
export interface FamilySuite<Instance> {
  /** What it tests, in one line. */
  readonly description: string;
  /** Which split it is: tuning reads `validation`, results report `test`. */
  readonly split: FamilySplit;
  /**
   * Its instances (deterministic). `count` asks for the first `count`
   * (a family may ignore it for a fixed set of named instances).
   */
  instances(count?: number): Instance[];
}

/**
 * One episode's outcome as every family can report it: the generic input
 * of diagnosis for families that do not keep trajectories.
 */
export interface EpisodeOutcome {
  /** Id of the instance played ({@linkcode EnvironmentFamily.instanceId}). */
  readonly instance: string;
  /** Whether the episode succeeded. */
  readonly success: boolean;
  /** Undiscounted return, when the family has rewards. */
  readonly return?: number;
  /** Steps taken. */
  readonly steps?: number;
  /** The failure type (`timeout`, `hole`, ...), absent on success. */
  readonly failure?: string;
}

/** A failure case: one failed episode rendered as text for a context. */
export interface FailureCase {
  /** Id of the instance. */
  readonly instance: string;
  /** The failure type. */
  readonly failure: string;
  /** The rendering (map and the moves around the failure). */
  readonly text: string;
}

/** What a family's diagnosis computes from episodes. */
export interface FamilyDiagnosis<Episode = EpisodeOutcome> {
  /** Summary statistics (`success_rate`, failure shares, ...), by name. */
  statistics(episodes: readonly Episode[]): Record<string, number>;
  /** A small seeded sample of failures, rendered. */
  failureCases(
    episodes: readonly Episode[],
    options: { readonly count: number; readonly seed: number },
  ): FailureCase[];
}

/**
 * A batched environment for envsmith's own PPO trainer: many copies of the
 * family's dynamics stepped together on typed arrays. Its shape is the
 * trainer's seam; a family without one trains only through a program.
 */
export interface BatchEnvironmentFactory<Instance, Env = unknown> {
  /** `import.meta.url` of the module that defines it (digested into train keys). */
  readonly module: string;
  /** Builds `envs` environments over `instances`, seeded. */
  create(
    instances: readonly Instance[],
    options: { readonly envs: number; readonly seed: number },
  ): Env;
}

/** A weighted component of a configuration mixture. */
export interface FamilyComponent<Config> {
  /** Relative weight (> 0). */
  readonly weight: number;
  /** The component. */
  readonly config: Config;
}

/**
 * An environment family: what every engineer and kind needs to know. The
 * defaults are `any` so a registry can hold families of every
 * configuration and instance type (as engineer kinds of every parameter
 * type).
 */
export interface EnvironmentFamily<
  // deno-lint-ignore no-explicit-any
  Config = any,
  // deno-lint-ignore no-explicit-any
  Instance = any,
  // deno-lint-ignore no-explicit-any
  Episode = any,
> {
  /** Its name in experiment files (`mapf-frozenlake`, `maze`, a plugin's): letters, digits, `_`, `-`, `.`. */
  readonly name: string;
  /** One line for `families`, `plan` and the JSON Schema. */
  readonly description: string;
  /**
   * `import.meta.url` of the module that defines it: its import graph is
   * the family's code, digested into the keys of the nodes that use it
   * (and of no other family's nodes).
   */
  readonly module: string;
  /** The configuration space: valibot, with bounds and descriptions. */
  readonly schema: v.GenericSchema<unknown, Config>;
  /** The dimensions engineers move along, with bounds, step and direction. */
  readonly dimensions: readonly Dimension[];
  /** Named configurations: at least `easy`, `medium` and `hard`. */
  readonly presets: Readonly<Record<string, Config>>;
  /** The value of dimension `path` in `config`. */
  get(config: Config, path: string): number;
  /**
   * `config` with dimension `path` set to `value` (clamped to the
   * dimension's bounds, rounded for an integer one); never mutates `config`.
   */
  set(config: Config, path: string, value: number): Config;
  /**
   * Optional: one curriculum step of `config` along dimension `path`
   * (`dir` = +1 harder, -1 easier, a fraction for a smaller step), for a
   * family whose dimensions move together (MAPF-FrozenLake's `size` grows
   * the distance range with the map). Absent: engineers step with
   * {@linkcode stepDimension} and `set`.
   */
  step?(config: Config, path: string, dir: number): Config;
  /**
   * `count` instances from `config`, deterministic in (`config`, `seed`):
   * the same arguments give the same instances.
   */
  generate(config: Config, seed: number, count: number): Instance[];
  /**
   * ACCEL's edit: a small change of `instance` that is still valid and
   * solvable (what `check` accepts), deterministic for the rng's state;
   * `null` when no edit applies. Absent: the family cannot be edited
   * (`accel` refuses it at `plan`).
   */
  mutate?(instance: Instance, rng: FamilyRng, seed: number): Instance | null;
  /** Why `instance` is malformed or unsolvable, or `undefined` when it is fine. */
  check(instance: Instance): string | undefined;
  /** A stable id of an instance (levels, failure cases, per-instance outcomes). */
  instanceId(instance: Instance): string;
  /** An instance as text, for language-model contexts. */
  renderInstance(instance: Instance): string;
  /** A configuration as text, for language-model contexts. */
  renderConfig(config: Config): string;
  /** Benchmark suites by name, each with its split. */
  readonly suites: Readonly<Record<string, FamilySuite<Instance>>>;
  /** The diagnosis hooks: which statistics, which failure cases. */
  readonly diagnosis: FamilyDiagnosis<Episode>;
  /**
   * Optional: repairs an untrusted configuration (an LLM's reply) instead
   * of refusing it: values clamped into the space, with one line per repair.
   * Absent: engineers validate with `schema` and keep the previous
   * configuration on a failure.
   */
  clamp?(
    input: unknown,
    previous: Config,
  ): { readonly config: Config; readonly repairs: readonly string[] };
  /**
   * Optional: the part of a configuration a curriculum hardens from (for a
   * mixture, its most developed component). Absent: the configuration
   * itself.
   */
  leading?(config: Config): Config;
  /**
   * Optional: the order in which a curriculum develops dimensions (the
   * `band` engineer's default order, ties of the `blind` schedule).
   * Absent: the declared order of `dimensions`.
   */
  readonly curriculum?: readonly string[];
  /**
   * Optional: the dimensions a curriculum steps one at a time, in the
   * order undirected engineers (`random`) consider them. Absent: every
   * declared dimension.
   */
  readonly stepped?: readonly string[];
  /**
   * Optional: the box domain randomisation draws from by default
   * (dimension -> `[lo, hi]`). Absent: every dimension over its bounds.
   */
  readonly box?: Readonly<Record<string, readonly [number, number]>>;
  /**
   * Optional: what is wrong with a box beyond what the dimensions' bounds
   * say (MAPF-FrozenLake: the most agents must fit the smallest map), in
   * one line, or `null`.
   */
  boxProblem?(box: Readonly<Record<string, unknown>>): string | null;
  /**
   * Optional: the weighted components of a configuration (the inverse of
   * `mix`). Absent: the configuration is one component.
   */
  components?(config: Config): FamilyComponent<Config>[];
  /**
   * Optional: a weighted mixture of configurations as one configuration
   * (the `dr` engineer's per-stage draws). Absent: the family has no
   * mixtures and `dr` uses one draw per stage.
   */
  mix?(components: readonly FamilyComponent<Config>[]): Config;
  /** Optional: a batched environment for envsmith's own PPO. */
  readonly env?: BatchEnvironmentFactory<Instance>;
  /**
   * Optional: instances as the JSON lines the family's node kinds store
   * (the maze's `maze.generate` blob). Absent: one `JSON.stringify` of
   * each instance a line.
   */
  instanceLines?(instances: readonly Instance[]): string;
  /**
   * Optional: the inverse of `instanceLines`. Absent: one `JSON.parse` a
   * line.
   */
  parseInstanceLines?(text: string): Instance[];
}

/** `instances` as JSON lines of `family` (its own format when it has one). */
export function familyInstanceLines<Instance>(
  family: Pick<EnvironmentFamily<unknown, Instance>, "instanceLines">,
  instances: readonly Instance[],
): string {
  return family.instanceLines?.(instances) ??
    instances.map((i) => JSON.stringify(i) + "\n").join("");
}

/** The instances of JSON lines of `family` (its own format when it has one). */
export function parseFamilyInstanceLines<Instance>(
  family: Pick<EnvironmentFamily<unknown, Instance>, "parseInstanceLines">,
  text: string,
): Instance[] {
  if (family.parseInstanceLines !== undefined) {
    return family.parseInstanceLines(text);
  }
  return text.split("\n").filter((l) => l.trim() !== "").map((l) =>
    JSON.parse(l) as Instance
  );
}

/**
 * One curriculum step of `config` along `path` (`dir` = +1 harder, -1
 * easier): the family's own `step` when it has one, else
 * {@linkcode stepDimension} on the value `get` reads, written with `set`.
 *
 * @throws {RangeError} when `path` is not one of the family's dimensions.
 */
export function stepConfig<Config>(
  family: EnvironmentFamily<Config>,
  config: Config,
  path: string,
  dir: number,
): Config {
  const dim = dimension(family, path);
  if (dim === undefined) {
    throw new RangeError(
      `family ${family.name} has no dimension "${path}" (dimensions: ${
        family.dimensions.map((d) => d.path).join(", ")
      })`,
    );
  }
  if (family.step !== undefined) return family.step(config, path, dir);
  return family.set(
    config,
    path,
    stepDimension(dim, family.get(config, path), dir),
  );
}

/** The dimension named `path` of `family`, or `undefined`. */
export function dimension(
  family: Pick<EnvironmentFamily, "dimensions">,
  path: string,
): Dimension | undefined {
  return family.dimensions.find((d) => d.path === path);
}

/**
 * `value` brought into `dim`'s bounds (and rounded for an integer
 * dimension).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { clampToDimension } from "./family.ts";
 * const d = { path: "n", description: "", min: 1, max: 8, step: 1, integer: true, harder: "up" as const };
 * assert.equal(clampToDimension(d, 9.6), 8);
 * assert.equal(clampToDimension(d, 2.4), 2);
 * ```
 */
export function clampToDimension(dim: Dimension, value: number): number {
  const x = Math.max(dim.min, Math.min(dim.max, value));
  return dim.integer ? Math.round(x) : x;
}

/**
 * One step of `dim` from `value`: `dir` = +1 harder, -1 easier (a fraction
 * for a smaller step), clamped to the bounds.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stepDimension } from "./family.ts";
 * const d = { path: "horizon", description: "", min: 1, max: 4, step: 0.5, integer: false, harder: "down" as const };
 * assert.equal(stepDimension(d, 2, +1), 1.5);
 * assert.equal(stepDimension(d, 2, -1), 2.5);
 * ```
 */
export function stepDimension(
  dim: Dimension,
  value: number,
  dir: number,
): number {
  const sign = dim.harder === "up" ? 1 : -1;
  const raw = value + sign * dir * dim.step;
  return clampToDimension(dim, Math.round(raw * 1e6) / 1e6);
}

/**
 * Progress of dimension `path` of `config` from the `easy` preset (0) to
 * the `hard` preset (1); it can leave [0, 1] beyond the presets. A
 * dimension the presets do not move is measured over its bounds instead.
 *
 * @example
 * Not run: `family` is any registered family; families/*_test.ts check `progress` on the built-in ones.
 * ```ts ignore
 * progress(family, family.presets.hard, "agents"); // 1
 * ```
 */
export function progress<Config>(
  family: EnvironmentFamily<Config>,
  config: Config,
  path: string,
): number {
  const e = family.get(family.presets.easy!, path);
  const h = family.get(family.presets.hard!, path);
  const x = family.get(config, path);
  if (h !== e) return (x - e) / (h - e);
  const d = dimension(family, path);
  if (d === undefined || d.max === d.min) return 0;
  return d.harder === "up"
    ? (x - d.min) / (d.max - d.min)
    : (d.max - x) / (d.max - d.min);
}

/** The order a curriculum develops `family`'s dimensions in. */
export function curriculumOrder(
  family: Pick<EnvironmentFamily, "curriculum" | "dimensions">,
): readonly string[] {
  return family.curriculum ?? family.dimensions.map((d) => d.path);
}

/**
 * A mutation of `family` whose result is not a valid instance: names the
 * family, what its `check` said, and the fix.
 */
export class MalformedMutationError extends TypeError {
  /** The family. */
  readonly family: string;
  /** Build the error. */
  constructor(family: string, why: string) {
    super(
      `family ${family}: mutate returned a malformed instance (${why}); fix the family's mutate so every result passes its check (or return null when no edit applies)`,
    );
    this.name = "MalformedMutationError";
    this.family = family;
  }
}

/**
 * ACCEL's edit on `family`, checked: the mutated instance, `null` when the
 * family cannot edit it (no `mutate`, or no edit applies).
 *
 * @throws {MalformedMutationError} when the result fails the family's
 * `check`.
 */
export function checkedMutation<Instance>(
  family: EnvironmentFamily<unknown, Instance>,
  instance: Instance,
  rng: FamilyRng,
  seed: number,
): Instance | null {
  if (family.mutate === undefined) return null;
  const out = family.mutate(instance, rng, seed);
  if (out === null) return null;
  const why = family.check(out);
  if (why !== undefined) throw new MalformedMutationError(family.name, why);
  return out;
}
