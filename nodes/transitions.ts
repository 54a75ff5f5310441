/**
 * The `transitions` node kind: one curriculum's transitions for the
 * learned engineer (the state, the change, the next stage's progress on the
 * validation split; a test-split evaluation refuses the node). The other
 * learned kinds: `learned_candidate.ts`, `hindsight.ts`, `learned_fit.ts`,
 * `engineer_bench.ts` (docs/learned.md).
 *
 * @module
 */
import * as v from "valibot";
import type { Json, NodeKind } from "@envsmith/engine/kind";
import {
  learnedFamily,
  listParam,
  stateJson,
  userErrors,
} from "./_learned_io.ts";
import { changeJson, curriculumTransitions } from "../engineer/learned_data.ts";

/** Parameters of `transitions`. */
export interface TransitionsParams {
  /** Stage i's findings, K of them. */
  readonly findings: unknown[];
  /** Configurations trained on, K+1 (the start and each redesign's). */
  readonly configs: unknown[];
  /** Held-out evaluations on the validation split, K+1. */
  readonly heldout: unknown[];
  /** Name of the curriculum (held-out splits never cut one). */
  readonly group?: string | undefined;
}

/** The `transitions` kind. */
export const transitions: NodeKind<TransitionsParams, Json> = {
  name: "transitions",
  description:
    "One curriculum's transitions for the learned engineer: context, config, change, next stage's held-out progress (validation split only)",
  params: v.strictObject({
    findings: listParam("stage i's findings, K of them"),
    configs: listParam(
      "configs trained on, K+1: the start and every redesign's output",
    ),
    heldout: listParam(
      "held-out evaluate values on the validation split, K+1 (the last after training on the last config)",
    ),
    group: v.optional(v.pipe(
      v.string(),
      v.description("name of the curriculum (default: the node's id)"),
    )),
  }),
  paramDocs: {
    findings: "stage i's findings, K of them ($xcur.0.findings, ...)",
    configs: "configs trained on, K+1: the start and every redesign's output",
    heldout:
      "held-out evaluate values on the validation split, K+1 (the last after training on the last config)",
    group:
      "name of the curriculum (default: the node's id); a held-out split never cuts one",
  },
  module: import.meta.url,
  async run(p, ctx) {
    await Promise.resolve();
    const rows = userErrors(() =>
      curriculumTransitions(learnedFamily, {
        group: p.group ?? ctx.id,
        findings: p.findings,
        configs: p.configs,
        heldout: p.heldout,
      })
    );
    const value = {
      version: 1,
      rows: rows.map((t) => ({
        ...stateJson(t),
        change: changeJson(t.change),
        progress: t.progress,
      })),
    } as unknown as Json;
    ctx.log(
      `${rows.length} transitions, ${
        rows.filter((t) => t.change !== null).length
      } single candidate steps; progress ${
        rows.map((t) => t.progress.toFixed(3)).join(" ")
      }`,
    );
    return ({
      value,
      report: {
        transitions: rows.length,
        steps: rows.filter((t) => t.change !== null).length,
        mean_progress: rows.reduce((a, t) => a + t.progress, 0) /
          Math.max(1, rows.length),
      },
    });
  },
};
