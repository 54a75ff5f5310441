/**
 * Fits the `learned` engineer: one model per context type on the same
 * transitions with the same budget, each chosen among the model classes by
 * held-out error ({@linkcode fitModel}). The result is plain JSON: the
 * value of a `learned.fit` node, which `learned` engineers load.
 *
 * @module
 */
import { CONTEXT_TYPES, type ContextType } from "./context.ts";
import type { EnvironmentFamily } from "../families/family.ts";
import { changeSlots, steppedDims } from "./learned_features.ts";
import { trainingRows, type Transition } from "./learned_data.ts";
import {
  fitModel,
  type GbtOptions,
  type Model,
  type Trial,
} from "./learned_model.ts";

/** The fitted model of one context type. */
export interface ContextModel {
  /** Feature names of the context (the model's input starts with them). */
  readonly features: string[];
  /** The chosen class (`ridge(lambda=10)`, `gbt`). */
  readonly chosen: string;
  /** Every class's held-out error. */
  readonly trials: Trial[];
  /** Transitions fitted on. */
  readonly rows: number;
  /** The model. */
  readonly model: Model;
}

/** What `learned` engineers load (a `learned.fit` node's value). */
export interface LearnedModels {
  /** Format version. */
  readonly version: 1;
  /** The family the models were fitted on. */
  readonly family: string;
  /** Its stepped dimensions, in order (the change slots). */
  readonly dims: string[];
  /** Change slots (keep and two per dimension). */
  readonly slots: number;
  /** Transitions given, and those left out (not a single candidate step). */
  readonly transitions: { readonly given: number; readonly skipped: number };
  /** One model per context type. */
  readonly models: Partial<Record<ContextType, ContextModel>>;
}

/** The current format version of {@linkcode LearnedModels}. */
export const LEARNED_MODELS_VERSION = 1;

/**
 * One model per context type in `types` on `transitions`.
 *
 * @throws {RangeError} when too few transitions are candidate steps.
 */
export function fitLearned(
  family: EnvironmentFamily,
  transitions: readonly Transition[],
  options: { seed: number; types?: readonly ContextType[]; gbt?: GbtOptions },
): LearnedModels {
  const models: Partial<Record<ContextType, ContextModel>> = {};
  let skipped = 0;
  for (const type of options.types ?? CONTEXT_TYPES) {
    const rows = trainingRows(family, type, transitions);
    skipped = rows.skipped;
    const fit = fitModel(
      rows.xs,
      rows.ys,
      rows.groups,
      options.seed,
      options.gbt,
    );
    models[type] = {
      features: rows.names,
      chosen: fit.chosen,
      trials: fit.trials,
      rows: fit.rows,
      model: fit.model,
    };
  }
  return {
    version: LEARNED_MODELS_VERSION,
    family: family.name,
    dims: [...steppedDims(family)],
    slots: changeSlots(family),
    transitions: { given: transitions.length, skipped },
    models,
  };
}
