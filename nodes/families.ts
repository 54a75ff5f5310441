/**
 * The environment families of this project: a registry holding the
 * built-in families (`families/builtins.ts`), to which `cli.ts` adds a
 * plugin module's `families`. Each CLI invocation builds its own
 * ({@linkcode projectFamilies}); the constant {@linkcode families} serves
 * library users and tests.
 *
 * @module
 */
import { UserError } from "@envsmith/engine/errors";
import type { PluginHandler } from "@envsmith/engine/compile";
import { builtinFamilyRegistry } from "../families/builtins.ts";
import type { EnvironmentFamily } from "../families/family.ts";
import {
  FamilyRegistrationError,
  type FamilyRegistry,
} from "../families/registry.ts";

/** A new registry of the built-in families (plugins are registered into it). */
export function projectFamilies(): FamilyRegistry {
  return builtinFamilyRegistry();
}

/** The built-in families (a registry shared by library users and tests). */
export const families: FamilyRegistry = projectFamilies();

/**
 * The handler of a plugin module's `families` export: each entry is
 * registered into `registry` (a malformed family is refused in one line
 * naming the module).
 */
export function familyPluginHandlers(
  registry: FamilyRegistry,
): Record<string, PluginHandler> {
  return {
    families: (value, module) => {
      if (!Array.isArray(value)) {
        throw new UserError(
          `"families" must be an array of environment families ({ name, description, module, schema, dimensions, presets, generate, ... })`,
        );
      }
      return value.map((f: EnvironmentFamily) => {
        try {
          registry.register(f, module);
        } catch (e) {
          if (e instanceof FamilyRegistrationError) {
            throw new UserError(e.message);
          }
          throw e;
        }
        return f.name;
      });
    },
  };
}
