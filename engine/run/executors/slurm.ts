/**
 * The Slurm executor: every node that is ready to run becomes an sbatch job
 * running `run-node KEY` against the shared cache directory; nodes that
 * become ready together with the same resources go out as one job array.
 *
 * Dependencies stay in the engine ({@linkcode runPlan} submits a node once
 * its inputs are stored) instead of `--dependency=afterok` chains: the run
 * then has the same semantics as a local one (a failure blocks only its
 * dependents, concurrent runs share locks and entries, `--jobs` caps what is
 * queued, and nothing depends on the controller still remembering a job),
 * at the price of one poll interval per level of the graph.
 *
 * A job's completion is read from the cache itself (the entry appears) and
 * from the exit-status file its script writes beside its log; `squeue` is
 * asked every `poll_seconds` for the jobs' states, so a job that is
 * cancelled, times out, fails, or vanishes from the queue without leaving
 * an entry or a status file (node failure, preemption) is reported with
 * its Slurm job id, state, reason and log instead of being waited on.
 *
 * Files of a run go to `CACHE/runs/<experiment>/<run>/slurm/`: one batch
 * script per submission (`*.sbatch`), one log per node (`<node>.<key>.log`),
 * exit-status (`*.status`) and progress (`*.progress`) files, and
 * `jobs.tsv` (node, key, Slurm job id, log).
 *
 * @module
 */
import { join, resolve } from "node:path";
import type { Executor, ExecutorKind } from "../executor.ts";
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
import {
  commandSlurmClient,
  type JobInfo,
  type SlurmClient,
} from "./slurm_client.ts";
import { batchScript, type ScriptTask } from "./slurm_script.ts";
import {
  checkSlurmBlock,
  SlurmExecutorSchema,
  type SlurmExecutorSpec,
} from "./slurm_spec.ts";

/** Options of {@linkcode SlurmExecutor}. */
export interface SlurmExecutorOptions {
  /** The `executor:` block (`{type: "slurm"}` for the defaults). */
  readonly spec: SlurmExecutorSpec;
  /** Experiment name (job names). */
  readonly experiment: string;
  /** Directory for scripts, logs and status files (the run directory's `slurm/`). */
  readonly dir: string;
  /**
   * Deno arguments that start the CLI, without the binary and without
   * `--cache` (e.g. `["run", "-A", "/repo/cli.ts"]`); the job appends
   * `--cache DIR run-node KEY`.
   */
  readonly command: readonly string[];
  /** Deno binary on the compute nodes. @default spec.deno, else Deno.execPath() */
  readonly deno?: string;
  /** Working directory of the jobs. @default Deno.cwd() */
  readonly cwd?: string;
  /** The Slurm commands. @default the real ones (commandSlurmClient) */
  readonly client?: SlurmClient;
  /** How often status files and the cache are looked at (ms). @default 250 */
  readonly checkMs?: number;
  /** How long ready nodes are collected into one submission (ms). @default 20 */
  readonly batchMs?: number;
}

/** Terminal Slurm states. */
const _TERMINAL = new Set([
  "COMPLETED",
  "FAILED",
  "CANCELLED",
  "TIMEOUT",
  "NODE_FAIL",
  "PREEMPTED",
  "OUT_OF_MEMORY",
  "BOOT_FAIL",
  "DEADLINE",
  "SPECIAL_EXIT",
  "REVOKED",
]);

/** Pending reasons that never resolve by waiting. */
const _HOPELESS = new Set([
  "PartitionTimeLimit",
  "PartitionNodeLimit",
  "BadConstraints",
  "InvalidAccount",
  "InvalidQOS",
  "DependencyNeverSatisfied",
]);

/** Resolved resources of one node. */
interface _Res {
  readonly partition?: string;
  readonly cpus?: number;
  readonly mem?: string;
  readonly time?: string;
  readonly sbatch: readonly string[];
}

