/**
 * The `learned` engineer: its decision rule is fitted, not written. It
 * scores every candidate change (keep; one step of one stepped dimension,
 * up or down) with a model of the next stage's learning progress given
 * the features of its context type and the configuration, and makes the
 * change with the best prediction (ties: the first candidate, keep first).
 * The model is a `learned.fit` node's value (`engineer: { name: learned,
 * model: $learned_model }`), one model per context type; the engineer
 * reads the one of its context type.
 *
 * The exploratory curricula the models learn from are made by the
 * `explore` engineer (`explore.ts`).
 *
 * @module
 */
import * as v from "valibot";
import type { Engineer, Proposal, ProposeInput } from "./engineer.ts";
import { EngineerConfigError, type EngineerKind } from "./engineer_kind.ts";
import type { EnvironmentFamily } from "../families/family.ts";
import {
  candidateChanges,
  changeSlot,
  contextFeatures,
  modelInput,
  steppedDims,
} from "./learned_features.ts";
import { predict } from "./learned_model.ts";
import type { LearnedModels } from "./learned_fit.ts";

/** What is wrong with a models value for `family`, in one line, or null. */
export function modelsProblem(
  models: unknown,
  family: EnvironmentFamily,
): string | null {
  const m = models as Partial<LearnedModels> | null;
  if (m === null || typeof m !== "object" || m.version !== 1 || !m.models) {
    return "model must be a learned.fit node's value (model: $NODE)";
  }
  if (m.family !== family.name) {
    return `model was fitted on family ${m.family}, the redesign is on ${family.name}`;
  }
  const dims = steppedDims(family);
  if (JSON.stringify(m.dims) !== JSON.stringify(dims)) {
    return `model's dimensions (${m.dims?.join(", ")}) are not the family's (${
      dims.join(", ")
    }); refit it`;
  }
  return null;
}

/**
 * The `learned` engineer over fitted `models`.
 *
 * @throws {EngineerConfigError} when the models do not fit the family.
 */
export function learnedEngineer(
  models: LearnedModels,
  family: EnvironmentFamily,
): Engineer {
  const problem = modelsProblem(models, family);
  if (problem !== null) {
    throw new EngineerConfigError(`engineer learned: ${problem}`);
  }
  return {
    name: "learned",
    propose(input: ProposeInput): Promise<Proposal> {
      const type = input.context.json.type;
      const m = models.models[type];
      if (m === undefined) {
        return Promise.reject(
          new EngineerConfigError(
            `engineer learned: the model has no ${type} context model (it has ${
              Object.keys(models.models).join(", ")
            }); fit it with that context type`,
          ),
        );
      }
      const f = contextFeatures(type, input.context.json, family);
      const scored = candidateChanges(family, input.config).map((c) => ({
        c,
        p: predict(
          m.model,
          modelInput(
            f.values,
            changeSlot(family, c.change),
            models.slots,
            c.change.dir,
          ),
        ),
      }));
      let best = scored[0]!;
      for (const s of scored) if (s.p > best.p + 1e-12) best = s;
      const why = `predicted progress ${
        best.p.toFixed(4)
      } for ${best.c.label} (${m.chosen}; best of ${scored.length} candidates)`;
      return Promise.resolve({
        config: best.c.config as ProposeInput["config"],
        rationale: `learned engineer: ${why}.`,
        events: [{
          type: "choice",
          detail: scored.map((s) => `${s.c.label} ${s.p.toFixed(4)}`).join(
            ", ",
          ),
        }],
        reads: f.names,
        report: { learned: { change: best.c.label, predicted: best.p } },
      });
    },
  };
}

const _needFamily = (name: string) =>
  new EngineerConfigError(
    `engineer ${name}: no environment family given (a redesign node gives its family)`,
  );

/** The `learned` engineer kind: `engineer: { name: learned, model: $NODE }`. */
export const engineer: EngineerKind<{ model: unknown }> = {
  name: "learned",
  description:
    "chooses the candidate change (keep, one step of one dimension) with the best predicted learning progress under a fitted model (model: a learned.fit node)",
  families: "any",
  params: v.strictObject({
    model: v.pipe(
      v.unknown(),
      v.description("the fitted models: a learned.fit node's value ($NODE)"),
    ),
  }),
  module: import.meta.url,
  create: (params, env) => {
    if (env.family === undefined) throw _needFamily("learned");
    return learnedEngineer(params.model as LearnedModels, env.family);
  },
};
