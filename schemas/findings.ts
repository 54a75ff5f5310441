/**
 * The findings of a diagnosis: what `diagnose` writes and engineers read.
 *
 * Findings are plain JSON (snake_case keys) so they can be cached, written to
 * `findings.json` by the CLI, shown to an LLM and validated when read back.
 * Rates are fractions in [0, 1]; a statistic with no data is `null`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import { FindingsSchema } from "./findings.ts";
 * const ok = v.safeParse(FindingsSchema, { version: 1 });
 * assert.equal(ok.success, false); // every section is required
 * ```
 *
 * @module
 */
import * as v from "valibot";

/** Format version of {@linkcode Findings}. */
export const FINDINGS_VERSION = 1;

/** The failure outcomes (every outcome but success). */
export const FAILURE_TYPES = [
  "hole",
  "vertex_collision",
  "edge_collision",
  "timeout",
  "invalid_plan",
] as const;

/** Episode outcomes (the names of mapf/outcome.ts), in the order histograms list them. */
export const OUTCOMES = ["success", ...FAILURE_TYPES] as const;

/** An episode outcome: success, or the first failure. */
export type Outcome = typeof OUTCOMES[number];

const rate = v.pipe(v.number(), v.minValue(0), v.maxValue(1));
const count = v.pipe(v.number(), v.integer(), v.minValue(0));
const finite = v.pipe(v.number(), v.finite());

/** Histogram of outcomes (episode counts). */
export const OutcomeCountsSchema = v.strictObject({
  success: count,
  hole: count,
  vertex_collision: count,
  edge_collision: count,
  timeout: count,
  invalid_plan: count,
});

/** One bucket of a per-dimension breakdown. */
export const BucketSchema = v.strictObject({
  /** Human-readable range, e.g. `4` or `0.10-0.15`. */
  label: v.string(),
  /** Smallest value in the bucket. */
  lo: finite,
  /** Largest value in the bucket. */
  hi: finite,
  /** Episodes (or agents, for agent-level dimensions) in the bucket. */
  n: count,
  /** Success rate in the bucket. */
  success_rate: rate,
});

/** Success broken down by one dimension. */
export const DimensionBreakdownSchema = v.strictObject({
  /** Dimension name, e.g. `agents`, `hole_density`, `agent_distance`. */
  dimension: v.string(),
  /** `episode`: one value per episode; `agent`: one value per agent (success = agent reached its goal). */
  unit: v.picklist(["episode", "agent"]),
  /** Buckets in increasing value order. */
  buckets: v.array(BucketSchema),
  /** Success of the lowest bucket minus success of the highest (positive: harder as it grows). */
  spread: finite,
});

/** Results for one component of the evaluated configuration. */
export const ComponentStatsSchema = v.strictObject({
  /** Index in the mixture (0 for a single config). */
  index: count,
  /** Weight in the mixture. */
  weight: finite,
  /** `configId` of the component. */
  config_id: v.string(),
  /** Episodes drawn from it. */
  episodes: count,
  /** Episode success rate. */
  success_rate: rate,
  /** Fraction of agents on their goal at the end. */
  agent_success_rate: rate,
  /** Outcome histogram. */
  outcomes: OutcomeCountsSchema,
});

/** Path efficiency: reference sum-of-costs / achieved sum-of-costs, over successful episodes. */
export const EfficiencySchema = v.strictObject({
  /** Mean over successful episodes (null when none succeeded). */
  mean: v.nullable(rate),
  /** Smallest value. */
  min: v.nullable(rate),
  /** Successful episodes it is computed on. */
  episodes: count,
});

/** Behaviour summaries, over agent-steps before each agent first reaches its goal. */
export const BehaviorSchema = v.strictObject({
  /** Fraction of such agent-steps where the agent did not change cell. */
  wait_fraction: rate,
  /** Fraction of moves that return to the cell of two steps before (A-B-A). */
  oscillation_rate: rate,
  /** Mean over agents that reached their goal of moves made / shortest distance (>= 1; null when none). */
  detour_ratio: v.nullable(finite),
  /** Fraction of agents that never left their start cell. */
  idle_agent_rate: rate,
  /** Fraction of episodes with at least one idle agent. */
  episodes_with_idle_agent: rate,
  /** Fraction of moves where the agent ended where it did not intend (slip or a blocked move). */
  deviation_rate: rate,
  /** Fraction of agents on their goal when the episode ended in failure. */
  progress_at_failure: v.nullable(rate),
});

