/**
 * MAPF-FrozenLake as an environment family: the configuration space of
 * `schemas/env_config.ts` (a component or a weighted mixture), the
 * generator of `mapf/generator.ts`, ACCEL's edits of `mapf/mutate.ts`, the
 * box dimensions of `mapf/box.ts`, the suites of `mapf/suites.ts`, the text
 * renderings of `mapf/render_text.ts` and the diagnosis of
 * `engineer/diagnose.ts`, behind the one interface every engineer uses.
 *
 * Dimensions (what engineers move; `harder` is the direction of
 * difficulty; the step is one curriculum step):
 *
 * | path | range | step | harder | sets |
 * |---|---|---|---|---|
 * | `size` | 2..64 | 2 | up | width, height and the distance range `{2, round(1.5 size)}` |
 * | `agents` | 1..64 | 2 | up | agents |
 * | `hole_density` | 0..0.6 | 0.05 | up | hole_density |
 * | `hole_clustering` | 0..1 | 0.1 | up | hole_clustering |
 * | `walls` | 0..0.5 | 0.05 | up | walls |
 * | `corridors` | 0..1 | 0.25 | up | corridors |
 * | `slip` | 0..1 | 0.05 | up | slip |
 * | `interaction` | 0..1 | 0.2 | up | interaction |
 * | `horizon` | 1..10 | 0.5 | down | the horizon factor of the reference makespan |
 * | `distance` | 1..512 | 3 | up | the largest start-goal distance |
 *
 * `set` on a mixture sets the dimension in every component; `get` reads the
 * leading edge (the most developed component). `step` is the curriculum
 * step the `band`, `blind` and `random` engineers always took on this
 * family (sizes to 24x24, 16 agents, slip and holes to 0.3 and 0.35,
 * horizon factors 1.2..4), so their numbers are unchanged.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mapfFrozenLake } from "./family.ts";
 * const easy = mapfFrozenLake.presets.easy!;
 * const big = mapfFrozenLake.set(easy, "size", 10);
 * assert.equal(mapfFrozenLake.get(big, "size"), 10);
 * assert.equal(mapfFrozenLake.generate(big, 1, 2).length, 2);
 * ```
 *
 * @module
 */
import * as v from "valibot";
import {
  type AnyEnvConfig,
  clampEnvConfig,
  components,
  describeEnvConfig,
  ENV_CONFIG_BOUNDS as B,
  type EnvConfig,
  EnvConfigSpecSchema,
  isMixture,
  parseEnvConfig,
  PRESETS,
  resolveEnvConfig,
} from "../../schemas/env_config.ts";
import type { Findings } from "../../schemas/findings.ts";
import { generate } from "../../mapf/generator.ts";
import { type Instance, validateInstance } from "../../mapf/instance.ts";
import { editLevel } from "../../mapf/mutate.ts";
import { renderPrompt } from "../../mapf/render_text.ts";
import { solve } from "../../mapf/solve.ts";
import { generateSuite, SUITES } from "../../mapf/suites.ts";
import { boxProblem, DEFAULT_BOX } from "../../mapf/box.ts";
import {
  buildMixture,
  CURRICULUM_DIMS,
  type CurriculumDim,
  dimValue,
  FRONTIER,
  frontier,
  step,
} from "../../engineer/config_ops.ts";
import { diagnose } from "../../engineer/diagnose.ts";
import type { EpisodeView } from "../../engineer/episode.ts";
import {
  clampToDimension,
  type Dimension,
  dimension,
  type EnvironmentFamily,
  type FailureCase,
  type FamilyRng,
  type FamilySuite,
  stepDimension,
} from "../family.ts";

/** The family's name. */
export const MAPF_FROZENLAKE = "mapf-frozenlake";

function _dim(
  path: string,
  description: string,
  min: number,
  max: number,
  step: number,
  integer: boolean,
  harder: "up" | "down" = "up",
): Dimension {
  return { path, description, min, max, step, integer, harder };
}

