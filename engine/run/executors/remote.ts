/**
 * The remote-executor base: everything a cluster backend (Slurm, PBS, LSF,
 * Kubernetes, ...) shares, so that a backend supplies only how to submit,
 * poll and cancel jobs ({@linkcode RemoteBackend}).
 *
 * Every node that is ready to run becomes a job running `run-node KEY`
 * against the cache directory, which the workers share with this machine
 * (the one capability every remote backend requires: jobs read their
 * inputs from and write their entries into that directory). Nodes that
 * become ready together with the same resources go out as one submission
 * when the backend takes several at once (a job array).
 *
 * Dependencies stay in the engine ({@linkcode runPlan} submits a node once
 * its inputs are stored) instead of scheduler-side dependency chains: a
 * run has the same semantics as a local one (a failure blocks only its
 * dependents, concurrent runs share locks and entries, `--jobs` caps what
 * is queued, and nothing depends on the scheduler still remembering a
 * job), at the price of one poll interval per level of the graph.
 *
 * The base tracks each job and settles it exactly once:
 * - done when its entry appears in the cache (checked every `checkMs`);
 * - failed when its exit-status file (written by the job script, see
 *   `job_script.ts`) says non-zero, or the scheduler says it ended badly,
 *   with the backend's state, reason and facts and the error line of its
 *   log; a job the scheduler put back in the queue (preemption) is waited
 *   for again;
 * - failed when it ended well but its entry did not appear within
 *   `grace_seconds` (the cache is not the shared directory it must be), or
 *   vanished from the queue without entry or status;
 * - cancelled, and failed, when it can never start, when the run is
 *   interrupted, and when the run ends with jobs still out.
 * The queue is asked every `poll_seconds`; when it does not answer, the
 * cache and status files still settle jobs. Nodes that are not cacheable
 * (no key to hand a job) run in this process, one per core. A node another
 * process is computing is waited for rather than submitted.
 *
 * Files of a run go to `CACHE/runs/<experiment>/<run>/<executor>/`: the
 * backend's submission files, one log per node (`<node>.<key>.log`),
 * exit-status (`*.status`) and progress (`*.progress`) files, and
 * `jobs.tsv` (node, key, job id, log).
 *
 * @module
 */
import { join, resolve } from "node:path";
import type {
  Executor,
  ExecutorCapabilities,
  ExecutorDeclaration,
  ExecutorKind,
  ExecutorRun,
} from "../executor.ts";
import {
  claimKey,
  executeJob,
  type ExecuteOptions,
  type Job,
  type JobOutcome,
  NodeFailure,
  sleep,
} from "../job.ts";
import { formatDuration, type Reporter } from "../progress.ts";
import type { Entry, Store } from "../../cache/store.ts";
import { UserError } from "../../errors.ts";
import type { RemoteExecutorSpec } from "./remote_spec.ts";

/** Where a job is, in the base's terms. */
export type RemotePhase = "queued" | "running" | "completed" | "failed";

/**
 * What the scheduler says about one job (or array task).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { RemoteState } from "./remote.ts";
 * // A backend maps its scheduler's words onto the base's phases:
 * const of = (word: string): RemoteState =>
 *   word === "R" ? { phase: "running", state: word }
 *   : word === "F" ? { phase: "failed", state: word, reason: "exit 1" }
 *   : word === "C" ? { phase: "completed", state: word }
 *   : { phase: "queued", state: word };
 * assert.deepEqual(["Q", "R", "C"].map((w) => of(w).phase), ["queued", "running", "completed"]);
 * ```
 */
export interface RemoteState {
  /** Queued (also: put back in the queue), running, or ended well or badly. */
  readonly phase: RemotePhase;
  /** The scheduler's own word for the state, e.g. `PENDING` or `TIMEOUT`. */
  readonly state: string;
  /** Why it is queued or why it ended, when the scheduler says (`Priority`, `TimeLimit`). */
  readonly reason?: string;
  /** The machines it runs or ran on. */
  readonly where?: string;
  /**
   * A queued job that can never start: the fix to tell the user (the base
   * cancels the job), e.g. `fix the executor block (partition, time)`.
   */
  readonly hopeless?: string;
  /**
   * The scheduler ended it from outside (time limit, cancel): the last
   * line of its log is then not the cause and is not quoted.
   */
  readonly killed?: boolean;
}

/** The scheduler's details of an ended job, for its failure message. */
export interface RemoteInfo extends RemoteState {
  /** The exit code as the scheduler prints it, e.g. `1:0`. */
  readonly exit?: string;
  /** More facts, in order, e.g. `ran 00:01:04`, `time limit 00:01:00`. */
  readonly facts?: readonly string[];
}

