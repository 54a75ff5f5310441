/**
 * The engineer registry: engineer kinds by name, registered like node
 * kinds. The built-in engineers (`builtins.ts`) and a user's own (a plugin
 * module's `engineers` export) go through the same
 * {@linkcode EngineerRegistry.register}, which refuses a second kind of the
 * same name and a kind without a parameter schema.
 *
 * This module imports no engineer: the `redesign` node's code digest
 * includes it, and only the chosen engineer's module is added per node.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EngineerRegistry } from "./registry.ts";
 * import { engineer as rules } from "./rules.ts";
 * const registry = new EngineerRegistry();
 * registry.register(rules);
 * assert.deepEqual(registry.names(), ["rules"]);
 * assert.equal(registry.create("rules", {}, { baseDir: ".", log() {} }).name, "rules");
 * // another kind under a name already taken is refused
 * assert.throws(
 *   () => registry.register({ ...rules }, "my_engineers.ts"),
 *   /engineer "rules" \(my_engineers.ts\): the name is already registered/,
 * );
 * ```
 *
 * @module
 */
import * as v from "valibot";
import { DEFAULT_FAMILY, type EnvironmentFamily } from "../families/family.ts";
import type { Engineer } from "./engineer.ts";
import {
  EngineerConfigError,
  type EngineerEnv,
  type EngineerKind,
  paramDescription,
} from "./engineer_kind.ts";

export { EngineerConfigError };
export type { EngineerEnv, EngineerKind };

/** A name an engineer may have. */
const _NAME_RE = /^[A-Za-z][A-Za-z0-9_.-]*$/;

/**
 * An engineer kind that cannot be registered: a name already taken, an
 * invalid name, or no parameter schema. `origin` (the plugin module) is
 * named in the message.
 */
export class EngineerRegistrationError extends TypeError {
  /** Build the error. */
  constructor(message: string) {
    super(message);
    this.name = "EngineerRegistrationError";
  }
}

/** Engineer kinds by name. */
export class EngineerRegistry {
  #kinds = new Map<string, { kind: EngineerKind; origin: string }>();
  #version = 0;

  /**
   * Registers `kind`; `origin` names where it comes from (a plugin module)
   * in error messages. Registering the very same object again is a no-op.
   *
   * @throws {EngineerRegistrationError} for a name already taken by another
   * kind, an invalid name, no parameter schema, no `create` or no `module`.
   */
  register(kind: EngineerKind, origin: string = kind?.module ?? "?"): void {
    const what = `engineer ${JSON.stringify(kind?.name)} (${origin})`;
    if (typeof kind !== "object" || kind === null) {
      throw new EngineerRegistrationError(
        `${origin}: an entry of "engineers" is not an engineer kind object ({ name, description, params, module, create })`,
      );
    }
    if (typeof kind.name !== "string" || !_NAME_RE.test(kind.name)) {
      throw new EngineerRegistrationError(
        `${what}: the name must be letters, digits, "_", "-" or ".", starting with a letter`,
      );
    }
    if (kind.name === "name" || kind.name === "context") {
      throw new EngineerRegistrationError(
        `${what}: "${kind.name}" is reserved; rename the engineer`,
      );
    }
    const s = kind.params as unknown as {
      kind?: string;
      entries?: unknown;
    } | undefined;
    if (
      s === undefined || s === null || s.kind !== "schema" ||
      typeof s.entries !== "object" || s.entries === null
    ) {
      throw new EngineerRegistrationError(
        `${what} has no parameter schema: declare params: v.strictObject({ ... }) (v.strictObject({}) for an engineer without parameters)`,
      );
    }
    for (const reserved of ["name", "context"]) {
      if (reserved in (s.entries as object)) {
        throw new EngineerRegistrationError(
          `${what}: its parameters may not be named "${reserved}" (the redesign node's own); rename it`,
        );
      }
    }
    if (typeof kind.create !== "function") {
      throw new EngineerRegistrationError(
        `${what} has no create(params, env) function`,
      );
    }
    if (typeof kind.module !== "string" || kind.module === "") {
      throw new EngineerRegistrationError(
        `${what} has no module: set module: import.meta.url (its import graph is its code, digested into keys)`,
      );
    }
    const prev = this.#kinds.get(kind.name);
    if (prev !== undefined) {
      if (prev.kind === kind) return;
      throw new EngineerRegistrationError(
        `${what}: the name is already registered by ${prev.origin}; rename one`,
      );
    }
    this.#kinds.set(kind.name, { kind, origin });
    this.#version++;
  }

  /** The kind named `name`, if registered. */
  get(name: string): EngineerKind | undefined {
    return this.#kinds.get(name)?.kind;
  }

