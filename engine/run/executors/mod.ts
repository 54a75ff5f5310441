/**
 * Executors (`@envsmith/engine/executor`): where nodes run. They form a
 * registry, like node kinds: `local` (the default) and `slurm` are built in
 * (`builtin.ts` exports them as a plugin module would), and a cluster
 * backend is a plugin built on the remote-executor base (`remote.ts`).
 *
 * @module
 */
export {
  type BlockIssues,
  checkExecutor,
  chosenExecutor,
  createExecutor,
  type Executor,
  type ExecutorCapabilities,
  type ExecutorDeclaration,
  type ExecutorKind,
  type ExecutorRun,
  executorsOfModule,
  missingPrograms,
  registerExecutors,
} from "../executor.ts";
export { executors as builtinExecutors } from "./builtin.ts";
export {
  errorFromLog,
  type RemoteBackend,
  RemoteExecutor,
  type RemoteExecutorDefinition,
  remoteExecutorKind,
  type RemoteExecutorOptions,
  type RemoteInfo,
  type RemotePhase,
  type RemoteRun,
  type RemoteState,
  type RemoteSubmission,
  type RemoteSubmitted,
  type RemoteTask,
  SubmitError,
} from "./remote.ts";
export {
  type RemoteExecutorSpec,
  type RemoteSpecEntries,
  remoteSpecEntries,
} from "./remote_spec.ts";
export {
  jobScript,
  type JobScriptOptions,
  type SchedulerVariables,
  type ScriptTask,
  shellQuote,
} from "./job_script.ts";
export {
  local,
  localExecutor,
  type LocalExecutorOptions,
  type LocalExecutorSpec,
} from "./local.ts";
export {
  slurm,
  SlurmBackend,
  slurmExecutorKind,
  type SlurmExecutorKindOptions,
  type SlurmJobResources,
} from "./slurm.ts";
export { type SlurmExecutorSpec, type SlurmResources } from "./slurm_spec.ts";
export {
  commandSlurmClient,
  type JobInfo,
  type QueueState,
  runCommandLine,
  type SlurmClient,
  SlurmCommandError,
  slurmUnavailable,
} from "./slurm_client.ts";
