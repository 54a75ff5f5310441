/**
 * Running a plan (`@envsmith/engine/run`): the plan against the cache, the scheduler, jobs, job specs, progress, and the built-in `exec` kind.
 *
 * @module
 */
export {
  makePlan,
  type Plan,
  type PlanItem,
  type PlanOptions,
  type PlanStatus,
  selectNodes,
} from "./plan.ts";
export {
  checkReadiness,
  NotReadyError,
  readinessProblem,
} from "./readiness.ts";
export {
  displayParams,
  ReadyQueue,
  resolveJob,
  runManifest,
  runPlan,
  type RunPlanOptions,
  type RunResult,
} from "./scheduler.ts";
export {
  claimKey,
  type ClaimOptions,
  executeJob,
  type ExecuteOptions,
  type Job,
  type JobOutcome,
  type JobRunner,
  NodeFailure,
  type NodeFailureOptions,
} from "./job.ts";
export { jobFromSpec, type JobSpec, writeJobSpec } from "./job_spec.ts";
export {
  defaultReporter,
  formatDuration,
  PlainReporter,
  ProgressFileReporter,
  type Reporter,
  SilentReporter,
  TtyReporter,
} from "./progress.ts";
export {
  estimateNode,
  estimateNodeFrom,
  formatRunSnapshot,
  type NodeTimes,
  nodeTimes,
  type OutlineNode,
  progressBar,
  type RunOutline,
  runOutline,
  RunProgress,
  type RunSnapshot,
} from "./run_progress.ts";
export { exec, type ExecParams, outputName } from "./exec_kind.ts";
export { builtinKinds } from "./exec_kind.ts";
export {
  type ChildOptions,
  type ChildResult,
  ChildSpawnError,
  type ChildStream,
  describeExit,
  runChild,
} from "./child_process.ts";
export {
  boxDetail,
  type CollapsedEdge,
  type CollapsedGraph,
  collapsedId,
  type CollapsedNode,
  collapseGraph,
  toDot,
  toMermaid,
} from "./plan_graph.ts";
export {
  DEFAULT_WORKER_MEMORY_BYTES,
  type WorkerHooks,
  WorkerPool,
  type WorkerPoolOptions,
  type WorkerPoolStats,
} from "./worker_pool.ts";
export {
  callProgram,
  PROGRAM_STDOUT_CAP,
  ProgramCallError,
  type ProgramCallOptions,
  type ProgramFailure,
} from "./program_call.ts";
export { callProgramSync } from "./program_call_sync.ts";
