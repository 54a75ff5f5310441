/**
 * The engineer kinds `plr` and `accel` (the algorithms are
 * `engineer/plr.ts` and `engineer/accel.ts`): registered from `nodes/`
 * because they read the stage's checkpoint and training instances and roll
 * the checkpoint out on new and edited levels (`policy/level_scores.ts`).
 *
 * ```yaml
 * engineer: { name: plr-stage, policy: $policy, envs: $envs, buffer: 1024, replay_prob: 0.5, beta: 0.3, rho: 0.3 }
 * engineer: { name: accel-stage, policy: $policy, envs: $envs, edits: 64, edit_steps: 1, max_agents: 8 }
 * ```
 *
 * `policy` must be this stage's train node (its checkpoint scores new
 * levels; its `level_scores` rescore the levels it trained on, aligned with
 * `envs`, this stage's generate node). The redesign's value is a level set
 * (`nodes/level_set.ts`) that the next `generate` draws its instances from.
 *
 * @module
 */
import * as v from "valibot";
import type { BlobRef } from "@envsmith/engine/kind";
import {
  EngineerConfigError,
  type EngineerEnv,
  type EngineerKind,
} from "../engineer/engineer_kind.ts";
import type { Engineer, Proposal, ProposeInput } from "../engineer/engineer.ts";
import {
  BoxSchema,
  DEFAULT_BOX,
  drawBoxMixture,
  type DrBox,
} from "../engineer/dr.ts";
import {
  type LevelIo,
  PLR_DEFAULTS,
  plrEngineer,
  type PlrOptions,
  type TrainedLevel,
} from "../engineer/plr.ts";
import type { Level, MeasuredLevel } from "../engineer/levels.ts";
import type { Instance } from "../mapf/instance.ts";
import { generate } from "../mapf/generator.ts";
import { hashString, Rng } from "../mapf/rng.ts";
import type { Checkpoint } from "../policy/checkpoint.ts";
import { type LevelScore, scoreLevels } from "../policy/level_scores.ts";
import type { RewardSpec } from "../policy/reward.ts";
import type { AnyEnvConfig } from "../schemas/env_config.ts";
import { isLevelSet } from "./level_set.ts";
import { readLevelSet, writeLevelSet } from "./level_set_io.ts";
import { field } from "./_values.ts";
import { readCheckpoint, readInstances } from "./policy_io.ts";
import { RewardParamsSchema } from "./reward_params.ts";
import { DEFAULT_FAMILY, type EnvironmentFamily } from "../families/family.ts";
import {
  readFamilyInstances,
  readFamilyLevelSet,
  writeFamilyLevelSet,
} from "./family_level_set.ts";
import { familyLevelIo, familyLevelProblem } from "./family_levels.ts";

function _seed31(x: number): number {
  return (x >>> 0) & 0x7fffffff;
}

function _measured(s: LevelScore): MeasuredLevel {
  return {
    episodes: s.episodes,
    successes: s.successes,
    agentSteps: s.agentSteps,
    pvl: s.pvl,
  };
}

/** Per-instance training scores as the train node's value carries them. */
export interface TrainLevelScores {
  /** Ended episodes per training instance. */
  episodes: readonly number[];
  /** Their successes. */
  successes: readonly number[];
  /** Acting agent-steps. */
  steps: readonly number[];
  /** Positive value loss. */
  pvl: readonly number[];
  /** The discount the trainer computed it with (absent: 0.99, the trainer's default). */
  gamma?: number;
}

/**
 * The {@linkcode LevelIo} of `plr`/`accel`: the previous buffer, this stage's
 * training instances with the trainer's scores (aligned with `trained`),
 * new levels drawn from `box` (16 uniform points a draw, as `dr`) and scored
 * once each with `ck`.
 */
export function checkpointLevelIo(
  ck: Checkpoint,
  options: {
    reward?: Partial<RewardSpec>;
    buffer: readonly Level[] | null;
    trained: readonly Instance[];
    scores: TrainLevelScores;
    box: DrBox;
    stage: number;
    seed: number;
  },
): { io: LevelIo; source: AnyEnvConfig } {
  const { scores, trained } = options;
  if (scores.pvl.length !== trained.length) {
    throw new TypeError(
      `policy.level_scores covers ${scores.pvl.length} instances but envs has ${trained.length}: give this stage's train node as policy and its generate node as envs`,
    );
  }
  const rows: TrainedLevel[] = trained.map((instance, i) => ({
    instance,
    measured: {
      episodes: scores.episodes[i]!,
      successes: scores.successes[i]!,
      agentSteps: scores.steps[i]!,
      pvl: scores.pvl[i]!,
    },
  }));
  const rng = new Rng(options.seed, hashString("plr-source"), options.stage);
  const source = drawBoxMixture(options.box, 16, rng);
  const reward = options.reward === undefined ? {} : { reward: options.reward };
  const io: LevelIo = {
    buffer: options.buffer,
    trained: rows,
    source,
    fresh(count, seed) {
      const { instances } = generate(source, { count, seed: _seed31(seed) });
      const s = scoreLevels(ck, instances, { episodes: 1, seed, ...reward });
      return Promise.resolve(
        instances.map((instance, i) => ({
          instance,
          measured: _measured(s[i]!),
        })),
      );
    },
    score(instances, seed) {
      return Promise.resolve(
        scoreLevels(ck, instances, { episodes: 1, seed, ...reward }).map(
          _measured,
        ),
      );
    },
  };
  return { io, source };
}

