/**
 * A job: one node ready to execute (parameters resolved), and how it is
 * executed in this process: claim its key (one shared lock-and-cache wait,
 * also used by remote executors), run the kind in this thread or a worker,
 * verify and store the result.
 *
 * @module
 */
import { join } from "node:path";
import * as v from "valibot";
import { canonicalJson } from "../canonical.ts";
import { CorruptEntryError } from "../errors.ts";
import { codeFilesOf, modulesDigest } from "../cache/digest.ts";
import { onDisk } from "../fs_errors.ts";
import { type KeyComponents, seedOfKey } from "../cache/keys.ts";
import { describeHolder, type Lock, type LockOptions } from "../cache/lock.ts";
import { formatDuration, type Reporter, SilentReporter } from "./progress.ts";
import { blobsIn, type Entry, type Store } from "../cache/store.ts";
import type { Json, NodeContext, NodeKind, NodeResult } from "../types.ts";
import { VERSIONS } from "../version.ts";
import type { WorkerRequest } from "./worker.ts";
import {
  checkHanded,
  type FileReference,
  type HandedFiles,
  handFiles,
  removeHanded,
} from "./file_input.ts";
import { type WorkerHooks, WorkerPool } from "./worker_pool.ts";

/** One node ready to execute: everything resolved. */
export interface Job {
  /** Node id. */
  readonly id: string;
  /** Key. */
  readonly key: string;
  /** Whether the result is stored. */
  readonly cacheable: boolean;
  /** The kind. */
  readonly kind: NodeKind;
  /** Resolved parameters (inputs substituted). */
  readonly params: Json;
  /** Key components (stored with the entry). */
  readonly components: KeyComponents;
  /** Input key -> node id. */
  readonly inputs: Readonly<Record<string, string>>;
  /** Directory of the experiment file. */
  readonly baseDir: string;
  /** Modules besides the kind's whose code the node runs (`NodeKind.codeModules`). */
  readonly codeModules?: readonly string[];
  /**
   * The file references among the parameters (their blob paths): the node
   * is handed verified read-only copies, checked again after it ran.
   */
  readonly files?: readonly FileReference[];
}

/** Options of {@linkcode executeJob} and of a run. */
export interface ExecuteOptions {
  /** Progress sink. @default a silent one */
  readonly reporter?: Reporter;
  /** Cancels the run. */
  readonly signal?: AbortSignal;
  /** Lock staleness and heartbeat. */
  readonly lockOptions?: LockOptions;
  /** How often to poll a key locked by another process. @default 250 */
  readonly pollMs?: number;
  /**
   * Warm workers for heavy kinds (the local executor keeps one per job
   * slot). @default a new worker per heavy node
   */
  readonly workers?: WorkerPool;
}

/** What a {@linkcode JobRunner} resolves with. */
export interface JobOutcome {
  /** Computed now, or found in the cache. */
  readonly status: "done" | "cached";
  /** The stored (or, for an uncacheable node, computed) entry. */
  readonly entry: Entry;
  /** Wall time (ms). */
  readonly ms: number;
  /** Executor job id (e.g. Slurm's), recorded in the manifest. */
  readonly job?: string;
  /** Log of the execution when not the node log (e.g. the Slurm job's). */
  readonly log?: string;
}

/** Runs one job and returns its stored entry (see {@linkcode executeJob}). */
export type JobRunner = (
  job: Job,
  store: Store,
  options: ExecuteOptions,
) => Promise<JobOutcome>;

/** A node that failed, with what the failure block shows. */
export class NodeFailure extends Error {
  /** Node id. */
  readonly id: string;
  /** Its key. */
  readonly key: string;
  /** Its log file. */
  readonly log: string;
  /**
   * Executor facts for the failure block (e.g. `{slurm: "job 12 TIMEOUT
   * (reason TimeLimit)"}`), printed one per line.
   */
  readonly details: Readonly<Record<string, string>>;
  /** Executor job id (e.g. a Slurm job id), when the node ran as one. */
  readonly job?: string;
  /** Creates the failure. */
  constructor(
    id: string,
    key: string,
    log: string,
    message: string,
    options?: NodeFailureOptions,
  ) {
    super(message, options);
    this.name = "NodeFailure";
    this.id = id;
    this.key = key;
    this.log = log;
    this.details = options?.details ?? {};
    if (options?.job !== undefined) this.job = options.job;
  }
}

/** Options of {@linkcode NodeFailure}. */
export interface NodeFailureOptions extends ErrorOptions {
  /** Executor facts for the failure block. @default {} */
  readonly details?: Readonly<Record<string, string>>;
  /** Executor job id. */
  readonly job?: string;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}

