/**
 * The generic experiment engine of envsmith (`@envsmith/engine`): load an
 * experiment file, validate it, expand its variants into a static graph,
 * key every node by content, plan against the cache, run what is missing
 * (in parallel, heavy kinds in workers, or on Slurm), and build tables from
 * cached results. This module is the small common surface; the parts
 * have doors of their own, by concern, as subpath exports of the package:
 *
 * | door | what |
 * | --- | --- |
 * | `@envsmith/engine` | this surface: JSON and blob types, `UserError`, load/compile, plan, run, store |
 * | `@envsmith/engine/kind` | writing a node kind: `NodeKind`, its context, references |
 * | `@envsmith/engine/hash` | canonical JSON and sha256 |
 * | `@envsmith/engine/suggest` | "did you mean" and edit distance |
 * | `@envsmith/engine/errors` | the typed errors |
 * | `@envsmith/engine/limits` | the limits of what a file may ask for |
 * | `@envsmith/engine/compile` | the compiler and the JSON Schema |
 * | `@envsmith/engine/cache` | keys, digests, store, manifests, bundles, gc |
 * | `@envsmith/engine/run` | plan, scheduler, jobs, progress, the `exec` kind |
 * | `@envsmith/engine/executor` | executors: the interface, `local`, `slurm` |
 * | `@envsmith/engine/tables` | tables, comparisons, statistics |
 * | `@envsmith/engine/cli` | the commands a project's CLI wires up |
 *
 * Code outside `engine/` imports these doors and never an engine file.
 * Inside, the folders form layers, each importing only those below it:
 * the root files (types, errors, hashing, limits) at the bottom, then
 * `compile/`, `cache/`, `run/`, `tables/` and `cli/`.
 *
 * Node kinds implement `NodeKind` (`@envsmith/engine/kind`); the engine never imports domain
 * code: `cli.ts` passes the registered kinds in.
 *
 * For kind authors:
 * - Import the engine's types with `import type { ... } from
 *   "@envsmith/engine/kind"`: type imports are erased, so they never enter the
 *   kind's code digest. Import the leaf files the kind runs, never a barrel
 *   (`mod.ts`): a kind's module graph is digested into every key of the
 *   kind, so a barrel would invalidate its cache whenever any file behind
 *   the barrel changes. A runtime import of `@envsmith/engine` is recorded
 *   like a registry package, by name and version.
 * - `run(params, ctx)` gets parameters already validated by `params` with
 *   references resolved to the referenced values (`$node.field` gives the
 *   field of the node's `value`; a node's `report` never reaches dependents).
 *   Return JSON; put large binary data in blobs (`ctx.writeBlob`) and return
 *   the {@linkcode BlobRef}; read inputs' blobs with `ctx.readBlob`.
 * - Randomness: seeds are parameters (`$seed`); `ctx.seed` (from the key) is
 *   for anything else. Same key, same output.
 * - `heavy: true` runs the kind in a Web Worker that imports `kind.module`
 *   and takes its `kind` export; progress, logs and blobs work the same.
 * - `fingerprint(literalParams, {baseDir})` adds content to the key that the
 *   parameters do not show (e.g. files the node reads).
 *
 * The parts, along the seams pipeline engines use: the compiler
 * ({@linkcode compileExperiment}), keys (`computeKeys`,
 * `codeDigest`), the plan ({@linkcode makePlan}), the scheduler
 * ({@linkcode runPlan}: ready queue, manifest, input resolution), jobs
 * (`executeJob`: one node, one lock-and-cache wait), executors
 * registered like kinds (`ExecutorKind`; `builtinExecutors`
 * are `local` and `slurm`), the store ({@linkcode Store}) and tables
 * (`buildTable`). The job spec of every cacheable job is in
 * `CACHE/jobs/KEY.json` before an executor runs it, so an executor can start
 * `deno run -A cli.ts --cache DIR run-node KEY` anywhere the cache directory
 * is shared and resolve once {@linkcode Store.loadVerified} finds the entry.
 *
 * @example
 * Not run: it needs the project's node kinds (`kinds`) and runs an experiment (cli_test.ts runs this path).
 * ```ts ignore
 * import { loadExperiment, makePlan, runPlan, Store } from "@envsmith/engine";
 * const exp = await loadExperiment("experiments/quick.yaml", { kinds });
 * const store = new Store(".envsmith/cache");
 * const result = await runPlan(makePlan(exp, store), store, { jobs: 2 });
 * ```
 *
 * @module
 */
export type { BlobRef, Json, ResultWarning } from "./types.ts";
export { UserError } from "./errors.ts";
export { sha256Hex } from "./canonical.ts";
export { fsProblem } from "./fs_errors.ts";
export { compileExperiment, loadExperiment } from "./compile/experiment.ts";
export { Store } from "./cache/store.ts";
export { makePlan } from "./run/plan.ts";
export { runPlan } from "./run/scheduler.ts";
