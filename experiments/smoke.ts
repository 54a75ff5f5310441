/**
 * The shipped smoke experiment (`experiments/smoke.yaml`) as text, renamed and
 * with an `executor:` block, for tests and benchmarks that run it elsewhere
 * (e.g. on Slurm) under a name of their own.
 *
 * @module
 */

/** Path of `experiments/smoke.yaml`. */
export const SMOKE_FILE = new URL("./smoke.yaml", import.meta.url).pathname;

/** Nodes the smoke experiment computes (its plan, cold). */
export const SMOKE_NODES = 20;

/**
 * The smoke experiment's YAML with `experiment:` set to `name` and `executor`
 * (a YAML block starting with `executor:`) inserted before `nodes:`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { smokeYaml } from "./smoke.ts";
 * const y = smokeYaml("it-1", "executor:\n  type: local\n");
 * assert.match(y, /^experiment: it-1$/m);
 * assert.match(y, /executor:\n  type: local\nnodes:/);
 * ```
 */
export function smokeYaml(name: string, executor = ""): string {
  const text = Deno.readTextFileSync(SMOKE_FILE);
  return text
    .replace(/^experiment: smoke$/m, `experiment: ${name}`)
    .replace(/^nodes:$/m, `${executor}nodes:`);
}