/** One node of a submission. */
export interface RemoteTask {
  /** Node id. */
  readonly id: string;
  /** Node key (the job runs `run-node KEY`). */
  readonly key: string;
  /** Node kind (resources may depend on it). */
  readonly kind: string;
  /** Where its output should go (the backend may name another file; see {@linkcode RemoteSubmitted}). */
  readonly log: string;
  /** Exit-status file the job script writes. */
  readonly status: string;
  /** Progress file `run-node` keeps current (`ENVSMITH_PROGRESS_FILE`). */
  readonly progress: string;
}

/**
 * What a backend submits: one node, or several with equal resources.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { RemoteSubmission } from "./remote.ts";
 * // The qsub arguments a PBS backend derives from a submission of two nodes.
 * function qsubArgs(s: RemoteSubmission<{ ncpus: number }>): string[] {
 *   const array = s.tasks.length > 1 ? ["-J", `0-${s.tasks.length - 1}`] : [];
 *   return ["-N", s.name, "-l", `ncpus=${s.resources.ncpus}`, ...array, `${s.dir}/${s.stem}.pbs`];
 * }
 * const task = (id: string) => ({ id, key: id.repeat(4), kind: "train", log: `${id}.log`, status: `${id}.status`, progress: `${id}.progress` });
 * const s: RemoteSubmission<{ ncpus: number }> = {
 *   tasks: [task("a"), task("b")], resources: { ncpus: 2 }, name: "envsmith:e:a[*]",
 *   stem: "s1", dir: "/cache/runs/e/r1/pbs", deno: "deno", args: ["run", "-A", "cli.ts"],
 *   cwd: "/repo", title: "e: a, b",
 * };
 * assert.deepEqual(qsubArgs(s), ["-N", "envsmith:e:a[*]", "-l", "ncpus=2", "-J", "0-1", "/cache/runs/e/r1/pbs/s1.pbs"]);
 * ```
 */
export interface RemoteSubmission<R> {
  /** The nodes, in order (array index = position). */
  readonly tasks: readonly RemoteTask[];
  /** Their resources (equal for all, as {@linkcode RemoteBackend.resources} gave them). */
  readonly resources: R;
  /** A job name: `envsmith:<experiment>:<node>`, `...:<node>[*]` for an array. */
  readonly name: string;
  /** File stem for this submission's files in `dir` (unique within the run). */
  readonly stem: string;
  /** The run's directory for this executor's files. */
  readonly dir: string;
  /** The Deno binary on the workers. */
  readonly deno: string;
  /** Its arguments up to the cache (`run -A cli.ts --cache DIR`); the job appends `run-node KEY`. */
  readonly args: readonly string[];
  /** Working directory of the jobs. */
  readonly cwd: string;
  /** A comment line: the experiment and its nodes. */
  readonly title: string;
}

/**
 * The scheduler's answer to a submission: one per task, in order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { RemoteSubmitted } from "./remote.ts";
 * // PBS answers "123[].server" for an array of 3: one id per task.
 * const ids = (answer: string, n: number): RemoteSubmitted[] =>
 *   Array.from({ length: n }, (_, i) => ({ id: answer.replace("[]", `[${i}]`) }));
 * assert.deepEqual(ids("123[].server", 2), [{ id: "123[0].server" }, { id: "123[1].server" }]);
 * ```
 */
export interface RemoteSubmitted {
  /** The job (or array task) id. */
  readonly id: string;
  /** The task's log when it is not the task's `log` (the base links the two). */
  readonly log?: string;
}

/**
 * A submission that failed before the scheduler's command ran (e.g. its
 * script could not be written): its message is reported as it is, not as
 * the command's failure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SubmitError } from "./remote.ts";
 * const e = new SubmitError("cannot write the job script s1.pbs: disk full");
 * assert.ok(e instanceof Error);
 * assert.equal(e.name, "SubmitError");
 * ```
 */
export class SubmitError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "SubmitError";
  }
}

