/**
 * The `program.generate` node kind: instances of a family written as a
 * program (the program protocol, docs/environments.md).
 *
 * ```yaml
 * envs:  { kind: program.generate, with: { family: *lake, config: $prev.config, count: 64, seed: $seed, stream: $stage } }
 * bench: { kind: program.generate, with: { family: *lake, config: { preset: hard }, count: 100, seed: 900001, suite: hard } }
 * ```
 *
 * Parameters: `family` (how to run the program), `config` (a configuration
 * of the family's space, or `{ preset: NAME }`), `count`, `seed`, `stream`
 * (an independent stream under the same seed, e.g. `$stage`), `suite` (the
 * label tables group these instances by; default `train`).
 *
 * The node asks the program `describe`, checks the configuration against
 * the declared space, asks `generate` twice at once with the same seed and
 * refuses a generator that is not deterministic; the instances are checked
 * by the protocol (count, unique ids, the family's `instance_schema`).
 *
 * Value: `{ family, suite, count, config, seed, instances }`, `instances`
 * a JSON blob (the list). Report: the family's description and the
 * number of requests.
 *
 * @module
 */
import * as v from "valibot";
import type { Json, NodeKind } from "@envsmith/engine/kind";
import { canonicalJson } from "@envsmith/engine/hash";
import {
  type ProgramConfig,
  ProgramFamilyError,
} from "../families/program/protocol.ts";
import {
  FAMILY_DOC,
  familyClient,
  familyFingerprint,
  FamilyParam,
} from "./_program_family.ts";

const _Seed = v.pipe(
  v.number(),
  v.integer(),
  v.minValue(0),
  v.maxValue(0x7fffffff),
);

const _Params = v.strictObject({
  family: FamilyParam,
  config: v.union([
    v.strictObject({ preset: v.string() }),
    v.record(v.string(), v.unknown()),
  ]),
  count: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1_000_000)),
    64,
  ),
  seed: v.optional(_Seed, 0),
  stream: v.optional(_Seed),
  suite: v.optional(
    v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.-]+$/)),
    "train",
  ),
});

/** Parameters of `program.generate`. */
export type ProgramGenerateParams = v.InferOutput<typeof _Params>;

/** The generator seed of `stream` under `seed` (the seed itself without a stream). */
export function programSeed(seed: number, stream?: number): number {
  if (stream === undefined) return seed;
  return Number(
    (BigInt(seed) * 1_000_003n + BigInt(stream) + 1n) % 0x7fffffffn,
  );
}

/** The `program.generate` kind. */
export const kind: NodeKind<ProgramGenerateParams, Json> = {
  name: "program.generate",
  description:
    "Generate instances of a family written as a program (JSON on stdin/stdout), checked deterministic and against its own space",
  params: _Params as v.GenericSchema<unknown, ProgramGenerateParams>,
  paramDocs: {
    family: FAMILY_DOC,
    config:
      "a configuration of the family's declared space, or { preset: NAME }; e.g. the value of a redesign",
    count: "instances (default 64)",
    seed: "the generator seed (default 0)",
    stream:
      "an independent stream under the same seed, e.g. $stage (absent: the seed as it is)",
    suite: "the label tables group these instances by (default train)",
  },
  module: import.meta.url,
  fingerprint: familyFingerprint,
  async run(p, ctx) {
    const client = familyClient(p.family, ctx);
    const d = await client.describe();
    let config: ProgramConfig;
    if ("preset" in p.config && typeof p.config.preset === "string") {
      const preset = d.presets[p.config.preset];
      if (preset === undefined) {
        throw new ProgramFamilyError(
          `${client.label}: no preset ${p.config.preset}; the family declares ${
            Object.keys(d.presets).join(", ")
          }`,
        );
      }
      config = preset;
    } else config = p.config as ProgramConfig;
    const seed = programSeed(p.seed, p.stream);
    const [a, b] = await Promise.all([
      client.generate(config, seed, p.count),
      client.generate(config, seed, p.count),
    ]);
    if (canonicalJson(a) !== canonicalJson(b)) {
      const k = a.findIndex((x, i) => canonicalJson(x) !== canonicalJson(b[i]));
      throw new ProgramFamilyError(
        `${client.label} (generate): not deterministic: two requests with seed ${seed} gave different instances (first at index ${k}); draw every random number from a generator seeded by the request's seed`,
      );
    }
    const instances = await ctx.writeBlob(
      new TextEncoder().encode(JSON.stringify(a)),
      "application/json",
    );
    ctx.log(`${d.name}: ${a.length} instances (seed ${seed})`);
    return {
      value: {
        family: d.name,
        suite: p.suite,
        count: a.length,
        config: config as Json,
        seed,
        instances: { ...instances },
      },
      report: {
        family: d.name,
        description: d.description,
        requests: client.requests,
      },
    };
  },
};
