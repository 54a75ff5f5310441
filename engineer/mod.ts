/**
 * Diagnosis and redesign: from rollouts to findings, from findings to the
 * context an engineer sees, and from context to the next training
 * configuration.
 *
 * - {@linkcode diagnose} (episodes -> {@linkcode Findings}); episodes come
 *   from the MAPF trajectory format through {@linkcode episodesFromRollouts}.
 * - {@linkcode buildContext}: context types `none`, `stats`, `failures`,
 *   `behavior`, `full`, as JSON and budgeted text.
 * - Engineers behind one interface ({@linkcode Engineer}:
 *   `propose({ context, config, seed }) -> { config, rationale, events, reads }`):
 *   `fixed`, `random`, `rules` (offline default; rules in rules.ts),
 *   `replay` (PLR/ACCEL-style), `llm` (prompts in `engineer/prompts/`),
 *   and two controls that read no context: `scripted` (replays a given
 *   config: open loop) and `blind` (an informed run's pace, blind choice of
 *   dimension).
 *   Engineers are registered kinds ({@linkcode EngineerKind}, held by an
 *   {@linkcode EngineerRegistry}); {@linkcode createEngineer} builds a
 *   built-in one by name and parameters.
 * - {@linkcode diffConfigs}: structured diff of two configs, for reports.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildContext, createEngineer, diagnose } from "./mod.ts";
 * import { PRESETS } from "../schemas/mod.ts";
 * const findings = diagnose([], { seed: 1, config: PRESETS.easy });
 * const context = buildContext("stats", findings, PRESETS.easy);
 * const next = await createEngineer("rules").propose({ context, config: PRESETS.easy, seed: 1 });
 * assert.ok(next.rationale.startsWith("rules engineer"));
 * ```
 *
 * @module
 */
export type { Findings } from "../schemas/mod.ts";
export { diagnose, type DiagnoseOptions } from "./diagnose.ts";
export { CELL, type EpisodeView } from "./episode.ts";
export { episodesFromRollouts, MissingInstanceError } from "./from_rollouts.ts";
export { type RenderCaseOptions, renderFailureCase } from "./render_case.ts";
export {
  buildContext,
  type BuildContextOptions,
  type BuiltContext,
  CONTEXT_TYPES,
  type ContextType,
  type EngineerContext,
  type HistoryInput,
  isContextType,
  renderContext,
} from "./context.ts";
export {
  type Engineer,
  type EngineerEvent,
  type LlmTally,
  type Proposal,
  type ProposeInput,
} from "./engineer.ts";
export {
  EngineerConfigError,
  type EngineerEnv,
  type EngineerFingerprintInfo,
  type EngineerKind,
  type EngineerParamsSchema,
} from "./engineer_kind.ts";
export { EngineerRegistrationError, EngineerRegistry } from "./registry.ts";
export {
  builtinEngineerRegistry,
  builtinEngineers,
  createEngineer,
} from "./builtins.ts";
export {
  decideRules,
  RULE_THRESHOLDS,
  RULES,
  type RuleSpec,
  type RulesSettings,
  scaledThresholds,
} from "./rules.ts";
export { REPLAY_PARAMS } from "./replay.ts";
export { scriptedEngineer } from "./scripted.ts";
export { blindEngineer, type Pace } from "./blind.ts";
export { checkReply, type ReplyCheck, ungeneratable } from "./reply_check.ts";
export {
  dimensionsText,
  ENGINEER_MAX_TOKENS,
  loadPrompts,
  PROMPT_VARIANTS,
  promptDigest,
  type PromptVariant,
} from "./llm.ts";
export {
  replyGrammar,
  replyJsonSchema,
  replyResponseFormat,
} from "./reply_format.ts";
export {
  type ComponentChange,
  type ConfigDiff,
  diffConfigs,
  type FieldChange,
} from "./diff.ts";
export {
  buildMixture,
  CURRICULUM_DIMS,
  type CurriculumDim,
  curriculumPace,
  step,
  stepsAlong,
} from "./config_ops.ts";
export {
  type BoxDim,
  boxProblem,
  DEFAULT_BOX,
  type DrBox,
  drEngineer,
  sampleBox,
} from "./dr.ts";
export { bandEngineer, bandMove, DEFAULT_BAND_ORDER } from "./band.ts";
export { learnedEngineer, modelsProblem } from "./learned.ts";
export { exploreEngineer } from "./explore.ts";
export {
  type Candidate,
  candidateChanges,
  type Change,
  contextFeatures,
} from "./learned_features.ts";
export { fitLearned, type LearnedModels } from "./learned_fit.ts";
export { fitModel, type Model, predict } from "./learned_model.ts";
export {
  benchEngineers,
  type BenchRow,
  projectChange,
  spearman,
} from "./learned_bench.ts";
export {
  curriculumTransitions,
  heldoutSuccess,
  TestSplitError,
  type Transition,
} from "./learned_data.ts";
export {
  type ProbeCriterion,
  probeEngineer,
  type Prober,
  type ProbeScore,
} from "./probe.ts";
export {
  type LevelIo,
  PLR_DEFAULTS,
  plrEngineer,
  plrReplayProbabilities,
} from "./plr.ts";
export {
  ACCEL_DEFAULTS,
  accelEngineer,
  EDIT_KINDS,
  editLevel,
} from "./accel.ts";
export type {
  EngineerCost,
  Level,
  LevelSetProposal,
  MeasuredLevel,
} from "./levels.ts";