/**
 * A cluster backend: all a new remote executor implements.
 *
 * @typeParam R The resources of a node (anything JSON can hold: nodes with
 * equal resources may share a submission).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { RemoteBackend, RemoteState, RemoteSubmission } from "./remote.ts";
 * // A backend over a scheduler that finishes every job at once (a stand-in).
 * class Instant implements RemoteBackend<null> {
 *   readonly commands = { submit: "submit", poll: "poll", cancel: "cancel" };
 *   readonly maxBatch = 10;
 *   #next = 0;
 *   describe() { return "instant"; }
 *   resources() { return null; }
 *   submit(s: RemoteSubmission<null>) {
 *     return Promise.resolve(s.tasks.map(() => ({ id: String(this.#next++) })));
 *   }
 *   poll(ids: readonly string[]) {
 *     const done: RemoteState = { phase: "completed", state: "DONE" };
 *     return Promise.resolve(new Map(ids.map((id) => [id, done])));
 *   }
 *   cancel() { return Promise.resolve(); }
 * }
 * const b = new Instant();
 * const task = { id: "a", key: "k", kind: "train", log: "a.log", status: "a.status", progress: "a.progress" };
 * const [sub] = await b.submit({ tasks: [task], resources: null, name: "envsmith:e:a", stem: "s1", dir: "/tmp", deno: "deno", args: [], cwd: "/tmp", title: "e: a" });
 * assert.equal((await b.poll([sub!.id]))?.get(sub!.id)?.phase, "completed");
 * ```
 */
export interface RemoteBackend<R = unknown> {
  /** Names of the scheduler's commands in messages: `sbatch failed: ...`, `squeue did not answer`, `scancel 12 (interrupted)`. */
  readonly commands: {
    readonly submit: string;
    readonly poll: string;
    readonly cancel: string;
  };
  /** Most nodes one submission may carry (1: one job per node). */
  readonly maxBatch: number;
  /** Where jobs go, for the run's first line (`partition cpu, account x`). */
  describe(): string;
  /** The resources of a node of kind `kind`. */
  resources(kind: string): R;
  /**
   * Submits the tasks; resolves to one id per task.
   *
   * @throws {Error} when the scheduler refuses (the node fails with
   * `<submit command> failed: <message>`), or a {@linkcode SubmitError}.
   */
  submit(submission: RemoteSubmission<R>): Promise<readonly RemoteSubmitted[]>;
  /**
   * The states of the given jobs. Jobs the scheduler no longer knows are
   * absent; `null` when it did not answer (nothing can be concluded).
   */
  poll(
    ids: readonly string[],
  ): Promise<ReadonlyMap<string, RemoteState> | null>;
  /**
   * Optional: details of one job that looks failed (its final state, exit
   * code, run time); `null` when unknown or unreachable.
   */
  inspect?(id: string): Promise<RemoteInfo | null>;
  /** Cancels jobs; never throws. */
  cancel(ids: readonly string[]): Promise<void>;
}

/** Options of {@linkcode RemoteExecutor}. */
export interface RemoteExecutorOptions {
  /** The executor's name (`slurm`); messages say `<name> job <id>`. */
  readonly name: string;
  /** Experiment name (job names). */
  readonly experiment: string;
  /** Directory for the run's files (the run directory's `<name>/`). */
  readonly dir: string;
  /**
   * Deno arguments that start the CLI, without the binary and without
   * `--cache` (e.g. `["run", "-A", "/repo/cli.ts"]`); the job appends
   * `--cache DIR run-node KEY`.
   */
  readonly command: readonly string[];
  /** Nodes queued or running at once. @default 100 */
  readonly jobs?: number;
  /** Deno binary on the workers. @default Deno.execPath() */
  readonly deno?: string;
  /** Working directory of the jobs. @default Deno.cwd() */
  readonly cwd?: string;
  /** Seconds between queue polls. @default 2 */
  readonly pollSeconds?: number;
  /** Seconds a finished job's entry may take to appear. @default 60 */
  readonly graceSeconds?: number;
  /** How often status files and the cache are looked at (ms). @default 250 */
  readonly checkMs?: number;
  /** How long ready nodes are collected into one submission (ms). @default 20 */
  readonly batchMs?: number;
}

interface _Tracked {
  readonly job: Job;
  readonly store: Store;
  readonly reporter: Reporter | undefined;
  readonly t0: number;
  readonly base: string; // file name stem in the run dir
  readonly res: unknown;
  log: string;
  readonly status: string;
  readonly progress: string;
  remoteId?: string;
  phase?: RemotePhase;
  state?: string;
  reason?: string | undefined;
  where?: string;
  hopeless?: string | undefined;
  killed?: boolean;
  missingSince?: number | undefined;
  terminalSince?: number | undefined;
  exitSeen?: { rc: number; signal: string; at: number } | undefined;
  progressMtime?: number;
  settled: boolean;
  resolve(o: JobOutcome): void;
  reject(e: NodeFailure): void;
}

function _safe(id: string): string {
  return id.replace(/[^A-Za-z0-9._=,+-]/g, "_").slice(0, 120);
}

function _readText(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null;
  }
}

function _ended(p: RemotePhase | undefined): boolean {
  return p === "completed" || p === "failed";
}