/** Options of {@linkcode claimKey}. */
export interface ClaimOptions extends ExecuteOptions {
  /**
   * `lock`: wait until this process holds the key's lock (it computes the
   * node here). `wait`: only wait while another process holds it (the node
   * is computed elsewhere, e.g. by a Slurm job that takes the lock itself).
   */
  readonly mode: "lock" | "wait";
  /** Also stops the wait (e.g. the executor was closed). */
  readonly stopped?: () => boolean;
}

/**
 * The one lock-and-cache wait of every executor: waits while another
 * process holds the key's lock (reporting who), and returns the entry when
 * one is stored meanwhile; otherwise, in mode `lock`, the lock this process
 * now holds. A corrupt entry is reported and treated as absent.
 *
 * @throws {NodeFailure} "interrupted" when the signal aborts first.
 */
export async function claimKey(
  job: Pick<Job, "id" | "key">,
  store: Store,
  options: ClaimOptions,
): Promise<{ entry: Entry } | { lock: Lock | null }> {
  const reporter = options.reporter ?? new SilentReporter();
  const pollMs = options.pollMs ?? 250;
  for (;;) {
    if (options.mode === "wait") {
      const entry = _stored(job.key, store, reporter);
      if (entry) return { entry };
    }
    if (options.signal?.aborted || options.stopped?.()) {
      throw new NodeFailure(
        job.id,
        job.key,
        store.logPath(job.key),
        "interrupted",
      );
    }
    let holder;
    if (options.mode === "lock") {
      const got = store.lock(job.key, job.id, options.lockOptions);
      if ("release" in got) {
        const entry = _stored(job.key, store, reporter);
        if (!entry) return { lock: got };
        got.release();
        return { entry };
      }
      holder = got;
    } else {
      holder = store.lockHolder(job.key, options.lockOptions);
      if (!holder) return { lock: null };
    }
    reporter.waiting(
      job.id,
      describeHolder(store.lockPath(job.key), holder, options.lockOptions),
    );
    await sleep(pollMs, options.signal);
  }
}

function _stored(key: string, store: Store, reporter: Reporter): Entry | null {
  try {
    return store.loadVerified(key);
  } catch (e) {
    if (!(e instanceof CorruptEntryError)) throw e;
    reporter.info(`${e.message}; recomputing`);
    return null;
  }
}

/**
 * Executes one job in this process: claims its key (waiting while another
 * process computes it, and using its result if it stores one), runs the
 * kind in this thread or a worker, verifies and stores the result.
 *
 * @throws {NodeFailure} when the node fails.
 */
export async function executeJob(
  job: Job,
  store: Store,
  options: ExecuteOptions = {},
): Promise<JobOutcome> {
  const reporter = options.reporter ?? new SilentReporter();
  const t0 = performance.now();
  let lock: Lock | null = null;
  if (job.cacheable) {
    const claim = await claimKey(job, store, { ...options, mode: "lock" });
    if ("entry" in claim) {
      return {
        status: "cached",
        entry: claim.entry,
        ms: performance.now() - t0,
      };
    }
    lock = claim.lock;
  }
  // The log and the work directory are made inside the try: when the disk
  // is full they fail like the node does, and the lock is still released.
  let workDir: string | undefined;
  let handed: HandedFiles | undefined;
  let log: (m: string) => void = () => {};
  const logPath = join(store.root, "logs", `${job.key}.log`);
  try {
    log = _nodeLog(job, store.logPath(job.key));
    workDir = store.workDir(job.key);
    let running = job;
    if (job.files?.length) {
      // file references: verified read-only copies, not the store's blobs
      handed = handFiles(
        store,
        job.files,
        job.params,
        store.tmpPath(`in-${job.key.slice(0, 16)}`),
      );
      running = { ...job, params: handed.params };
    }
    const result = await _run(
      running,
      store,
      workDir,
      log,
      reporter,
      options.signal,
      options.workers,
    );
    if (handed !== undefined) checkHanded(handed);
    const entry = _entryOf(job, result, performance.now() - t0);
    for (const b of entry.blobs) store.verifyBlob(b);
    if (job.cacheable) store.writeEntry(entry);
    log(`done in ${formatDuration(entry.ms)}`);
    return { status: "done", entry, ms: performance.now() - t0 };
  } catch (e) {
    const err = e as Error;
    log(`FAILED: ${err?.stack ?? String(e)}`);
    throw new NodeFailure(
      job.id,
      job.key,
      logPath,
      err?.message ?? String(e),
      {
        cause: e,
      },
    );
  } finally {
    lock?.release();
    if (handed !== undefined) removeHanded(handed.dir);
    if (workDir !== undefined) {
      try {
        Deno.removeSync(workDir, { recursive: true });
      } catch { /* already gone */ }
    }
  }
}