  /** Whether `name` is registered. */
  has(name: string): boolean {
    return this.#kinds.has(name);
  }

  /** Registered names, in registration order. */
  names(): string[] {
    return [...this.#kinds.keys()];
  }

  /** Registered kinds, in registration order. */
  list(): EngineerKind[] {
    return [...this.#kinds.values()].map((e) => e.kind);
  }

  /** Grows with each registration (for caches of schemas built from the registry). */
  get version(): number {
    return this.#version;
  }

  /**
   * Builds the engineer `name` from raw parameters (validated here).
   *
   * @throws {EngineerConfigError} for an unknown name or invalid parameters.
   */
  create(name: string, params: unknown, env: EngineerEnv): Engineer {
    const kind = this.get(name);
    if (kind === undefined) {
      throw new EngineerConfigError(
        `Unknown engineer "${name}"; use one of ${this.names().join(", ")}`,
      );
    }
    return createFromKind(kind, params, env);
  }
}

/**
 * The families `kind` supports: `"any"`, or their names
 * (`mapf-frozenlake` for a kind that declares none).
 */
export function engineerFamilies(
  kind: Pick<EngineerKind, "families">,
): "any" | readonly string[] {
  return kind.families ?? [DEFAULT_FAMILY];
}

/**
 * Why `kind` cannot redesign `family` with `params`, in one line, or
 * `null` when it can: a family it does not support, or parameters that do
 * not fit the family.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { engineer as rules } from "./rules.ts";
 * import { engineerFamilyProblem } from "./registry.ts";
 * assert.equal(engineerFamilyProblem(rules, {}, { name: "mapf-frozenlake" }), null);
 * assert.match(
 *   engineerFamilyProblem(rules, {}, { name: "maze" }) ?? "",
 *   /^the rules engineer supports family mapf-frozenlake only, not maze/,
 * );
 * ```
 */
export function engineerFamilyProblem(
  kind: EngineerKind,
  params: unknown,
  family: Pick<EnvironmentFamily, "name"> & Partial<EnvironmentFamily>,
): string | null {
  const supported = engineerFamilies(kind);
  if (supported !== "any" && !supported.includes(family.name)) {
    return `the ${kind.name} engineer supports family ${
      supported.join(", ")
    } only, not ${family.name}: choose an engineer that supports ${family.name} (./envsmith engineers lists them)`;
  }
  if (kind.checkFamily === undefined || family.dimensions === undefined) {
    return null;
  }
  const p = kind.checkFamily(params, family as EnvironmentFamily);
  return p === null ? null : `engineer ${kind.name} on ${family.name}: ${p}`;
}

/** Keys of an engineer's parameters that are required (parsing `{}` fails on them). */
export function requiredParams(kind: EngineerKind): string[] {
  const r = v.safeParse(kind.params, {});
  if (r.success) return [];
  return [...new Set(r.issues.map((i) => String(i.path?.[0]?.key ?? "?")))];
}

/**
 * Validates `params` against `kind`'s schema (defaults applied) and creates
 * the engineer.
 *
 * @throws {EngineerConfigError} naming each invalid or missing parameter.
 */
export function createFromKind(
  kind: EngineerKind,
  params: unknown,
  env: EngineerEnv,
): Engineer {
  const r = v.safeParse(kind.params, params ?? {});
  if (!r.success) {
    throw new EngineerConfigError(
      `engineer ${kind.name}: ${
        r.issues.map((i) => issueText(kind, i)).join("; ")
      }`,
    );
  }
  return kind.create(r.output, env);
}

/**
 * One line for a parameter issue: a missing parameter is named with its
 * description and how to give it.
 */
export function issueText(
  kind: EngineerKind,
  issue: v.BaseIssue<unknown>,
): string {
  const path = v.getDotPath(issue);
  const key = issue.path?.[0]?.key;
  if (
    issue.path?.length === 1 && issue.input === undefined &&
    typeof key === "string" && issue.kind === "schema"
  ) {
    const d = paramDescription(kind, key);
    return `missing ${key}${
      d === undefined ? "" : ` (${d})`
    }: write engineer: { name: ${kind.name}, ${key}: ... }`;
  }
  if (
    issue.path?.length === 1 && issue.expected === "never" &&
    typeof key === "string"
  ) {
    const known = Object.keys(kind.params.entries);
    return `unknown parameter "${key}" (the ${kind.name} engineer takes ${
      known.length === 0 ? "none" : known.join(", ")
    })`;
  }
  return path ? `${path}: ${issue.message}` : issue.message;
}