/** The error line `run-node` printed (its failure block), or the last line of the log. */
export function errorFromLog(text: string): string | null {
  const lines = text.split("\n");
  const at = lines.findIndex((l) => /^\s+error\s{2,}/.test(l));
  if (at >= 0) {
    const out = [lines[at]!.replace(/^\s+error\s+/, "")];
    for (let i = at + 1; i < lines.length && /^ {10}\S/.test(lines[i]!); i++) {
      out.push(lines[i]!.trim());
    }
    return out.join(" ").slice(0, 500);
  }
  const last = lines.map((l) => l.trim()).filter((l) =>
    l && !l.startsWith("#") && !/^\[\d\d:\d\d:\d\d\]/.test(l)
  ).pop();
  return last ? last.slice(0, 500) : null;
}

/**
 * The executor of a remote backend (see the module documentation).
 *
 * @example
 * Not run: `myBackend` is a scheduler's client; examples/executors/pbs_test.ts drives one against stand-in commands.
 * ```ts ignore
 * const ex = new RemoteExecutor(myBackend, {
 *   name: "pbs",
 *   experiment: exp.name,
 *   dir: join(store.runDir(exp.name, runId), "pbs"),
 *   command: ["run", "-A", "/repo/cli.ts"],
 * });
 * await runPlan(plan, store, { runner: ex.run, jobs: ex.jobs, runId });
 * await ex.close();
 * ```
 */
export class RemoteExecutor<R = unknown> implements Executor {
  /** The executor's name. */
  readonly name: string;
  /** Nodes submitted at once. */
  readonly jobs: number;
  /** Runs one node as a job. */
  readonly run: (
    job: Job,
    store: Store,
    options: ExecuteOptions,
  ) => Promise<JobOutcome>;
  #b: RemoteBackend<R>;
  #o: RemoteExecutorOptions;
  #deno: string;
  #cwd: string;
  #pollMs: number;
  #graceMs: number;
  #batch: _Tracked[] = [];
  #batchTimer: ReturnType<typeof setTimeout> | undefined;
  #live = new Set<_Tracked>();
  #inflight = new Set<Promise<void>>();
  #submitting = new Set<_Tracked>();
  #loop: Promise<void> | undefined;
  #lastQueue = 0;
  #queueWarned = false;
  #closed = false;
  #signals = new WeakSet<AbortSignal>();
  #submissions = 0;
  #localNote = false;
  #localRunning = 0;
  #localMax = navigator.hardwareConcurrency ?? 2;
  #localWaiters: (() => void)[] = [];

  /** Creates the executor; nothing is submitted until a node runs. */
  constructor(backend: RemoteBackend<R>, options: RemoteExecutorOptions) {
    this.#b = backend;
    this.#o = options;
    this.name = options.name;
    this.#deno = options.deno ?? Deno.execPath();
    this.#cwd = options.cwd ?? Deno.cwd();
    this.#pollMs = (options.pollSeconds ?? 2) * 1000;
    this.#graceMs = (options.graceSeconds ?? 60) * 1000;
    this.jobs = options.jobs ?? 100;
    this.run = (job, store, opts) => this.#run(job, store, opts);
  }

  /** Where jobs go and where their logs are. */
  describe(): string {
    const where = this.#b.describe();
    return `executor ${this.name} (${
      where ? `${where}, ` : ""
    }up to ${this.jobs} jobs queued); job logs in ${this.#o.dir}`;
  }

