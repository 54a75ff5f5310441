/**
 * Executors (`@envsmith/engine/executor`): where nodes run. They form a
 * registry, like node kinds: `local` (the default) and `slurm` are built in
 * (`builtin.ts` exports them as a plugin module would), and a cluster
 * backend is a plugin built on the remote-executor base (`remote.ts`).
 *
 * @module
 */
export {
  type Executor,
  type ExecutorExperiment,
  type ExecutorKind,
  type ExecutorRun,
  type ExecutorStore,
  registerExecutors,
} from "../executor.ts";
export { executors as builtinExecutors } from "./builtin.ts";
export {
  type RemoteBackend,
  remoteExecutorKind,
  type RemoteState,
  type RemoteSubmission,
  type RemoteSubmitted,
  SubmitError,
} from "./remote.ts";
export { type RemoteExecutorSpec, remoteSpecEntries } from "./remote_spec.ts";
export { jobScript } from "./job_script.ts";
export { local } from "./local.ts";
export { slurmExecutorKind } from "./slurm.ts";
export { type SlurmExecutorSpec } from "./slurm_spec.ts";
export {
  commandSlurmClient,
  runCommandLine,
  type SlurmClient,
  slurmUnavailable,
} from "./slurm_client.ts";