/** The dimensions engineers move along, in the order boxes are drawn. */
export const MAPF_DIMENSIONS: readonly Dimension[] = [
  _dim(
    "size",
    "square map side (sets width and height; distance range {2, round(1.5 size)})",
    B.width.min,
    B.width.max,
    2,
    true,
  ),
  _dim("agents", "number of agents", B.agents.min, B.agents.max, 2, true),
  _dim(
    "hole_density",
    "fraction of non-wall cells that are holes (the paper's obstacle density)",
    B.hole_density.min,
    B.hole_density.max,
    0.05,
    false,
  ),
  _dim(
    "hole_clustering",
    "0 = holes scattered, 1 = holes grow in clumps",
    0,
    1,
    0.1,
    false,
  ),
  _dim(
    "walls",
    "fraction of cells covered by wall blocks",
    0,
    0.5,
    0.05,
    false,
  ),
  _dim(
    "corridors",
    "corridor/bottleneck structure: wall partitions with narrow doors",
    0,
    1,
    0.25,
    false,
  ),
  _dim("slip", "probability a move slips sideways", 0, 1, 0.05, false),
  _dim(
    "interaction",
    "how much the agents' shortest paths cross (the paper's conflict density)",
    0,
    1,
    0.2,
    false,
  ),
  _dim(
    "horizon",
    "episode length as a factor of the reference makespan (smaller is harder)",
    B.horizon_factor.min,
    B.horizon_factor.max,
    0.5,
    false,
    "down",
  ),
  _dim(
    "distance",
    "largest start-goal shortest-path distance",
    B.distance.min,
    B.distance.max,
    3,
    true,
  ),
];

/**
 * The order a curriculum develops MAPF-FrozenLake in (the `band`
 * engineer's default): what makes agents interact first.
 */
export const MAPF_CURRICULUM: readonly string[] = FRONTIER;

function _dimOf(path: string): Dimension {
  const d = dimension({ dimensions: MAPF_DIMENSIONS }, path);
  if (d === undefined) {
    throw new RangeError(
      `family ${MAPF_FROZENLAKE} has no dimension "${path}" (dimensions: ${
        MAPF_DIMENSIONS.map((x) => x.path).join(", ")
      })`,
    );
  }
  return d;
}

/** One dimension set in one component (what a box point does to `easy`). */
function _setComponent(c: EnvConfig, path: string, value: number): EnvConfig {
  const x = clampToDimension(_dimOf(path), value);
  const out: Record<string, unknown> = { ...c };
  switch (path) {
    case "size":
      out.width = x;
      out.height = x;
      out.distance = { min: 2, max: Math.max(2, Math.round(1.5 * x)) };
      break;
    case "horizon":
      out.horizon = { factor: x };
      break;
    case "distance":
      out.distance = { min: Math.min(c.distance.min, x), max: x };
      break;
    default:
      out[path] = x;
  }
  return out as unknown as EnvConfig;
}

/** A dimension set in every component of a configuration. */
function _set(config: AnyEnvConfig, path: string, value: number): AnyEnvConfig {
  if (!isMixture(config)) return _setComponent(config, path, value);
  return {
    mixture: config.mixture.map((m) => ({
      weight: m.weight,
      config: _setComponent(m.config, path, value),
    })),
  };
}

/**
 * The dimension's value in the leading edge of a configuration (an
 * absolute horizon reads as steps / 16, as the curriculum measures it).
 */
function _get(config: AnyEnvConfig, path: string): number {
  _dimOf(path);
  const c = frontier(config);
  if (path === "hole_clustering") return c.hole_clustering;
  return dimValue(c, path as CurriculumDim);
}

/** Why an instance is malformed or unsolvable within its horizon, or undefined. */
function _check(instance: Instance): string | undefined {
  let valid: Instance;
  try {
    valid = validateInstance(instance);
  } catch (e) {
    return (e as Error).message;
  }
  if (
    valid.starts.some(([r, c], a) =>
      valid.goals[a]![0] === r && valid.goals[a]![1] === c
    )
  ) {
    return `instance ${valid.id}: an agent starts on its own goal`;
  }
  const sol = solve(valid, { cbsMaxAgents: 4 });
  if (sol === null) return `instance ${valid.id}: no solution found`;
  if (sol.makespan > valid.horizon) {
    return `instance ${valid.id}: the best plan found takes ${sol.makespan} steps, over the horizon ${valid.horizon}`;
  }
  return undefined;
}

/** The suites: each in its validation split, and `NAME@test` in its test split. */
function _suites(): Record<string, FamilySuite<Instance>> {
  const out: Record<string, FamilySuite<Instance>> = {};
  for (const s of Object.values(SUITES)) {
    out[s.name] = {
      description: s.description,
      split: "validation",
      instances: (count) =>
        generateSuite(s.name, {
          ...(count === undefined ? {} : { count }),
          split: "validation",
        }).instances,
    };
    out[`${s.name}@test`] = {
      description: `${s.description} (test split)`,
      split: "test",
      instances: (count) =>
        generateSuite(s.name, {
          ...(count === undefined ? {} : { count }),
          split: "test",
        }).instances,
    };
  }
  return out;
}