  /** Stops polling and cancels jobs still outstanding. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#batchTimer !== undefined) clearTimeout(this.#batchTimer);
    const left = [...this.#batch, ...this.#live];
    this.#batch = [];
    await this.#cancel(left, "the run ended");
    await Promise.all([...this.#inflight]);
    await this.#loop;
  }

  #label(t: _Tracked): string {
    return `${this.name} job ${t.remoteId}`;
  }

  async #run(
    job: Job,
    store: Store,
    options: ExecuteOptions,
  ): Promise<JobOutcome> {
    if (!job.cacheable) {
      // Not addressable by key (no job spec): runs here, at most one per core.
      if (!this.#localNote) {
        this.#localNote = true;
        options.reporter?.info(
          `note: ${job.id} is not cacheable, so it runs in this process, not as a ${this.name} job`,
        );
      }
      while (this.#localRunning >= this.#localMax) {
        await new Promise<void>((r) => this.#localWaiters.push(r));
      }
      this.#localRunning++;
      try {
        return await executeJob(job, store, options);
      } finally {
        this.#localRunning--;
        this.#localWaiters.shift()?.();
      }
    }
    const t0 = performance.now();
    // Another process may compute it (a concurrent run, or a job of an
    // earlier run whose submitting process died): wait for its result
    // rather than queue a job that would only wait for the lock.
    const claim = await claimKey(job, store, {
      ...options,
      mode: "wait",
      pollMs: Math.max(250, this.#pollMs),
      stopped: () => this.#closed,
    });
    if ("entry" in claim) {
      return {
        status: "cached",
        entry: claim.entry,
        ms: performance.now() - t0,
      };
    }
    this.#watchSignal(options.signal, options.reporter);
    Deno.mkdirSync(this.#o.dir, { recursive: true });
    const base = `${_safe(job.id)}.${job.key.slice(0, 12)}`;
    return await new Promise<JobOutcome>((resolve, reject) => {
      const t: _Tracked = {
        job,
        store,
        reporter: options.reporter,
        t0,
        base,
        res: this.#b.resources(job.kind.name),
        log: join(this.#o.dir, `${base}.log`),
        status: join(this.#o.dir, `${base}.status`),
        progress: join(this.#o.dir, `${base}.progress`),
        settled: false,
        resolve,
        reject,
      };
      // A status file of an earlier attempt in this run dir would mislead.
      for (const f of [t.status, t.progress]) {
        try {
          Deno.removeSync(f);
        } catch { /* none */ }
      }
      this.#batch.push(t);
      if (this.#batchTimer === undefined) {
        this.#batchTimer = setTimeout(() => {
          this.#batchTimer = undefined;
          this.#flush();
        }, this.#o.batchMs ?? 20);
      }
    });
  }

  #watchSignal(signal: AbortSignal | undefined, reporter?: Reporter): void {
    if (!signal || this.#signals.has(signal)) return;
    this.#signals.add(signal);
    signal.addEventListener("abort", () => {
      const all = [...this.#batch, ...this.#submitting, ...this.#live];
      this.#batch = [];
      const ids = all.flatMap((t) => t.remoteId ? [t.remoteId] : []);
      if (ids.length) {
        reporter?.info(
          `${this.#b.commands.cancel} ${ids.join(" ")} (interrupted)`,
        );
      }
      void this.#cancel(all, "interrupted");
    }, { once: true });
  }

  async #cancel(ts: readonly _Tracked[], why: string): Promise<void> {
    const open = ts.filter((t) => !t.settled);
    const ids = open.flatMap((t) => t.remoteId ? [t.remoteId] : []);
    if (ids.length) await this.#b.cancel(ids);
    for (const t of open) {
      this.#fail(
        t,
        t.remoteId ? `${why} (${this.#label(t)} cancelled)` : why,
      );
    }
  }

  #settle(t: _Tracked): boolean {
    if (t.settled) return false;
    t.settled = true;
    this.#live.delete(t);
    return true;
  }

  #done(t: _Tracked, entry: Entry): void {
    if (!this.#settle(t)) return;
    t.resolve({
      status: "done",
      entry,
      ms: performance.now() - t.t0,
      ...(t.remoteId ? { job: t.remoteId } : {}),
      log: t.log,
    });
  }

  #fail(t: _Tracked, message: string, info?: RemoteInfo): void {
    if (!this.#settle(t)) return;
    const details: Record<string, string> = {};
    if (t.remoteId) {
      const state = info?.state ?? t.state ?? "?";
      const reason = info ? info.reason : t.reason;
      const where = info?.where || t.where;
      details[this.name] = `job ${t.remoteId} ${state}${
        reason ? ` (reason ${reason})` : ""
      }${info?.exit ? `, exit ${info.exit}` : ""}${
        where ? ` on ${where}` : ""
      }`;
    }
    details["node log"] = t.store.logPath(t.job.key);
    t.reject(
      new NodeFailure(t.job.id, t.job.key, t.log, message, {
        details,
        ...(t.remoteId ? { job: t.remoteId } : {}),
      }),
    );
  }

  #flush(): void {
    const batch = this.#batch;
    this.#batch = [];
    const groups = new Map<string, _Tracked[]>();
    for (const t of batch) {
      if (t.settled) continue;
      const sig = JSON.stringify(t.res) ?? "";
      const g = groups.get(sig);
      if (g) g.push(t);
      else groups.set(sig, [t]);
    }
    const max = Math.max(1, this.#b.maxBatch);
    for (const g of groups.values()) {
      for (let i = 0; i < g.length; i += max) {
        const p = this.#submit(g.slice(i, i + max));
        this.#inflight.add(p);
        p.finally(() => this.#inflight.delete(p));
      }
    }
  }

  #jobName(ts: readonly _Tracked[]): string {
    const exp = this.#o.experiment;
    if (ts.length === 1) return `envsmith:${exp}:${ts[0]!.job.id}`;
    const plain = (id: string) => id.replace(/\[.*$/, "");
    const p0 = plain(ts[0]!.job.id);
    return ts.every((t) => plain(t.job.id) === p0)
      ? `envsmith:${exp}:${p0}[*]`
      : `envsmith:${exp}:${ts[0]!.job.id}+${ts.length - 1}`;
  }

  async #submit(ts: _Tracked[]): Promise<void> {
    const n = ++this.#submissions;
    const stem = ts.length > 1 ? `array-${n}` : ts[0]!.base;
    let got: readonly RemoteSubmitted[];
    for (const t of ts) this.#submitting.add(t);
    try {
      got = await this.#b.submit({
        tasks: ts.map((t) => ({
          id: t.job.id,
          key: t.job.key,
          kind: t.job.kind.name,
          log: t.log,
          status: t.status,
          progress: t.progress,
        })),
        resources: ts[0]!.res as R,
        name: this.#jobName(ts),
        stem,
        dir: this.#o.dir,
        deno: this.#deno,
        args: [...this.#o.command, "--cache", resolve(ts[0]!.store.root)],
        cwd: this.#cwd,
        title: `envsmith experiment ${this.#o.experiment}: ${
          ts.map((t) => t.job.id).join(", ").slice(0, 500)
        }`,
      });
      if (got.length !== ts.length) {
        throw new SubmitError(
          `the ${this.name} backend returned ${got.length} job ids for ${ts.length} nodes`,
        );
      }
    } catch (e) {
      const m = (e as Error).message;
      for (const t of ts) {
        this.#fail(
          t,
          e instanceof SubmitError
            ? m
            : `${this.#b.commands.submit} failed: ${m}`,
        );
      }
      return;
    } finally {
      for (const t of ts) this.#submitting.delete(t);
    }
    const rows: string[] = [];
    ts.forEach((t, i) => {
      t.remoteId = got[i]!.id;
      const real = got[i]!.log;
      if (real && real !== t.log) {
        try {
          Deno.symlinkSync(real.slice(real.lastIndexOf("/") + 1), t.log);
        } catch { /* no symlinks here: report the real file */ }
        t.log = real;
      }
      rows.push(`${t.job.id}\t${t.job.key}\t${t.remoteId}\t${t.log}\n`);
      t.reporter?.progress(t.job.id, 0, 0, `${this.#label(t)} submitted`);
    });
    try {
      Deno.writeTextFileSync(join(this.#o.dir, "jobs.tsv"), rows.join(""), {
        append: true,
      });
    } catch { /* informational */ }
    // Interrupted or closed while the submission ran: those jobs now exist
    // but nobody waits for them.
    const orphans = ts.filter((t) => t.settled || this.#closed);
    if (orphans.length) {
      await this.#b.cancel(orphans.map((t) => t.remoteId!));
      for (const t of orphans) this.#fail(t, "the run ended");
    }
    for (const t of ts) if (!t.settled) this.#live.add(t);
    if (this.#live.size === 0) return;
    this.#loop ??= this.#poll().finally(() => (this.#loop = undefined));
  }

  async #poll(): Promise<void> {
    const checkMs = this.#o.checkMs ?? 250;
    while (this.#live.size > 0 && !this.#closed) {
      await sleep(checkMs);
      for (const t of [...this.#live]) this.#checkFiles(t);
      if (this.#live.size === 0) break;
      if (performance.now() - this.#lastQueue >= this.#pollMs) {
        this.#lastQueue = performance.now();
        await this.#checkQueue();
      }
      for (const t of [...this.#live]) await this.#decide(t);
    }
  }

  /** Looks at the cache, the status file and the progress file of a job. */
  #checkFiles(t: _Tracked): void {
    if (t.settled) return;
    if (t.phase !== "queued") {
      if (t.store.hasEntry(t.job.key)) {
        try {
          const e = t.store.loadVerified(t.job.key);
          if (e) return this.#done(t, e);
        } catch (e) {
          return this.#fail(t, (e as Error).message);
        }
      }
      if (!t.exitSeen) {
        const s = _readText(t.status);
        if (s !== null) {
          try {
            const j = JSON.parse(s) as { rc: number; signal: string };
            t.exitSeen = {
              rc: j.rc,
              signal: j.signal ?? "",
              at: performance.now(),
            };
          } catch { /* half-written: next time */ }
        }
      }
    }
    if (t.phase === "running") {
      try {
        const st = Deno.statSync(t.progress);
        const m = st.mtime?.getTime() ?? 0;
        if (m !== t.progressMtime) {
          t.progressMtime = m;
          const p = JSON.parse(Deno.readTextFileSync(t.progress)) as {
            done: number;
            total: number;
            note?: string;
          };
          t.reporter?.progress(
            t.job.id,
            p.done,
            p.total,
            `${p.note ? p.note + "  " : ""}[${this.name} ${t.remoteId}]`,
          );
        }
      } catch { /* none yet */ }
    }
  }

  async #checkQueue(): Promise<void> {
    const live = [...this.#live].filter((t) => t.remoteId);
    if (!live.length) return;
    const states = await this.#b.poll(live.map((t) => t.remoteId!));
    if (states === null) {
      if (!this.#queueWarned) {
        this.#queueWarned = true;
        live[0]!.reporter?.info(
          `warning: ${this.#b.commands.poll} did not answer; still watching the cache and status files`,
        );
      }
      return;
    }
    const now = performance.now();
    for (const t of live) {
      const s = states.get(t.remoteId!);
      if (!s) {
        t.missingSince ??= now;
        continue;
      }
      t.missingSince = undefined;
      const changed = s.state !== t.state || s.reason !== t.reason;
      this.#adopt(t, s);
      if (_ended(s.phase)) t.terminalSince ??= now;
      else t.terminalSince = undefined;
      if (changed && !_ended(s.phase)) {
        t.reporter?.progress(
          t.job.id,
          0,
          0,
          `${this.#label(t)} ${s.state}${
            s.phase === "queued" && s.reason
              ? ` (${s.reason})`
              : s.where
              ? ` on ${s.where}`
              : ""
          }`,
        );
      }
    }
  }

  #adopt(t: _Tracked, s: RemoteState): void {
    t.phase = s.phase;
    t.state = s.state;
    t.reason = s.reason;
    t.hopeless = s.hopeless;
    t.killed = s.killed ?? false;
    if (s.where) t.where = s.where;
  }

  /** Settles a job whose fate is known. */
  async #decide(t: _Tracked): Promise<void> {
    if (t.settled) return;
    const now = performance.now();
    const graceMs = this.#graceMs;
    if (t.phase === "queued" && t.hopeless) {
      await this.#b.cancel([t.remoteId!]);
      return this.#fail(
        t,
        `${this.#label(t)} can never start${
          t.reason ? ` (reason ${t.reason})` : ""
        }; cancelled it: ${t.hopeless}`,
      );
    }
    const failed = (t.exitSeen && t.exitSeen.rc !== 0) ||
      (t.phase === "failed" &&
        now - (t.terminalSince ?? now) >= Math.min(graceMs, 3000));
    if (failed) {
      // Wait (briefly) for the scheduler to reach a final state.
      const info = this.#b.inspect ? await this.#b.inspect(t.remoteId!) : null;
      if (info && info.phase === "queued") {
        // Requeued (preemption, node failure): it will run again.
        t.exitSeen = undefined;
        t.terminalSince = undefined;
        this.#adopt(t, info);
        try {
          Deno.removeSync(t.status);
        } catch { /* none */ }
        t.reporter?.progress(
          t.job.id,
          0,
          0,
          `${this.#label(t)} requeued${info.reason ? ` (${info.reason})` : ""}`,
        );
        return;
      }
      // The job script has exited but the scheduler does not say the job
      // ended yet: give it a moment to, so the report has its final state.
      const phase = info ? info.phase : t.phase;
      if (
        phase !== undefined && !_ended(phase) && t.exitSeen &&
        now - t.exitSeen.at < Math.min(graceMs, 10_000)
      ) return;
      this.#checkFiles(t); // the entry may have landed meanwhile
      if (t.settled) return;
      return this.#fail(t, this.#message(t, info), info ?? undefined);
    }
    const exitedOk = (t.exitSeen && t.exitSeen.rc === 0) ||
      t.phase === "completed";
    if (exitedOk) {
      const since = t.exitSeen?.at ?? t.terminalSince ?? now;
      if (now - since >= graceMs) {
        return this.#fail(
          t,
          `${
            this.#label(t)
          } exited 0 but the entry of ${t.job.id} did not appear in ${
            resolve(t.store.root)
          } within ${
            formatDuration(graceMs)
          }: is the cache directory the same shared directory on the compute node?`,
        );
      }
      return;
    }
    if (t.missingSince !== undefined && now - t.missingSince >= graceMs) {
      return this.#fail(
        t,
        `${
          this.#label(t)
        } vanished from the queue without storing its entry or an exit status (lost: node failure, preemption, cancelled while pending, or forgotten by the controller); rerun to resubmit`,
      );
    }
  }

  #message(t: _Tracked, info: RemoteInfo | null): string {
    const state = info?.state ?? t.state ?? "ended";
    const reason = info ? info.reason : t.reason;
    const facts = [
      ...(reason ? [`reason ${reason}`] : []),
      ...(info?.exit
        ? [`exit ${info.exit}`]
        : t.exitSeen
        ? [`exit ${t.exitSeen.rc}`]
        : []),
      ...(t.exitSeen?.signal ? [`got SIG${t.exitSeen.signal}`] : []),
      ...(info?.facts ?? []),
    ];
    const killed = info ? info.killed : t.killed;
    const fromLog = errorFromLog(_readText(t.log)?.slice(-65536) ?? "");
    const head = `${this.#label(t)} ${state}${
      facts.length ? ` (${facts.join(", ")})` : ""
    }`;
    return fromLog && !killed ? `${head}: ${fromLog}` : head;
  }
}

