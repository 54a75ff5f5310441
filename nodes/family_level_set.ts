/**
 * Level sets on a family other than MAPF-FrozenLake: what `plr-stage` and
 * `accel-stage` hand the next stage there, and how that stage's generate
 * node (`maze.generate`) draws its training instances from it.
 *
 * ```json
 * { "level_set": {
 *     "version": 1,
 *     "family": "maze",
 *     "source": <a configuration of the family: where new levels come from>,
 *     "instances": { "$blob": "<sha256>", "size": 1234, "media": "application/x-ndjson" },
 *     "levels": [{ "id", "score", "seen", "origin", "success", "parent", "replay" }, ...] } }
 * ```
 *
 * The shape is MAPF-FrozenLake's (`level_set.ts`) plus `family`; the
 * instances are the family's JSON lines (`familyInstanceLines`), each
 * checked by the family when read back, and a level's `id` is the family's
 * `instanceId`.
 *
 * @module
 */
import type { BlobRef, Json } from "@envsmith/engine/kind";
import {
  type EnvironmentFamily,
  familyInstanceLines,
  parseFamilyInstanceLines,
} from "../families/family.ts";
import { Rng } from "../mapf/rng.ts";
import type { Level, LevelOrigin } from "../engineer/levels.ts";

/** Media type of a family level set's instance blob. */
export const FAMILY_LEVELS_MEDIA = "application/x-ndjson";

/** A level of a family (the instance is the family's). */
export type FamilyLevel = Omit<Level, "instance"> & { instance: unknown };

/** A family's level set, read back. */
export interface FamilyLevelSet {
  /** The family's name. */
  readonly family: string;
  /** The levels with their instances. */
  readonly levels: FamilyLevel[];
  /** Replay probability of each level. */
  readonly replay: number[];
  /** Where new levels come from (a configuration of the family). */
  readonly source: unknown;
}

/** A level set value's fields as stored. */
interface _Stored {
  level_set: {
    version: number;
    family?: string;
    source: unknown;
    instances: unknown;
    levels: {
      id: string;
      score: number;
      seen: number;
      origin: LevelOrigin;
      success: number | null;
      parent: string | null;
      replay: number;
    }[];
  };
}

/** Store a buffer of `family` and build the level set value. */
export async function writeFamilyLevelSet(
  family: EnvironmentFamily,
  set: {
    readonly levels: readonly FamilyLevel[];
    readonly replay: readonly number[];
    readonly source: unknown;
  },
  writeBlob: (bytes: Uint8Array, media: string) => Promise<BlobRef>,
): Promise<Json> {
  const bytes = new TextEncoder().encode(
    familyInstanceLines(family, set.levels.map((l) => l.instance)),
  );
  const ref = await writeBlob(bytes, FAMILY_LEVELS_MEDIA);
  const r = (x: number) => Math.round(x * 1e6) / 1e6;
  return {
    level_set: {
      version: 1,
      family: family.name,
      source: set.source as Json,
      instances: { $blob: ref.$blob, size: ref.size, media: ref.media },
      levels: set.levels.map((l, i) => ({
        id: l.id,
        score: r(l.score),
        seen: l.seen,
        origin: l.origin,
        success: l.success === null ? null : r(l.success),
        parent: l.parent,
        replay: r(set.replay[i]!),
      })),
    },
  };
}

/**
 * Read a level set of `family` back: every instance checked by the family,
 * every id its `instanceId`.
 *
 * @throws {TypeError} for a level set of another family, a count or id
 * that does not match, or an instance the family's check refuses.
 */
export async function readFamilyLevelSet(
  family: EnvironmentFamily,
  value: unknown,
  readBlob: (ref: BlobRef) => Promise<Uint8Array>,
): Promise<FamilyLevelSet> {
  const ls = (value as _Stored).level_set;
  if (ls?.family !== family.name) {
    throw new TypeError(
      `config: a level set of family ${
        ls?.family ?? "mapf-frozenlake"
      }, but the node's family is ${family.name}; give this family's redesign ($prev.config)`,
    );
  }
  const ref = ls.instances as BlobRef;
  const instances = parseFamilyInstanceLines(
    family,
    new TextDecoder().decode(await readBlob(ref)),
  );
  if (instances.length !== ls.levels.length) {
    throw new TypeError(
      `level_set has ${ls.levels.length} levels but ${instances.length} instances`,
    );
  }
  const levels: FamilyLevel[] = ls.levels.map((l, i) => {
    const instance = instances[i]!;
    const why = family.check(instance);
    if (why !== undefined) {
      throw new TypeError(
        `level_set.levels.${i} (${l.id}): the instance is malformed for family ${family.name} (${why})`,
      );
    }
    const id = family.instanceId(instance);
    if (id !== l.id) {
      throw new TypeError(
        `level_set.levels.${i}: id ${l.id} does not match its instance ${id}`,
      );
    }
    return {
      id: l.id,
      instance,
      score: l.score,
      seen: l.seen,
      origin: l.origin,
      success: l.success,
      parent: l.parent,
    };
  });
  return {
    family: family.name,
    levels,
    replay: ls.levels.map((l) => l.replay),
    source: ls.source,
  };
}

/**
 * Draw `count` instances from levels by their replay probabilities, with
 * replacement (inverse CDF on a seeded generator, as MAPF-FrozenLake's
 * `drawLevels`): what a stage trains on.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { drawFamilyLevels } from "./family_level_set.ts";
 * const lv = (id: string) => ({ id, instance: id, score: 0, seen: 0, origin: "new" as const, success: null, parent: null });
 * const got = drawFamilyLevels([lv("a"), lv("b")], [0, 1], 3, 1);
 * assert.deepEqual(got, ["b", "b", "b"]);
 * ```
 */
export function drawFamilyLevels(
  levels: readonly FamilyLevel[],
  replay: readonly number[],
  count: number,
  seed: number,
): unknown[] {
  if (levels.length === 0) {
    throw new RangeError("the level set is empty: nothing to replay");
  }
  const cdf: number[] = [];
  let acc = 0;
  for (const p of replay) cdf.push(acc += p);
  const rng = new Rng(seed, 0x1e7e15e7);
  const out: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const u = rng.float() * acc;
    let lo = 0, hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! > u) hi = mid;
      else lo = mid + 1;
    }
    out.push(levels[lo]!.instance);
  }
  return out;
}

/**
 * The instances of a generate node's value on `family`: an inline list
 * (`generate` with `family:`), or a blob of the family's JSON lines under
 * `instances` or `mazes` (`maze.generate`).
 *
 * @throws {TypeError} when the value holds neither.
 */
export async function readFamilyInstances(
  family: EnvironmentFamily,
  value: unknown,
  readBlob: (ref: BlobRef) => Promise<Uint8Array>,
): Promise<unknown[]> {
  const o = (value ?? {}) as Record<string, unknown>;
  if (Array.isArray(o.instances)) return o.instances;
  const ref = (o.instances ?? o.mazes) as BlobRef | undefined;
  if (typeof ref !== "object" || ref === null || !("$blob" in ref)) {
    throw new TypeError(
      `envs: expected this stage's generate node on family ${family.name} (its instances), got ${
        JSON.stringify(value)?.slice(0, 80)
      }`,
    );
  }
  return parseFamilyInstanceLines(
    family,
    new TextDecoder().decode(await readBlob(ref)),
  );
}
