/**
 * Warm workers for heavy node kinds: at most `size` long-lived Web Workers
 * (one per job slot), each running one node at a time. A worker imports a
 * kind's module once, compiles its WebAssembly once and keeps its JIT warm
 * for the nodes after, which removes the fixed cost of a fresh worker per
 * node (start-up, imports, compilation, cold code).
 *
 * Isolation stays what a run relies on:
 * - a worker whose node failed (an error, a trap, an uncaught error, an
 *   interruption) is terminated and replaced by a fresh one for the next
 *   node, so a crash or a half-written module state never reaches another
 *   node;
 * - a worker whose heap (V8 heap plus external memory such as WebAssembly
 *   memories and array buffers) is above `memoryBytes` after a node is
 *   retired and replaced;
 * - nodes are deterministic given their parameters and key (module state is
 *   never an input), so a warm worker's results are bit-identical to a fresh
 *   worker's (tested).
 *
 * `fresh: true` gives every node its own worker (the behaviour before warm
 * workers).
 *
 * @module
 */
import { FileSystemError } from "../fs_errors.ts";
import type { NodeResult } from "../types.ts";
import type { WorkerMessage, WorkerPreload, WorkerRequest } from "./worker.ts";

/** Options of {@linkcode WorkerPool}. */
export interface WorkerPoolOptions {
  /** Workers kept (one per job slot). @default 1 */
  readonly size?: number;
  /**
   * Retire a worker after a node that leaves its heap (used V8 heap plus
   * external memory) above this many bytes. @default 1 GiB
   */
  readonly memoryBytes?: number;
  /** A new worker for every node (no reuse). @default false */
  readonly fresh?: boolean;
}

/** What happens while a node runs in a worker. */
export interface WorkerHooks {
  /** Progress from the kind. */
  progress(done: number, total: number, note?: string): void;
  /** A log line from the kind. */
  log(message: string): void;
}

/** Counts of what a pool did (for tests, logs and benchmarks). */
export interface WorkerPoolStats {
  /** Workers started. */
  started: number;
  /** Nodes run. */
  nodes: number;
  /** Workers replaced after a failed node. */
  replacedAfterFailure: number;
  /** Workers retired for their memory. */
  retiredForMemory: number;
  /** The largest heap a worker reported after a node (bytes; 0 before any). */
  peakHeapBytes: number;
}

/** The default memory bound of a warm worker (1 GiB). */
export const DEFAULT_WORKER_MEMORY_BYTES = 2 ** 30;

interface _Slot {
  readonly worker: Worker;
  busy: boolean;
  nodes: number;
}

/**
 * A pool of warm workers.
 *
 * @example
 * Not run: `request` is a node's job, built by the scheduler; worker_pool_test.ts runs real ones.
 * ```ts ignore
 * const pool = new WorkerPool({ size: 2 });
 * const result = await pool.run(request, { progress() {}, log() {} }, signal);
 * await pool.close();
 * ```
 */
