/**
 * Small readers of node values shared by the node kinds (values arrive as
 * untyped JSON from the engine).
 *
 * @module
 */
import type { BlobRef } from "@envsmith/engine/kind";

/** Whether a value is a {@linkcode BlobRef} (`{ $blob: sha256, ... }`). */
export function isBlobRef(x: unknown): x is BlobRef {
  return typeof x === "object" && x !== null &&
    typeof (x as BlobRef).$blob === "string";
}

/** `x[key]` when `x` is a plain object, else `undefined`. */
export function field(x: unknown, key: string): unknown {
  return typeof x === "object" && x !== null && !Array.isArray(x)
    ? (x as Record<string, unknown>)[key]
    : undefined;
}
