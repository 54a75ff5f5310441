/**
 * The engineer kind `accel` (the algorithm is `engineer/accel.ts`): robust
 * PLR (`nodes/plr_engineer.ts`, whose parameters it shares) plus edits of
 * high-regret levels, each checked solvable. Registered from `nodes/` for
 * the same reason as `plr`: it reads the checkpoint and rolls it out on the
 * edited levels (engineer cost, counted in the report's `engineer_cost`).
 *
 * ```yaml
 * engineer: { name: accel-stage, policy: $policy, envs: $envs, edits: 64, edit_steps: 1, max_agents: 8 }
 * ```
 *
 * @module
 */
import * as v from "valibot";
import {
  EngineerConfigError,
  type EngineerKind,
} from "../engineer/engineer_kind.ts";
import { DEFAULT_BOX, type DrBox } from "../engineer/dr.ts";
import {
  ACCEL_DEFAULTS,
  accelEngineer,
  accelProblem,
} from "../engineer/accel.ts";
import {
  intParam,
  levelReplayEngineer,
  levelReplayFamilyProblem,
  plrEntries,
  type PlrParams,
} from "./plr_engineer.ts";
import { familyEdit } from "./family_levels.ts";

const _accelEntries = {
  ...plrEntries,
  edits: intParam(
    "edits",
    0,
    4096,
    `highest-scored replayed levels edited per stage; default ${ACCEL_DEFAULTS.edits}`,
  ),
  edit_steps: intParam(
    "edit_steps",
    1,
    16,
    `random edits applied to each; default ${ACCEL_DEFAULTS.editSteps}`,
  ),
  max_agents: intParam(
    "max_agents",
    1,
    64,
    `the most agents an add-agent edit makes; default ${ACCEL_DEFAULTS.maxAgents}`,
  ),
};

/** The `accel` engineer kind: PLR⊥ plus edits of high-regret levels. */
export const accel: EngineerKind<PlrParams> = {
  name: "accel-stage",
  description:
    "ACCEL: robust PLR plus small edits (holes, starts, goals, agents) of the highest-scored replayed levels, each checked solvable",
  params: v.strictObject(_accelEntries) as unknown as EngineerKind<
    PlrParams
  >["params"],
  module: import.meta.url,
  families: "any",
  checkFamily: (params, family) =>
    levelReplayFamilyProblem("accel-stage", params, family, { mutate: true }),
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
  create: levelReplayEngineer(
    "accel-stage",
    (plr, params, family) =>
      accelEngineer({
        ...plr,
        // on another family, ACCEL's edit is the family's mutation
        ...(family === undefined ? {} : {
          edit: (instance, _id, rng, o) => familyEdit(family, instance, rng, o),
          describe: (instance) => family.instanceId(instance),
        }),
        ...(params.edits === undefined ? {} : { edits: params.edits }),
        ...(params.edit_steps === undefined
          ? {}
          : { editSteps: params.edit_steps }),
        ...(params.max_agents === undefined
          ? {}
          : { maxAgents: params.max_agents }),
      }),
  ),
};
