/**
 * The `generate` node kind: MAPF-FrozenLake instances from a configuration
 * or from named benchmark suites.
 *
 * ```yaml
 * envs:  { kind: generate, with: { config: $prev.config, count: 512, seed: 3 } }
 * bench: { kind: generate, with: { suites: [base, crowded, corridors], split: test, per_suite: 200 } }
 * ```
 *
 * Parameters (exactly one of `config` and `suites`):
 * - `config`: a configuration in input form (a preset reference with
 *   overrides, a full component, or a mixture; see schemas/env_config.ts),
 *   e.g. the value of a `redesign` node; with `count` (default 256). A
 *   level set (the value of a `plr` or `accel` redesign, see level_set.ts)
 *   is accepted too: the `count` instances are then drawn from its buffer by
 *   its replay probabilities (seeded by `seed` and `stream`), not generated.
 * - `suites`: suite names (see mapf/suites.ts); with `split` (required:
 *   `validation` for anything designed or tuned, `test` for reported
 *   results; disjoint seed spaces) and `per_suite` (default: each suite's
 *   own count). Suite instances come from the suite seed space, disjoint
 *   from any training seed. A grid suite (`paper-grid`, the paper's 21
 *   cells of agents x map size) is drawn cell by cell: `per_cell`
 *   instances a cell (default 150), ids like `3ag_3x3_hr0.1_000`, exact
 *   optima as references; `per_suite` applies to the other suites.
 * - `stream` (optional, `0..2^31-1`): an independent stream of instances
 *   under the same `seed`, e.g. `stream: $stage`, so the stages of one run
 *   (and a `fixed` engineer's repeated config) draw fresh instances while
 *   runs stay paired by `seed`. Absent, the seed is used as it is.
 * - `seed` (default 0, `0..2^31-1`), `max_attempts` (draws per instance,
 *   default 100).
 *
 * Value: `{ instances, count, config?, suites?, summary }` where `instances`
 * is a blob of JSON lines (`application/x-ndjson`, one instance per line)
 * when the JSON exceeds 64 KiB, otherwise the list itself (read either with
 * {@linkcode loadGenerated}); `config` is the resolved configuration (config
 * runs); `suites` maps suite names to their configurations (suite runs);
 * `summary` has accepted/attempted draws and mean reference cost. A draw
 * from a level set has no `config`; it names the set's `level_source`.
 * Report: the full generation report(s), with rejection counts per reason
 * and per mixture component (per suite for suite runs).
 *
 * An invalid config fails before anything runs (the parameter schema); a
 * config that cannot produce instances fails the node with the generator's
 * explanation.
 *
 * @module
 */
import * as v from "valibot";
import type {
  BlobRef,
  Json,
  NodeContext,
  NodeKind,
} from "@envsmith/engine/kind";
import { isBlobRef } from "./_values.ts";
import {
  generate,
  type GenerationReport,
  SUITE_SPLITS,
} from "../mapf/generator.ts";
import {
  type Instance,
  instancesToJsonLines,
  parseInstanceLines,
} from "../mapf/instance.ts";
import { mix32 } from "../mapf/rng.ts";
import {
  generateSuite,
  getSuite,
  SUITE_NAMES,
  SUITES,
} from "../mapf/suites.ts";
import { DEFAULT_FAMILY } from "../families/family.ts";
import type { FamilyRegistry } from "../families/registry.ts";

/** The origin of the families built into envsmith. */
const BUILT_IN = "envsmith (built in)";
import { familyFingerprint, runFamilyGenerate } from "./generate_family.ts";
import { parseEnvConfig } from "../schemas/env_config.ts";
import { ConfigOrLevelSetSchema, isLevelSet } from "./level_set.ts";
import { drawLevels, readLevelSet } from "./level_set_io.ts";

/** Media type of instance blobs. */
export const INSTANCES_MEDIA = "application/x-ndjson";
/** Above this JSON size the instances go to a blob. */
export const INLINE_LIMIT = 64 * 1024;

const _int = (name: string, min: number, max: number) =>
  v.pipe(
    v.number(`${name} must be an integer in ${min}..${max}`),
    v.integer(`${name} must be an integer in ${min}..${max}`),
    v.minValue(min, `${name} must be at least ${min}`),
    v.maxValue(max, `${name} must be at most ${max}`),
  );

function _isDefault(family: string | undefined): boolean {
  return family === undefined || family === DEFAULT_FAMILY;
}

