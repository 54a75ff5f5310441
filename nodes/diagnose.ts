/**
 * The `diagnose` node kind: rollouts -> findings.
 *
 * ```yaml
 * findings: { kind: diagnose, with: { rollouts: $rollouts, envs: $envs, config: $prev.config } }
 * ```
 *
 * Parameters:
 * - `rollouts` (required): the value of a rollout node. The trajectories are
 *   found as a blob (mapf's binary trajectory format) at `rollouts.trajectories`
 *   (or `rollouts` itself when it is the blob).
 * - `envs`: the instances the rollouts played: the value of a generate node
 *   (`{ instances: <blob of JSON lines> | [...] }`), a blob of JSON lines, or
 *   a list of instances. Defaults to `rollouts.instances` / `rollouts.envs`.
 * - `config`: the configuration the instances were generated from (for
 *   per-component results and history); defaults to `rollouts.config` /
 *   `envs.config`.
 * - `seed` (default: the node's seed), `cases` (failure cases sampled,
 *   default 6), `window` (steps shown before a failure, default 4).
 *
 * Value: the {@linkcode Findings} object. Report: the headline numbers.
 *
 * @module
 */
import * as v from "valibot";
import type { Json, NodeContext, NodeKind } from "@envsmith/engine/kind";
import { field, isBlobRef } from "./_values.ts";
import { type Instance, parseInstanceLines } from "../mapf/instance.ts";
import { decodeTrajectories, type Episode } from "../mapf/trajectory.ts";
import { type AnyEnvConfig, parseEnvConfig } from "../schemas/env_config.ts";
import type { Findings } from "../schemas/findings.ts";
import { diagnose } from "../engineer/diagnose.ts";
import { episodesFromRollouts } from "../engineer/from_rollouts.ts";

/** Parameters of the diagnose kind. */
export const DiagnoseParamsSchema = v.strictObject({
  rollouts: v.unknown(),
  envs: v.optional(v.unknown()),
  config: v.optional(v.unknown()),
  seed: v.optional(v.pipe(v.number(), v.integer())),
  cases: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(64)),
  ),
  window: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(64)),
  ),
});

/** Parameters of the diagnose kind. */
export type DiagnoseParams = v.InferOutput<typeof DiagnoseParamsSchema>;

/** Rollouts or instances that cannot be found or read. */
export class RolloutInputError extends TypeError {
  /** Build the error. */
  constructor(message: string) {
    super(message);
    this.name = "RolloutInputError";
  }
}

/** What a diagnosis reads, resolved from node values. */
export interface LoadedRollouts {
  /** Decoded episodes. */
  episodes: Episode[];
  /** The instances they played. */
  instances: Instance[];
  /** The generating configuration, if known. */
  config: AnyEnvConfig | undefined;
}

async function _instances(
  x: unknown,
  ctx: Pick<NodeContext, "readBlob">,
): Promise<Instance[] | undefined> {
  if (x === undefined || x === null) return undefined;
  if (Array.isArray(x)) {
    if (x.length > 0 && typeof x[0] === "string") return undefined;
    return parseInstanceLines(x.map((i) => JSON.stringify(i)).join("\n"));
  }
  if (isBlobRef(x)) {
    return parseInstanceLines(new TextDecoder().decode(await ctx.readBlob(x)));
  }
  return await _instances(field(x, "instances"), ctx);
}

/**
 * Resolve trajectories, instances and config from a rollout node's value and
 * optional envs/config values.
 *
 * @throws {RolloutInputError} when no trajectories or no instances are found.
 */
export async function loadRollouts(
  rollouts: unknown,
  envs: unknown,
  config: unknown,
  ctx: Pick<NodeContext, "readBlob">,
): Promise<LoadedRollouts> {
  const traj = isBlobRef(rollouts) ? rollouts : field(rollouts, "trajectories");
  if (!isBlobRef(traj)) {
    throw new RolloutInputError(
      "diagnose: no trajectories in `rollouts` (expected a rollout node's value with a `trajectories` blob); " +
        "run the rollout node with trajectory recording on.",
    );
  }
  const episodes = decodeTrajectories(await ctx.readBlob(traj));
  const instances = (await _instances(envs, ctx)) ??
    (await _instances(field(rollouts, "instances"), ctx)) ??
    (await _instances(field(rollouts, "envs"), ctx));
  if (instances === undefined) {
    throw new RolloutInputError(
      "diagnose: no instances found; pass the generate node's value as `envs` (with: { envs: $envs }).",
    );
  }
  const spec = config ?? field(rollouts, "config") ?? field(envs, "config");
  return {
    episodes,
    instances,
    config: spec === undefined || spec === null
      ? undefined
      : parseEnvConfig(spec),
  };
}

/** The diagnose node kind. */
export const kind: NodeKind<DiagnoseParams, Json> = {
  name: "diagnose",
  description:
    "Diagnose rollouts: success overall/per component/per dimension, failure types, efficiency, behaviour, sampled failure cases",
  params: DiagnoseParamsSchema,
  module: import.meta.url,
  async run(params, ctx) {
    const loaded = await loadRollouts(
      params.rollouts,
      params.envs,
      params.config,
      ctx,
    );
    const views = episodesFromRollouts(
      loaded.episodes,
      loaded.instances,
      loaded.config,
    );
    ctx.progress(0, 1, `${views.length} episodes`);
    const findings: Findings = diagnose(views, {
      seed: params.seed ?? ctx.seed,
      ...(params.cases === undefined ? {} : { maxCases: params.cases }),
      ...(params.window === undefined ? {} : { window: params.window }),
      ...(loaded.config === undefined ? {} : { config: loaded.config }),
    });
    ctx.progress(1, 1, `success ${findings.success_rate}`);
    ctx.log(
      `diagnosed ${findings.episodes} episodes: success ${findings.success_rate}, ${findings.failure_count} failures, ${findings.failures.length} cases sampled`,
    );
    return {
      value: findings as unknown as Json,
      report: {
        episodes: findings.episodes,
        success_rate: findings.success_rate,
        agent_success_rate: findings.agent_success_rate,
        outcomes: findings.outcomes,
        efficiency: findings.efficiency.mean,
      },
    };
  },
};
