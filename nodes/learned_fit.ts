/**
 * The `learned.fit` node kind: one model of the next stage's progress per
 * context type on transitions, the model class chosen by held-out error;
 * its value is what `engineer: { name: learned, model: $NODE }` loads.
 *
 * @module
 */
import * as v from "valibot";
import type { Json, NodeKind } from "@envsmith/engine/kind";
import {
  learnedFamily,
  listParam,
  transitionFrom,
  userErrors,
} from "./_learned_io.ts";
import { UserError } from "@envsmith/engine/errors";
import { CONTEXT_TYPES, type ContextType } from "../engineer/context.ts";
import type { Transition } from "../engineer/learned_data.ts";
import { fitLearned } from "../engineer/learned_fit.ts";

/** Parameters of `learned.fit`. */
export interface FitParams {
  /** `transitions` node values. */
  readonly transitions: unknown[];
  /** Context types to fit (default all five). */
  readonly contexts?: ContextType[] | undefined;
  /** Seed of the held-out split. */
  readonly seed?: number | undefined;
  /** Boosting rounds of the trees (default 60). */
  readonly rounds?: number | undefined;
}

/** The `learned.fit` kind. */
export const fit: NodeKind<FitParams, Json> = {
  name: "learned.fit",
  description:
    "Fit the learned engineer: one model of next-stage progress per context type, the model class chosen by held-out error",
  params: v.strictObject({
    transitions: listParam("transitions nodes' values"),
    contexts: v.optional(v.pipe(
      v.array(v.picklist(CONTEXT_TYPES)),
      v.description("context types to fit (default all five)"),
    )),
    seed: v.optional(v.pipe(v.number(), v.integer())),
    rounds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  }),
  paramDocs: {
    transitions:
      "transitions nodes' values (every row a candidate step is fitted on)",
    contexts: "context types to fit, one model each (default all five)",
    seed: "seed of the held-out split that chooses the model class",
    rounds: "boosting rounds of the depth-2 trees (default 60)",
  },
  module: import.meta.url,
  async run(p, ctx) {
    await Promise.resolve();
    const rows: Transition[] = [];
    p.transitions.forEach((t, i) => {
      const r = (t as { rows?: unknown[] } | null)?.rows;
      if (!Array.isArray(r)) {
        throw new UserError(
          `learned.fit: transitions[${i}] is not a transitions node's value (no rows)`,
        );
      }
      r.forEach((x, j) =>
        rows.push(
          userErrors(() => transitionFrom(x, `transitions[${i}][${j}]`)),
        )
      );
    });
    const models = userErrors(() =>
      fitLearned(learnedFamily, rows, {
        seed: p.seed ?? ctx.seed,
        ...(p.contexts === undefined ? {} : { types: p.contexts }),
        ...(p.rounds === undefined ? {} : { gbt: { rounds: p.rounds } }),
      })
    );
    const byContext: { [k: string]: Json } = {};
    for (const [t, m] of Object.entries(models.models)) {
      ctx.log(
        `${t}: ${m!.chosen} on ${m!.rows} rows; held-out mse ${
          m!.trials.map((x) => `${x.name} ${x.mse.toPrecision(3)}`).join(", ")
        }`,
      );
      byContext[t] = {
        chosen: m!.chosen,
        rows: m!.rows,
        mse: Object.fromEntries(m!.trials.map((x) => [x.name, x.mse])),
      };
    }
    // one context type: its choice at the top (a table row per context)
    const first = Object.values(byContext)[0] as { [k: string]: Json };
    return ({
      value: models as unknown as Json,
      report: { ...first, by_context: byContext },
    });
  },
};
