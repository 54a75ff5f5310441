/**
 * Durations as people read them.
 *
 * @module
 */

/**
 * `850ms`, `1.2s`, `3m04s`, `1h02m`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatDuration } from "./duration.ts";
 * assert.equal(formatDuration(184_000), "3m04s");
 * ```
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "?";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60), rs = Math.floor(s % 60);
  if (m < 60) return `${m}m${String(rs).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}
