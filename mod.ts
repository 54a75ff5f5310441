/**
 * envsmith: a declarative experiment engine for LLM-designed RL training
 * environments. This is the public API for library users: the generic engine
 * (load, plan, run, cache, tables) and the registered node kinds.
 *
 * @example
 * Not run: it runs an experiment (minutes); cli_test.ts runs quick.yaml.
 * ```ts ignore
 * import { allKinds, loadExperiment, makePlan, runPlan, Store } from "./mod.ts";
 * const exp = await loadExperiment("experiments/quick.yaml", { kinds: allKinds });
 * const store = new Store(".envsmith/cache");
 * const { failures } = await runPlan(makePlan(exp, store), store, { jobs: 2 });
 * ```
 *
 * @module
 */
import type { NodeKind } from "@envsmith/engine/kind";
import { builtinKinds } from "@envsmith/engine/run";
import { kinds as domainKinds } from "./nodes/mod.ts";

export * from "@envsmith/engine";
export { kinds } from "./nodes/mod.ts";
export { commands } from "./cli/mod.ts";

/** The built-in kinds (`exec`) and every domain kind: what `cli.ts` registers. */
// deno-lint-ignore no-explicit-any
export const allKinds: readonly NodeKind<any>[] = [
  ...builtinKinds,
  ...domainKinds,
];
