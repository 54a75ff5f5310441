/**
 * Test helpers (not part of the API): two stand-ins for a Slurm cluster.
 *
 * - {@linkcode BashSlurm} runs every submitted batch script with bash on this
 *   machine (one process per array task, `SLURM_*` variables set, output to
 *   the `--output` file), so the executor and its scripts are exercised
 *   end to end without a cluster.
 * - {@linkcode ScriptedSlurm} runs nothing: a test sets what `squeue`
 *   answers, to drive the executor into lost jobs, hopeless reasons and
 *   unreachable controllers.
 *
 * @module
 */
import type { JobInfo, QueueState, SlurmClient } from "./slurm_client.ts";

interface _Job {
  state: string;
  reason: string;
  exit: string;
  proc?: Deno.ChildProcess;
  name: string;
  args: readonly string[];
}

/** A fake cluster that runs batch scripts with bash, at once and all in parallel. */
export class BashSlurm implements SlurmClient {
  /** Every job and array task by id. */
  readonly jobs = new Map<string, _Job>();
  /** sbatch argument lists in submission order. */
  readonly submissions: { script: string; args: readonly string[] }[] = [];
  /** Ids passed to cancel. */
  readonly cancelled: string[] = [];
  #next = 100;
  #running = new Set<Promise<unknown>>();

  /** @inheritdoc */
  submit(script: string, args: readonly string[]): Promise<string> {
    this.submissions.push({ script, args });
    const id = String(this.#next++);
    const arg = (name: string) =>
      args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
    const range = arg("array");
    const n = range ? Number(range.split("-")[1]) + 1 : 1;
    for (let i = 0; i < n; i++) {
      const tid = range ? `${id}_${i}` : id;
      const out = (arg("output") ?? "/dev/null").replace(/%a/g, String(i))
        .replace(/%j/g, tid);
      const proc = new Deno.Command("bash", {
        args: ["-c", 'exec bash "$0" >>"$1" 2>&1', script, out],
        env: {
          SLURM_JOB_ID: String(Number(id) + i),
          ...(range
            ? { SLURM_ARRAY_JOB_ID: id, SLURM_ARRAY_TASK_ID: String(i) }
            : {}),
        },
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn();
      const job: _Job = {
        state: "RUNNING",
        reason: "None",
        exit: "0:0",
        proc,
        name: arg("job-name") ?? "",
        args,
      };
      this.jobs.set(tid, job);
      const p = proc.status.then((s) => {
        if (job.state === "RUNNING") {
          job.state = s.success ? "COMPLETED" : "FAILED";
          job.reason = s.success ? "None" : "NonZeroExitCode";
        }
        job.exit = `${s.code}:${s.signal ? 15 : 0}`;
      });
      this.#running.add(p);
      p.finally(() => this.#running.delete(p));
    }
    return Promise.resolve(id);
  }
  /** @inheritdoc */
  queue(ids: readonly string[]): Promise<Map<string, QueueState> | null> {
    const out = new Map<string, QueueState>();
    for (const id of ids) {
      const j = this.jobs.get(id);
      if (j) {
        out.set(id, { id, state: j.state, reason: j.reason, nodes: "fake" });
      }
    }
    return Promise.resolve(out);
  }
  /** @inheritdoc */
  show(id: string): Promise<JobInfo | null> {
    const j = this.jobs.get(id);
    return Promise.resolve(
      j
        ? {
          id,
          state: j.state,
          reason: j.reason,
          nodes: "fake",
          exitCode: j.exit,
          runTime: "00:00:01",
          timeLimit: "UNLIMITED",
        }
        : null,
    );
  }
  /** @inheritdoc */
  cancel(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      this.cancelled.push(id);
      const j = this.jobs.get(id);
      if (j && j.state === "RUNNING") {
        j.state = "CANCELLED";
        try {
          j.proc?.kill("SIGTERM");
        } catch { /* exited */ }
      }
    }
    return Promise.resolve();
  }
  /** Waits for every process to exit. */
  async settle(): Promise<void> {
    while (this.#running.size) await Promise.all([...this.#running]);
  }
}

/** A fake cluster that runs nothing: tests decide what the queue says. */
export class ScriptedSlurm implements SlurmClient {
  /** What squeue answers per id (absent: unknown); `null` for no answer at all. */
  states: Map<string, QueueState> | null = new Map();
  /** sbatch calls. */
  readonly submissions: { script: string; args: readonly string[] }[] = [];
  /** Ids passed to cancel. */
  readonly cancelled: string[] = [];
  /** Makes sbatch fail with this message. */
  submitError: string | undefined;
  /** Called on each submission with the new id. */
  onSubmit: ((id: string, script: string) => void) | undefined;
  /** How long sbatch takes (ms). */
  submitDelayMs = 0;
  #next = 500;

  /** @inheritdoc */
  async submit(script: string, args: readonly string[]): Promise<string> {
    if (this.submitDelayMs) {
      await new Promise((r) => setTimeout(r, this.submitDelayMs));
    }
    if (this.submitError) throw new Error(this.submitError);
    this.submissions.push({ script, args });
    const id = String(this.#next++);
    this.onSubmit?.(id, script);
    return id;
  }
  /** @inheritdoc */
  queue(ids: readonly string[]): Promise<Map<string, QueueState> | null> {
    if (this.states === null) return Promise.resolve(null);
    const out = new Map<string, QueueState>();
    for (const id of ids) {
      const s = this.states.get(id);
      if (s) out.set(id, s);
    }
    return Promise.resolve(out);
  }
  /** @inheritdoc */
  show(id: string): Promise<JobInfo | null> {
    const s = this.states?.get(id);
    return Promise.resolve(
      s
        ? {
          ...s,
          exitCode: "0:0",
          runTime: "00:00:05",
          timeLimit: "00:01:00",
        }
        : null,
    );
  }
  /** @inheritdoc */
  cancel(ids: readonly string[]): Promise<void> {
    this.cancelled.push(...ids);
    return Promise.resolve();
  }
}
