/**
 * The fields every remote executor's `executor:` block has (how many jobs
 * are queued at once, the Deno binary on the workers, how often the queue is
 * asked, how long a finished job's files may take to appear). A backend's
 * schema spreads {@linkcode remoteSpecEntries} into its own strict object.
 *
 * @module
 */
import * as v from "valibot";

/**
 * The fields of {@linkcode remoteSpecEntries}, as parsed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { RemoteExecutorSpec } from "./remote_spec.ts";
 * interface PbsSpec extends RemoteExecutorSpec {
 *   readonly type: "pbs";
 *   readonly queue?: string | undefined;
 * }
 * const spec: PbsSpec = { type: "pbs", jobs: 20, queue: "workq" };
 * assert.equal(spec.poll_seconds ?? 2, 2);
 * ```
 */
export interface RemoteExecutorSpec {
  /** The executor's name. */
  readonly type: string;
  /** Nodes queued or running at once. */
  readonly jobs?: number | undefined;
  /** Deno binary on the workers. */
  readonly deno?: string | undefined;
  /** Seconds between queue polls. */
  readonly poll_seconds?: number | undefined;
  /** Seconds a finished job's files may take to appear on the shared file system. */
  readonly grace_seconds?: number | undefined;
  /** The backend's own fields. */
  readonly [field: string]: unknown;
}

/** An optional field of type `T`. */
type _Optional<T> = v.OptionalSchema<v.GenericSchema<T>, undefined>;

/** The schemas of the common fields. */
export interface RemoteSpecEntries {
  /** `jobs`. */
  readonly jobs: _Optional<number>;
  /** `deno`. */
  readonly deno: _Optional<string>;
  /** `poll_seconds`. */
  readonly poll_seconds: _Optional<number>;
  /** `grace_seconds`. */
  readonly grace_seconds: _Optional<number>;
}

/**
 * Valibot entries of the common fields; spread them into a backend's
 * schema: `v.strictObject({ type: v.literal("pbs"), ...remoteSpecEntries,
 * queue: v.optional(v.string()) })`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import { remoteSpecEntries } from "./remote_spec.ts";
 * const PbsSchema = v.strictObject({
 *   type: v.literal("pbs"),
 *   ...remoteSpecEntries,
 *   queue: v.optional(v.string()),
 * });
 * assert.deepEqual(v.parse(PbsSchema, { type: "pbs", jobs: 4, queue: "workq" }), {
 *   type: "pbs", jobs: 4, queue: "workq",
 * });
 * assert.equal(v.safeParse(PbsSchema, { type: "pbs", jobs: 0 }).success, false);
 * ```
 */
export const remoteSpecEntries: RemoteSpecEntries = {
  /** Nodes queued or running at once (default 100). */
  jobs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  /** Deno binary on the workers (default: the submitting process's). */
  deno: v.optional(v.pipe(v.string(), v.minLength(1))),
  /** Seconds between queue polls (default 2). */
  poll_seconds: v.optional(
    v.pipe(v.number(), v.minValue(0.1), v.maxValue(600)),
  ),
  /** Seconds a finished or vanished job's files may take to appear on the shared file system (default 60). */
  grace_seconds: v.optional(
    v.pipe(v.number(), v.minValue(0), v.maxValue(3600)),
  ),
};
