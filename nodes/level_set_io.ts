/**
 * Storing, reading and replaying level sets (the shape is `level_set.ts`):
 * what the `plr` and `accel` engineer kinds write and `generate` draws a
 * stage's training instances from.
 *
 * @module
 */
import type { BlobRef, Json } from "@envsmith/engine/kind";
import { isBlobRef } from "./_values.ts";
import {
  type Instance,
  instancesToJsonLines,
  parseInstanceLines,
} from "../mapf/instance.ts";
import { Rng } from "../mapf/rng.ts";
import type { Level, LevelSetProposal } from "../engineer/levels.ts";
import { type AnyEnvConfig, parseEnvConfig } from "../schemas/env_config.ts";
import type { LevelSetValue } from "./level_set.ts";

/** Media type of level-set instance blobs. */
export const LEVELS_MEDIA = "application/x-ndjson";

/** Store a proposal's buffer and build the level set value. */
export async function writeLevelSet(
  proposal: LevelSetProposal,
  writeBlob: (bytes: Uint8Array, media: string) => Promise<BlobRef>,
): Promise<Json> {
  const bytes = new TextEncoder().encode(
    instancesToJsonLines(proposal.levels.map((l) => l.instance)),
  );
  const ref = await writeBlob(bytes, LEVELS_MEDIA);
  const r = (x: number) => Math.round(x * 1e6) / 1e6;
  return {
    level_set: {
      version: 1,
      source: proposal.source as unknown as Json,
      instances: { $blob: ref.$blob, size: ref.size, media: ref.media },
      levels: proposal.levels.map((l, i) => ({
        id: l.id,
        score: r(l.score),
        seen: l.seen,
        origin: l.origin,
        success: l.success === null ? null : r(l.success),
        parent: l.parent,
        replay: r(proposal.replay[i]!),
      })),
    },
  };
}

/** Read a level set's buffer back (levels with their instances, and `replay`). */
export async function readLevelSet(
  value: LevelSetValue,
  readBlob: (ref: BlobRef) => Promise<Uint8Array>,
): Promise<{ levels: Level[]; replay: number[]; source: AnyEnvConfig }> {
  const ls = value.level_set;
  const ref = ls.instances;
  const instances: Instance[] = isBlobRef(ref)
    ? parseInstanceLines(new TextDecoder().decode(await readBlob(ref)))
    : Array.isArray(ref)
    ? parseInstanceLines(ref.map((i) => JSON.stringify(i)).join("\n"))
    : (() => {
      throw new TypeError(
        "level_set.instances must be a blob of JSON lines or a list of instances",
      );
    })();
  if (instances.length !== ls.levels.length) {
    throw new TypeError(
      `level_set has ${ls.levels.length} levels but ${instances.length} instances`,
    );
  }
  const levels: Level[] = ls.levels.map((l, i) => {
    if (instances[i]!.id !== l.id) {
      throw new TypeError(
        `level_set.levels.${i}: id ${l.id} does not match its instance ${
          instances[i]!.id
        }`,
      );
    }
    return {
      id: l.id,
      instance: instances[i]!,
      score: l.score,
      seen: l.seen,
      origin: l.origin,
      success: l.success,
      parent: l.parent,
    };
  });
  return {
    levels,
    replay: ls.levels.map((l) => l.replay),
    source: parseEnvConfig(ls.source),
  };
}

/**
 * Draw `count` instances from levels by their replay probabilities, with
 * replacement (inverse-CDF on a seeded generator): what a stage trains on.
 */
export function drawLevels(
  levels: readonly Level[],
  replay: readonly number[],
  count: number,
  seed: number,
): Instance[] {
  if (levels.length === 0) {
    throw new RangeError("the level set is empty: nothing to replay");
  }
  const cdf: number[] = [];
  let acc = 0;
  for (const p of replay) cdf.push(acc += p);
  const rng = new Rng(seed, 0x1e7e15e7);
  const out: Instance[] = [];
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