/** Starts the node's log file; returns the function that appends to it. */
function _nodeLog(job: Job, logPath: string): (m: string) => void {
  onDisk(logPath, "write the node log", () =>
    Deno.writeTextFileSync(
      logPath,
      `# ${job.id} key ${job.key} started ${
        new Date().toISOString()
      } pid ${Deno.pid}\n`,
    ));
  return (m: string) => {
    try {
      Deno.writeTextFileSync(
        logPath,
        `${new Date().toISOString().slice(11, 23)} ${m}\n`,
        { append: true },
      );
    } catch { /* logging never fails a node */ }
  };
}

/** Validates the parameters and runs the kind (in a worker when heavy); checks that it returned JSON. */
async function _run(
  job: Job,
  store: Store,
  workDir: string,
  log: (m: string) => void,
  reporter: Reporter,
  signal: AbortSignal | undefined,
  workers: WorkerPool | undefined,
): Promise<NodeResult> {
  const parsed = v.safeParse(job.kind.params, job.params);
  if (!parsed.success) {
    throw new Error(
      `parameters do not match kind ${job.kind.name}: ${
        _issues(parsed.issues)
      }`,
    );
  }
  let last = 0;
  const progress = (done: number, total: number, note?: string) => {
    const now = performance.now();
    if (now - last < 100 && done < total) return;
    last = now;
    reporter.progress(job.id, done, total, note);
  };
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  let result: NodeResult;
  try {
    const ctxData = {
      id: job.id,
      key: job.key,
      seed: seedOfKey(job.key),
      workDir,
      auxDir: store.auxDir(job.kind.name),
      baseDir: job.baseDir,
    };
    if (job.kind.heavy) {
      result = await _inWorker(
        job,
        ctxData,
        store.root,
        { progress, log },
        controller.signal,
        workers,
      );
    } else {
      const ctx: NodeContext = {
        ...ctxData,
        signal: controller.signal,
        progress,
        log,
        writeBlob: (bytes, media) =>
          Promise.resolve(store.writeBlob(bytes, media)),
        readBlob: (ref) => Promise.resolve(store.readBlob(ref)),
      };
      result = await job.kind.run(parsed.output, ctx);
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
  _checkResult(job.kind, result);
  return result;
}

function _issues(issues: readonly v.BaseIssue<unknown>[]): string {
  return issues.map((i) =>
    `${i.path?.map((p) => String(p.key)).join(".") || "(params)"}: ${i.message}`
  ).join("; ");
}

function _checkResult(kind: NodeKind, result: NodeResult): void {
  if (typeof result !== "object" || result === null || !("value" in result)) {
    throw new Error(`kind ${kind.name} returned no {value}`);
  }
  try {
    canonicalJson(result.value);
    if (result.report !== undefined) canonicalJson(result.report);
  } catch (e) {
    throw new Error(
      `kind ${kind.name} returned a value that is not JSON: ${
        (e as Error).message
      }`,
    );
  }
}

/** The entry that stores `result`. */
function _entryOf(job: Job, result: NodeResult, ms: number): Entry {
  const blobs = [...blobsIn(result.value), ...blobsIn(result.report)].map((b) =>
    b.$blob
  );
  let codeFiles: Record<string, string> = {};
  try {
    codeFiles = {
      ...(codeFilesOf(job.components.code) ??
        modulesDigest([job.kind.module, ...(job.codeModules ?? [])]).files),
    };
  } catch { /* not cacheable anyway */ }
  return {
    key: job.key,
    id: job.id,
    kind: job.kind.name,
    components: job.components,
    inputs: job.inputs,
    codeFiles,
    value: result.value,
    ...(result.report !== undefined ? { report: result.report } : {}),
    blobs: [...new Set(blobs)],
    created: new Date().toISOString(),
    ms: Math.round(ms),
    versions: VERSIONS,
  };
}

function _inWorker(
  job: Job,
  ctx: WorkerRequest["ctx"],
  cacheRoot: string,
  hooks: WorkerHooks,
  signal: AbortSignal,
  workers: WorkerPool | undefined,
): Promise<NodeResult> {
  const req: WorkerRequest = {
    module: job.kind.module,
    name: job.kind.name,
    params: job.params,
    ctx,
    cacheRoot,
  };
  if (workers) return workers.run(req, hooks, signal);
  // no pool: a worker of its own, terminated after the node
  const own = new WorkerPool({ size: 1, fresh: true });
  return own.run(req, hooks, signal).finally(() => own.close());
}