/** Parameters of `plr` (and, with the edit parameters, `accel`). */
export interface PlrParams {
  /** This stage's train node value. */
  policy: unknown;
  /** This stage's generate node value. */
  envs: unknown;
  /** The box new levels are drawn from. */
  box?: DrBox | undefined;
  /** Buffer capacity. */
  buffer?: number | undefined;
  /** Replay probability. */
  replay_prob?: number | undefined;
  /** Rank temperature. */
  beta?: number | undefined;
  /** Staleness mixing. */
  rho?: number | undefined;
  /** The trainer's reward coefficients. */
  reward?: Record<string, number | undefined> | undefined;
  /** accel: levels edited per stage. */
  edits?: number | undefined;
  /** accel: edits per level. */
  edit_steps?: number | undefined;
  /** accel: most agents an edit makes. */
  max_agents?: number | undefined;
}

const _required = (name: string, what: string) =>
  v.pipe(
    v.unknown(),
    v.check(
      (x) => x !== undefined && x !== null,
      `${name} is required: ${what}`,
    ),
    v.description(what),
  );

/** An optional integer parameter with a description. */
export const intParam = (
  name: string,
  min: number,
  max: number,
  what: string,
) =>
  v.optional(v.pipe(
    v.number(`${name} must be an integer in ${min}..${max}`),
    v.integer(`${name} must be an integer in ${min}..${max}`),
    v.minValue(min, `${name} must be at least ${min}`),
    v.maxValue(max, `${name} must be at most ${max}`),
    v.description(what),
  ));

/** The parameters shared by `plr` and `accel`. */
export const plrEntries = {
  policy: _required(
    "policy",
    "this stage's train node ($policy): its checkpoint scores new levels, its level_scores rescore the levels it trained on",
  ),
  envs: _required("envs", "this stage's training instances ($envs)"),
  box: v.optional(v.pipe(
    BoxSchema,
    v.description(
      "the box new levels are drawn from (as dr's); default: the range the benchmark suites span",
    ),
  )),
  buffer: intParam(
    "buffer",
    1,
    100_000,
    `buffer capacity in levels (instances); default ${PLR_DEFAULTS.buffer}`,
  ),
  replay_prob: v.optional(v.pipe(
    v.number("replay_prob must be a number in (0, 1]"),
    v.gtValue(0, "replay_prob must be > 0 (p = 0 would never replay)"),
    v.maxValue(1, "replay_prob must be at most 1"),
    v.description(
      `replay probability p: round(n (1 - p) / p) new levels are scored per stage of n training instances; default ${PLR_DEFAULTS.replayProb}`,
    ),
  )),
  beta: v.optional(v.pipe(
    v.number("beta must be a number > 0"),
    v.gtValue(0, "beta must be > 0"),
    v.maxValue(100, "beta must be at most 100"),
    v.description(
      `rank temperature: P_S ∝ (1/rank)^(1/beta); default ${PLR_DEFAULTS.beta}`,
    ),
  )),
  rho: v.optional(v.pipe(
    v.number("rho must be a number in 0..1"),
    v.minValue(0, "rho must be at least 0"),
    v.maxValue(1, "rho must be at most 1"),
    v.description(
      `staleness mixing: P = (1 - rho) P_S + rho P_C; default ${PLR_DEFAULTS.rho}`,
    ),
  )),
  reward: v.optional(v.pipe(
    RewardParamsSchema,
    v.description("the trainer's reward coefficients (as in train)"),
  )),
};

/**
 * The engineer of a level-replay kind: reads the checkpoint, the training
 * scores and the incoming buffer, runs `build` (PLR, or ACCEL on top of it)
 * and stores the buffer as a level set, the node's value.
 */
