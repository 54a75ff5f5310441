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
 * At `plan` (and `run`, before anything runs) the program is asked to
 * describe itself; a literal configuration outside its space, an unknown
 * preset, and a generator that gives other instances for the same literal
 * seed (its first 4, asked twice) refuse the experiment in one line. When
 * the node runs it asks `generate` twice at once with the same seed and
 * fails (caching nothing) when the two differ; the instances are checked
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
  type FamilyDescription,
  ProgramClient,
  type ProgramConfig,
  ProgramFamilyError,
  ProgramSpecSchema,
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

/** Programs already described in this process (plan asks once per program). */
const _described = new Map<string, FamilyDescription>();

/** Whether `x` holds a reference (`$...`), i.e. is known only at run time. */
function _hasRef(x: unknown): boolean {
  if (typeof x === "string") return x.startsWith("$");
  if (Array.isArray(x)) return x.some(_hasRef);
  if (x !== null && typeof x === "object") {
    return Object.values(x).some(_hasRef);
  }
  return false;
}

/**
 * The plan-time check of a `program.generate` node: the program describes
 * itself, a literal configuration (or preset) lies in its space, and a
 * literal seed gives the same first instances twice. One line naming the
 * family program and the fix, or null.
 */
export function programGenerateProblem(
  params: unknown,
  baseDir: string,
): string | null {
  const p = params as Record<string, unknown> | null;
  const spec = v.safeParse(ProgramSpecSchema, p?.family);
  if (!spec.success || p === null || _hasRef(p.family)) return null;
  const client = new ProgramClient(spec.output, { baseDir });
  try {
    const memo = `${baseDir}\0${canonicalJson(spec.output)}`;
    const d = _described.get(memo) ?? client.describeSync();
    _described.set(memo, d);
    if (_hasRef(p.config) || p.config === undefined) return null;
    const config = _resolveConfig(p.config as ProgramConfig, d, client.label);
    client.checkConfig(config, d);
    if (_hasRef(p.seed) || _hasRef(p.stream)) return null;
    const seed = programSeed(
      typeof p.seed === "number" ? p.seed : 0,
      typeof p.stream === "number" ? p.stream : undefined,
    );
    const n = Math.min(typeof p.count === "number" ? p.count : 64, 4);
    const a = client.generateSync(config, seed, n);
    const b = client.generateSync(config, seed, n);
    if (canonicalJson(a) !== canonicalJson(b)) {
      return _notDeterministic(client.label, seed, a, b);
    }
    return null;
  } catch (e) {
    if (e instanceof ProgramFamilyError) return e.message;
    throw e;
  }
}

function _notDeterministic(
  label: string,
  seed: number,
  a: readonly unknown[],
  b: readonly unknown[],
): string {
  const k = a.findIndex((x, i) => canonicalJson(x) !== canonicalJson(b[i]));
  return `${label} (generate): not deterministic: two requests with seed ${seed} gave different instances (first at index ${k}); draw every random number from a generator seeded by the request's seed`;
}

function _resolveConfig(
  config: ProgramConfig,
  d: FamilyDescription,
  label: string,
): ProgramConfig {
  if (typeof config.preset !== "string" || Object.keys(config).length !== 1) {
    return config;
  }
  const preset = d.presets[config.preset];
  if (preset === undefined) {
    throw new ProgramFamilyError(
      `${label}: no preset ${config.preset}; the family declares ${
        Object.keys(d.presets).join(", ")
      }`,
    );
  }
  return preset;
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
  ready: (params, info) => programGenerateProblem(params, info.baseDir),
  async run(p, ctx) {
    const client = familyClient(p.family, ctx);
    const d = await client.describe();
    const config = _resolveConfig(p.config as ProgramConfig, d, client.label);
    const seed = programSeed(p.seed, p.stream);
    const [a, b] = await Promise.all([
      client.generate(config, seed, p.count),
      client.generate(config, seed, p.count),
    ]);
    if (canonicalJson(a) !== canonicalJson(b)) {
      throw new ProgramFamilyError(_notDeterministic(client.label, seed, a, b));
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
