/**
 * The `sampler` parameter of `train` (`policy/level_sampler.ts`): the
 * environment-design baselines deciding per batch what the policy plays,
 * and the sampler state a `train` node hands to the next one (its buffer,
 * staleness clock and batch count) through its policy value.
 *
 * ```yaml
 * policy: { kind: train, with: { policy: $prev.policy, samples: 250000, sampler: { name: plr } } }
 * policy: { kind: train, with: { policy: $prev.policy, samples: 250000, sampler: { name: accel, edits: 5 } } }
 * policy: { kind: train, with: { policy: $prev.policy, samples: 250000, sampler: { name: dr, box: { size: [8, 16], agents: [2, 8] } } } }
 * ```
 *
 * @module
 */
import * as v from "valibot";
import type { BlobRef, Json } from "@envsmith/engine/kind";
import { BOX_DIMS, boxProblem, type DrBox } from "../mapf/box.ts";
import {
  type Instance,
  instanceToJson,
  parseInstanceLines,
} from "../mapf/instance.ts";
import {
  SAMPLER_BOX,
  SAMPLER_DEFAULTS,
  SAMPLER_KINDS,
  type SamplerKind,
  type SamplerOptions,
  type SamplerState,
} from "../policy/level_sampler.ts";
import { field, isBlobRef } from "./_values.ts";

const _int = (name: string, min: number, max: number, what: string) =>
  v.optional(v.pipe(
    v.number(`sampler.${name} must be an integer in ${min}..${max}`),
    v.integer(`sampler.${name} must be an integer in ${min}..${max}`),
    v.minValue(min, `sampler.${name} must be at least ${min}`),
    v.maxValue(max, `sampler.${name} must be at most ${max}`),
    v.description(what),
  ));
const _unit = (name: string, what: string, open = false) =>
  v.optional(v.pipe(
    v.number(`sampler.${name} must be a number in 0..1`),
    open
      ? v.gtValue(0, `sampler.${name} must be > 0`)
      : v.minValue(0, `sampler.${name} must be at least 0`),
    v.maxValue(1, `sampler.${name} must be at most 1`),
    v.description(what),
  ));

const d = SAMPLER_DEFAULTS;

/** Schema of `train`'s `sampler` parameter. */
export const SamplerParamsSchema = v.strictObject({
  name: v.pipe(
    v.picklist(
      SAMPLER_KINDS,
      `sampler.name must be one of ${SAMPLER_KINDS.join(", ")}`,
    ),
    v.description(
      "plr (robust PLR), accel (robust PLR plus edits of replayed levels) or dr (a fresh level per episode)",
    ),
  ),
  box: v.optional(v.pipe(
    v.record(v.string(), v.unknown()),
    v.check(
      (b) => boxProblem(b, "sampler.box") === null,
      (i) => boxProblem(i.input, "sampler.box")!,
    ),
    v.description(
      `dimension -> [lo, hi] (${
        BOX_DIMS.join(", ")
      }) new levels are drawn from; default: the span of the easy and hard presets`,
    ),
  )),
  batch: _int(
    "batch",
    1,
    4096,
    `levels per batch, one episode each in parallel; default ${d.batch}`,
  ),
  buffer: _int(
    "buffer",
    1,
    1_000_000,
    `buffer capacity in levels; default ${d.buffer}`,
  ),
  replay_prob: _unit(
    "replay_prob",
    `probability of a replay batch once the buffer is min_fill full; default ${d.replayProb}`,
    true,
  ),
  temperature: v.optional(v.pipe(
    v.number("sampler.temperature must be a number > 0"),
    v.gtValue(0, "sampler.temperature must be > 0"),
    v.maxValue(100, "sampler.temperature must be at most 100"),
    v.description(
      `rank temperature: P_S ∝ (1/rank)^(1/temperature); default ${d.temperature}`,
    ),
  )),
  staleness: _unit(
    "staleness",
    `staleness coefficient: P = (1 - staleness) P_S + staleness P_C; default ${d.staleness}`,
  ),
  min_fill: _unit(
    "min_fill",
    `share of the buffer filled before the first replay; default ${d.minFill}`,
  ),
  edits: _int(
    "edits",
    1,
    64,
    `accel: random edits applied to each replayed level; default ${d.edits}`,
  ),
  max_agents: _int(
    "max_agents",
    1,
    64,
    `accel: the most agents an add-agent edit makes; default ${d.maxAgents}`,
  ),
});