/** Features of one failure case, computed from its trajectory. */
export const FailureFeaturesSchema = v.strictObject({
  /** The failing move deviated from the intended one (slip or block). */
  slipped: v.boolean(),
  /** The failure cell has at most 2 free neighbours (corridor/bottleneck). */
  narrow: v.boolean(),
  /** Agents within distance 2 of the failure cell at the failure step (failing agents included). */
  crowd: count,
  /** Mean remaining shortest distance to goal of the agents not on their goal, at the failure step. */
  remaining_distance: v.nullable(finite),
  /** Fraction of the last up-to-8 agent-steps before the failure spent waiting (all agents not on goal). */
  recent_wait: rate,
  /** Some agent oscillated (A-B-A) in the last 8 steps. */
  recent_oscillation: v.boolean(),
});

/** A sampled failure case. */
export const FailureCaseSchema = v.strictObject({
  /** Episode index in the rollouts. */
  episode: count,
  /** Failure type. */
  outcome: v.picklist(FAILURE_TYPES),
  /** Step at which it happened (the horizon for timeouts). */
  step: count,
  /** Agents involved (0-based). */
  agents: v.array(count),
  /** Mixture component the episode came from. */
  component: count,
  /** Computed features. */
  features: FailureFeaturesSchema,
  /** Informativeness score used to order cases (higher first). */
  score: finite,
  /** Rendering: map at the failure step and the moves around it. */
  text: v.string(),
});

/** The findings of a diagnosis. */
export const FindingsSchema = v.strictObject({
  /** {@linkcode FINDINGS_VERSION}. */
  version: v.literal(FINDINGS_VERSION),
  /** Seed of the failure-case sample. */
  seed: v.pipe(v.number(), v.integer()),
  /** Episodes diagnosed. */
  episodes: count,
  /** Agents over all episodes. */
  agent_episodes: count,
  /** Episode success rate (every agent on its goal). */
  success_rate: rate,
  /** Fraction of agents on their goal at the end. */
  agent_success_rate: rate,
  /** Outcome histogram (episodes). */
  outcomes: OutcomeCountsSchema,
  /** Path efficiency. */
  efficiency: EfficiencySchema,
  /** Per mixture component. */
  components: v.array(ComponentStatsSchema),
  /** Success per dimension, bucketed. */
  dimensions: v.array(DimensionBreakdownSchema),
  /** Behaviour summaries. */
  behavior: BehaviorSchema,
  /** Failures in total, before sampling. */
  failure_count: count,
  /** The sampled failure cases, most informative first. */
  failures: v.array(FailureCaseSchema),
  /** The configuration the rollouts were generated from, when known. */
  config: v.nullable(v.unknown()),
});

/** Outcome histogram. */
export type OutcomeCounts = v.InferOutput<typeof OutcomeCountsSchema>;

/** A histogram with every outcome at 0, in the order of {@linkcode OUTCOMES}. */
export function zeroOutcomeCounts(): OutcomeCounts {
  return {
    success: 0,
    hole: 0,
    vertex_collision: 0,
    edge_collision: 0,
    timeout: 0,
    invalid_plan: 0,
  };
}
/** A per-dimension bucket. */
export type Bucket = v.InferOutput<typeof BucketSchema>;
/** Success broken down by one dimension. */
export type DimensionBreakdown = v.InferOutput<typeof DimensionBreakdownSchema>;
/** Results of one component. */
export type ComponentStats = v.InferOutput<typeof ComponentStatsSchema>;
/** Path efficiency. */
export type Efficiency = v.InferOutput<typeof EfficiencySchema>;
/** Behaviour summaries. */
export type Behavior = v.InferOutput<typeof BehaviorSchema>;
/** Features of a failure case. */
export type FailureFeatures = v.InferOutput<typeof FailureFeaturesSchema>;
/** A sampled failure case. */
export type FailureCase = v.InferOutput<typeof FailureCaseSchema>;
/** The findings of a diagnosis. */
export type Findings = v.InferOutput<typeof FindingsSchema>;

/** An invalid findings object (e.g. a hand-edited findings.json). */
export class FindingsError extends TypeError {
  /** Dot paths and messages of the problems. */
  readonly issues: readonly { path: string; message: string }[];
  /** Build from valibot issues. */
  constructor(
    issues: readonly { path: string; message: string }[],
    where = "findings",
  ) {
    super(
      `Invalid findings in ${where}: ${
        issues.slice(0, 5).map((i) => `${i.path || "(root)"}: ${i.message}`)
          .join("; ")
      }${issues.length > 5 ? ` (and ${issues.length - 5} more)` : ""}; ` +
        `regenerate it with \`deno task cli diagnose\`.`,
    );
    this.name = "FindingsError";
    this.issues = issues;
  }
}

/**
 * Validate a findings object.
 * @throws {FindingsError} naming each invalid field.
 */
export function parseFindings(input: unknown, where?: string): Findings {
  const r = v.safeParse(FindingsSchema, input);
  if (r.success) return r.output;
  throw new FindingsError(
    r.issues.map((i) => ({ path: v.getDotPath(i) ?? "", message: i.message })),
    where,
  );
}
