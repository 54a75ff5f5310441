/**
 * Execution: runs the nodes of a plan in dependency order, independent nodes
 * in parallel (up to `jobs`), heavy kinds in Web Workers; stores results;
 * writes the run manifest; a failing node fails only its dependents.
 *
 * @module
 */
import * as v from "valibot";
import { canonicalJson } from "./canonical.ts";
import { CorruptEntryError, UserError } from "./errors.ts";
import { codeDigest } from "./digest.ts";
import type { GraphNode } from "./experiment.ts";
import { type KeyComponents, seedOfKey } from "./keys.ts";
import type { Lock } from "./lock.ts";
import type { LockOptions } from "./lock.ts";
import {
  type Manifest,
  type ManifestNode,
  newRunId,
  writeManifest,
} from "./manifest.ts";
import type { Plan } from "./plan.ts";
import { formatDuration, type Reporter, SilentReporter } from "./progress.ts";
import { getField, InputRef, type Resolvable, resolveInputs } from "./refs.ts";
import { blobsIn, type Entry, type Store } from "./store.ts";
import type { Json, NodeContext, NodeKind, NodeResult } from "./types.ts";
import { VERSIONS } from "./version.ts";
import type { WorkerMessage, WorkerRequest } from "./worker.ts";
import { hostname } from "node:os";
import { relative, resolve } from "node:path";

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
}

/** Options of {@linkcode executeJob} and {@linkcode runPlan}. */
export interface ExecuteOptions {
  /** Progress sink. @default a silent one */
  readonly reporter?: Reporter;
  /** Cancels the run. */
  readonly signal?: AbortSignal;
  /** Lock staleness and heartbeat. */
  readonly lockOptions?: LockOptions;
  /** How often to poll a key locked by another process. @default 250 */
  readonly pollMs?: number;
}

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

function _sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}

function _issues(issues: readonly v.BaseIssue<unknown>[]): string {
  return issues.map((i) =>
    `${i.path?.map((p) => String(p.key)).join(".") || "(params)"}: ${i.message}`
  ).join("; ");
}

/**
 * Executes one job: takes the key's lock (waiting while another process
 * holds it, and using its result if it stores one), runs the kind in this
 * thread or a worker, verifies and stores the result. Throws a
 * {@linkcode NodeFailure} when the node fails.
 */
export async function executeJob(
  job: Job,
  store: Store,
  options: ExecuteOptions = {},
): Promise<JobOutcome> {
  const reporter = options.reporter ?? new SilentReporter();
  const logPath = store.logPath(job.key);
  const t0 = performance.now();
  let lock: Lock | null = null;
  if (job.cacheable) {
    for (;;) {
      if (options.signal?.aborted) {
        throw new NodeFailure(job.id, job.key, logPath, "interrupted");
      }
      const got = store.lock(job.key, `${job.id}`, options.lockOptions);
      if ("release" in got) {
        lock = got;
        break;
      }
      reporter.waiting(
        job.id,
        `${got.note || "?"} in pid ${got.pid}@${got.host}`,
      );
      await _sleep(options.pollMs ?? 250, options.signal);
    }
    try {
      const done = store.loadVerified(job.key);
      if (done) {
        lock.release();
        return { status: "cached", entry: done, ms: performance.now() - t0 };
      }
    } catch (e) {
      if (!(e instanceof CorruptEntryError)) throw e;
      reporter.info(`${e.message}; recomputing`);
    }
  }
  const workDir = store.workDir(job.key);
  Deno.writeTextFileSync(
    logPath,
    `# ${job.id} key ${job.key} started ${
      new Date().toISOString()
    } pid ${Deno.pid}\n`,
  );
  const log = (m: string) => {
    try {
      Deno.writeTextFileSync(
        logPath,
        `${new Date().toISOString().slice(11, 23)} ${m}\n`,
        { append: true },
      );
    } catch { /* logging never fails a node */ }
  };
  let last = 0;
  const progress = (done: number, total: number, note?: string) => {
    const now = performance.now();
    if (now - last < 100 && done < total) return;
    last = now;
    reporter.progress(job.id, done, total, note);
  };
  try {
    const parsed = v.safeParse(job.kind.params, job.params);
    if (!parsed.success) {
      throw new Error(
        `parameters do not match kind ${job.kind.name}: ${
          _issues(parsed.issues)
        }`,
      );
    }
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
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
      options.signal?.removeEventListener("abort", onAbort);
    }
    if (typeof result !== "object" || result === null || !("value" in result)) {
      throw new Error(`kind ${job.kind.name} returned no {value}`);
    }
    try {
      canonicalJson(result.value);
      if (result.report !== undefined) canonicalJson(result.report);
    } catch (e) {
      throw new Error(
        `kind ${job.kind.name} returned a value that is not JSON: ${
          (e as Error).message
        }`,
      );
    }
    const blobs = [...blobsIn(result.value), ...blobsIn(result.report)].map((
      b,
    ) => b.$blob);
    for (const b of blobs) store.verifyBlob(b);
    const ms = performance.now() - t0;
    let codeFiles: Record<string, string> = {};
    try {
      codeFiles = { ...codeDigest(job.kind.module).files };
    } catch { /* not cacheable anyway */ }
    const entry: Entry = {
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
    if (job.cacheable) store.writeEntry(entry);
    log(`done in ${formatDuration(ms)}`);
    return { status: "done", entry, ms };
  } catch (e) {
    const err = e as Error;
    log(`FAILED: ${err?.stack ?? String(e)}`);
    throw new NodeFailure(job.id, job.key, logPath, err?.message ?? String(e), {
      cause: e,
    });
  } finally {
    lock?.release();
    try {
      Deno.removeSync(workDir, { recursive: true });
    } catch { /* already gone */ }
  }
}

