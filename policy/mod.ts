/**
 * Policy learning for envsmith: a batched MLP with hand-written
 * forward/backward on `Float32Array`, Adam, PPO and GRPO maths, ONNX
 * checkpoints (export with onnx-proto, batched inference with
 * onnxruntime-node), observation encoding and training on MAPF-FrozenLake.
 *
 * The ONNX policy contract (input `obs` float32 `[batch, D]`, outputs
 * `logits` float32 `[batch, 5]` and optional `value` float32 `[batch, 1]`) is
 * documented in `onnx_export.ts`; the observation layout (versioned by
 * {@linkcode OBS_VERSION}) in `observation.ts`; reward shaping in `reward.ts`.
 *
 * Typical use:
 * Not run: a sketch of a whole training run (minutes); trainer_test.ts and onnx_test.ts run its steps.
 * ```ts ignore
 * const ck = initCheckpoint({ hidden: [64, 64], seed: 1 });      // or loadCheckpoint(bytes)
 * const trainer = new Trainer(ck, mapfTrainingSource(InstancePool.from(instances)), { algo: "ppo", seed: 1 });
 * for (let i = 0; i < 100; i++) trainer.update();                // one CurvePoint each
 * const onnxBytes = saveCheckpoint(trainer.checkpoint());        // resumable ONNX checkpoint
 * ```
 *
 * @module
 */
export {
  type Activation,
  type LayerLayout,
  Mlp,
  type MlpInitOptions,
  mlpLayout,
  type MlpSpec,
  MlpWorkspace,
} from "./mlp.ts";
export {
  Adam,
  type AdamOptions,
  type AdamState,
  clipGradNorm,
  l2Norm,
} from "./adam.ts";
export {
  gae,
  groupAdvantages,
  normalize,
  ppoLoss,
  type PpoLossOptions,
  type PpoLossStats,
  type PpoMinibatch,
  RunningMeanStd,
} from "./ppo_loss.ts";
export {
  decodeModel,
  exportOnnx,
  type ExportOptions,
  type ImportedPolicy,
  importOnnx,
  INPUT_NAME,
  LOGITS_NAME,
  modelMetadata,
  OPSET,
  POLICY_FORMAT,
  VALUE_NAME,
} from "./onnx_export.ts";
export {
  OnnxPolicy,
  type OnnxPolicyOptions,
  type PolicyOutputs,
} from "./onnx_policy.ts";
export { PolicyContractError } from "./errors.ts";
export {
  checkObsSpec,
  DEFAULT_OBS,
  MAX_RADIUS,
  OBS_CHANNELS,
  OBS_VERSION,
  obsSize,
  type ObsSpec,
  obsSpecForSize,
  ReferenceObservationEncoder,
  SCALAR_FEATURES,
} from "./observation.ts";
export {
  ObservationEncoder,
  type ObservationEncoderOptions,
} from "./observation_encoder.ts";
export {
  agentRewards,
  DEFAULT_REWARD,
  type RewardSpec,
  rewardSpec,
} from "./reward.ts";
export {
  type Kernel,
  Learner,
  type LearnerOptions,
  type PolicyLearner,
  sampleActions,
  SampleBuffer,
  sampleFromLogProbs,
  type UpdateStats,
} from "./learner.ts";
export { SimdLearner, type SimdLearnerSizes } from "./simd_learner.ts";
export { SimdMlp } from "./simd_mlp.ts";
export { KernelArena } from "./kernels/arena.ts";
export { mlpKernelDigest, obsKernelDigest } from "./kernels/modules.ts";
export {
  ACTIONS,
  type Checkpoint,
  initCheckpoint,
  type InitOptions,
  loadCheckpoint,
  saveCheckpoint,
  type TrainCounters,
} from "./checkpoint.ts";
export {
  type Algo,
  type CurvePoint,
  Trainer,
  type TrainerOptions,
} from "./trainer.ts";
export { mapfTrainingSource } from "./mapf_training_env.ts";
export type {
  TrainingEnv,
  TrainingEnvOptions,
  TrainingEnvSource,
} from "./training_env.ts";
export { accumulatePositiveAdvantages, positiveValueLoss } from "./pvl.ts";
export {
  type Batch,
  type BufferLevel,
  LevelSampler,
  replayDistribution,
  SAMPLER_BOX,
  SAMPLER_DEFAULTS,
  SAMPLER_KINDS,
  type SamplerKind,
  type SamplerOptions,
  type SamplerState,
} from "./level_sampler.ts";
export {
  type SamplerTrainingOptions,
  type SamplerTrainingResult,
  trainWithSampler,
} from "./sampler_training.ts";
export {
  type EpisodeResult,
  mlpRunner,
  onnxRunner,
  type PolicyRunner,
  rollout,
  type RolloutOptions,
  type RolloutResult,
  type RolloutSummary,
  summarize,
} from "./rollout.ts";
export {
  episodeResult,
  LLM_SYSTEM,
  type LlmEpisodeInfo,
  llmRollout,
  type LlmRolloutOptions,
  parseLlmPlan,
} from "./llm_policy.ts";
