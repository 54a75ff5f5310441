/**
 * The `explore` engineer: the exploratory curricula the `learned` engineer
 * learns from. Each stage it makes a uniformly random candidate change
 * (keep, or one step of one stepped dimension up or down; seeded by the
 * redesign's seed and stage); it reads nothing.
 *
 * @module
 */
import * as v from "valibot";
import { hashString, Rng } from "../mapf/rng.ts";
import type { Engineer, Proposal, ProposeInput } from "./engineer.ts";
import { EngineerConfigError, type EngineerKind } from "./engineer_kind.ts";
import type { EnvironmentFamily } from "../families/family.ts";
import { candidateChanges } from "./learned_features.ts";

/** The `explore` engineer: a uniformly random candidate change each stage. */
export function exploreEngineer(family: EnvironmentFamily): Engineer {
  return {
    name: "explore",
    propose(input: ProposeInput): Promise<Proposal> {
      const rng = new Rng(
        input.seed,
        hashString("explore-engineer"),
        input.context.json.stage ?? 0,
      );
      const cs = candidateChanges(family, input.config);
      const c = cs[rng.int(cs.length)]!;
      return Promise.resolve({
        config: c.config as ProposeInput["config"],
        rationale:
          `explore engineer: ${c.label} (one of ${cs.length} candidates, uniformly).`,
        events: [{ type: "choice", detail: c.label }],
        reads: [],
      });
    },
  };
}

/** The `explore` engineer kind (exploratory curricula, reads nothing). */
export const engineer: EngineerKind<Record<string, never>> = {
  name: "explore",
  description:
    "a uniformly random candidate change each stage (keep, or one step of one dimension), seeded: exploratory curricula for the learned engineer; reads nothing",
  families: "any",
  params: v.strictObject({}),
  module: import.meta.url,
  create: (_params, env) => {
    if (env.family === undefined) {
      throw new EngineerConfigError(
        "engineer explore: no environment family given (a redesign node gives its family)",
      );
    }
    return exploreEngineer(env.family);
  },
};