function _inWorker(
  job: Job,
  ctx: WorkerRequest["ctx"],
  cacheRoot: string,
  hooks: {
    progress: (d: number, t: number, n?: string) => void;
    log: (m: string) => void;
  },
  signal: AbortSignal,
): Promise<NodeResult> {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL("./worker.ts", import.meta.url).href, {
      type: "module",
    });
    let settled = false;
    const finish = (f: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      w.terminate();
      f();
    };
    const onAbort = () => finish(() => reject(new Error("interrupted")));
    signal.addEventListener("abort", onAbort, { once: true });
    w.onmessage = (e: MessageEvent<WorkerMessage>) => {
      const m = e.data;
      if (m.type === "progress") hooks.progress(m.done, m.total, m.note);
      else if (m.type === "log") hooks.log(m.message);
      else if (m.type === "done") finish(() => resolve(m.result as NodeResult));
      else {
        const err = new Error(m.message);
        if (m.stack) err.stack = m.stack;
        finish(() => reject(err));
      }
    };
    w.onerror = (e) => {
      e.preventDefault();
      finish(() =>
        reject(new Error(`worker of ${job.id} crashed: ${e.message}`))
      );
    };
    const req: WorkerRequest = {
      module: job.kind.module,
      name: job.kind.name,
      params: job.params,
      ctx,
      cacheRoot,
    };
    w.postMessage(req);
  });
}

/** Shows parameters with inputs as `$id.path` (what a failure block prints). */
export function displayParams(
  node: GraphNode,
  ids: (i: number) => string,
): Json {
  const show = (t: Resolvable): Json => {
    if (t instanceof InputRef) {
      return `$${ids(t.index)}${t.path.length ? "." + t.path.join(".") : ""}`;
    }
    if (t === null || typeof t !== "object") return t;
    if (Array.isArray(t)) return t.map(show);
    const out: { [k: string]: Json } = {};
    for (const [k, x] of Object.entries(t)) out[k] = show(x);
    return out;
  };
  return show(node.params);
}

/** The result of a run. */
export interface RunResult {
  /** The manifest as written. */
  readonly manifest: Manifest;
  /** Where it was written. */
  readonly manifestPath: string;
  /** Failed nodes. */
  readonly failures: readonly NodeFailure[];
  /** Entry of every node that is cached or was computed (by index; cached ones are read on demand). */
  readonly values: EntryMap;
}

/**
 * Entries by node index: computed ones held in memory, cached ones read (and
 * verified) from the store on first use.
 */
