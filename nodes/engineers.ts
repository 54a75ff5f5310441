/**
 * The engineers of this project: a registry holding the built-in engineer
 * kinds (those of `engineer/builtins.ts`, plus `probe`, `probe-base`,
 * `plr` and `accel`, defined in `nodes/` because they roll a policy out),
 * to which `cli.ts` adds a plugin module's `engineers`. Each CLI
 * invocation builds its own ({@linkcode projectEngineers}); the constant
 * {@linkcode engineers} serves library users and tests.
 *
 * @module
 */
import {
  builtinEngineerRegistry,
  builtinEngineers,
} from "../engineer/builtins.ts";
import type { EngineerKind } from "../engineer/engineer_kind.ts";
import type { EngineerRegistry } from "../engineer/registry.ts";
import { UserError } from "@envsmith/engine/errors";
import type { PluginHandler } from "@envsmith/engine/compile";
import { probe, probeBase } from "./probe_engineer.ts";
import { plr } from "./plr_engineer.ts";
import { accel } from "./accel_engineer.ts";

/** The built-in engineers that consult a policy (registered from `nodes/`). */
export const policyEngineers: readonly EngineerKind[] = [
  probe,
  probeBase,
  plr,
  accel,
];

export { builtinEngineers };

/** A new registry of the built-in engineers (plugins are registered into it). */
export function projectEngineers(): EngineerRegistry {
  const registry = builtinEngineerRegistry();
  for (const e of policyEngineers) registry.register(e, "envsmith (built in)");
  return registry;
}

/** The built-in engineers (a registry shared by library users and tests). */
export const engineers: EngineerRegistry = projectEngineers();

/**
 * The handlers of a plugin module's exports this project registers beside
 * the engine's kinds and executors: `engineers`, into `registry`.
 */
export function engineerPluginHandlers(
  registry: EngineerRegistry,
): Record<string, PluginHandler> {
  return {
    engineers: (value, module) => {
      if (!Array.isArray(value)) {
        throw new UserError(
          `"engineers" must be an array of engineer kinds ({ name, description, params, module, create })`,
        );
      }
      return value.map((e: EngineerKind) => {
        registry.register(e, module);
        return e.name;
      });
    },
  };
}
