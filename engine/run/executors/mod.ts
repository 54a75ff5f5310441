/**
 * Executors (`@envsmith/engine/executor`): where nodes run, registered like kinds; `local` and `slurm` are built in.
 *
 * @module
 */
export {
  type BlockIssues,
  builtinExecutors,
  createExecutor,
  type Executor,
  type ExecutorKind,
  type ExecutorRun,
} from "../executor.ts";
export {
  local,
  localExecutor,
  type LocalExecutorOptions,
  type LocalExecutorSpec,
} from "./local.ts";
export {
  slurm,
  SlurmExecutor,
  slurmExecutorKind,
  type SlurmExecutorKindOptions,
  type SlurmExecutorOptions,
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