export class EntryMap {
  #store: Store;
  #keys: readonly string[];
  #loaded = new Map<number, Entry>();
  #stored = new Set<number>();
  /** Creates the map over `keys` (index-aligned with the experiment's nodes). */
  constructor(store: Store, keys: readonly string[]) {
    this.#store = store;
    this.#keys = keys;
  }
  /** Marks a node as available in the store. */
  markStored(i: number): void {
    this.#stored.add(i);
  }
  /** Whether a node's entry is available. */
  has(i: number): boolean {
    return this.#loaded.has(i) || this.#stored.has(i);
  }
  /** Sets a computed entry. */
  set(i: number, e: Entry): void {
    this.#loaded.set(i, e);
  }
  /** The entry of a node, reading it from the store if needed. */
  get(i: number): Entry | undefined {
    const hit = this.#loaded.get(i);
    if (hit || !this.#stored.has(i)) return hit;
    const e = this.#store.loadVerified(this.#keys[i]!);
    if (e) this.#loaded.set(i, e);
    return e ?? undefined;
  }
}

/** Options of {@linkcode runPlan}. */
export interface RunPlanOptions extends ExecuteOptions {
  /** Parallel nodes. @default navigator.hardwareConcurrency */
  readonly jobs?: number;
  /** How often the manifest is rewritten while running (ms). @default 2000 */
  readonly manifestEveryMs?: number;
  /**
   * Where a job runs. The default runs it in this process (heavy kinds in a
   * worker). Another executor (e.g. Slurm) writes the job spec
   * ({@linkcode writeJobSpec} is already called for cacheable jobs), starts
   * `run-node KEY` elsewhere and resolves when the entry is in the store.
   * @default executeJob
   */
  readonly runner?: JobRunner;
  /** Run id (names the manifest and the run directory). @default a new one */
  readonly runId?: string;
  /** Executor name recorded in the manifest. @default "local" */
  readonly executorName?: string;
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

/**
 * Runs a plan. Finished nodes are stored as they finish, so a run killed at
 * any point resumes from them. Returns failures instead of throwing.
 */
export async function runPlan(
  plan: Plan,
  store: Store,
  options: RunPlanOptions = {},
): Promise<RunResult> {
  const { exp, keys } = plan;
  const reporter = options.reporter ?? new SilentReporter();
  const jobs = Math.max(1, options.jobs ?? navigator.hardwareConcurrency ?? 2);
  const run = options.runId ?? newRunId();
  const manifest: Manifest = {
    format: 1,
    experiment: exp.name,
    file: exp.file,
    run,
    ...(options.executorName && options.executorName !== "local"
      ? { executor: options.executorName }
      : {}),
    started: new Date().toISOString(),
    status: "running",
    versions: { ...VERSIONS },
    host: hostname(),
    pid: Deno.pid,
    code: {},
    counts: {},
    nodes: [],
  };
  const mnode = new Map<number, ManifestNode>();
  const itemSet = new Set(plan.items);
  const rel = (p: string) => relative(store.root, p);
  for (const node of exp.nodes) {
    const k = keys[node.index]!;
    if (k.components.code && !manifest.code[k.components.code]) {
      try {
        manifest.code[k.components.code] = {
          ...codeDigest(node.kind.module).files,
        };
      } catch { /* not cacheable */ }
    }
    const it = plan.byIndex.get(node.index);
    const inItems = it !== undefined && itemSet.has(it);
    const m: ManifestNode = {
      id: node.id,
      key: k.key,
      kind: node.kind.name,
      status: !it
        ? "unselected"
        : it.status === "skipped"
        ? "skipped"
        : it.status === "cached"
        ? "cached"
        : inItems
        ? "pending"
        : "unselected",
      cacheable: k.cacheable,
      components: k.components,
      inputs: { ...k.inputs },
    };
    if (!k.cacheable && k.reason) m.reason = k.reason;
    if (it?.status === "skipped") m.reason = it.why.join("; ");
    if (it?.status === "cached") m.entry = rel(store.entryPath(k.key));
    manifest.nodes.push(m);
    mnode.set(node.index, m);
  }
  const anythingToRun = plan.items.some((it) =>
    it.status === "run" || it.status === "blocked"
  );
  // The first write records the run before anything executes (a killed run
  // leaves a manifest); a run with nothing to do writes once, at the end.
  let manifestPath = anythingToRun ? writeManifest(store, manifest) : "";
  let dirty = false;
  const timer = setInterval(() => {
    if (dirty) {
      dirty = false;
      manifestPath = writeManifest(store, manifest);
    }
  }, options.manifestEveryMs ?? 2000);

  const values = new EntryMap(store, keys.map((k) => k.key));
  for (const [i, it] of plan.byIndex) {
    if (it.status === "cached") values.markStored(i);
  }
  const failures: NodeFailure[] = [];
  const toRun = plan.items.filter((it) =>
    it.status === "run" || it.status === "blocked"
  );
  const waiting = new Map<number, number>(); // index -> number of inputs not ready
  const users = new Map<number, number[]>();
  for (const it of toRun) {
    let n = 0;
    for (const d of it.node.deps) {
      if (!values.has(d)) {
        n++;
        const u = users.get(d);
        if (u) u.push(it.node.index);
        else users.set(d, [it.node.index]);
      }
    }
    waiting.set(it.node.index, n);
  }
  const ready: number[] = toRun.filter((it) => waiting.get(it.node.index) === 0)
    .map((it) => it.node.index);
  let active = 0;
  let finishAll!: () => void;
  const allDone = new Promise<void>((r) => (finishAll = r));
  let remaining = toRun.length;
  if (remaining === 0) finishAll();

  const block = (i: number, cause: string) => {
    for (const u of users.get(i) ?? []) {
      const m = mnode.get(u)!;
      if (m.status !== "pending") continue;
      m.status = "blocked";
      m.reason = `input ${cause} failed`;
      remaining--;
      block(u, cause);
    }
  };

  const launch = (i: number) => {
    const node = exp.nodes[i]!;
    const k = keys[i]!;
    const m = mnode.get(i)!;
    m.status = "running";
    m.started = new Date().toISOString();
    m.log = rel(store.logPath(k.key));
    dirty = true;
    active++;
    reporter.start(node.id);
    const t0 = performance.now();
    (async () => {
      const params = resolveInputs(node.params, (ref) => {
        const dep = values.get(ref.index);
        if (!dep) {
          throw new Error(
            `input ${
              exp.nodes[ref.index]!.id
            } is no longer in the cache (removed during the run?); run again to recompute it`,
          );
        }
        const got = getField(dep.value, ref.path);
        if (got === undefined) {
          throw new Error(
            `input ${exp.nodes[ref.index]!.id} has no field "${
              ref.path.join(".")
            }" (its value has keys: ${
              typeof dep.value === "object" && dep.value !== null
                ? Object.keys(dep.value).join(", ")
                : typeof dep.value
            })`,
          );
        }
        return got;
      });
      const job: Job = {
        id: node.id,
        key: k.key,
        cacheable: k.cacheable,
        kind: node.kind,
        params,
        components: k.components,
        inputs: k.inputs,
        baseDir: exp.dir,
      };
      if (k.cacheable) writeJobSpec(store, job, resolve(exp.file));
      return await (options.runner ?? executeJob)(job, store, options);
    })().then((r) => {
      values.set(i, r.entry);
      m.status = r.status === "cached" ? "cached" : "done";
      m.ms = Math.round(r.ms);
      if (r.job !== undefined) m.job = r.job;
      if (r.log !== undefined) m.log = rel(r.log);
      if (k.cacheable) m.entry = rel(store.entryPath(k.key));
      reporter.end(node.id, r.status, r.ms);
      for (const u of users.get(i) ?? []) {
        const n = waiting.get(u)! - 1;
        waiting.set(u, n);
        if (n === 0 && mnode.get(u)!.status === "pending") ready.push(u);
      }
    }, (e: unknown) => {
      const f = e instanceof NodeFailure ? e : new NodeFailure(
        node.id,
        k.key,
        store.logPath(k.key),
        (e as Error)?.message ?? String(e),
        { cause: e },
      );
      const interrupted = options.signal?.aborted === true;
      m.status = interrupted ? "interrupted" : "failed";
      m.error = f.message;
      if (f.job !== undefined) m.job = f.job;
      if (f.log) m.log = rel(f.log);
      m.ms = Math.round(performance.now() - t0);
      if (!interrupted) failures.push(f);
      reporter.end(node.id, "failed", performance.now() - t0, f.message);
      block(i, node.id);
    }).finally(() => {
      active--;
      remaining--;
      dirty = true;
      pump();
    });
  };
  const pump = () => {
    if (options.signal?.aborted) ready.length = 0;
    while (active < jobs && ready.length > 0) launch(ready.shift()!);
    if (active === 0 && (remaining <= 0 || ready.length === 0)) finishAll();
  };
  pump();
  await allDone;
  clearInterval(timer);
  reporter.close();
  const interrupted = options.signal?.aborted === true;
  for (const m of manifest.nodes) {
    if (m.status === "pending" || m.status === "running") {
      m.status = interrupted ? "interrupted" : "blocked";
    }
  }
  manifest.finished = new Date().toISOString();
  manifest.status = interrupted
    ? "interrupted"
    : failures.length > 0
    ? "failed"
    : "ok";
  manifestPath = writeManifest(store, manifest);
  return { manifest, manifestPath, failures, values };
}

/** What `run-node KEY` reads. */
export interface JobSpec {
  /** Format. */
  readonly format: 1;
  /** Key. */
  readonly key: string;
  /** A node id with this key. */
  readonly id: string;
  /** Experiment file (absolute). */
  readonly file: string;
  /** Kind name. */
  readonly kind: string;
  /** Directory of the experiment file. */
  readonly baseDir: string;
  /** Key components (parameters with inputs as `{$ref: {key, path}}`). */
  readonly components: KeyComponents;
  /** Input key -> node id. */
  readonly inputs: Readonly<Record<string, string>>;
}

/** Writes the job spec of a cacheable job (idempotent). */
export function writeJobSpec(
  store: Store,
  job: Pick<Job, "id" | "key" | "kind" | "components" | "inputs" | "baseDir">,
  file: string,
): string {
  const path = store.jobPath(job.key);
  const spec: JobSpec = {
    format: 1,
    key: job.key,
    id: job.id,
    file,
    kind: job.kind.name,
    baseDir: job.baseDir,
    components: job.components,
    inputs: job.inputs,
  };
  const tmp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  Deno.writeTextFileSync(tmp, JSON.stringify(spec));
  Deno.renameSync(tmp, path);
  return path;
}

/** Rebuilds a job from its spec: inputs are read (verified) from the store. */
export function jobFromSpec(
  store: Store,
  key: string,
  kinds: ReadonlyMap<string, NodeKind>,
): Job {
  let spec: JobSpec;
  try {
    spec = JSON.parse(Deno.readTextFileSync(store.jobPath(key))) as JobSpec;
  } catch {
    throw new UserError(
      `No job spec for key ${key} in ${store.root}/jobs: a node is addressed by key only after a run or plan wrote its spec; use run-node FILE NODE_ID`,
    );
  }
  const kind = kinds.get(spec.kind);
  if (!kind) {
    throw new UserError(
      `Job ${key} needs kind ${spec.kind}, which is not registered`,
    );
  }
  const code = codeDigest(kind.module).digest;
  if (code !== spec.components.code) {
    throw new UserError(
      `The code of kind ${spec.kind} changed since job ${key} was planned; rerun plan/run, or use run-node FILE NODE_ID`,
    );
  }
  const decode = (t: Json): Json => {
    if (t === null || typeof t !== "object") return t;
    if (Array.isArray(t)) return t.map(decode);
    const ref = t.$ref as { key: string; path: string[] } | undefined;
    if (ref && Object.keys(t).length === 1) {
      const entry = store.loadVerified(ref.key);
      if (!entry) {
        throw new UserError(
          `Input ${
            spec.inputs[ref.key] ?? ref.key
          } of ${spec.id} is not in the cache (key ${ref.key})`,
        );
      }
      const got = getField(entry.value, ref.path);
      if (got === undefined) {
        throw new UserError(
          `Input ${spec.inputs[ref.key] ?? ref.key} has no field ${
            ref.path.join(".")
          }`,
        );
      }
      return got;
    }
    const out: { [k: string]: Json } = {};
    for (const [k, x] of Object.entries(t)) {
      out[k.startsWith("$$") ? k.slice(1) : k] = decode(x);
    }
    return out;
  };
  return {
    id: spec.id,
    key: spec.key,
    cacheable: true,
    kind,
    params: decode(spec.components.params),
    components: spec.components,
    inputs: spec.inputs,
    baseDir: spec.baseDir,
  };
}
