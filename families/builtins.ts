/**
 * The environment families built into envsmith, registered the way a
 * plugin's are. Adding a built-in family: a folder in `families/` whose
 * `family.ts` exports an {@linkcode EnvironmentFamily}, and one line here.
 *
 * Only the command line's wiring imports this list: a node's code digest
 * covers its own family's module graph, never every family's.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { builtinFamilyRegistry } from "./builtins.ts";
 * assert.deepEqual(builtinFamilyRegistry().names(), ["mapf-frozenlake"]);
 * ```
 *
 * @module
 */
import type { EnvironmentFamily } from "./family.ts";
import { FamilyRegistry } from "./registry.ts";
import { mapfFrozenLake } from "./mapf_frozenlake/family.ts";

/** Every built-in family, in the order `families` lists them. */
export const builtinFamilies: readonly EnvironmentFamily[] = [
  // one line per family, e.g. `maze,` imported from "./maze/family.ts"
  mapfFrozenLake,
];

/** A new registry holding the built-in families (plugins are registered into it). */
export function builtinFamilyRegistry(): FamilyRegistry {
  const registry = new FamilyRegistry();
  for (const f of builtinFamilies) registry.register(f, "envsmith (built in)");
  return registry;
}
