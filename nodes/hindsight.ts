/**
 * The `hindsight` node kind: one state with every tried candidate change's
 * held-out progress after one stage (validation split only): the engineer
 * benchmark's data.
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
import { parseEnvConfig } from "../schemas/env_config.ts";
import { parseFindings } from "../schemas/findings.ts";
import { changeLabel } from "../engineer/learned_features.ts";
import {
  heldoutSuccess,
  type HindsightState,
  matchChange,
  TransitionInputError,
} from "../engineer/learned_data.ts";

/** Parameters of `hindsight`. */
export interface HindsightParams {
  /** The state's findings. */
  readonly findings: unknown;
  /** Earlier stages' findings. */
  readonly history?: unknown[] | undefined;
  /** The configuration trained on. */
  readonly config: unknown;
  /** The stage index. */
  readonly stage: number;
  /** The state's held-out evaluation (validation split). */
  readonly heldout: unknown;
  /** Per tried branch: its configuration and held-out evaluation after a stage on it. */
  readonly branches: { config: unknown; heldout: unknown }[];
  /** Name of the curriculum. */
  readonly group?: string | undefined;
}

/** The `hindsight` kind. */
export const hindsight: NodeKind<HindsightParams, Json> = {
  name: "hindsight",
  description:
    "One state with every tried candidate change's held-out progress after one stage (validation split only): the engineer benchmark's data",
  params: v.strictObject({
    findings: v.pipe(v.unknown(), v.description("the state's findings")),
    history: v.optional(listParam("earlier stages' findings, oldest first")),
    config: v.pipe(v.unknown(), v.description("the configuration trained on")),
    stage: v.pipe(v.number(), v.integer(), v.minValue(0)),
    heldout: v.pipe(
      v.unknown(),
      v.description("the state's held-out evaluation (validation split)"),
    ),
    branches: v.pipe(
      v.array(v.strictObject({ config: v.unknown(), heldout: v.unknown() })),
      v.minLength(1),
      v.description(
        "per tried candidate: { config, heldout } after one stage on it",
      ),
    ),
    group: v.optional(v.string()),
  }),
  paramDocs: {
    findings: "the state's findings (the stage branched from)",
    history: "earlier stages' findings, oldest first (read by context full)",
    config: "the configuration trained on in the state's stage",
    stage: "the stage index of the state",
    heldout: "the state's held-out evaluation (validation split only)",
    branches: "per tried candidate: { config, heldout } after one stage on it",
    group: "name of the curriculum (default: the node's id)",
  },
  module: import.meta.url,
  async run(p, ctx) {
    await Promise.resolve();
    const state = userErrors(() => {
      const base = heldoutSuccess(p.heldout, `hindsight ${ctx.id}: heldout`);
      const seen = new Set<string>();
      const outcomes: HindsightState["outcomes"] = [];
      p.branches.forEach((b, i) => {
        const c = matchChange(learnedFamily, p.config, b.config);
        if (c === null) {
          throw new TransitionInputError(
            `hindsight ${ctx.id}: branches[${i}].config is not one candidate step of config; give learned.candidate nodes' values`,
          );
        }
        const h = heldoutSuccess(
          b.heldout,
          `hindsight ${ctx.id}: branches[${i}].heldout`,
        );
        const label = changeLabel(c);
        if (seen.has(label)) return; // a repeated candidate (past the last: keep)
        seen.add(label);
        outcomes.push({ change: c, label, progress: h - base });
      });
      return {
        group: p.group ?? ctx.id,
        stage: p.stage,
        config: parseEnvConfig(p.config),
        findings: parseFindings(p.findings, "findings"),
        history: (p.history ?? []).map((f, i) =>
          parseFindings(f, `history[${i}]`)
        ),
        outcomes,
      };
    });
    const best = state.outcomes.reduce((a, b) =>
      b.progress > a.progress ? b : a
    );
    ctx.log(
      `${state.outcomes.length} candidates; best ${best.label} ${
        best.progress.toFixed(3)
      }`,
    );
    return ({
      value: {
        version: 1,
        ...stateJson(state),
        outcomes: state.outcomes as unknown as Json,
      } as unknown as Json,
      report: {
        candidates: state.outcomes.length,
        best: best.label,
        best_progress: best.progress,
      },
    });
  },
};