/** What a remote backend is created with. */
export interface RemoteRun<S> {
  /** The `executor:` block, or `{type: NAME}` for the defaults. */
  readonly spec: S;
  /** The run. */
  readonly run: ExecutorRun;
}

/** What {@linkcode remoteExecutorKind} needs to register a backend. */
export interface RemoteExecutorDefinition<
  S extends RemoteExecutorSpec,
  R = unknown,
> extends ExecutorDeclaration<S> {
  // name, description, spec (a strict object with `type: v.literal(NAME)`
  // and `...remoteSpecEntries`) and check, as every executor declares them
  /**
   * Programs this machine needs (e.g. `["qsub", "qstat", "qdel"]`: names are
   * looked up on PATH, paths must be executable files), or a function of the
   * block giving them; checked once, at `plan` and before `run`.
   */
  readonly programs: readonly string[] | ((spec: S) => readonly string[]);
  /** The fix when one is missing, e.g. `run envsmith on a login node of the cluster`. */
  readonly programsFix?: string;
  /** The module that defines it (`import.meta.url`), named when its name is taken twice. */
  readonly module?: string;
  /** Creates the backend of a run. */
  backend(r: RemoteRun<S>): RemoteBackend<R>;
  /** How often status files and the cache are looked at (ms; tests). @default 250 */
  readonly checkMs?: number;
}

