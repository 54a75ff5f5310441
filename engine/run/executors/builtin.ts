/**
 * The executors built into the engine, exported the way a plugin module
 * exports its own: `local` (first: the default) and `slurm`.
 *
 * @module
 */
import type { ExecutorKind } from "../executor.ts";
import { local } from "./local.ts";
import { slurm } from "./slurm.ts";

/**
 * The built-in executors: `local` (the default) and `slurm`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { executors } from "./builtin.ts";
 * assert.deepEqual(executors.map((k) => k.name), ["local", "slurm"]);
 * ```
 */
export const executors: readonly ExecutorKind[] = [local, slurm];
