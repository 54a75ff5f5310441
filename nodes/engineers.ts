/**
 * The engineers of this project: a registry holding the built-in engineer
 * kinds, to which `cli.ts` adds a plugin module's `engineers`. Each CLI
 * invocation builds its own ({@linkcode projectEngineers}); the constant
 * {@linkcode engineers} serves library users and tests.
 *
 * @module
 */
import {
  builtinEngineerRegistry,
  builtinEngineers,
} from "../engineer/builtins.ts";
import type { EngineerRegistry } from "../engineer/registry.ts";

export { builtinEngineers };

/** A new registry of the built-in engineers (plugins are registered into it). */
export function projectEngineers(): EngineerRegistry {
  return builtinEngineerRegistry();
}

/** The built-in engineers (a registry shared by library users and tests). */
export const engineers: EngineerRegistry = projectEngineers();