export class WorkerPool {
  /** Workers kept at most. */
  readonly size: number;
  /** Memory bound per worker (bytes). */
  readonly memoryBytes: number;
  /** Whether every node gets a new worker. */
  readonly fresh: boolean;
  readonly #idle: _Slot[] = [];
  readonly #all = new Set<_Slot>();
  readonly #stats: WorkerPoolStats = {
    started: 0,
    nodes: 0,
    replacedAfterFailure: 0,
    retiredForMemory: 0,
    peakHeapBytes: 0,
  };
  #closed = false;
  readonly #preloaded = new Set<string>();

  /** A pool (workers start on demand). */
  constructor(options: WorkerPoolOptions = {}) {
    this.size = Math.max(1, options.size ?? 1);
    this.memoryBytes = options.memoryBytes ?? DEFAULT_WORKER_MEMORY_BYTES;
    this.fresh = options.fresh ?? false;
  }

  /** What the pool did so far. */
  get stats(): Readonly<WorkerPoolStats> {
    return { ...this.#stats };
  }

  /** Workers alive (idle or busy). */
  get alive(): number {
    return this.#all.size;
  }

  /**
   * Runs one node in a worker: an idle warm one, or a new one. Rejects with
   * the kind's error (a {@linkcode FileSystemError} when the cache could not
   * be written), with "interrupted" when `signal` aborts (the worker is
   * terminated), or with "worker of ID crashed" when the worker dies.
   */
  run(
    req: WorkerRequest,
    hooks: WorkerHooks,
    signal: AbortSignal,
  ): Promise<NodeResult> {
    if (this.#closed) {
      return Promise.reject(new Error("WorkerPool used after close"));
    }
    const slot = this.#acquire();
    this.#stats.nodes++;
    const w = slot.worker;
    return new Promise<NodeResult>((resolve, reject) => {
      let settled = false;
      const finish = (ok: boolean, f: () => void, heap?: number) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener("abort", onAbort);
        w.onmessage = null;
        this.#idleOnError(slot);
        slot.busy = false;
        slot.nodes++;
        if (heap !== undefined && heap > this.#stats.peakHeapBytes) {
          this.#stats.peakHeapBytes = heap;
        }
        if (!ok) {
          this.#stats.replacedAfterFailure++;
          this.#retire(slot);
        } else if (heap !== undefined && heap > this.memoryBytes) {
          this.#stats.retiredForMemory++;
          this.#retire(slot);
        } else if (
          this.fresh || this.#closed || this.#all.size > this.size
        ) this.#retire(slot);
        else this.#idle.push(slot);
        f();
      };
      const onAbort = () =>
        finish(false, () => reject(new Error("interrupted")));
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener("abort", onAbort, { once: true });
      w.onmessage = (e: MessageEvent<WorkerMessage>) => {
        const m = e.data;
        if (m.type === "progress") hooks.progress(m.done, m.total, m.note);
        else if (m.type === "log") hooks.log(m.message);
        else if (m.type === "done") {
          finish(true, () => resolve(m.result as NodeResult), m.heap);
        } else {
          // A cache that cannot be written stays a FileSystemError (the run
          // stops on it as it does for this thread's writes).
          const err = m.fs
            ? new FileSystemError(
              m.fs.path,
              m.fs.problem,
              m.fs.code,
              m.fs.action,
              m.fs.advice,
            )
            : new Error(m.message);
          if (m.stack) err.stack = m.stack;
          finish(false, () => reject(err));
        }
      };
      w.onerror = (e) => {
        e.preventDefault();
        finish(
          false,
          () =>
            reject(new Error(`worker of ${req.ctx.id} crashed: ${e.message}`)),
        );
      };
      w.postMessage(req);
    });
  }

  /**
   * Terminates every worker that is running a node now, as if it had been
   * killed (its node fails with "worker of ID crashed: killed"). For fault
   * tests and benchmarks.
   */
  killBusy(): number {
    let n = 0;
    for (const slot of this.#all) {
      if (!slot.busy) continue;
      n++;
      const onerror = slot.worker.onerror;
      slot.worker.terminate();
      onerror?.call(
        slot.worker,
        new ErrorEvent("error", { message: "killed", cancelable: true }),
      );
    }
    return n;
  }

  /**
   * Starts the pool's workers now (up to `size`) and has each import
   * `modules` while idle, so that the first node of each kind finds its
   * code loaded and compiled. Idempotent per module; no-op for a pool of
   * fresh workers.
   */
  preload(modules: readonly string[]): void {
    if (this.fresh || this.#closed) return;
    const todo = modules.filter((m) => !this.#preloaded.has(m));
    if (todo.length === 0) return;
    for (const m of todo) this.#preloaded.add(m);
    while (this.#all.size < this.size) {
      const slot = this.#start();
      slot.busy = false;
      this.#idle.push(slot);
    }
    const msg: WorkerPreload = { type: "preload", modules: todo };
    for (const slot of this.#all) slot.worker.postMessage(msg);
  }

  /** Terminates every worker; later {@linkcode run} calls reject. */
  close(): Promise<void> {
    this.#closed = true;
    for (const slot of [...this.#all]) {
      if (!slot.busy) this.#retire(slot);
    }
    this.#idle.length = 0;
    return Promise.resolve();
  }

  #acquire(): _Slot {
    const idle = this.#idle.pop();
    if (idle) {
      idle.busy = true;
      return idle;
    }
    // More concurrent nodes than slots still get a worker each; the extra
    // ones are retired after their node (at most `size` stay warm).
    const slot = this.#start();
    if (this.#preloaded.size > 0) {
      const msg: WorkerPreload = {
        type: "preload",
        modules: [...this.#preloaded],
      };
      slot.worker.postMessage(msg);
    }
    return slot;
  }

  /** A new worker (busy); an error while it is idle retires it. */
  #start(): _Slot {
    const worker = new Worker(new URL("./worker.ts", import.meta.url).href, {
      type: "module",
    });
    this.#stats.started++;
    const slot: _Slot = { worker, busy: true, nodes: 0 };
    this.#all.add(slot);
    this.#idleOnError(slot);
    return slot;
  }

  #idleOnError(slot: _Slot): void {
    slot.worker.onerror = (e) => {
      e.preventDefault();
      this.#retire(slot);
    };
  }

  #retire(slot: _Slot): void {
    this.#all.delete(slot);
    const i = this.#idle.indexOf(slot);
    if (i >= 0) this.#idle.splice(i, 1);
    slot.worker.terminate();
  }
}