export function levelReplayEngineer(
  name: string,
  build: (
    plr: PlrOptions,
    params: PlrParams,
    family: EnvironmentFamily | undefined,
  ) => Engineer,
) {
  return (params: PlrParams, env: EngineerEnv): Engineer => ({
    name,
    async propose(input: ProposeInput): Promise<Proposal> {
      const readBlob = env.readBlob;
      if (readBlob === undefined) {
        throw new EngineerConfigError(
          `the ${name} engineer replays instances: run it as a redesign node in an experiment (the redesign command cannot)`,
        );
      }
      const io = {
        readBlob: (ref: BlobRef) => readBlob(ref),
        baseDir: env.baseDir,
      };
      const ck = await readCheckpoint(params.policy, io);
      const scores = field(params.policy, "level_scores") as
        | TrainLevelScores
        | undefined;
      if (scores === undefined) {
        throw new EngineerConfigError(
          `engineer ${name}: policy carries no level_scores; give this stage's train node ($policy)`,
        );
      }
      const family = env.family !== undefined &&
          env.family.name !== DEFAULT_FAMILY
        ? env.family
        : undefined;
      let levels: LevelIo;
      if (family !== undefined) {
        // another family: its instances, box, batched environment and mutation
        levels = familyLevelIo(family, ck, {
          buffer: isLevelSet(env.levelSet)
            ? (await readFamilyLevelSet(family, env.levelSet, io.readBlob))
              .levels as Level[]
            : null,
          trained: await readFamilyInstances(family, params.envs, io.readBlob),
          scores,
          gamma: scores.gamma ?? 0.99,
          stage: input.context.json.stage ?? 0,
          seed: input.seed,
        });
      } else {
        const buffer = isLevelSet(env.levelSet)
          ? (await readLevelSet(env.levelSet, io.readBlob)).levels
          : null;
        const reward: Record<string, number> = {};
        for (const [k, x] of Object.entries(params.reward ?? {})) {
          if (x !== undefined) reward[k] = x;
        }
        levels = checkpointLevelIo(ck, {
          buffer,
          trained: await readInstances(params.envs, io),
          scores,
          box: params.box ?? DEFAULT_BOX,
          stage: input.context.json.stage ?? 0,
          seed: input.seed,
          reward,
        }).io;
      }
      const engineer = build(
        {
          io: levels,
          ...(params.buffer === undefined ? {} : { buffer: params.buffer }),
          ...(params.replay_prob === undefined
            ? {}
            : { replayProb: params.replay_prob }),
          ...(params.beta === undefined ? {} : { beta: params.beta }),
          ...(params.rho === undefined ? {} : { rho: params.rho }),
        },
        params,
        family,
      );
      const proposal = await engineer.propose(input);
      const set = proposal.levels!;
      const writeBlob = env.writeBlob;
      if (writeBlob === undefined) {
        throw new EngineerConfigError(
          `the ${name} engineer stores a level buffer: run it as a redesign node in an experiment`,
        );
      }
      const origins = { start: 0, new: 0, edit: 0 };
      for (const l of set.levels) origins[l.origin]++;
      const { levels: _, ...rest } = proposal;
      return {
        ...rest,
        value: family === undefined
          ? await writeLevelSet(set, writeBlob)
          : await writeFamilyLevelSet(family, set, writeBlob),
        report: { levels: { buffer: set.levels.length, origins } },
      };
    },
  });
}

/** The `plr` engineer kind: robust prioritized level replay. */
export const plr: EngineerKind<PlrParams> = {
  name: "plr-stage",
  description:
    "robust prioritized level replay (PLR⊥): a buffer of instances scored by positive value loss, replayed by rank and staleness; new levels only scored",
  params: v.strictObject(plrEntries) as unknown as EngineerKind<
    PlrParams
  >["params"],
  module: import.meta.url,
  families: "any",
  checkFamily: (params, family) =>
    levelReplayFamilyProblem("plr-stage", params, family, { mutate: false }),
  create: levelReplayEngineer("plr-stage", (plr) => plrEngineer(plr)),
};

/**
 * What keeps a level-replay engineer from running on `family` with
 * `params`, in one line, or `null`: on a family other than MAPF-FrozenLake,
 * what the family lacks ({@linkcode familyLevelProblem}) and the
 * parameters that are MAPF-FrozenLake's (`box`, `reward`, `max_agents`).
 */
export function levelReplayFamilyProblem(
  engineer: string,
  params: unknown,
  family: EnvironmentFamily,
  needs: { readonly mutate: boolean },
): string | null {
  if (family.name === DEFAULT_FAMILY) return null;
  const p = (params ?? {}) as Record<string, unknown>;
  for (const k of ["box", "reward", "max_agents"]) {
    if (p[k] !== undefined) {
      return `${k} is MAPF-FrozenLake's, not family ${family.name}'s; leave it out (new levels come from the family's own box, rewards are the family's)`;
    }
  }
  return familyLevelProblem(engineer, family, needs);
}