interface _Tracked {
  readonly job: Job;
  readonly store: Store;
  readonly reporter: Reporter | undefined;
  readonly t0: number;
  readonly base: string; // file name stem in the run dir
  readonly res: _Res;
  log: string;
  readonly status: string;
  readonly progress: string;
  slurmId?: string;
  state?: string;
  reason?: string;
  nodes?: string;
  note?: string;
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

/** The `--time` value of a time limit as written. */
function _time(t: number | string | undefined): string | undefined {
  return t === undefined ? undefined : String(t);
}

/** The `--mem` value of a memory size as written (numbers are megabytes). */
function _mem(m: number | string | undefined): string | undefined {
  return m === undefined ? undefined : typeof m === "number" ? `${m}M` : m;
}

/** Resources of a node of `kind` from the executor block. */
export function resourcesOf(spec: SlurmExecutorSpec, kind: string): _Res {
  const all = spec.resources ?? {};
  const k = spec.kinds?.[kind] ?? {};
  const partition = k.partition ?? all.partition ?? spec.partition;
  const cpus = k.cpus ?? all.cpus;
  const mem = _mem(k.mem ?? all.mem);
  const time = _time(k.time ?? all.time);
  return {
    ...(partition !== undefined ? { partition } : {}),
    ...(cpus !== undefined ? { cpus } : {}),
    ...(mem !== undefined ? { mem } : {}),
    ...(time !== undefined ? { time } : {}),
    sbatch: [
      ...(spec.sbatch ?? []),
      ...(all.sbatch ?? []),
      ...(k.sbatch ?? []),
    ],
  };
}

/** sbatch arguments for resources (without name, output and array). */
export function sbatchArgs(spec: SlurmExecutorSpec, res: _Res): string[] {
  const a: string[] = [];
  if (res.partition) a.push(`--partition=${res.partition}`);
  if (spec.account) a.push(`--account=${spec.account}`);
  if (spec.qos) a.push(`--qos=${spec.qos}`);
  if (res.cpus !== undefined) a.push(`--cpus-per-task=${res.cpus}`);
  if (res.mem !== undefined) a.push(`--mem=${res.mem}`);
  if (res.time !== undefined) a.push(`--time=${res.time}`);
  a.push(...res.sbatch);
  return a;
}

/**
 * The Slurm executor (see the module documentation).
 *
 * @example
 * ```ts ignore
 * const ex = new SlurmExecutor({
 *   spec: { type: "slurm", partition: "cpu", resources: { mem: "2G", time: "30" } },
 *   experiment: exp.name,
 *   dir: join(store.runDir(exp.name, runId), "slurm"),
 *   command: ["run", "-A", "/repo/cli.ts"],
 * });
 * await runPlan(plan, store, { runner: ex.run, jobs: ex.jobs, runId });
 * await ex.close();
 * ```
 */
export class SlurmExecutor implements Executor {
  /** `slurm`. */
  readonly name = "slurm";
  /** Nodes submitted at once. */
  readonly jobs: number;
  /** Runs one node as a Slurm job. */
  readonly run: (
    job: Job,
    store: Store,
    options: ExecuteOptions,
  ) => Promise<JobOutcome>;
  #o: SlurmExecutorOptions;
  #client: SlurmClient;
  #deno: string;
  #cwd: string;
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
  constructor(options: SlurmExecutorOptions) {
    this.#o = options;
    this.#client = options.client ?? commandSlurmClient();
    this.#deno = options.deno ?? options.spec.deno ?? Deno.execPath();
    this.#cwd = options.cwd ?? Deno.cwd();
    this.jobs = options.spec.jobs ?? 100;
    this.run = (job, store, opts) => this.#run(job, store, opts);
  }

  /** Where jobs go and where their logs are. */
  describe(): string {
    const s = this.#o.spec;
    const bits = [
      s.partition ? `partition ${s.partition}` : "default partition",
      ...(s.account ? [`account ${s.account}`] : []),
      `up to ${this.jobs} jobs queued`,
    ];
    return `executor slurm (${bits.join(", ")}); job logs in ${this.#o.dir}`;
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
          `note: ${job.id} is not cacheable, so it runs in this process, not on Slurm`,
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
      pollMs: Math.max(250, (this.#o.spec.poll_seconds ?? 2) * 1000),
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
        res: resourcesOf(this.#o.spec, job.kind.name),
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
      const ids = all.flatMap((t) => t.slurmId ? [t.slurmId] : []);
      if (ids.length) {
        reporter?.info(`scancel ${ids.join(" ")} (interrupted)`);
      }
      void this.#cancel(all, "interrupted");
    }, { once: true });
  }

  async #cancel(ts: readonly _Tracked[], why: string): Promise<void> {
    const open = ts.filter((t) => !t.settled);
    const ids = open.flatMap((t) => t.slurmId ? [t.slurmId] : []);
    if (ids.length) await this.#client.cancel(ids);
    for (const t of open) {
      this.#fail(
        t,
        t.slurmId ? `${why} (slurm job ${t.slurmId} cancelled)` : why,
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
      ...(t.slurmId ? { job: t.slurmId } : {}),
      log: t.log,
    });
  }

