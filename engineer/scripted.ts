/**
 * The `scripted` engineer: an open-loop control. It replays a configuration
 * sequence taken from somewhere else (in the shipped ablation: another
 * seed's informed run, by reference to its cached redesign outputs) and reads
 * nothing from the context, so comparing it with the run it replays shows
 * what closed-loop diagnosis adds beyond a good schedule.
 *
 * @module
 */
import {
  type AnyEnvConfig,
  configId,
  parseEnvConfig,
} from "../schemas/env_config.ts";
import type { Engineer, Proposal, ProposeInput } from "./engineer.ts";
import * as v from "valibot";
import { EnvConfigSpecSchema } from "../schemas/env_config.ts";
import type { EngineerKind } from "./engineer_kind.ts";

/**
 * The scripted engineer: proposes `script` whatever the context.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { scriptedEngineer } from "./scripted.ts";
 * import { buildContext } from "./context.ts";
 * import { configId, PRESETS } from "../schemas/mod.ts";
 * const e = scriptedEngineer(PRESETS.medium);
 * const p = await e.propose({
 *   context: buildContext("none", null, PRESETS.easy),
 *   config: PRESETS.easy,
 *   seed: 1,
 * });
 * assert.equal(configId(p.config), configId(PRESETS.medium));
 * ```
 * @throws {TypeError} when `script` is not a valid configuration.
 */
export function scriptedEngineer(script: unknown): Engineer {
  const config: AnyEnvConfig = parseEnvConfig(script);
  return {
    name: "scripted",
    propose(input: ProposeInput): Promise<Proposal> {
      const same = configId(config) === configId(input.config);
      return Promise.resolve({
        config,
        rationale: `scripted engineer: replays the scripted configuration ${
          configId(config)
        }${same ? " (unchanged)" : ""}; the context is not read.`,
        events: [],
        reads: [],
      });
    },
  };
}

/** The `scripted` engineer kind: `engineer: { name: scripted, script: CONFIG }`. */
export const engineer: EngineerKind<{ script: unknown }> = {
  name: "scripted",
  description:
    "open-loop control: proposes `script` (usually another run's redesign output) whatever the context",
  params: v.strictObject({
    script: v.pipe(
      EnvConfigSpecSchema,
      v.description(
        "the configuration it proposes, usually a reference to another run's redesign, e.g. $config[variant=full,seed=+1]",
      ),
    ),
  }),
  module: import.meta.url,
  create: (params) => scriptedEngineer(params.script),
};
