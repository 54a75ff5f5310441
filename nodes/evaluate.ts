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
 * steps, episodes, suites: { <suite>: same fields }, per_instance: [{ id,
 * suite, episodes, success_rate }], trajectories? }` (metric definitions in
 * `policy/rollout.ts`). Report: the same without `per_instance`.
 *
 * @module
 */
import * as v from "valibot";
import type { Json, NodeKind } from "@envsmith/engine/kind";
import type { EpisodeResult } from "../policy/rollout.ts";
import { policyFingerprint } from "./policy_io.ts";
import { RolloutParamsSchema, roundJson, runRollout } from "./rollout.ts";

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
  module: import.meta.url,
  heavy: true,
  fingerprint: policyFingerprint,
  async run(p, ctx) {
    const record = p.trajectories ?? true;
    const res = await runRollout(p, ctx, record);
    const summary = roundJson(res.summary) as { [k: string]: Json };
    const suites = roundJson(res.suites);
    const value: { [k: string]: Json } = {
      ...summary,
      suites,
      per_instance: perInstance(res.episodes),
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
    return { value, report: { ...summary, suites } };
  },
};
