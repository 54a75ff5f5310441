/**
 * The `program.evaluate` node kind: the family program's own evaluator
 * (the `evaluate` request of the program protocol, docs/environments.md).
 *
 * ```yaml
 * score: { kind: program.evaluate, with: { family: *lake, policy: $curriculum.policy, envs: [$easy, $hard] } }
 * ```
 *
 * Parameters: `family`, `policy` (a `program.train` value, or null for
 * the untrained policy), `envs` (a `program.generate` value or a list:
 * each one's `suite` labels its instances), `seed`.
 *
 * Value (what tables, diagnoses and engineers read): `{ family,
 * success_rate, mean_return, mean_steps, episodes, suites: { <suite>: {
 * success_rate, mean_return, mean_steps, episodes } }, per_instance: [{ id,
 * suite, success_rate, return, steps }], failures: [the first few failed
 * instances' { id, suite, return, steps }] }`. `per_instance` is what a
 * table's `compare.instances` resamples (crossed intervals), as for MAPF:
 * `instances: { path: value.per_instance, column: suite, value:
 * success_rate }`.
 *
 * @module
 */
import * as v from "valibot";
import type { Json, NodeKind } from "@envsmith/engine/kind";
import type { Outcome } from "../families/program/protocol.ts";
import {
  FAMILY_DOC,
  familyFingerprint,
  FamilyParam,
} from "./_program_family.ts";
import { programInputs, ProgramPolicy } from "./_program_policy.ts";

/** Failed instances listed in the value. */
export const FAILURES_LISTED = 8;

const _Params = v.strictObject({
  family: FamilyParam,
  policy: v.nullable(ProgramPolicy),
  envs: v.unknown(),
  seed: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(0x7fffffff)),
    0,
  ),
});

/** Parameters of `program.evaluate`. */
export type ProgramEvaluateParams = v.InferOutput<typeof _Params>;

function _round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

/** Success rate, mean return and mean steps of some outcomes. */
export function outcomeStatistics(
  outcomes: readonly Outcome[],
): { [k: string]: number } {
  const n = outcomes.length;
  const sum = (f: (o: Outcome) => number) =>
    outcomes.reduce((s, o) => s + f(o), 0);
  return {
    success_rate: n ? _round(sum((o) => o.success) / n) : 0,
    mean_return: n ? _round(sum((o) => o.return) / n) : 0,
    mean_steps: n ? _round(sum((o) => o.steps) / n) : 0,
    episodes: n,
  };
}

/** The `program.evaluate` kind. */
export const kind: NodeKind<ProgramEvaluateParams, Json> = {
  name: "program.evaluate",
  description:
    "Evaluate a checkpoint with a family program's own evaluator: per-instance outcomes (success, return, steps), per suite",
  params: _Params as v.GenericSchema<unknown, ProgramEvaluateParams>,
  paramDocs: {
    family: FAMILY_DOC,
    policy: "a program.train node, or null for the untrained policy",
    envs:
      "the instances: a program.generate node or a list (each one's suite labels its instances)",
    seed: "the evaluator's seed (default 0)",
  },
  module: import.meta.url,
  heavy: true,
  fingerprint: familyFingerprint,
  async run(p, ctx) {
    const { client, description: d, items, checkpoint } = await programInputs(
      p,
      ctx,
      "policy",
    );
    const outcomes = await client.evaluate({
      instances: items.map((x) => x.instance),
      checkpoint,
      seed: p.seed,
    });
    const suiteOf = new Map(items.map((x) => [x.instance.id, x.suite]));
    const bySuite = new Map<string, Outcome[]>();
    for (const o of outcomes) {
      const s = suiteOf.get(o.id)!;
      bySuite.set(s, [...(bySuite.get(s) ?? []), o]);
    }
    const summary = outcomeStatistics(outcomes);
    const suites = Object.fromEntries(
      [...bySuite].map(([s, os]) => [s, outcomeStatistics(os)]),
    );
    const failures = outcomes.filter((o) => o.success === 0).slice(
      0,
      FAILURES_LISTED,
    ).map((o) => ({
      id: o.id,
      suite: suiteOf.get(o.id)!,
      return: o.return,
      steps: o.steps,
    }));
    ctx.log(
      `${d.name}: ${outcomes.length} episodes, success ${summary.success_rate}`,
    );
    return {
      value: {
        family: d.name,
        ...summary,
        suites,
        per_instance: outcomes.map((o) => ({
          id: o.id,
          suite: suiteOf.get(o.id)!,
          success_rate: o.success,
          return: o.return,
          steps: o.steps,
        })),
        failures,
      },
      report: { ...summary, suites, requests: client.requests },
    };
  },
};
