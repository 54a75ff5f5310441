/**
 * A user-defined executor for the engine's tests, written the way a plugin
 * module writes one: a backend of the remote-executor base whose "cluster"
 * is this machine. Each submission's tasks run the base's job script as
 * detached bash processes (one process group each); the "queue" is the
 * table of those processes. The module exports `executors`, as a plugin
 * module does.
 *
 * Block: `executor: {type: proc, batch: 4, fail_submit: false}` plus the
 * remote fields (`jobs`, `poll_seconds`, `grace_seconds`, `deno`).
 *
 * @module
 */
import { join } from "node:path";
import * as v from "valibot";
import type { ExecutorKind } from "../run/executor.ts";
import {
  type RemoteBackend,
  remoteExecutorKind,
  type RemoteState,
  type RemoteSubmission,
  type RemoteSubmitted,
} from "../run/executors/remote.ts";
import {
  type RemoteExecutorSpec,
  remoteSpecEntries,
} from "../run/executors/remote_spec.ts";
import { jobScript } from "../run/executors/job_script.ts";

/** A parsed `executor: {type: proc}` block. */
export interface ProcSpec extends RemoteExecutorSpec {
  /** `proc`. */
  readonly type: "proc";
  /** Nodes per submission. */
  readonly batch?: number | undefined;
}

const ProcSchema = v.strictObject({
  type: v.literal("proc"),
  ...remoteSpecEntries,
  batch: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
});

interface _Proc {
  state: "RUNNING" | "DONE" | "FAILED" | "KILLED";
  child: Deno.ChildProcess;
}

/** The "cluster": every process it started, by job id (kept for the tests to look at). */
export const procJobs = new Map<string, _Proc>();
/** Every submission's job names, in order (for the tests). */
export const procSubmissions: string[] = [];
let _next = 1;

/** The backend of one run. */
class ProcBackend implements RemoteBackend<null> {
  readonly commands = { submit: "spawn", poll: "ps", cancel: "kill" };
  readonly maxBatch: number;
  constructor(spec: ProcSpec) {
    this.maxBatch = spec.batch ?? 4;
  }
  describe(): string {
    return `processes on this machine, ${this.maxBatch} per submission`;
  }
  resources(): null {
    return null;
  }
  submit(s: RemoteSubmission<null>): Promise<readonly RemoteSubmitted[]> {
    procSubmissions.push(s.name);
    const script = join(s.dir, `${s.stem}.sh`);
    Deno.writeTextFileSync(
      script,
      jobScript({
        ...s,
        scheduler: { label: "proc", jobId: "PROC_JOB_ID", index: "PROC_TASK" },
      }),
    );
    const id = String(_next++);
    return Promise.resolve(s.tasks.map((t, i) => {
      const tid = s.tasks.length > 1 ? `${id}.${i}` : id;
      const child = new Deno.Command("bash", {
        args: ["-c", 'exec bash "$0" >>"$1" 2>&1', script, t.log],
        env: { PROC_JOB_ID: tid, PROC_TASK: String(i) },
        stdin: "null",
        stdout: "null",
        stderr: "null",
        detached: true,
      }).spawn();
      const p: _Proc = { state: "RUNNING", child };
      procJobs.set(tid, p);
      void child.status.then((st) => {
        if (p.state === "RUNNING") p.state = st.success ? "DONE" : "FAILED";
      });
      return { id: tid };
    }));
  }
  poll(ids: readonly string[]): Promise<ReadonlyMap<string, RemoteState>> {
    const out = new Map<string, RemoteState>();
    for (const id of ids) {
      const p = procJobs.get(id);
      if (!p) continue;
      out.set(id, {
        phase: p.state === "RUNNING"
          ? "running"
          : p.state === "DONE"
          ? "completed"
          : "failed",
        state: p.state,
        where: "localhost",
        ...(p.state === "KILLED" ? { killed: true } : {}),
      });
    }
    return Promise.resolve(out);
  }
  cancel(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      const p = procJobs.get(id);
      if (!p || p.state !== "RUNNING") continue;
      p.state = "KILLED";
      try {
        Deno.kill(-p.child.pid, "SIGTERM");
      } catch { /* gone */ }
    }
    return Promise.resolve();
  }
}

/** The `proc` executor. */
export const proc: ExecutorKind<ProcSpec> = remoteExecutorKind<ProcSpec, null>(
  {
    name: "proc",
    description: "each node a detached process on this machine (tests)",
    spec: ProcSchema,
    programs: ["bash"],
    module: import.meta.url,
    backend: ({ spec }) => new ProcBackend(spec),
    checkMs: 50,
  },
);

/** What a plugin module exports. */
export const executors: readonly ExecutorKind<ProcSpec>[] = [proc];
