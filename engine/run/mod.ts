/**
 * Running a plan (`@envsmith/engine/run`): the plan against the cache, the scheduler, progress reporters, the plan's graph collapsed for drawing, the built-in `exec` kind, and running a child program (a node kind's own program, with its exit described in one line).
 *
 * @module
 */
export { makePlan } from "./plan.ts";
export { runPlan } from "./scheduler.ts";
export { type Reporter, SilentReporter } from "./progress.ts";
export { builtinKinds } from "./exec_kind.ts";
export { describeExit, runChild } from "./child_process.ts";
export { boxDetail, type CollapsedGraph, collapseGraph } from "./plan_graph.ts";
export {
  callProgram,
  ProgramCallError,
  type ProgramCallOptions,
} from "./program_call.ts";
export { callProgramSync } from "./program_call_sync.ts";
