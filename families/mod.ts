/**
 * Environment families: the interface every family implements
 * ({@linkcode EnvironmentFamily}: a configuration space with bounds, presets
 * and per-dimension direction of difficulty, a deterministic generator, a
 * mutation operator, text renderings, suites and diagnosis hooks) and the
 * registry that holds the built-in families and a plugin's.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DEFAULT_FAMILY, FamilyRegistry } from "./mod.ts";
 * assert.equal(DEFAULT_FAMILY, "mapf-frozenlake");
 * assert.equal(new FamilyRegistry().has(DEFAULT_FAMILY), false);
 * ```
 *
 * @module
 */
export {
  type BatchEnvironmentFactory,
  clampToDimension,
  curriculumOrder,
  DEFAULT_FAMILY,
  type Dimension,
  dimension,
  type EnvironmentFamily,
  type EpisodeOutcome,
  type FailureCase,
  type FamilyComponent,
  type FamilyDiagnosis,
  type FamilyRng,
  type FamilySplit,
  type FamilySuite,
  progress,
  stepConfig,
  stepDimension,
} from "./family.ts";
export {
  familyProblem,
  FamilyRegistrationError,
  FamilyRegistry,
  UnknownFamilyError,
} from "./registry.ts";
