/**
 * The batch script of a Slurm job: the remote executor's job script
 * ({@linkcode jobScript}) reading Slurm's variables (`SLURM_JOB_ID`,
 * `SLURM_ARRAY_TASK_ID`, `SLURM_ARRAY_JOB_ID`).
 *
 * @module
 */
import {
  jobScript,
  type JobScriptOptions,
  type SchedulerVariables,
} from "./job_script.ts";

/** What {@linkcode batchScript} needs: a job script without the scheduler. */
export type ScriptOptions = Omit<JobScriptOptions, "scheduler">;

/** Slurm's variables. */
export const SLURM_VARIABLES: SchedulerVariables = {
  label: "slurm",
  jobId: "SLURM_JOB_ID",
  index: "SLURM_ARRAY_TASK_ID",
  arrayJobId: "SLURM_ARRAY_JOB_ID",
};

/** The text of the batch script. */
export function batchScript(o: ScriptOptions): string {
  return jobScript({ ...o, scheduler: SLURM_VARIABLES });
}