/** Numbers of a diagnosis, by name (`success_rate`, `outcome.hole`, ...). */
export function findingsStatistics(f: Findings): Record<string, number> {
  const out: Record<string, number> = {
    episodes: f.episodes,
    success_rate: f.success_rate,
    agent_success_rate: f.agent_success_rate,
    wait_fraction: f.behavior.wait_fraction,
    oscillation_rate: f.behavior.oscillation_rate,
    idle_agent_rate: f.behavior.idle_agent_rate,
  };
  for (const [k, n] of Object.entries(f.outcomes)) {
    out[`outcome.${k}`] = f.episodes === 0 ? 0 : n / f.episodes;
  }
  if (f.efficiency.mean !== null) out.efficiency = f.efficiency.mean;
  return out;
}

/**
 * MAPF-FrozenLake: multi-agent path finding on FrozenLake maps (holes,
 * walls, corridors, slip, crowding, tight horizons).
 */
export const mapfFrozenLake: EnvironmentFamily<
  AnyEnvConfig,
  Instance,
  EpisodeView
> = {
  name: MAPF_FROZENLAKE,
  description:
    "multi-agent path finding on FrozenLake maps: size, agents, holes, walls, corridors, slip, interaction, horizon",
  module: import.meta.url,
  schema: v.pipe(
    EnvConfigSpecSchema,
    v.transform((spec) => resolveEnvConfig(spec)),
  ) as unknown as v.GenericSchema<unknown, AnyEnvConfig>,
  dimensions: MAPF_DIMENSIONS,
  presets: PRESETS,
  leading: frontier,
  curriculum: MAPF_CURRICULUM,
  get: _get,
  set: (config, path, value) => parseEnvConfig(_set(config, path, value)),
  step(config, path, dir) {
    const one = (c: EnvConfig): EnvConfig =>
      (CURRICULUM_DIMS as readonly string[]).includes(path)
        ? step(c, path as CurriculumDim, dir)
        : _setComponent(
          c,
          path,
          stepDimension(_dimOf(path), _get(c, path), dir),
        );
    if (!isMixture(config)) return one(config);
    return {
      mixture: config.mixture.map((m) => ({
        weight: m.weight,
        config: one(m.config),
      })),
    };
  },
  generate: (config, seed, count) =>
    generate(config, { count, seed }).instances,
  mutate(instance: Instance, rng: FamilyRng, seed: number) {
    const r = editLevel(instance, `${instance.id}-m${seed}`, rng, {
      steps: 1,
      maxAgents: 8,
      tries: 20,
    });
    return r === null ? null : r.instance;
  },
  check: _check,
  instanceId: (instance) => instance.id,
  renderInstance: (instance) => renderPrompt(instance, { instructions: false }),
  renderConfig: (config) => describeEnvConfig(config),
  suites: _suites(),
  diagnosis: {
    statistics: (episodes) => findingsStatistics(diagnose(episodes)),
    failureCases(episodes, { count, seed }): FailureCase[] {
      const f = diagnose(episodes, { seed, maxCases: count });
      return f.failures.map((c) => ({
        instance: `episode-${c.episode}`,
        failure: c.outcome,
        text: c.text,
      }));
    },
  },
  clamp(input, previous) {
    const base = components(previous)[0]!.config;
    const r = clampEnvConfig(input, base);
    return { config: r.config, repairs: r.adjustments };
  },
  // buildMixture: equal components merge, at most 16 kept (the schema's
  // limit), weights normalised; one component comes back plain
  mix: (parts) =>
    buildMixture(
      parts.flatMap((p) => {
        const cs = components(p.config);
        const total = cs.reduce((a, m) => a + m.weight, 0);
        return cs.map((m) => ({
          weight: p.weight * m.weight / total,
          config: m.config,
        }));
      }),
      { maxComponents: 16 },
    ),
  components: (config) => components(config).map((m) => ({ ...m })),
  stepped: CURRICULUM_DIMS,
  box: DEFAULT_BOX,
  boxProblem: (box) => boxProblem(box),
};