/**
 * The executor kind of a remote backend: the block's common fields
 * (`jobs`, `deno`, `poll_seconds`, `grace_seconds`; `--jobs` wins over
 * `jobs`), the shared-cache capability, the program check, and a
 * {@linkcode RemoteExecutor} per run.
 *
 * @example
 * Not run: it needs a backend and a cluster's commands; examples/executors/pbs.ts is the full module, tested by pbs_test.ts.
 * ```ts ignore
 * export const executors = [remoteExecutorKind({
 *   name: "pbs",
 *   description: "one qsub job per node over a shared cache directory",
 *   spec: v.strictObject({ type: v.literal("pbs"), ...remoteSpecEntries }),
 *   programs: ["qsub", "qstat", "qdel"],
 *   backend: ({ spec }) => new PbsBackend(spec),
 * })];
 * ```
 */
export function remoteExecutorKind<S extends RemoteExecutorSpec, R = unknown>(
  def: RemoteExecutorDefinition<S, R>,
): ExecutorKind<S> {
  const capabilities: ExecutorCapabilities<S> = {
    sharedCache: true,
    programs: def.programs,
    ...(def.programsFix ? { programsFix: def.programsFix } : {}),
  };
  return {
    name: def.name,
    description: def.description,
    spec: def.spec,
    capabilities,
    ...(def.module ? { module: def.module } : {}),
    ...(def.check ? { check: def.check } : {}),
    create(spec, run) {
      if (!run.command) {
        throw new UserError(
          `The ${def.name} executor needs the command that starts envsmith's CLI on the compute nodes; run it through cli.ts`,
        );
      }
      const s = spec ?? ({ type: def.name } as S);
      const jobs = run.jobs ?? s.jobs;
      const dir = join(run.store.runDir(run.exp.name, run.runId), def.name);
      return new RemoteExecutor(def.backend({ spec: s, run }), {
        name: def.name,
        experiment: run.exp.name,
        dir,
        command: run.command,
        ...(jobs !== undefined ? { jobs } : {}),
        ...(s.deno !== undefined ? { deno: s.deno } : {}),
        ...(s.poll_seconds !== undefined
          ? { pollSeconds: s.poll_seconds }
          : {}),
        ...(s.grace_seconds !== undefined
          ? { graceSeconds: s.grace_seconds }
          : {}),
        ...(def.checkMs !== undefined ? { checkMs: def.checkMs } : {}),
      });
    },
  };
}