function _item(input: unknown, key: string | number) {
  return {
    type: typeof key === "number" ? "array" : "object",
    origin: "value",
    input,
    key,
    value: (input as Record<string | number, unknown>)[key],
  };
}

/** Parameters of the generate kind. */
export const GenerateParamsSchema = v.pipe(
  v.strictObject({
    /**
     * Configuration (input form), or a level set (see level_set.ts); another
     * family's configuration is checked against that family's space.
     */
    config: v.optional(
      v.union([
        ConfigOrLevelSetSchema,
        v.record(v.string(), v.unknown()),
      ], "config must be a mapping (a configuration of the node's family)"),
    ),
    /** Suite names (another family's suites with `family`). */
    suites: v.optional(
      v.pipe(
        v.array(v.string("suites must name suites")),
        v.minLength(1, "suites must name at least one suite"),
      ),
    ),
    /** The environment family (default mapf-frozenlake). */
    family: v.optional(v.string()),
    /** Suite split (with `suites`). */
    split: v.optional(
      v.picklist(
        SUITE_SPLITS,
        "split must be `validation` or `validation-2` (designing, tuning) or `test` (reported results)",
      ),
    ),
    /** Instances of a config run. */
    count: v.optional(_int("count", 1, 1_000_000)),
    /** Instances per suite. */
    per_suite: v.optional(_int("per_suite", 1, 100_000)),
    /** Instances per cell of a grid suite. */
    per_cell: v.optional(_int("per_cell", 1, 100_000)),
    /** Seed. */
    seed: v.optional(_int("seed", 0, 0x7fffffff)),
    /** Independent instance stream under the same seed. */
    stream: v.optional(_int("stream", 0, 0x7fffffff)),
    /** Draws per instance before giving up. */
    max_attempts: v.optional(_int("max_attempts", 1, 100_000)),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    // MAPF-FrozenLake's own space; another family's is checked at plan
    if (!dataset.typed || !_isDefault(dataset.value.family)) return;
    const p = dataset.value;
    for (const [i, n] of (p.suites ?? []).entries()) {
      if (!SUITE_NAMES.includes(n)) {
        addIssue({
          message: `suites must name known suites: ${SUITE_NAMES.join(", ")}`,
          path: [_item(p, "suites"), _item(p.suites!, i)] as never,
        });
      }
    }
    if (p.config === undefined) return;
    const r = v.safeParse(ConfigOrLevelSetSchema, p.config);
    if (r.success) return;
    for (const i of r.issues) {
      addIssue({
        message: i.message,
        path: [_item(p, "config"), ...(i.path ?? [])] as never,
      });
    }
  }),
  v.check(
    (p) => (p.config === undefined) !== (p.suites === undefined),
    "give exactly one of `config` (with `count`) and `suites` (with `per_suite`)",
  ),
  v.check(
    (p) => p.suites === undefined || p.split !== undefined,
    "`suites` need a `split`: `test` for reported results, `validation` for designing and tuning (disjoint instances)",
  ),
  v.check(
    (p) => p.config === undefined || p.split === undefined,
    "`split` goes with `suites`; a `config` run draws training instances",
  ),
  v.check(
    (p) => p.suites === undefined || p.count === undefined,
    "`count` goes with `config`; use `per_suite` with `suites`",
  ),
  v.check(
    (p) => p.config === undefined || p.per_suite === undefined,
    "`per_suite` goes with `suites`; use `count` with `config`",
  ),
  v.check(
    (p) =>
      p.per_cell === undefined || !_isDefault(p.family) ||
      (p.suites ?? []).some((n) => SUITES[n]?.cells !== undefined),
    "`per_cell` goes with a grid suite (paper-grid) in `suites`",
  ),
  v.check(
    (p) =>
      p.per_suite === undefined || !_isDefault(p.family) ||
      (p.suites ?? []).some((n) => SUITES[n] && SUITES[n].cells === undefined),
    "a grid suite (paper-grid) is drawn per cell: use `per_cell`, not `per_suite`",
  ),
);

/** Resolved parameters. */
export type GenerateParams = v.InferOutput<typeof GenerateParamsSchema>;

/** What a generate run produced (before storing). */
export interface Generated {
  /** All instances, suites in the order given. */
  readonly instances: Instance[];
  /** One report per config run or suite. */
  readonly reports: GenerationReport[];
}

/**
 * The generator seed of stream `stream` under `seed`: the seed itself without
 * a stream, otherwise a 31-bit mix of both (distinct streams, distinct seeds).
 */
