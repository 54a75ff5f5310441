/**
 * The engineers built into envsmith, registered the way a plugin's are.
 * Adding a built-in engineer: a file in `engineer/` that exports
 * `engineer` (an {@linkcode EngineerKind}), and one line here.
 *
 * Only the command line's wiring (`nodes/engineers.ts`) imports this list:
 * the `redesign` node's code digest must not include every engineer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { builtinEngineerRegistry } from "./builtins.ts";
 * assert.ok(builtinEngineerRegistry().has("rules"));
 * ```
 *
 * @module
 */
import type { Engineer } from "./engineer.ts";
import type { EngineerEnv, EngineerKind } from "./engineer_kind.ts";
import { EngineerRegistry } from "./registry.ts";
import { engineer as fixed } from "./fixed.ts";
import { engineer as random } from "./random.ts";
import { engineer as rules } from "./rules.ts";
import { engineer as replay } from "./replay.ts";
import { engineer as llm } from "./llm.ts";
import { engineer as scripted } from "./scripted.ts";
import { engineer as blind } from "./blind.ts";
import { engineer as exec } from "./exec.ts";
import { engineer as dr } from "./dr.ts";
import { engineer as band } from "./band.ts";
import { engineer as learned } from "./learned.ts";
import { engineer as explore } from "./explore.ts";
import { mapfFrozenLake } from "../families/mapf_frozenlake/family.ts";

/** Every built-in engineer kind, in the order `--help` lists them. */
export const builtinEngineers: readonly EngineerKind[] = [
  // one line per engineer, e.g. `rules,` imported from "./rules.ts"
  fixed,
  random,
  rules,
  replay,
  llm,
  scripted,
  blind,
  dr,
  band,
  learned,
  explore,
  exec,
];

/** A new registry holding the built-in engineers. */
export function builtinEngineerRegistry(): EngineerRegistry {
  const registry = new EngineerRegistry();
  for (const e of builtinEngineers) registry.register(e, "envsmith (built in)");
  return registry;
}

let _shared: EngineerRegistry | undefined;

/**
 * Builds a built-in engineer by name from its parameters (what
 * `engineer: { name, ...parameters }` holds), for library use; its family
 * is MAPF-FrozenLake unless `env.family` names another.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createEngineer } from "./builtins.ts";
 * import { PRESETS } from "../schemas/env_config.ts";
 * assert.equal(createEngineer("rules").name, "rules");
 * assert.equal(createEngineer("scripted", { script: PRESETS.hard }).name, "scripted");
 * ```
 * @throws {EngineerConfigError} for an unknown name or invalid parameters.
 */
export function createEngineer(
  name: string,
  params: Record<string, unknown> = {},
  env: EngineerEnv = { baseDir: ".", log: () => {} },
): Engineer {
  _shared ??= builtinEngineerRegistry();
  // engineers that move through a family's space work on MAPF-FrozenLake
  // unless told otherwise
  return _shared.create(name, params, { family: mapfFrozenLake, ...env });
}
