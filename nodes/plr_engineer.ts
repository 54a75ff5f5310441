/**
 * The engineer kinds `plr` and `accel` (the algorithms are
 * `engineer/plr.ts` and `engineer/accel.ts`): registered from `nodes/`
 * because they read the stage's checkpoint and training instances and roll
 * the checkpoint out on new and edited levels (`policy/level_scores.ts`).
 *
 * ```yaml
 * engineer: { name: plr, policy: $policy, envs: $envs, buffer: 1024, replay_prob: 0.5, beta: 1, rho: 0.3 }
 * engineer: { name: accel, policy: $policy, envs: $envs, edits: 64, edit_steps: 2, max_agents: 8 }
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
import type { BlobRef } from "@envsmith/engine";
import {
  EngineerConfigError,
  type EngineerEnv,
  type EngineerKind,
} from "../engineer/engineer_kind.ts";
import type { Engineer, Proposal, ProposeInput } from "../engineer/engineer.ts";
import { BoxSchema, DEFAULT_BOX, type DrBox } from "../engineer/dr.ts";
import { PLR_DEFAULTS, plrEngineer } from "../engineer/plr.ts";
import {
  ACCEL_DEFAULTS,
  accelEngineer,
  accelProblem,
} from "../engineer/accel.ts";
import {
  checkpointLevelIo,
  type TrainLevelScores,
} from "./engineer_rollouts.ts";
import { isLevelSet, readLevelSet } from "./level_set.ts";
import { field } from "./_values.ts";
import { readCheckpoint, readInstances } from "./policy_io.ts";
import { RewardParamsSchema } from "./reward_params.ts";

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

const _int = (name: string, min: number, max: number, what: string) =>
  v.optional(v.pipe(
    v.number(`${name} must be an integer in ${min}..${max}`),
    v.integer(`${name} must be an integer in ${min}..${max}`),
    v.minValue(min, `${name} must be at least ${min}`),
    v.maxValue(max, `${name} must be at most ${max}`),
    v.description(what),
  ));

const _plrEntries = {
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
  buffer: _int(
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

const _accelEntries = {
  ..._plrEntries,
  edits: _int(
    "edits",
    0,
    4096,
    `highest-scored replayed levels edited per stage; default ${ACCEL_DEFAULTS.edits}`,
  ),
  edit_steps: _int(
    "edit_steps",
    1,
    16,
    `random edits applied to each; default ${ACCEL_DEFAULTS.editSteps}`,
  ),
  max_agents: _int(
    "max_agents",
    1,
    64,
    `the most agents an add-agent edit makes; default ${ACCEL_DEFAULTS.maxAgents}`,
  ),
};

function _create(name: "plr" | "accel") {
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
      const buffer = isLevelSet(env.levelSet)
        ? (await readLevelSet(env.levelSet, io.readBlob)).levels
        : null;
      const reward: Record<string, number> = {};
      for (const [k, x] of Object.entries(params.reward ?? {})) {
        if (x !== undefined) reward[k] = x;
      }
      const { io: levels } = checkpointLevelIo(ck, {
        buffer,
        trained: await readInstances(params.envs, io),
        scores,
        box: params.box ?? DEFAULT_BOX,
        stage: input.context.json.stage ?? 0,
        seed: input.seed,
        reward,
      });
      const plr = {
        io: levels,
        ...(params.buffer === undefined ? {} : { buffer: params.buffer }),
        ...(params.replay_prob === undefined
          ? {}
          : { replayProb: params.replay_prob }),
        ...(params.beta === undefined ? {} : { beta: params.beta }),
        ...(params.rho === undefined ? {} : { rho: params.rho }),
      };
      const engineer = name === "plr" ? plrEngineer(plr) : accelEngineer({
        ...plr,
        ...(params.edits === undefined ? {} : { edits: params.edits }),
        ...(params.edit_steps === undefined
          ? {}
          : { editSteps: params.edit_steps }),
        ...(params.max_agents === undefined
          ? {}
          : { maxAgents: params.max_agents }),
      });
      return await engineer.propose(input);
    },
  });
}

/** The `plr` engineer kind: robust prioritized level replay. */
export const plr: EngineerKind<PlrParams> = {
  name: "plr",
  description:
    "robust prioritized level replay (PLR⊥): a buffer of instances scored by positive value loss, replayed by rank and staleness; new levels only scored",
  params: v.strictObject(_plrEntries) as unknown as EngineerKind<
    PlrParams
  >["params"],
  module: import.meta.url,
  create: _create("plr"),
};

/** The `accel` engineer kind: PLR⊥ plus edits of high-regret levels. */
export const accel: EngineerKind<PlrParams> = {
  name: "accel",
  description:
    "ACCEL: robust PLR plus small edits (holes, starts, goals, agents) of the highest-scored replayed levels, each checked solvable",
  params: v.strictObject(_accelEntries) as unknown as EngineerKind<
    PlrParams
  >["params"],
  module: import.meta.url,
  fingerprint(params) {
    // an edit that can never keep a level solvable is refused at plan
    const p = (params ?? {}) as { box?: unknown; max_agents?: unknown };
    const box =
      (typeof p.box === "object" && p.box !== null
        ? p.box
        : DEFAULT_BOX) as DrBox;
    const side = box.size?.[0] ?? 8;
    const m = typeof p.max_agents === "number"
      ? p.max_agents
      : ACCEL_DEFAULTS.maxAgents;
    const problem = accelProblem(
      ACCEL_DEFAULTS.edits,
      ACCEL_DEFAULTS.editSteps,
      m,
      side * side,
    );
    if (problem !== null) {
      throw new EngineerConfigError(
        `engineer accel: ${
          problem.replace(
            "the smallest source map",
            `the smallest map of the box (${side}x${side})`,
          )
        }`,
      );
    }
    return null;
  },
  create: _create("accel"),
};
