/**
 * The `generate` kind on a family other than MAPF-FrozenLake: checks at
 * plan (a known family, a configuration inside its space, suites it has, a
 * generator that gives the same instances twice for one seed) and the run
 * (the family's `generate`, or its suites), every instance checked by the
 * family before anything is stored.
 *
 * @module
 */
import * as v from "valibot";
import { UserError } from "@envsmith/engine/errors";
import { canonicalJson } from "@envsmith/engine/hash";
import type { Json, NodeContext } from "@envsmith/engine/kind";
import { DEFAULT_FAMILY, type EnvironmentFamily } from "../families/family.ts";
import type { FamilyRegistry } from "../families/registry.ts";
import { mix32 } from "../mapf/rng.ts";

/** The parameters this module reads (a subset of the generate kind's). */
interface _Params {
  readonly family?: string | undefined;
  readonly config?: unknown;
  readonly suites?: readonly string[] | undefined;
  readonly count?: number | undefined;
  readonly per_suite?: number | undefined;
  readonly seed?: number | undefined;
  readonly stream?: number | undefined;
}

/** Families whose generator passed the determinism check in this process. */
const _deterministic = new WeakSet<EnvironmentFamily>();

/**
 * Why `family`'s generator is not deterministic (two draws of `count`
 * instances with one seed differ), or `null`.
 */
export function determinismProblem(
  family: EnvironmentFamily,
  count = 3,
  seed = 1,
): string | null {
  const easy = family.presets.easy;
  const a = canonicalJson(family.generate(easy, seed, count) as Json);
  const b = canonicalJson(family.generate(easy, seed, count) as Json);
  if (a === b) return null;
  return `family ${family.name}: its generator is not deterministic (two draws of ${count} instances with seed ${seed} differ); derive every random draw from the seed argument (no Math.random, no clock)`;
}

/** Why `config` is outside `family`'s space, in one line, or `null`. */
export function configProblem(
  family: EnvironmentFamily,
  config: unknown,
  where = "config",
): string | null {
  const r = v.safeParse(family.schema, config);
  if (r.success) return null;
  const i = r.issues[0]!;
  const path = v.getDotPath(i);
  return `family ${family.name}: ${where}${
    path ? `.${path}` : ""
  } is outside the family's space: ${i.message}; write a configuration of ${family.name} (./envsmith families lists its dimensions)`;
}

/**
 * The family a generate node's literal parameters name, checked for plan
 * (`undefined` for MAPF-FrozenLake, the default, whose checks are the
 * parameter schema's).
 *
 * @throws {UserError} for an unknown family, a family named by a
 * reference, a config outside its space, suites it does not have, or a
 * generator that is not deterministic.
 */
export function familyFingerprint(
  families: FamilyRegistry | undefined,
  literal: unknown,
): EnvironmentFamily | undefined {
  const p = (literal ?? {}) as _Params;
  const name = p.family ?? DEFAULT_FAMILY;
  if (typeof name !== "string" || name.startsWith("$")) {
    throw new UserError(
      "family must be written literally (a family name), not a reference: its code is part of the key",
    );
  }
  if (name === DEFAULT_FAMILY) return undefined;
  let family: EnvironmentFamily;
  try {
    if (families === undefined) {
      throw new Error(
        `unknown family "${name}"; known families: ${DEFAULT_FAMILY}`,
      );
    }
    family = families.lookup(name, "family");
  } catch (e) {
    throw new UserError((e as Error).message);
  }
  const literalConfig = typeof p.config === "string" && p.config.startsWith("$")
    ? undefined
    : p.config;
  if (literalConfig !== undefined && !_hasRefs(literalConfig)) {
    const problem = configProblem(family, literalConfig);
    if (problem !== null) throw new UserError(problem);
  }
  for (const s of Array.isArray(p.suites) ? p.suites : []) {
    if (typeof s === "string" && !s.startsWith("$") && !(s in family.suites)) {
      throw new UserError(
        `family ${family.name} has no suite "${s}"; its suites: ${
          Object.keys(family.suites).join(", ") || "(none)"
        }`,
      );
    }
  }
  if (!_deterministic.has(family)) {
    const problem = determinismProblem(family);
    if (problem !== null) throw new UserError(problem);
    _deterministic.add(family);
  }
  return family;
}

function _hasRefs(x: unknown): boolean {
  if (typeof x === "string") return x.startsWith("$");
  if (Array.isArray(x)) return x.some(_hasRefs);
  if (x !== null && typeof x === "object") {
    return Object.values(x).some(_hasRefs);
  }
  return false;
}

/** The generator seed of stream `stream` under `seed` (as MAPF-FrozenLake's). */
function _seed(seed: number, stream?: number): number {
  if (stream === undefined) return seed;
  return mix32(mix32(seed) ^ mix32(stream + 0x9e3779b9)) & 0x7fffffff;
}

/**
 * Runs a generate node on another family: the instances (each checked by
 * the family; a malformed one fails the node, so nothing is cached) as
 * JSON, with the configuration or the suites they came from.
 */
export async function runFamilyGenerate(
  families: FamilyRegistry | undefined,
  p: _Params,
  ctx: Pick<NodeContext, "log">,
): Promise<{ value: Json; report: Json }> {
  const family = familyFingerprint(families, p)!;
  const seed = _seed(p.seed ?? 0, p.stream);
  const instances: unknown[] = [];
  let config: unknown = null;
  if (p.suites !== undefined) {
    for (const name of p.suites) {
      instances.push(...family.suites[name]!.instances(p.per_suite));
    }
  } else {
    const parsed = v.safeParse(family.schema, p.config);
    if (!parsed.success) throw new UserError(configProblem(family, p.config)!);
    config = parsed.output;
    instances.push(...family.generate(parsed.output, seed, p.count ?? 256));
  }
  for (const [i, inst] of instances.entries()) {
    const why = family.check(inst);
    if (why !== undefined) {
      throw new TypeError(
        `family ${family.name}: instance ${i} of the generator is malformed (${why}); fix the family's generate so every instance passes its check`,
      );
    }
  }
  ctx.log(`${instances.length} instances of ${family.name}`);
  await Promise.resolve();
  return {
    value: {
      family: family.name,
      instances: instances as Json,
      count: instances.length,
      ...(p.suites === undefined
        ? { config: config as Json }
        : { suites: [...p.suites] }),
    },
    report: { family: family.name, count: instances.length },
  };
}