/** `train`'s `sampler` parameter. */
export type SamplerParams = v.InferOutput<typeof SamplerParamsSchema>;

/** The sampler options of a `sampler` parameter and the node's seed. */
export function samplerOptions(
  p: SamplerParams,
  seed: number,
): SamplerOptions {
  const o: SamplerOptions = { kind: p.name, seed };
  if (p.box !== undefined) o.box = p.box as DrBox;
  if (p.batch !== undefined) o.batch = p.batch;
  if (p.buffer !== undefined) o.buffer = p.buffer;
  if (p.replay_prob !== undefined) o.replayProb = p.replay_prob;
  if (p.temperature !== undefined) o.temperature = p.temperature;
  if (p.staleness !== undefined) o.staleness = p.staleness;
  if (p.min_fill !== undefined) o.minFill = p.min_fill;
  if (p.edits !== undefined) o.edits = p.edits;
  if (p.max_agents !== undefined) o.maxAgents = p.max_agents;
  return o;
}

/** The box a sampler parameter draws from (its own or the default). */
export function samplerBox(p: SamplerParams): DrBox {
  return (p.box as DrBox | undefined) ?? SAMPLER_BOX;
}

const STATE_MEDIA = "application/json";

interface _StateJson {
  version: 1;
  kind: SamplerKind;
  clock: number;
  batches: number;
  levels: {
    instance: Json;
    score: number;
    seen: number;
    origin: "new" | "edit";
    parent: string | null;
  }[];
  pending: Json[] | null;
}

function _instances(rows: readonly Json[]): Instance[] {
  return parseInstanceLines(rows.map((r) => JSON.stringify(r)).join("\n"));
}

/** Store a sampler's state as a blob; the reference goes into the policy value. */
export async function writeSamplerState(
  kind: SamplerKind,
  state: SamplerState,
  writeBlob: (bytes: Uint8Array, media: string) => Promise<BlobRef>,
): Promise<Json> {
  const j: _StateJson = {
    version: 1,
    kind,
    clock: state.clock,
    batches: state.batches,
    levels: state.levels.map((l) => ({
      instance: JSON.parse(instanceToJson(l.instance)),
      score: l.score,
      seen: l.seen,
      origin: l.origin,
      parent: l.parent,
    })),
    pending: state.pending?.map((i) => JSON.parse(instanceToJson(i))) ?? null,
  };
  const ref = await writeBlob(
    new TextEncoder().encode(JSON.stringify(j)),
    STATE_MEDIA,
  );
  return {
    name: kind,
    buffer: state.levels.length,
    batches: state.batches,
    state: { $blob: ref.$blob, size: ref.size, media: ref.media },
  };
}

/**
 * The sampler state a policy value carries (null when it carries none: a
 * policy not trained with a sampler). A state of another sampler kind is
 * refused in one line.
 */
export async function readSamplerState(
  policy: unknown,
  kind: SamplerKind,
  readBlob: (ref: BlobRef) => Promise<Uint8Array>,
): Promise<SamplerState | null> {
  const s = field(policy, "sampler");
  if (s === undefined) return null;
  const name = field(s, "name");
  if (name !== kind) {
    throw new TypeError(
      `sampler: the policy was trained with sampler ${
        JSON.stringify(name)
      } and this train node runs ${kind}; a sampler's buffer carries over only to the same sampler`,
    );
  }
  const ref = field(s, "state");
  if (!isBlobRef(ref)) {
    throw new TypeError("sampler.state of the policy value must be a blob");
  }
  const j = JSON.parse(
    new TextDecoder().decode(await readBlob(ref)),
  ) as _StateJson;
  const inst = _instances(j.levels.map((l) => l.instance));
  return {
    clock: j.clock,
    batches: j.batches,
    levels: j.levels.map((l, i) => ({
      instance: inst[i]!,
      score: l.score,
      seen: l.seen,
      origin: l.origin,
      parent: l.parent,
    })),
    pending: j.pending === null ? null : _instances(j.pending),
  };
}
