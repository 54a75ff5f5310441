/**
 * Test helpers (not part of the API).
 *
 * @module
 */
import { join } from "node:path";
import { compileExperiment, type Experiment } from "./compile/experiment.ts";
import { makePlan } from "./run/plan.ts";
import {
  runPlan,
  type RunPlanOptions,
  type RunResult,
} from "./run/scheduler.ts";
import { Store } from "./cache/store.ts";
import { kinds } from "./testdata/kinds.ts";
import type { NodeKind } from "./types.ts";

/** A temporary directory with an experiment file and a cache. */
export async function tmpProject(
  yaml: string,
): Promise<
  {
    dir: string;
    file: string;
    cache: string;
    store: Store;
    [Symbol.asyncDispose](): Promise<void>;
  }
> {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-test-" });
  const file = join(dir, "exp.yaml");
  await Deno.writeTextFile(file, yaml);
  const cache = join(dir, "cache");
  return {
    dir,
    file,
    cache,
    store: new Store(cache),
    async [Symbol.asyncDispose]() {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** Compiles with the test kinds (plus `extra`). */
export function compile(
  file: string,
  yaml: string,
  extra: readonly NodeKind[] = [],
): Experiment {
  return compileExperiment(file, yaml, { kinds: [...kinds, ...extra] });
}

/** Plans and runs everything. */
export function runAll(
  exp: Experiment,
  store: Store,
  options: RunPlanOptions = {},
): Promise<RunResult> {
  return runPlan(makePlan(exp, store), store, {
    jobs: 4,
    manifestEveryMs: 50,
    ...options,
  });
}

/** Value of a node by id from a run result. */
export function valueOf(exp: Experiment, r: RunResult, id: string): unknown {
  const i = exp.byId.get(id);
  if (i === undefined) throw new Error(`no node ${id}`);
  return r.values.get(i)?.value;
}

export { loadFactor, scaledMs } from "./testdata/load.ts";