  #fail(t: _Tracked, message: string, info?: Partial<JobInfo>): void {
    if (!this.#settle(t)) return;
    const details: Record<string, string> = {};
    if (t.slurmId) {
      const state = info?.state ?? t.state ?? "?";
      const reason = info?.reason ?? t.reason ?? "";
      details.slurm = `job ${t.slurmId} ${state}${
        reason && reason !== "None" ? ` (reason ${reason})` : ""
      }${info?.exitCode ? `, exit ${info.exitCode}` : ""}${
        info?.nodes || t.nodes ? ` on ${info?.nodes || t.nodes}` : ""
      }`;
    }
    details["node log"] = t.store.logPath(t.job.key);
    t.reject(
      new NodeFailure(t.job.id, t.job.key, t.log, message, {
        details,
        ...(t.slurmId ? { job: t.slurmId } : {}),
      }),
    );
  }

  #flush(): void {
    const batch = this.#batch;
    this.#batch = [];
    const groups = new Map<string, _Tracked[]>();
    for (const t of batch) {
      if (t.settled) continue;
      const sig = JSON.stringify(sbatchArgs(this.#o.spec, t.res));
      const g = groups.get(sig);
      if (g) g.push(t);
      else groups.set(sig, [t]);
    }
    const useArrays = this.#o.spec.array !== false;
    for (const g of groups.values()) {
      const parts = useArrays
        ? Array.from(
          { length: Math.ceil(g.length / 1000) },
          (_, i) => g.slice(i * 1000, i * 1000 + 1000),
        )
        : g.map((t) => [t]);
      for (const part of parts) {
        const p = this.#submit(part);
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
    const array = ts.length > 1;
    const stem = array ? `array-${n}` : ts[0]!.base;
    const script = join(this.#o.dir, `${stem}.sbatch`);
    const tasks: ScriptTask[] = ts.map((t) => ({
      key: t.job.key,
      id: t.job.id,
      status: t.status,
      progress: t.progress,
    }));
    const cacheDir = resolve(ts[0]!.store.root);
    try {
      Deno.writeTextFileSync(
        script,
        batchScript({
          deno: this.#deno,
          args: [...this.#o.command, "--cache", cacheDir],
          cwd: this.#cwd,
          tasks,
          title: `envsmith experiment ${this.#o.experiment}: ${
            ts.map((t) => t.job.id).join(", ").slice(0, 500)
          }`,
        }),
        { mode: 0o755 },
      );
    } catch (e) {
      for (const t of ts) {
        this.#fail(
          t,
          `cannot write the batch script ${script}: ${(e as Error).message}`,
        );
      }
      return;
    }
    const args = [
      `--job-name=${this.#jobName(ts)}`,
      `--output=${join(this.#o.dir, array ? `${stem}_%a.log` : `${stem}.log`)}`,
      `--chdir=${this.#cwd}`,
      "--open-mode=append",
      ...(array ? [`--array=0-${ts.length - 1}`] : []),
      ...sbatchArgs(this.#o.spec, ts[0]!.res),
    ];
    let id: string;
    for (const t of ts) this.#submitting.add(t);
    try {
      id = await this.#client.submit(script, args);
    } catch (e) {
      for (const t of ts) {
        this.#fail(
          t,
          `sbatch failed: ${(e as Error).message}`,
        );
      }
      return;
    } finally {
      for (const t of ts) this.#submitting.delete(t);
    }
    const rows: string[] = [];
    ts.forEach((t, i) => {
      t.slurmId = array ? `${id}_${i}` : id;
      if (array) {
        const real = join(this.#o.dir, `${stem}_${i}.log`);
        try {
          Deno.symlinkSync(`${stem}_${i}.log`, t.log);
        } catch { /* no symlinks here: report the real file */ }
        t.log = real;
      }
      rows.push(`${t.job.id}\t${t.job.key}\t${t.slurmId}\t${t.log}\n`);
      t.reporter?.progress(t.job.id, 0, 0, `slurm job ${t.slurmId} submitted`);
    });
    try {
      Deno.writeTextFileSync(join(this.#o.dir, "jobs.tsv"), rows.join(""), {
        append: true,
      });
    } catch { /* informational */ }
    // Interrupted or closed while sbatch ran: those jobs now exist but
    // nobody waits for them.
    const orphans = ts.filter((t) => t.settled || this.#closed);
    if (orphans.length) {
      await this.#client.cancel(orphans.map((t) => t.slurmId!));
      for (const t of orphans) this.#fail(t, "the run ended");
    }
    for (const t of ts) if (!t.settled) this.#live.add(t);
    if (this.#live.size === 0) return;
    this.#loop ??= this.#poll().finally(() => (this.#loop = undefined));
  }

  async #poll(): Promise<void> {
    const checkMs = this.#o.checkMs ?? 250;
    const pollMs = (this.#o.spec.poll_seconds ?? 2) * 1000;
    while (this.#live.size > 0 && !this.#closed) {
      await sleep(checkMs);
      for (const t of [...this.#live]) this.#checkFiles(t);
      if (this.#live.size === 0) break;
      if (performance.now() - this.#lastQueue >= pollMs) {
        this.#lastQueue = performance.now();
        await this.#checkQueue();
      }
      for (const t of [...this.#live]) await this.#decide(t);
    }
  }

  /** Looks at the cache, the status file and the progress file of a job. */
  #checkFiles(t: _Tracked): void {
    if (t.settled) return;
    if (t.state !== "PENDING") {
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
    if (t.state === "RUNNING") {
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
            `${p.note ? p.note + "  " : ""}[slurm ${t.slurmId}]`,
          );
        }
      } catch { /* none yet */ }
    }
  }

  async #checkQueue(): Promise<void> {
    const live = [...this.#live].filter((t) => t.slurmId);
    if (!live.length) return;
    const states = await this.#client.queue(live.map((t) => t.slurmId!));
    if (states === null) {
      if (!this.#queueWarned) {
        this.#queueWarned = true;
        live[0]!.reporter?.info(
          "warning: squeue did not answer; still watching the cache and status files",
        );
      }
      return;
    }
    const now = performance.now();
    for (const t of live) {
      const s = states.get(t.slurmId!);
      if (!s) {
        t.missingSince ??= now;
        continue;
      }
      t.missingSince = undefined;
      const changed = s.state !== t.state || s.reason !== t.reason;
      t.state = s.state;
      t.reason = s.reason;
      if (s.nodes) t.nodes = s.nodes;
      if (_TERMINAL.has(s.state)) t.terminalSince ??= now;
      else t.terminalSince = undefined;
      if (changed && !_TERMINAL.has(s.state)) {
        t.reporter?.progress(
          t.job.id,
          0,
          0,
          `slurm job ${t.slurmId} ${s.state}${
            s.state === "PENDING" && s.reason && s.reason !== "None"
              ? ` (${s.reason})`
              : s.nodes
              ? ` on ${s.nodes}`
              : ""
          }`,
        );
      }
    }
  }

  /** Settles a job whose fate is known. */
  async #decide(t: _Tracked): Promise<void> {
    if (t.settled) return;
    const now = performance.now();
    const graceMs = (this.#o.spec.grace_seconds ?? 60) * 1000;
    if (t.state === "PENDING" && t.reason && _HOPELESS.has(t.reason)) {
      await this.#client.cancel([t.slurmId!]);
      return this.#fail(
        t,
        `slurm job ${t.slurmId} can never start (reason ${t.reason}); cancelled it: fix the executor block (partition, time, account, qos)`,
      );
    }
    const failed = (t.exitSeen && t.exitSeen.rc !== 0) ||
      (t.state !== undefined && _TERMINAL.has(t.state) &&
        t.state !== "COMPLETED" &&
        now - (t.terminalSince ?? now) >= Math.min(graceMs, 3000));
    if (failed) {
      // Wait (briefly) for the controller to reach a final state.
      const info = await this.#client.show(t.slurmId!);
      if (
        info && (info.state === "PENDING" || info.state.startsWith("REQUEUE"))
      ) {
        // Requeued (preemption, node failure): it will run again.
        t.exitSeen = undefined;
        t.terminalSince = undefined;
        t.state = info.state;
        t.reason = info.reason;
        try {
          Deno.removeSync(t.status);
        } catch { /* none */ }
        t.reporter?.progress(
          t.job.id,
          0,
          0,
          `slurm job ${t.slurmId} requeued (${info.reason})`,
        );
        return;
      }
      if (
        info && !_TERMINAL.has(info.state) && t.exitSeen &&
        now - t.exitSeen.at < Math.min(graceMs, 10_000)
      ) return;
      this.#checkFiles(t); // the entry may have landed meanwhile
      if (t.settled) return;
      return this.#fail(t, this.#message(t, info), info ?? undefined);
    }
    const exitedOk = (t.exitSeen && t.exitSeen.rc === 0) ||
      t.state === "COMPLETED";
    if (exitedOk) {
      const since = t.exitSeen?.at ?? t.terminalSince ?? now;
      if (now - since >= graceMs) {
        return this.#fail(
          t,
          `slurm job ${t.slurmId} exited 0 but the entry of ${t.job.id} did not appear in ${
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
        `slurm job ${t.slurmId} vanished from the queue without storing its entry or an exit status (lost: node failure, preemption, cancelled while pending, or forgotten by the controller); rerun to resubmit`,
      );
    }
  }

  #message(t: _Tracked, info: JobInfo | null): string {
    const state = info?.state ?? t.state ?? "ended";
    const reason = info?.reason ?? t.reason ?? "";
    const facts = [
      ...(reason && reason !== "None" ? [`reason ${reason}`] : []),
      ...(info?.exitCode
        ? [`exit ${info.exitCode}`]
        : t.exitSeen
        ? [`exit ${t.exitSeen.rc}`]
        : []),
      ...(t.exitSeen?.signal ? [`got SIG${t.exitSeen.signal}`] : []),
      ...(info?.runTime && info.runTime !== "?" ? [`ran ${info.runTime}`] : []),
      ...(info?.timeLimit && info.timeLimit !== "?"
        ? [`time limit ${info.timeLimit}`]
        : []),
    ];
    const fromLog = errorFromLog(_readText(t.log)?.slice(-65536) ?? "");
    const head = `slurm job ${t.slurmId} ${state}${
      facts.length ? ` (${facts.join(", ")})` : ""
    }`;
    return fromLog && state !== "TIMEOUT" && state !== "CANCELLED"
      ? `${head}: ${fromLog}`
      : head;
  }
}

/** Options of {@linkcode slurmExecutorKind}. */
export interface SlurmExecutorKindOptions {
  /** The Slurm commands. @default the real ones */
  readonly client?: SlurmClient;
  /** How often status files and the cache are looked at (ms). @default 250 */
  readonly checkMs?: number;
}

/**
 * The `slurm` executor kind; options replace the Slurm commands (tests,
 * benchmarks).
 */
export function slurmExecutorKind(
  options: SlurmExecutorKindOptions = {},
): ExecutorKind<SlurmExecutorSpec> {
  return {
    name: "slurm",
    description:
      "one sbatch job per node (job arrays for nodes ready together) over a shared cache directory",
    spec: SlurmExecutorSchema,
    check: checkSlurmBlock,
    create(spec, run) {
      if (!run.command) {
        throw new UserError(
          "The slurm executor needs the command that starts envsmith's CLI on the compute nodes; run it through cli.ts",
        );
      }
      const s: SlurmExecutorSpec = spec ?? { type: "slurm" };
      return new SlurmExecutor({
        spec: run.jobs !== undefined ? { ...s, jobs: run.jobs } : s,
        experiment: run.exp.name,
        dir: join(run.store.runDir(run.exp.name, run.runId), "slurm"),
        command: run.command,
        ...(options.client ? { client: options.client } : {}),
        ...(options.checkMs !== undefined ? { checkMs: options.checkMs } : {}),
      });
    },
  };
}

/** The `slurm` executor kind with the real Slurm commands. */
export const slurm: ExecutorKind<SlurmExecutorSpec> = slurmExecutorKind();
