/**
 * The family registry: environment families by name, registered like
 * engineers. The built-in families (`builtins.ts`) and a user's own (a
 * plugin module's `families` export) go through the same
 * {@linkcode FamilyRegistry.register}, which refuses a second family of the
 * same name and a family missing part of the interface.
 *
 * This module imports no family: a node's code digest covers the chosen
 * family's `module` graph only.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FamilyRegistry, UnknownFamilyError } from "./registry.ts";
 * const registry = new FamilyRegistry();
 * assert.deepEqual(registry.names(), []);
 * assert.throws(() => registry.lookup("maze"), UnknownFamilyError);
 * ```
 *
 * @module
 */
import { didYouMean } from "@envsmith/engine/suggest";
import { DEFAULT_FAMILY, type EnvironmentFamily } from "./family.ts";

export { DEFAULT_FAMILY };

/** A name a family may have. */
const _NAME_RE = /^[A-Za-z][A-Za-z0-9_.-]*$/;

/** The members every family must have (what `register` checks). */
const _FUNCTIONS = [
  "get",
  "set",
  "generate",
  "check",
  "instanceId",
  "renderInstance",
  "renderConfig",
] as const;

/**
 * A family that cannot be registered: a name already taken, an invalid
 * name, or a missing member. `origin` (the plugin module) is named in the
 * message.
 */
export class FamilyRegistrationError extends TypeError {
  /** Build the error. */
  constructor(message: string) {
    super(message);
    this.name = "FamilyRegistrationError";
  }
}

/** A family name no registered family has; the message names the known ones. */
export class UnknownFamilyError extends TypeError {
  /** The name asked for. */
  readonly family: string;
  /** Build the error. */
  constructor(family: string, known: readonly string[], where?: string) {
    super(
      `${
        where === undefined ? "" : `${where}: `
      }unknown family "${family}"; known families: ${
        known.length === 0 ? "(none)" : known.join(", ")
      } (a plugin module adds one by exporting families)${
        didYouMean(family, known)
      }`,
    );
    this.name = "UnknownFamilyError";
    this.family = family;
  }
}

/** What is wrong with `family` as a family, in one line, or `null`. */
export function familyProblem(family: unknown, origin: string): string | null {
  if (typeof family !== "object" || family === null) {
    return `${origin}: an entry of "families" is not an environment family object ({ name, description, module, schema, dimensions, presets, ... })`;
  }
  const f = family as Partial<EnvironmentFamily>;
  const what = `family ${JSON.stringify(f.name)} (${origin})`;
  if (typeof f.name !== "string" || !_NAME_RE.test(f.name)) {
    return `${what}: the name must be letters, digits, "_", "-" or ".", starting with a letter`;
  }
  if (typeof f.module !== "string" || f.module === "") {
    return `${what} has no module: set module: import.meta.url (its import graph is its code, digested into keys)`;
  }
  const s = f.schema as { kind?: string } | undefined;
  if (typeof s !== "object" || s === null || s.kind !== "schema") {
    return `${what} has no configuration schema: declare schema: v.object({ ... }) (valibot, with bounds)`;
  }
  if (!Array.isArray(f.dimensions) || f.dimensions.length === 0) {
    return `${what} declares no dimensions: give dimensions: [{ path, description, min, max, step, integer, harder }]`;
  }
  for (const d of f.dimensions) {
    if (
      typeof d?.path !== "string" || !(d.min <= d.max) || !(d.step > 0) ||
      (d.harder !== "up" && d.harder !== "down")
    ) {
      return `${what}: dimension ${
        JSON.stringify(d?.path)
      } needs min <= max, step > 0 and harder "up" or "down"`;
    }
  }
  for (const p of ["easy", "medium", "hard"]) {
    if (f.presets === undefined || !(p in f.presets)) {
      return `${what} has no "${p}" preset: presets need at least easy, medium and hard`;
    }
  }
  for (const fn of _FUNCTIONS) {
    if (typeof f[fn] !== "function") return `${what} has no ${fn}() function`;
  }
  if (typeof f.suites !== "object" || f.suites === null) {
    return `${what} has no suites: give suites: { name: { description, split, instances() } }`;
  }
  if (
    typeof f.diagnosis?.statistics !== "function" ||
    typeof f.diagnosis?.failureCases !== "function"
  ) {
    return `${what} has no diagnosis: give diagnosis: { statistics(episodes), failureCases(episodes, options) }`;
  }
  return null;
}

/** Environment families by name. */
export class FamilyRegistry {
  #families = new Map<string, { family: EnvironmentFamily; origin: string }>();
  #version = 0;

  /**
   * Registers `family`; `origin` names where it comes from (a plugin
   * module) in error messages. Registering the very same object again is a
   * no-op.
   *
   * @throws {FamilyRegistrationError} for a name already taken by another
   * family, an invalid name or a missing member.
   */
  register(
    family: EnvironmentFamily,
    origin: string = family?.module ?? "?",
  ): void {
    const problem = familyProblem(family, origin);
    if (problem !== null) throw new FamilyRegistrationError(problem);
    const prev = this.#families.get(family.name);
    if (prev !== undefined) {
      if (prev.family === family) return;
      throw new FamilyRegistrationError(
        `family ${
          JSON.stringify(family.name)
        } (${origin}): the name is already registered by ${prev.origin}; rename one`,
      );
    }
    this.#families.set(family.name, { family, origin });
    this.#version++;
  }

  /** The family named `name`, if registered. */
  get(name: string): EnvironmentFamily | undefined {
    return this.#families.get(name)?.family;
  }

  /**
   * The family named `name`.
   *
   * @throws {UnknownFamilyError} naming the known families (`where` is the
   * place in the experiment, e.g. `nodes.envs.with.family`).
   */
  lookup(name: string, where?: string): EnvironmentFamily {
    const f = this.get(name);
    if (f === undefined) {
      throw new UnknownFamilyError(name, this.names(), where);
    }
    return f;
  }

  /** Where the family named `name` was registered from. */
  origin(name: string): string | undefined {
    return this.#families.get(name)?.origin;
  }

  /** Whether `name` is registered. */
  has(name: string): boolean {
    return this.#families.has(name);
  }

  /** Registered names, in registration order. */
  names(): string[] {
    return [...this.#families.keys()];
  }

  /** Registered families, in registration order. */
  list(): EnvironmentFamily[] {
    return [...this.#families.values()].map((e) => e.family);
  }

  /** Grows with each registration (for caches built from the registry). */
  get version(): number {
    return this.#version;
  }
}
