/**
 * The bash script a remote job runs: it runs `run-node KEY` with the same
 * Deno binary and CLI as the submitting process and leaves an exit-status
 * file beside the log, so the remote executor can tell what happened even
 * after the scheduler has forgotten the job. As an array job, the task's
 * index (an environment variable the scheduler sets) picks the node. The
 * status file is written to a temporary name and renamed in the same
 * directory (atomic on NFS too). Any backend whose scheduler runs bash
 * scripts (Slurm, PBS, LSF, SGE, ...) can submit this script.
 *
 * @module
 */

/** One node the script runs. */
export interface ScriptTask {
  /** Node key. */
  readonly key: string;
  /** Node id (for the log's first line). */
  readonly id: string;
  /** Exit-status file to write. */
  readonly status: string;
  /** Progress file `run-node` keeps current. */
  readonly progress: string;
}

/** The scheduler's environment variables the script reads. */
export interface SchedulerVariables {
  /** The scheduler's name in the log's first line, e.g. `slurm`. */
  readonly label: string;
  /** The variable with the job's id, e.g. `SLURM_JOB_ID` or `PBS_JOBID`. */
  readonly jobId: string;
  /** The variable with the array index (0-based), e.g. `SLURM_ARRAY_TASK_ID`; unset means task 0. */
  readonly index: string;
  /** The variable with the array's own id, when the scheduler has one (`SLURM_ARRAY_JOB_ID`). */
  readonly arrayJobId?: string;
}

/** What {@linkcode jobScript} needs. */
export interface JobScriptOptions {
  /** The Deno binary on the worker. */
  readonly deno: string;
  /** Deno arguments that start the CLI with the cache, e.g. `run -A cli.ts --cache DIR`. */
  readonly args: readonly string[];
  /** Working directory (that of the submitting process). */
  readonly cwd: string;
  /** The nodes: one, or one per array task (the index variable picks). */
  readonly tasks: readonly ScriptTask[];
  /** A comment line (experiment, run). */
  readonly title: string;
  /** The scheduler's variables. */
  readonly scheduler: SchedulerVariables;
}

/** Quotes a string for bash (single quotes). */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./=:,@%+-]+$/.test(s)
    ? s
    : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The text of the job script.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { jobScript } from "./job_script.ts";
 * const text = jobScript({
 *   deno: "/usr/bin/deno",
 *   args: ["run", "-A", "/repo/cli.ts", "--cache", "/shared/cache"],
 *   cwd: "/repo",
 *   tasks: [{ key: "k1", id: "a", status: "/s/a.status", progress: "/s/a.progress" }],
 *   title: "experiment x",
 *   scheduler: { label: "pbs", jobId: "PBS_JOBID", index: "PBS_ARRAY_INDEX" },
 * });
 * assert.match(text, /i=\$\{PBS_ARRAY_INDEX:-0\}/);
 * ```
 */
export function jobScript(o: JobScriptOptions): string {
  const arr = (xs: readonly string[]) => `(${xs.map(shellQuote).join(" ")})`;
  const cmd = [o.deno, ...o.args].map(shellQuote).join(" ");
  const { label, jobId, index, arrayJobId } = o.scheduler;
  const task = arrayJobId
    ? `\${${arrayJobId}:+ (array task \${${arrayJobId}}_\${${index}:-})}`
    : `\${${index}:+ (array task \${${index}})}`;
  return `#!/bin/bash
# ${o.title.replace(/\n/g, " ")}
# Written by envsmith's ${label} executor; each task runs one node:
#   ${cmd} run-node KEY
set -u
keys=${arr(o.tasks.map((t) => t.key))}
ids=${arr(o.tasks.map((t) => t.id))}
statuses=${arr(o.tasks.map((t) => t.status))}
progress=${arr(o.tasks.map((t) => t.progress))}
i=\${${index}:-0}
key=\${keys[$i]}
status=\${statuses[$i]}
echo "# envsmith node \${ids[$i]} key $key: ${label} job \${${jobId}:-?}${task} on $(hostname) at $(date -u +%Y-%m-%dT%H:%M:%SZ)"
finish() {
  printf '{"rc":%d,"signal":"%s","host":"%s","job":"%s","end":"%s"}\\n' "$1" "$2" "$(hostname)" "\${${jobId}:-}" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$status.tmp.$$" && mv -f "$status.tmp.$$" "$status"
}
cd ${shellQuote(o.cwd)} || { finish 2 ""; exit 2; }
export ENVSMITH_PROGRESS_FILE="\${progress[$i]}"
${cmd} run-node "$key" &
child=$!
# Schedulers send SIGTERM on cancel and at the time limit (SIGKILL follows
# after a grace period): pass it on, let run-node stop, and record the signal.
trap 'kill -TERM "$child" 2>/dev/null; wait "$child"; rc=$?; finish "$rc" TERM; exit "$rc"' TERM
wait "$child"
rc=$?
finish "$rc" ""
exit "$rc"
`;
}
