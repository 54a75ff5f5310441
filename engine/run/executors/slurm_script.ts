/**
 * The batch script of a Slurm job that runs one node (or, as a job array,
 * one node per array task): it runs `run-node KEY` with the same Deno binary
 * and CLI as the submitting process and leaves an exit-status file beside
 * the log, so the executor can tell what happened even after the controller
 * has forgotten the job. The status file is written to a temporary name and
 * renamed in the same directory (atomic on NFS too).
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

/** What {@linkcode batchScript} needs. */
export interface ScriptOptions {
  /** The Deno binary on the compute node. */
  readonly deno: string;
  /** Deno arguments that start the CLI with the cache, e.g. `run -A cli.ts --cache DIR`. */
  readonly args: readonly string[];
  /** Working directory (that of the submitting process). */
  readonly cwd: string;
  /** The nodes: one, or one per array task (`SLURM_ARRAY_TASK_ID` picks). */
  readonly tasks: readonly ScriptTask[];
  /** A comment line (experiment, run). */
  readonly title: string;
}

/** Quotes a string for bash (single quotes). */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./=:,@%+-]+$/.test(s)
    ? s
    : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The text of the batch script. */
export function batchScript(o: ScriptOptions): string {
  const arr = (xs: readonly string[]) => `(${xs.map(shellQuote).join(" ")})`;
  const cmd = [o.deno, ...o.args].map(shellQuote).join(" ");
  return `#!/bin/bash
# ${o.title.replace(/\n/g, " ")}
# Written by envsmith's Slurm executor; each task runs one node:
#   ${cmd} run-node KEY
set -u
keys=${arr(o.tasks.map((t) => t.key))}
ids=${arr(o.tasks.map((t) => t.id))}
statuses=${arr(o.tasks.map((t) => t.status))}
progress=${arr(o.tasks.map((t) => t.progress))}
i=\${SLURM_ARRAY_TASK_ID:-0}
key=\${keys[$i]}
status=\${statuses[$i]}
echo "# envsmith node \${ids[$i]} key $key: slurm job \${SLURM_JOB_ID:-?}\${SLURM_ARRAY_JOB_ID:+ (array task \${SLURM_ARRAY_JOB_ID}_\${SLURM_ARRAY_TASK_ID:-})} on $(hostname) at $(date -u +%Y-%m-%dT%H:%M:%SZ)"
finish() {
  printf '{"rc":%d,"signal":"%s","host":"%s","job":"%s","end":"%s"}\\n' "$1" "$2" "$(hostname)" "\${SLURM_JOB_ID:-}" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$status.tmp.$$" && mv -f "$status.tmp.$$" "$status"
}
cd ${shellQuote(o.cwd)} || { finish 2 ""; exit 2; }
export ENVSMITH_PROGRESS_FILE="\${progress[$i]}"
${cmd} run-node "$key" &
child=$!
# Slurm sends SIGTERM on scancel and at the time limit (SIGKILL follows after
# KillWait): pass it on, let run-node stop, and record the signal.
trap 'kill -TERM "$child" 2>/dev/null; wait "$child"; rc=$?; finish "$rc" TERM; exit "$rc"' TERM
wait "$child"
rc=$?
finish "$rc" ""
exit "$rc"
`;
}
