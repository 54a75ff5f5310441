/**
 * The level set: how an instance-level engineer (`plr`, `accel`) hands its
 * level buffer to the next stage. It is the `redesign` node's value for
 * those engineers, and `generate` accepts it as its `config`:
 *
 * ```json
 * { "level_set": {
 *     "version": 1,
 *     "source": <the configuration new levels are drawn from>,
 *     "instances": { "$blob": "<sha256>", "size": 1234, "media": "application/x-ndjson" },
 *     "levels": [{ "id", "score", "seen", "origin", "success", "parent", "replay" }, ...] } }
 * ```
 *
 * `instances` holds the buffer's instances (JSON lines, in the order of
 * `levels`); `replay` is each level's replay probability. `generate` with a
 * level set draws its `count` training instances from the buffer by
 * `replay` (with replacement, seeded by `seed` and `stream`). Its value has
 * no `config` (the levels come from many stages' configurations, so a
 * breakdown by the components of one would misattribute them; `diagnose`
 * then reads each instance as it is) and carries `source` as
 * `level_source`.
 *
 * This file is the value's shape (what every redesign accepts as `config`);
 * `level_set_io.ts` stores, reads and draws from it.
 *
 * @module
 */
import * as v from "valibot";
import {
  type AnyEnvConfig,
  EnvConfigSpecSchema,
  parseEnvConfig,
} from "../schemas/env_config.ts";

/** Schema of a level set value. */
export const LevelSetSchema = v.strictObject({
  level_set: v.strictObject({
    version: v.literal(1, "level_set.version must be 1"),
    source: EnvConfigSpecSchema,
    instances: v.unknown(),
    levels: v.array(
      v.strictObject({
        id: v.string(),
        score: v.number(),
        seen: v.pipe(v.number(), v.integer()),
        origin: v.picklist(["start", "new", "edit"]),
        success: v.nullable(v.number()),
        parent: v.nullable(v.string()),
        replay: v.pipe(v.number(), v.minValue(0)),
      }),
    ),
  }),
});

/** A level set value. */
export type LevelSetValue = v.InferOutput<typeof LevelSetSchema>;

/** Whether a value is a level set (has a `level_set` key). */
export function isLevelSet(x: unknown): x is LevelSetValue {
  return typeof x === "object" && x !== null && !Array.isArray(x) &&
    "level_set" in x;
}

/**
 * A schema for `config` parameters that also accept a level set: the level
 * set branch for an object with `level_set`, the configuration schema
 * otherwise (so errors come from the branch the author meant).
 */
export const ConfigOrLevelSetSchema: v.GenericSchema<
  unknown,
  unknown
> = v.lazy((input) =>
  isLevelSet(input) ? LevelSetSchema : EnvConfigSpecSchema
) as unknown as v.GenericSchema<unknown, unknown>;

/** The configuration a config-or-level-set value stands for (a level set's `source`). */
export function configOf(x: unknown): AnyEnvConfig {
  return parseEnvConfig(isLevelSet(x) ? x.level_set.source : x);
}
