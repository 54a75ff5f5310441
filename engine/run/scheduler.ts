/**
 * The scheduler: runs the nodes of a plan in dependency order, independent
 * nodes in parallel (up to `jobs`), each through an executor's
 * {@linkcode JobRunner}; keeps the run manifest current; a failing node
 * fails only its dependents. Its parts are plain functions that can be
 * tested alone: {@linkcode runManifest} (the manifest a run starts with),
 * {@linkcode ReadyQueue} (which nodes may start) and {@linkcode resolveJob}
 * (a node's inputs resolved into a job).
 *
 * @module
 */
import { hostname } from "node:os";
import { relative, resolve } from "node:path";
import { nodeCodeDigest, nodeModules } from "../cache/digest.ts";
import { EntryMap } from "../cache/entry_map.ts";
import type { GraphNode } from "../compile/experiment.ts";
import {
  executeJob,
  type ExecuteOptions,
  type Job,
  type JobOutcome,
  type JobRunner,
  NodeFailure,
} from "./job.ts";
import { writeJobSpec } from "./job_spec.ts";
import { filePathOf, type FileReference } from "./file_input.ts";
import { isFileField } from "../compile/file_refs.ts";
import {
  type Manifest,
  type ManifestNode,
  newRunId,
  writeManifest,
} from "../cache/manifest.ts";
import type { Plan, PlanItem } from "./plan.ts";
import { FileSystemError } from "../fs_errors.ts";
import { SilentReporter } from "./progress.ts";
import { getField, InputRef, type Resolvable, resolveInputs } from "../refs.ts";
import type { Store } from "../cache/store.ts";
import type { Json } from "../types.ts";
import { VERSIONS } from "../version.ts";

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
  /**
   * When the cache could not be written (disk full, read-only, permission):
   * the first such error. The run then starts nothing more.
   */
  readonly cacheError?: FileSystemError;
  /** Why the manifest could not be written, when it could not (the entries are stored regardless). */
  readonly manifestError?: FileSystemError;
}

