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
import { canonicalJson, sha256Hex } from "@envsmith/engine/hash";
import { EnvConfigSpecSchema } from "../schemas/env_config.ts";
import { EngineerConfigError, type EngineerKind } from "./engineer_kind.ts";
import { DEFAULT_FAMILY, type EnvironmentFamily } from "../families/family.ts";

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

/**
 * The scripted engineer on another family: proposes `script`, a
 * configuration of `family`, whatever the context.
 *
 * @throws {EngineerConfigError} when `script` is outside the family's space.
 */
export function familyScriptedEngineer(
  family: EnvironmentFamily,
  script: unknown,
): Engineer {
  const r = v.safeParse(family.schema, script);
  if (!r.success) {
    throw new EngineerConfigError(
      `engineer scripted on family ${family.name}: script is outside the family's space (${
        r.issues[0]!.message
      }); give a configuration of ${family.name} (usually another run's redesign)`,
    );
  }
  const config = r.output;
  const id = (c: unknown) => sha256Hex(canonicalJson(c as never)).slice(0, 12);
  return {
    name: "scripted",
    propose(input: ProposeInput): Promise<Proposal> {
      const same = id(config) === id(input.config);
      return Promise.resolve({
        config: config as AnyEnvConfig,
        rationale: `scripted engineer: replays the scripted configuration ${
          id(config)
        }${same ? " (unchanged)" : ""}; the context is not read.`,
        events: [],
        reads: [],
      });
    },
  };
}

/** A configuration of any family: a mapping (the family checks it). */
export const ANY_CONFIG = v.union([
  EnvConfigSpecSchema,
  v.record(v.string(), v.unknown()),
], "a configuration must be a mapping");

/** The `scripted` engineer kind: `engineer: { name: scripted, script: CONFIG }`. */
export const engineer: EngineerKind<{ script: unknown }> = {
  name: "scripted",
  description:
    "open-loop control: proposes `script` (usually another run's redesign output) whatever the context",
  families: "any",
  checkFamily(params, family) {
    const script = (params as { script?: unknown } | null)?.script;
    if (typeof script === "string" || script === undefined) return null;
    const r = v.safeParse(
      family.name === DEFAULT_FAMILY ? EnvConfigSpecSchema : family.schema,
      script,
    );
    return r.success
      ? null
      : `script is outside the family's space (${r.issues[0]!.message})`;
  },
  params: v.strictObject({
    script: v.pipe(
      ANY_CONFIG,
      v.description(
        "the configuration it proposes, usually a reference to another run's redesign, e.g. $config[variant=full,seed=+1]",
      ),
    ),
  }),
  module: import.meta.url,
  create: (params, env) =>
    env.family !== undefined && env.family.name !== DEFAULT_FAMILY
      ? familyScriptedEngineer(env.family, params.script)
      : scriptedEngineer(params.script),
};
