/**
 * A node context whose blobs live in memory: for tests that call a kind's
 * `run` directly, without a store.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { BlobRef, NodeContext } from "@envsmith/engine/kind";

/** Options of {@linkcode memoryContext}. */
export interface MemoryContextOptions {
  /** The node's seed. @default 1 */
  readonly seed?: number;
  /** The folder relative paths resolve against. @default the aux folder */
  readonly baseDir?: string;
  /** The blob store (share one map between contexts). @default a new map */
  readonly blobs?: Map<string, Uint8Array>;
  /** Receives the node's progress reports. @default nothing */
  readonly progress?: NodeContext["progress"];
}

/**
 * A context with `auxDir` (and `workDir`) at `aux` and an in-memory blob
 * store.
 *
 * @example
 * ```ts
 * import { memoryContext } from "./_memory_context.ts";
 * const ctx = memoryContext("/tmp", { seed: 42 });
 * const ref = await ctx.writeBlob(new Uint8Array([1, 2]), "x/y");
 * console.assert((await ctx.readBlob(ref)).length === 2);
 * ```
 */
export function memoryContext(
  aux: string,
  options: MemoryContextOptions = {},
): NodeContext {
  const blobs = options.blobs ?? new Map<string, Uint8Array>();
  return {
    id: "n",
    key: "k".repeat(64),
    seed: options.seed ?? 1,
    signal: new AbortController().signal,
    workDir: aux,
    auxDir: aux,
    baseDir: options.baseDir ?? aux,
    progress: options.progress ?? (() => {}),
    log: () => {},
    writeBlob(bytes: Uint8Array, media: string): Promise<BlobRef> {
      const h = createHash("sha256").update(bytes).digest("hex");
      blobs.set(h, bytes.slice());
      return Promise.resolve({ $blob: h, size: bytes.length, media });
    },
    readBlob(ref: BlobRef) {
      const b = blobs.get(ref.$blob);
      if (!b) throw new Error(`no blob ${ref.$blob}`);
      return Promise.resolve(b);
    },
  };
}
