/**
 * The `train` kind's guard rail: a policy whose training success at the end
 * of its last stage is below a threshold has hardly learned its task, and a
 * comparison of such policies measures nothing (a first experiment with a
 * small budget ends like this, with every cell at 0 and p = 1). Low training
 * success can also mean a training distribution much harder than the test
 * (`fixed-hard` in paper.yaml: 0.00 in training with outcome rewards), so
 * the warning says what it saw and leaves the judgement to its reader.
 *
 * @module
 */
import type { Json } from "@envsmith/engine/kind";
import type { ResultWarning } from "@envsmith/engine";

/** Below this final training success a policy is said not to have learned. */
export const LEARNING_THRESHOLD = 0.1;

/** The share of a stage's updates (at least 3) whose episodes give its final success. */
export const FINAL_SHARE = 0.1;

/**
 * The success of the training episodes that ended in the last tenth of a
 * `train` report's curve (at least its last 3 updates), weighted by
 * episodes; null when the curve has no episodes.
 *
 * @example
 * ```ts
 * import { finalTrainingSuccess } from "./train_warning.ts";
 * import assert from "node:assert/strict";
 * const curve = [0, 0, 0, 0.5, 1].map((success) => ({ success, episodes: 10 }));
 * assert.equal(finalTrainingSuccess({ curve }), 0.5);
 * ```
 */
export function finalTrainingSuccess(report: Json | undefined): number | null {
  const curve = (report as { curve?: unknown } | null)?.curve;
  if (!Array.isArray(curve) || curve.length === 0) return null;
  const n = Math.min(
    curve.length,
    Math.max(3, Math.ceil(curve.length * FINAL_SHARE)),
  );
  let ok = 0, episodes = 0;
  for (const p of curve.slice(-n)) {
    const { success, episodes: e } = p as {
      success?: unknown;
      episodes?: unknown;
    };
    if (typeof success !== "number" || typeof e !== "number" || e <= 0) {
      continue;
    }
    ok += success * e;
    episodes += e;
  }
  return episodes > 0 ? ok / episodes : null;
}

/** The warning of a `train` result whose final training success is below {@linkcode LEARNING_THRESHOLD}, else null. */
export function trainingWarning(
  result: { readonly value: Json; readonly report?: Json },
): ResultWarning | null {
  const s = finalTrainingSuccess(result.report);
  if (s === null || s >= LEARNING_THRESHOLD) return null;
  return {
    summary: "the policy did not learn its training task",
    detail: `final training success ${s.toFixed(2)} < ${
      LEARNING_THRESHOLD.toFixed(2)
    }`,
    advice:
      "where every policy of a comparison is like this, its cells measure nothing; give training more experience (samples or updates, e.g. --set curriculum.each.policy.with.samples=150000) or an easier start configuration",
  };
}