/** The manifest a run of `plan` starts with: every node, its key and its plan status. */
export function runManifest(
  plan: Plan,
  store: Store,
  options: { readonly runId: string; readonly executorName?: string },
): { manifest: Manifest; nodes: Map<number, ManifestNode> } {
  const { exp, keys } = plan;
  const manifest: Manifest = {
    format: 1,
    experiment: exp.name,
    file: exp.file,
    run: options.runId,
    ...(exp.overrides?.length ? { overrides: [...exp.overrides] } : {}),
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
  const nodes = new Map<number, ManifestNode>();
  const itemSet = new Set(plan.items);
  for (const node of exp.nodes) {
    const k = keys[node.index]!;
    if (k.components.code && !manifest.code[k.components.code]) {
      try {
        manifest.code[k.components.code] = {
          ...nodeCodeDigest(node.kind, node.literal, exp.dir).files,
        };
      } catch { /* not cacheable */ }
    }
    const it = plan.byIndex.get(node.index);
    const m: ManifestNode = {
      id: node.id,
      key: k.key,
      kind: node.kind.name,
      status: _initialStatus(it, it !== undefined && itemSet.has(it)),
      cacheable: k.cacheable,
      components: k.components,
      inputs: { ...k.inputs },
    };
    if (!k.cacheable && k.reason) m.reason = k.reason;
    if (it?.status === "skipped") m.reason = it.why.join("; ");
    if (it?.status === "cached") {
      m.entry = relative(store.root, store.entryPath(k.key));
    }
    manifest.nodes.push(m);
    nodes.set(node.index, m);
  }
  return { manifest, nodes };
}

function _initialStatus(
  it: PlanItem | undefined,
  selected: boolean,
): ManifestNode["status"] {
  if (!it) return "unselected";
  if (it.status === "skipped" || it.status === "cached") return it.status;
  return selected ? "pending" : "unselected";
}

/**
 * Which nodes of a run may start: a node is ready when all its inputs are
 * available; finishing a node may make its users ready; a failing node
 * blocks everything downstream of it.
 */
export class ReadyQueue {
  #waiting = new Map<number, number>(); // index -> inputs not ready
  #users = new Map<number, number[]>();
  #ready: number[] = [];
  #open: Set<number>;

  /** Queues `items` (nodes to run); `available(i)` says whether node i's entry exists already. */
  constructor(items: readonly PlanItem[], available: (i: number) => boolean) {
    this.#open = new Set(items.map((it) => it.node.index));
    for (const it of items) {
      let n = 0;
      for (const d of it.node.deps) {
        if (available(d)) continue;
        n++;
        const u = this.#users.get(d);
        if (u) u.push(it.node.index);
        else this.#users.set(d, [it.node.index]);
      }
      this.#waiting.set(it.node.index, n);
      if (n === 0) this.#ready.push(it.node.index);
    }
  }

  /** Nodes neither finished, failed nor blocked. */
  get remaining(): number {
    return this.#open.size;
  }

  /** The next ready node, if any. */
  take(): number | undefined {
    return this.#ready.shift();
  }

  /** Forgets every ready node (a cancelled run starts nothing more). */
  drain(): void {
    this.#ready.length = 0;
  }

  /** Whether a node is ready to start now. */
  get hasReady(): boolean {
    return this.#ready.length > 0;
  }

  /** Records that node `i` finished; its users whose inputs are now all available become ready. */
  finished(i: number): void {
    this.#open.delete(i);
    for (const u of this.#users.get(i) ?? []) {
      const n = this.#waiting.get(u)! - 1;
      this.#waiting.set(u, n);
      if (n === 0 && this.#open.has(u)) this.#ready.push(u);
    }
  }

  /** Records that node `i` failed; returns the nodes it blocks (transitively), in the order found. */
  failed(i: number): number[] {
    this.#open.delete(i);
    const blocked: number[] = [];
    const visit = (j: number) => {
      for (const u of this.#users.get(j) ?? []) {
        if (!this.#open.delete(u)) continue;
        blocked.push(u);
        visit(u);
      }
    };
    visit(i);
    return blocked;
  }
}

/**
 * The job of node `i`: its inputs resolved from `values`.
 *
 * @throws {Error} naming the input when one is gone or lacks the referenced field.
 */
export function resolveJob(
  plan: Plan,
  i: number,
  values: EntryMap,
  store?: Store,
): Job {
  const { exp, keys } = plan;
  const node = exp.nodes[i]!;
  const k = keys[i]!;
  const files: FileReference[] = [];
  const params = resolveInputs(node.params, (ref) => {
    const name = exp.nodes[ref.index]!.id;
    const dep = values.get(ref.index);
    if (!dep) {
      throw new Error(
        `input ${name} is no longer in the cache (removed during the run?); run again to recompute it`,
      );
    }
    const got = getField(dep.value, ref.path);
    if (got === undefined) {
      throw new Error(
        `input ${name} has no field "${
          ref.path.join(".")
        }" (its value has keys: ${
          typeof dep.value === "object" && dep.value !== null
            ? Object.keys(dep.value).join(", ")
            : typeof dep.value
        })`,
      );
    }
    if (isFileField(exp.nodes[ref.index]!.kind, ref.path)) {
      return filePathOf(got, name, ref.path[0]!, store, files);
    }
    return got;
  });
  return {
    id: node.id,
    key: k.key,
    cacheable: k.cacheable,
    kind: node.kind,
    params,
    components: k.components,
    inputs: k.inputs,
    baseDir: exp.dir,
    ...(node.kind.codeModules && k.cacheable
      ? { codeModules: nodeModules(node.kind, node.literal, exp.dir).slice(1) }
      : {}),
    ...(files.length ? { files } : {}),
  };
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

/**
 * Runs a plan. Finished nodes are stored as they finish, so a run killed at
 * any point resumes from them. Returns failures instead of throwing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import { compileExperiment } from "../compile/experiment.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const exp = compileExperiment("e.yaml", "experiment: e\nseed: 1\nnodes:\n  a: { kind: one, with: { x: 4 } }\n", {
 *   kinds: [one as NodeKind],
 * });
 * import { Store } from "../cache/store.ts";
 * import { makePlan } from "./plan.ts";
 * import { runPlan } from "./scheduler.ts";
 * import { SilentReporter } from "./progress.ts";
 * const dir = await Deno.makeTempDir();
 * const store = new Store(dir);
 * const reporter = new SilentReporter();
 * const first = await runPlan(makePlan(exp, store), store, { reporter });
 * assert.equal(first.failures.length, 0);
 * // The second run finds the node in the cache.
 * assert.equal(makePlan(exp, store).items[0]!.status, "cached");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function runPlan(
  plan: Plan,
  store: Store,
  options: RunPlanOptions = {},
): Promise<RunResult> {
  const run = new _Run(plan, store, options);
  await run.done;
  return run.finish();
}

/** The state of one run of {@linkcode runPlan}. */
class _Run {
  readonly done: Promise<void>;
  #plan: Plan;
  #store: Store;
  #options: RunPlanOptions;
  #reporter;
  #jobs: number;
  #manifest: Manifest;
  #mnode: Map<number, ManifestNode>;
  #manifestPath = "";
  #dirty = false;
  #timer: ReturnType<typeof setInterval>;
  #values: EntryMap;
  #queue: ReadyQueue;
  #failures: NodeFailure[] = [];
  #active = 0;
  #finish!: () => void;
  #cacheError: FileSystemError | undefined;
  #manifestError: FileSystemError | undefined;

  constructor(plan: Plan, store: Store, options: RunPlanOptions) {
    this.#plan = plan;
    this.#store = store;
    this.#options = options;
    this.#reporter = options.reporter ?? new SilentReporter();
    this.#jobs = Math.max(
      1,
      options.jobs ?? navigator.hardwareConcurrency ?? 2,
    );
    const m = runManifest(plan, store, {
      runId: options.runId ?? newRunId(),
      ...(options.executorName ? { executorName: options.executorName } : {}),
    });
    this.#manifest = m.manifest;
    this.#mnode = m.nodes;
    const toRun = plan.items.filter((it) =>
      it.status === "run" || it.status === "blocked"
    );
    // The first write records the run before anything executes (a killed run
    // leaves a manifest); a run with nothing to do writes once, at the end.
    if (toRun.length > 0) {
      this.#manifestPath = writeManifest(store, this.#manifest);
    }
    let touched = Date.now();
    this.#timer = setInterval(() => {
      if (!this.#dirty) {
        // Heartbeat: a live run's manifest is never older than a minute,
        // so `cache gc` on another host knows the run is alive.
        if (Date.now() - touched > 30_000 && this.#manifestPath) {
          touched = Date.now();
          try {
            Deno.utimeSync(this.#manifestPath, new Date(), new Date());
          } catch { /* reported by the next write */ }
        }
        return;
      }
      this.#dirty = false;
      touched = Date.now();
      this.#writeManifest();
    }, options.manifestEveryMs ?? 2000);
    this.#values = new EntryMap(store, plan.keys.map((k) => k.key));
    for (const [i, it] of plan.byIndex) {
      if (it.status === "cached") this.#values.markStored(i);
    }
    this.#queue = new ReadyQueue(toRun, (i) => this.#values.has(i));
    this.done = new Promise<void>((r) => (this.#finish = r));
    this.#pump();
  }

  /**
   * Rewrites the manifest; a file-system failure is reported once and the
   * run goes on (results are stored as entries; the manifest only explains).
   */
  #writeManifest(): void {
    try {
      this.#manifestPath = writeManifest(this.#store, this.#manifest);
    } catch (e) {
      if (!(e instanceof FileSystemError)) throw e;
      if (!this.#manifestError) {
        this.#manifestError = e;
        this.#reporter.info(`warning: ${e.message}`);
      }
    }
  }

  #pump(): void {
    if (this.#options.signal?.aborted || this.#cacheError) this.#queue.drain();
    while (this.#active < this.#jobs && this.#queue.hasReady) {
      this.#launch(this.#queue.take()!);
    }
    if (
      this.#active === 0 &&
      (this.#queue.remaining <= 0 || !this.#queue.hasReady)
    ) this.#finish();
  }

  #launch(i: number): void {
    const node = this.#plan.exp.nodes[i]!;
    const k = this.#plan.keys[i]!;
    const m = this.#mnode.get(i)!;
    m.status = "running";
    m.started = new Date().toISOString();
    m.log = this.#rel(this.#store.logPath(k.key));
    this.#dirty = true;
    this.#active++;
    this.#reporter.start(node.id);
    const t0 = performance.now();
    (async () => {
      const job = resolveJob(this.#plan, i, this.#values, this.#store);
      if (k.cacheable) {
        writeJobSpec(this.#store, job, resolve(this.#plan.exp.file));
      }
      const runner = this.#options.runner ?? executeJob;
      return await runner(job, this.#store, this.#options);
    })().then(
      (r) => this.#succeeded(i, r),
      (e: unknown) => this.#failed(i, e, t0),
    ).finally(() => {
      this.#active--;
      this.#dirty = true;
      this.#pump();
    });
  }

  #succeeded(i: number, r: JobOutcome): void {
    const m = this.#mnode.get(i)!;
    this.#values.set(i, r.entry);
    m.status = r.status === "cached" ? "cached" : "done";
    m.ms = Math.round(r.ms);
    if (r.job !== undefined) m.job = r.job;
    if (r.log !== undefined) m.log = this.#rel(r.log);
    const k = this.#plan.keys[i]!;
    if (k.cacheable) m.entry = this.#rel(this.#store.entryPath(k.key));
    this.#reporter.end(m.id, r.status, r.ms);
    this.#queue.finished(i);
  }

  #failed(i: number, e: unknown, t0: number): void {
    const m = this.#mnode.get(i)!;
    const f = e instanceof NodeFailure ? e : new NodeFailure(
      m.id,
      m.key,
      this.#store.logPath(m.key),
      (e as Error)?.message ?? String(e),
      { cause: e },
    );
    const interrupted = this.#options.signal?.aborted === true;
    // A cache that cannot be written fails every node alike: start nothing more.
    if (f.cause instanceof FileSystemError) this.#cacheError ??= f.cause;
    m.status = interrupted ? "interrupted" : "failed";
    m.error = f.message;
    if (f.job !== undefined) m.job = f.job;
    if (f.log) m.log = this.#rel(f.log);
    m.ms = Math.round(performance.now() - t0);
    if (!interrupted) this.#failures.push(f);
    this.#reporter.end(m.id, "failed", performance.now() - t0, f.message);
    for (const u of this.#queue.failed(i)) {
      const mu = this.#mnode.get(u)!;
      if (mu.status !== "pending") continue;
      mu.status = "blocked";
      mu.reason = `input ${m.id} failed`;
    }
  }

  #rel(p: string): string {
    return relative(this.#store.root, p);
  }

  finish(): RunResult {
    clearInterval(this.#timer);
    this.#reporter.close();
    const interrupted = this.#options.signal?.aborted === true;
    const manifest = this.#manifest;
    for (const m of manifest.nodes) {
      if (m.status === "pending" || m.status === "running") {
        m.status = interrupted ? "interrupted" : "blocked";
        if (!interrupted && this.#cacheError) {
          m.reason = "not started: the cache cannot be written";
        }
      }
    }
    manifest.finished = new Date().toISOString();
    manifest.status = interrupted
      ? "interrupted"
      : this.#failures.length > 0
      ? "failed"
      : "ok";
    this.#writeManifest();
    return {
      manifest,
      manifestPath: this.#manifestPath,
      failures: this.#failures,
      values: this.#values,
      ...(this.#cacheError ? { cacheError: this.#cacheError } : {}),
      ...(this.#manifestError ? { manifestError: this.#manifestError } : {}),
    };
  }
}
