/**
 * Web Worker entry for heavy node kinds: imports the kind's module, takes its
 * `kind` export (or the export whose `name` matches), runs it, and sends
 * progress, log lines and the result back by messages. Blobs are written to
 * the store directly.
 *
 * @module
 */
import * as v from "valibot";
import { Store } from "../cache/store.ts";
import { FileSystemError, type FsProblem } from "../fs_errors.ts";
import type { NodeContext, NodeKind } from "../types.ts";

/** What the main thread sends. */
export interface WorkerRequest {
  /** `kind.module`. */
  readonly module: string;
  /** `kind.name`. */
  readonly name: string;
  /** Resolved parameters (validated again here). */
  readonly params: unknown;
  /** The context fields that are plain data. */
  readonly ctx: {
    readonly id: string;
    readonly key: string;
    readonly seed: number;
    readonly workDir: string;
    readonly auxDir: string;
    readonly baseDir: string;
  };
  /** Cache directory. */
  readonly cacheRoot: string;
}

/** What the worker sends back. */
export type WorkerMessage =
  | { type: "progress"; done: number; total: number; note?: string }
  | { type: "log"; message: string }
  | { type: "done"; result: unknown }
  | {
    type: "error";
    message: string;
    stack?: string;
    /** When the cache could not be written: the FileSystemError's fields. */
    fs?: {
      path: string;
      problem: FsProblem;
      code: string;
      action: string;
      advice: string;
    };
  };

/** The worker's global scope (typed here: a package may not change the globals' types). */
const _scope = self as unknown as {
  postMessage(m: WorkerMessage): void;
  onmessage: ((e: MessageEvent<WorkerRequest>) => void) | null;
};

function _post(m: WorkerMessage): void {
  _scope.postMessage(m);
}

_scope.onmessage = async (e: MessageEvent<WorkerRequest>) => {
  const req = e.data;
  try {
    const mod = await import(req.module) as Record<string, unknown>;
    let kind = mod.kind as NodeKind | undefined;
    if (!kind || kind.name !== req.name) {
      kind = Object.values(mod).find((x): x is NodeKind =>
        typeof x === "object" && x !== null &&
        (x as NodeKind).name === req.name &&
        typeof (x as NodeKind).run === "function"
      );
    }
    if (!kind) {
      throw new Error(`module ${req.module} exports no kind named ${req.name}`);
    }
    const store = new Store(req.cacheRoot);
    let last = 0;
    const ctx: NodeContext = {
      ...req.ctx,
      signal: new AbortController().signal,
      progress(done, total, note) {
        const now = Date.now();
        if (now - last < 100 && done < total) return;
        last = now;
        _post(
          note === undefined
            ? { type: "progress", done, total }
            : { type: "progress", done, total, note },
        );
      },
      log(message) {
        _post({ type: "log", message });
      },
      writeBlob(bytes, media) {
        return Promise.resolve(store.writeBlob(bytes, media));
      },
      readBlob(ref) {
        return Promise.resolve(store.readBlob(ref));
      },
    };
    const params = v.parse(kind.params, req.params);
    const result = await kind.run(params, ctx);
    _post({ type: "done", result });
  } catch (err) {
    const e = err as Error;
    _post({
      type: "error",
      message: e?.message ?? String(err),
      ...(e?.stack ? { stack: e.stack } : {}),
      ...(err instanceof FileSystemError
        ? {
          fs: {
            path: err.path,
            problem: err.problem,
            code: err.code,
            action: err.action,
            advice: err.advice,
          },
        }
        : {}),
    });
  }
};
