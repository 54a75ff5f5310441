/**
 * The `random` engineer: a seeded random perturbation within bounds. It
 * reads nothing from the context: one to three of the family's stepped
 * dimensions of one component (the heaviest for a mixture is not preferred: any component)
 * move one step up or down, uniformly at random.
 *
 * @module
 */
import type { AnyEnvConfig } from "../schemas/env_config.ts";
import { canonicalJson } from "@envsmith/engine/hash";
import type { Engineer, Proposal, ProposeInput } from "./engineer.ts";
import { hashString, Rng } from "../mapf/rng.ts";
import * as v from "valibot";
import { EngineerConfigError, type EngineerKind } from "./engineer_kind.ts";
import { type EnvironmentFamily, stepConfig } from "../families/family.ts";

/**
 * The random engineer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { randomEngineer } from "./random.ts";
 * import { mapfFrozenLake } from "../families/mapf_frozenlake/family.ts";
 * assert.equal(randomEngineer(mapfFrozenLake).name, "random");
 * ```
 */
export function randomEngineer(family: EnvironmentFamily): Engineer {
  const stepped = family.stepped ?? family.dimensions.map((d) => d.path);
  return {
    name: "random",
    propose(input: ProposeInput): Promise<Proposal> {
      const rng = new Rng(
        input.seed,
        hashString("random-engineer"),
        input.context.json.stage ?? 0,
      );
      const comps = family.components?.(input.config) ??
        [{ weight: 1, config: input.config }];
      const k = rng.int(comps.length);
      let c = comps[k]!.config;
      const changes: string[] = [];
      const n = 1 + rng.int(3);
      const dims = [...stepped];
      for (let i = 0; i < n && dims.length > 0; i++) {
        const d = dims.splice(rng.int(dims.length), 1)[0]!;
        const dir = rng.float() < 0.5 ? -1 : 1;
        const before = canonicalJson(c);
        c = stepConfig(family, c, d, dir);
        if (canonicalJson(c) !== before) {
          changes.push(`${d} ${dir > 0 ? "up" : "down"}`);
        }
      }
      comps[k] = { weight: comps[k]!.weight, config: c };
      const config = family.mix?.(comps) ?? comps[0]!.config;
      return Promise.resolve({
        config: config as AnyEnvConfig,
        rationale: `random engineer: ${
          changes.join(", ") || "no effective change (at bounds)"
        }${comps.length > 1 ? ` in component ${k}` : ""}.`,
        events: [],
        reads: [],
      });
    },
  };
}

export const engineer: EngineerKind<Record<string, never>> = {
  name: "random",
  description:
    "moves one to three curriculum dimensions of one component one step up or down at random (seeded); reads nothing",
  families: "any",
  params: v.strictObject({}),
  module: import.meta.url,
  create: (_params, env) => {
    if (env.family === undefined) {
      throw new EngineerConfigError(
        "engineer random: no environment family given (a redesign node gives its family)",
      );
    }
    return randomEngineer(env.family);
  },
};
