/**
 * The `random` engineer: a seeded random perturbation within bounds. It
 * reads nothing from the context: one to three curriculum dimensions of one
 * component (the heaviest for a mixture is not preferred: any component)
 * move one step up or down, uniformly at random.
 *
 * @module
 */
import { components, type EnvConfig } from "../schemas/env_config.ts";
import { buildMixture, CURRICULUM_DIMS, step } from "./config_ops.ts";
import type { Engineer, Proposal, ProposeInput } from "./engineer.ts";
import { hashString, Rng } from "../mapf/rng.ts";
import { configId } from "../schemas/env_config.ts";
import * as v from "valibot";
import type { EngineerKind } from "./engineer_kind.ts";

/**
 * The random engineer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { randomEngineer } from "./random.ts";
 * assert.equal(randomEngineer().name, "random");
 * ```
 */
export function randomEngineer(): Engineer {
  return {
    name: "random",
    propose(input: ProposeInput): Promise<Proposal> {
      // One stream per stage: with the same seed every stage would repeat the
      // same perturbation.
      const rng = new Rng(
        input.seed,
        hashString("random-engineer"),
        input.context.json.stage ?? 0,
      );
      const comps = components(input.config).map((c) => ({ ...c }));
      const k = rng.int(comps.length);
      let c: EnvConfig = comps[k]!.config;
      const changes: string[] = [];
      const n = 1 + rng.int(3);
      const dims = [...CURRICULUM_DIMS];
      for (let i = 0; i < n && dims.length > 0; i++) {
        const d = dims.splice(rng.int(dims.length), 1)[0]!;
        const dir = rng.float() < 0.5 ? -1 : 1;
        const before = configId(c);
        c = step(c, d, dir);
        if (configId(c) !== before) {
          changes.push(`${d} ${dir > 0 ? "up" : "down"}`);
        }
      }
      comps[k] = { weight: comps[k]!.weight, config: c };
      const config = buildMixture(comps, { maxComponents: 16 });
      return Promise.resolve({
        config,
        rationale: `random engineer: ${
          changes.join(", ") || "no effective change (at bounds)"
        }${comps.length > 1 ? ` in component ${k}` : ""}.`,
        events: [],
        reads: [],
      });
    },
  };
}

/** The `random` engineer kind (no parameters; the node's seed drives it). */
export const engineer: EngineerKind<Record<string, never>> = {
  name: "random",
  description:
    "moves one to three curriculum dimensions of one component one step up or down at random (seeded); reads nothing",
  params: v.strictObject({}),
  module: import.meta.url,
  create: () => randomEngineer(),
};
