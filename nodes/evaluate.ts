/**
 * The `evaluate` node kind: score a policy on benchmark instances.
 *
 * ```yaml
 * score: { kind: evaluate, with: { policy: $curriculum.policy, envs: $bench, episodes: 1 } }
 * ```
 *
 * Parameters as `rollout` (`policy`, `envs`, `episodes`, `greedy`,
 * `parallel`, `seed`), plus `trajectories` (record them as a blob, default
 * true, for failure cases in reports).
 *
 * Value (what tables read):
 * `{ success_rate, outcome_rates: { success, hole, vertex_collision,
 * edge_collision, timeout, invalid_plan }, efficiency, soc_ratio, makespan,
 * steps, episodes, <the paper's metrics>, suites: { <suite>: same fields },
 * cells: { <cell>: the paper's metrics }, per_instance: [{ id, suite,
 * episodes, success_rate, cell, valid, optimal_soc, optimal_makespan }],
 * trajectories? }` (metric definitions in `policy/rollout.ts`). The paper's
 * metrics read every episode as a joint plan (`evaluate_metrics.ts`):
 * `valid_rate`, `optimal_soc_rate`, `optimal_makespan_rate`,
 * `optimum_unknown`, `agent_success_rate`, `illegal_rate`, `conflict_rate`,
 * `tokens_per_answer`; a cell is agents x map size, e.g. `3ag_3x3`. Report:
 * the same without `per_instance`.
 *
 * @module
 */
import * as v from "valibot";
import type { Json, NodeKind } from "@envsmith/engine/kind";
import { join } from "node:path";
import { decodeTrajectories } from "../mapf/trajectory.ts";
import type { LlmEpisodeInfo } from "../policy/llm_policy.ts";
import type { EpisodeResult } from "../policy/rollout.ts";
import {
  answersFromCache,
  metricsBy,
  paperMetrics,
  perInstancePaper,
  readEpisodes,
} from "./evaluate_metrics.ts";
import { policyFingerprint, readInstances } from "./policy_io.ts";
import {
  ROLLOUT_PARAM_DOCS,
  RolloutParamsSchema,
  roundJson,
  runRollout,
} from "./rollout.ts";

/** Parameters of `evaluate`. */
export const EvaluateParamsSchema = v.strictObject({
  ...RolloutParamsSchema.entries,
  trajectories: v.optional(v.boolean()),
});

/** Parameters of `evaluate`. */
export type EvaluateParams = v.InferOutput<typeof EvaluateParamsSchema>;

/** Per-instance success over its episodes, in first-seen order. */
export function perInstance(episodes: readonly EpisodeResult[]): Json[] {
  const by = new Map<
    string,
    { id: string; suite: string | null; episodes: number; ok: number }
  >();
  for (const e of episodes) {
    let x = by.get(e.instance);
    if (!x) {
      by.set(
        e.instance,
        x = { id: e.instance, suite: e.suite, episodes: 0, ok: 0 },
      );
    }
    x.episodes++;
    if (e.outcome === "success") x.ok++;
  }
  return [...by.values()].sort((
    a,
    b,
  ) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((x) => ({
    id: x.id,
    suite: x.suite,
    episodes: x.episodes,
    success_rate: x.ok / x.episodes,
  }));
}

/** The `evaluate` kind. */
export const kind: NodeKind<EvaluateParams, Json> = {
  name: "evaluate",
  description:
    "Evaluate a policy on benchmark instances: success, failure types, path efficiency, per suite",
  params: EvaluateParamsSchema,
  paramDocs: {
    ...ROLLOUT_PARAM_DOCS,
    trajectories:
      "record the episodes as a blob (default true), for failure cases in reports",
  },
  module: import.meta.url,
  heavy: true,
  fingerprint: policyFingerprint,
  async run(p, ctx) {
    const record = p.trajectories ?? true;
    // the paper's metrics read the episodes, so they are always recorded
    const res = await runRollout(p, ctx, true);
    const instances = await readInstances(p.envs, ctx);
    const info = (res as { info?: LlmEpisodeInfo[] }).info;
    const answers = info
      ? await answersFromCache(info, join(ctx.auxDir, "llm"))
      : undefined;
    const read = readEpisodes(
      instances,
      decodeTrajectories(res.trajectories!),
      answers,
    );
    const bySuite = metricsBy(read, (e) => e.suite ?? "");
    const summary = roundJson({
      ...res.summary,
      ...paperMetrics(read),
    }) as { [k: string]: Json };
    const suites = roundJson(
      Object.fromEntries(
        Object.entries(res.suites).map((
          [k, x],
        ) => [k, { ...x, ...bySuite[k] }]),
      ),
    );
    const cells = roundJson(metricsBy(read, (e) => e.cell));
    const paper = perInstancePaper(read);
    const value: { [k: string]: Json } = {
      ...summary,
      suites,
      cells,
      per_instance: perInstance(res.episodes).map((x) => ({
        ...(x as { [k: string]: Json }),
        ...paper.get((x as { id: string }).id),
      })),
    };
    if (record) {
      const t = await ctx.writeBlob(
        res.trajectories!,
        "application/x-mapf-trajectories",
      );
      value.trajectories = { $blob: t.$blob, size: t.size, media: t.media };
    }
    ctx.log(
      `evaluated ${res.summary.episodes} episodes: success ${res.summary.success_rate}`,
    );
    return { value, report: { ...summary, suites, cells } };
  },
};