export function streamSeed(seed: number, stream?: number): number {
  if (stream === undefined) return seed;
  return mix32(mix32(seed) ^ mix32(stream + 0x9e3779b9)) & 0x7fffffff;
}

/** Run the generator as the node would (no engine needed; used by tests and the CLI). */
export function runGenerate(
  p: GenerateParams,
  options: {
    signal?: AbortSignal;
    onProgress?: (done: number, total: number) => void;
  } = {},
): Generated {
  const seed = streamSeed(p.seed ?? 0, p.stream);
  const maxAttempts = p.max_attempts ?? 100;
  const instances: Instance[] = [];
  const reports: GenerationReport[] = [];
  if (p.suites) {
    const countOf = (n: string) => {
      const suite = getSuite(n);
      return suite.cells
        ? (p.per_cell ?? suite.count) * suite.cells.length
        : p.per_suite ?? suite.count;
    };
    const total = p.suites.reduce((s, n) => s + countOf(n), 0);
    let before = 0;
    for (const name of p.suites) {
      const suite = getSuite(name);
      const r = generateSuite(name, {
        count: suite.cells ? p.per_cell ?? suite.count : p.per_suite ??
          suite.count,
        seed,
        split: p.split ?? "validation",
        maxAttempts,
        ...(options.signal ? { signal: options.signal } : {}),
        onProgress: (d) => options.onProgress?.(before + d, total),
      });
      before += countOf(name);
      instances.push(...r.instances);
      reports.push(r.report);
    }
  } else {
    const r = generate(parseEnvConfig(p.config), {
      count: p.count ?? 256,
      seed,
      maxAttempts,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
    instances.push(...r.instances);
    reports.push(r.report);
  }
  return { instances, reports };
}

/**
 * The instances of a generate node's value (or of a bare list or blob of
 * JSON lines), validated.
 */
export async function loadGenerated(
  value: unknown,
  readBlob: (ref: BlobRef) => Promise<Uint8Array>,
): Promise<Instance[]> {
  const x =
    typeof value === "object" && value !== null && !Array.isArray(value) &&
      "instances" in value
      ? (value as { instances: unknown }).instances
      : value;
  if (Array.isArray(x)) {
    return parseInstanceLines(x.map((i) => JSON.stringify(i)).join("\n"));
  }
  if (isBlobRef(x)) {
    return parseInstanceLines(new TextDecoder().decode(await readBlob(x)));
  }
  throw new TypeError(
    "expected a generate node's value ({ instances: ... }), a blob of JSON lines, or a list of instances",
  );
}

/** One line per parameter, for editors (the JSON Schema's descriptions). */
export const GENERATE_PARAM_DOCS: Readonly<Record<string, string>> = {
  config:
    "the configuration to draw instances from (a preset, fields over a preset, or a weighted mixture); give it with count, or suites with per_suite",
  suites:
    "named benchmark suites to draw (base, crowded, holey, slippery, large, corridors, crossing, tight, mini, paper-grid); needs split, and per_suite or per_cell",
  split:
    "which seed space of the suites: test (reported results) or validation (designing and tuning); disjoint instances",
  count: "how many instances to draw from config",
  per_suite: "how many instances to draw per suite",
  family:
    "the environment family (default mapf-frozenlake; ./envsmith families lists them); its config and suites",
  per_cell:
    "how many instances to draw per cell of a grid suite (paper-grid; default 150)",
  seed: "seed of the draws (default: the node's seed)",
  stream:
    "an independent stream of instances under the same seed (e.g. $stage, so each stage trains on new instances)",
  max_attempts:
    "draws per instance before giving up when draws are unsolvable within the horizon",
};

/** A stage's training set drawn from a level set's buffer. */
async function _replayLevels(p: GenerateParams, ctx: NodeContext) {
  const set = await readLevelSet(
    p.config as Parameters<typeof readLevelSet>[0],
    ctx.readBlob,
  );
  const count = p.count ?? 256;
  const instances = drawLevels(
    set.levels,
    set.replay,
    count,
    streamSeed(p.seed ?? 0, p.stream),
  );
  const lines = instancesToJsonLines(instances);
  const ref = await ctx.writeBlob(
    new TextEncoder().encode(lines),
    INSTANCES_MEDIA,
  );
  const distinct = new Set(instances.map((i) => i.id)).size;
  const origins: Record<string, number> = { start: 0, new: 0, edit: 0 };
  const byId = new Map(set.levels.map((l) => [l.id, l]));
  for (const i of instances) origins[byId.get(i.id)!.origin]!++;
  ctx.log(
    `${count} instances replayed from a buffer of ${set.levels.length} levels (${distinct} distinct)`,
  );
  return {
    value: {
      instances: { $blob: ref.$blob, size: ref.size, media: ref.media },
      count,
      // no `config`: the levels come from many stages' configurations
      level_source: set.source as unknown as Json,
      summary: { count, distinct, buffer: set.levels.length, origins },
    },
    report: { replay: { count, distinct, buffer: set.levels.length, origins } },
  };
}

/**
 * The generate kind over `families` (without one: MAPF-FrozenLake only).
 * A node naming another `family` keys that family's code (its module
 * graph), is checked at plan (a known family, a config inside its space,
 * a generator that gives the same instances twice for one seed) and draws
 * through the family's `generate` and suites.
 */
export function generateKind(
  families?: FamilyRegistry,
): NodeKind<GenerateParams> {
  return {
    ...kind,
    // A worker imports this module and knows the built-in families only:
    // with a plugin's family registered, generation stays in this process.
    get heavy() {
      return families === undefined ||
        families.names().every((n) => families.origin(n) === BUILT_IN);
    },
    codeModules(literal) {
      const f = familyFingerprint(families, literal);
      return f === undefined ? [] : [f.module];
    },
    fingerprint(literal) {
      familyFingerprint(families, literal);
      return null;
    },
    async run(p: GenerateParams, ctx: NodeContext) {
      if (_isDefault(p.family)) return await kind.run(p, ctx);
      return await runFamilyGenerate(families, p, ctx);
    },
  };
}

/** The generate kind (MAPF-FrozenLake; {@linkcode generateKind} adds other families). */
export const kind: NodeKind<GenerateParams> = {
  name: "generate",
  description:
    "Generate instances of a family (default MAPF-FrozenLake) from a config (count) or from benchmark suites (per_suite)",
  params: GenerateParamsSchema,
  paramDocs: GENERATE_PARAM_DOCS,
  module: import.meta.url,
  heavy: true,
  async run(p: GenerateParams, ctx: NodeContext) {
    if (!_isDefault(p.family)) {
      // in a worker: the built-in families, imported when first needed (a
      // computed specifier, so no family is in this kind's code digest: the
      // node's key has its own family's through codeModules)
      const where = "./families.ts";
      const mod = await import(new URL(where, import.meta.url).href) as {
        families: FamilyRegistry;
      };
      return await runFamilyGenerate(mod.families, p, ctx);
    }
    if (isLevelSet(p.config)) return await _replayLevels(p, ctx);
    const { instances, reports } = runGenerate(p, {
      signal: ctx.signal,
      onProgress: (done, total) => {
        if (done === total || done % 32 === 0) ctx.progress(done, total);
      },
    });
    const lines = instancesToJsonLines(instances);
    let stored: Json;
    if (lines.length > INLINE_LIMIT) {
      const ref = await ctx.writeBlob(
        new TextEncoder().encode(lines),
        INSTANCES_MEDIA,
      );
      stored = { $blob: ref.$blob, size: ref.size, media: ref.media };
    } else {
      stored = JSON.parse(
        `[${lines.trimEnd().split("\n").filter((l) => l).join(",")}]`,
      ) as Json;
    }
    let accepted = 0, attempts = 0, soc = 0, makespan = 0;
    for (const r of reports) {
      accepted += r.accepted;
      attempts += r.attempts;
      soc += r.mean.soc * r.accepted;
      makespan += r.mean.makespan * r.accepted;
    }
    const summary: Json = {
      count: instances.length,
      attempts,
      rejection_rate: attempts === 0
        ? 0
        : Math.round(((attempts - accepted) / attempts) * 10000) / 10000,
      mean_soc: accepted === 0 ? 0 : Math.round((soc / accepted) * 1000) / 1000,
      mean_makespan: accepted === 0
        ? 0
        : Math.round((makespan / accepted) * 1000) / 1000,
    };
    ctx.log(
      `${instances.length} instances from ${attempts} draws (rejection rate ${summary.rejection_rate})`,
    );
    const value: { [k: string]: Json } = {
      instances: stored,
      count: instances.length,
      summary,
    };
    if (p.suites) {
      value.suites = Object.fromEntries(
        p.suites.map((n) => [n, getSuite(n).config as unknown as Json]),
      );
    } else value.config = parseEnvConfig(p.config) as unknown as Json;
    return {
      value,
      report: { generation: reports as unknown as Json },
    };
  },
};
