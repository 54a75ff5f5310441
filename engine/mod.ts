/**
 * The generic experiment engine of envsmith: load an experiment file, validate
 * it, expand its variants into a static graph, key every node by content, plan
 * against the cache, run what is missing (in parallel, heavy kinds in
 * workers), and build tables from cached results.
 *
 * Node kinds implement {@linkcode NodeKind} (see `types.ts`); the engine never
 * imports domain code: `cli.ts` passes the registered kinds in.
 *
 * For kind authors:
 * - Import only types from `engine/types.ts` in a kind's module: its module
 *   graph is digested into every key of the kind, so a runtime import of the
 *   engine would invalidate the kind's cache whenever the engine changes.
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
 * For executors: {@linkcode runPlan} takes a `runner` ({@linkcode JobRunner});
 * the job spec of every cacheable job is in `CACHE/jobs/KEY.json` before the
 * runner is called, so a runner can start
 * `deno run -A cli.ts --cache DIR run-node KEY` anywhere the cache directory
 * is shared and resolve once {@linkcode Store.loadVerified} finds the entry.
 * Locks and write-once entries make that safe on NFS. Two executors exist
 * behind {@linkcode Executor}: {@linkcode localExecutor} (the default) and
 * {@linkcode SlurmExecutor} (one sbatch job per node, job arrays for nodes
 * that become ready together, engine-side polling of `squeue` and of the
 * cache); {@linkcode createExecutor} picks one from `--executor` and the
 * experiment's `executor:` block.
 *
 * @example
 * ```ts ignore
 * import { loadExperiment, makePlan, runPlan, Store } from "./mod.ts";
 * const exp = await loadExperiment("experiments/quick.yaml", { kinds });
 * const store = new Store(".envsmith/cache");
 * const result = await runPlan(makePlan(exp, store), store, { jobs: 2 });
 * ```
 *
 * @module
 */
export type {
  BlobRef,
  Json,
  NodeContext,
  NodeKind,
  NodeResult,
} from "./types.ts";
export {
  type Axis,
  type AxisValue,
  compileExperiment,
  type Experiment,
  type GraphNode,
  loadExperiment,
  type LoadOptions,
} from "./experiment.ts";
export {
  CorruptEntryError,
  type Diagnostic,
  type DiagnosticCode,
  ExperimentError,
  ExperimentSyntaxError,
  formatDiagnostic,
  UserError,
} from "./errors.ts";
export {
  computeKeys,
  explainChange,
  KEY_FORMAT,
  type KeyComponents,
  type NodeKey,
  seedOfKey,
} from "./keys.ts";
export { canonicalJson, hashJson, sha256Hex } from "./canonical.ts";
export { type CodeDigest, codeDigest } from "./digest.ts";
export {
  blobsIn,
  cacheDir,
  DEFAULT_CACHE,
  type Entry,
  Store,
} from "./store.ts";
export {
  latestManifest,
  listManifests,
  type Manifest,
  type ManifestNode,
  type NodeStatus,
  readManifest,
} from "./manifest.ts";
export {
  makePlan,
  type Plan,
  type PlanItem,
  type PlanStatus,
  selectNodes,
} from "./plan.ts";
export {
  executeJob,
  type Job,
  jobFromSpec,
  NodeFailure,
  runPlan,
  type RunResult,
  writeJobSpec,
} from "./executor.ts";
export {
  defaultReporter,
  formatDuration,
  PlainReporter,
  type Reporter,
  SilentReporter,
  TtyReporter,
} from "./progress.ts";
export * from "./commands.ts";
export { exec, type ExecParams, outputName } from "./exec_kind.ts";
export {
  buildTable,
  type Cell,
  formatCell,
  type Lookup,
  type Table,
  tableCsv,
  tableMarkdown,
  tableNotes,
} from "./tables.ts";
export {
  buildTables,
  DEFAULT_TABLES_DIR,
  experimentsWithTables,
  tablesCommand,
} from "./tables_command.ts";
export {
  BUNDLE_HEADER,
  exportBundle,
  type ExportOptions,
  importBundle,
} from "./bundle.ts";
export { gc, type GcResult, verifyCache, type VerifyResult } from "./gc.ts";
export { experimentJsonSchema, writeExperimentSchema } from "./json_schema.ts";
export {
  type JobRunner,
  type JobSpec,
  type RunPlanOptions,
} from "./executor.ts";
export { Lock, type LockInfo, type LockOptions, tryLock } from "./lock.ts";
export { loadKindModules } from "./plugins.ts";
export { type JobOutcome, type NodeFailureOptions } from "./executor.ts";
export {
  type Executor,
  localExecutor,
  type LocalExecutorOptions,
} from "./executor_api.ts";
export {
  createExecutor,
  type CreateExecutorOptions,
  type ExecutorName,
  EXECUTORS,
} from "./executor_select.ts";
export { SlurmExecutor, type SlurmExecutorOptions } from "./slurm_executor.ts";
export {
  commandSlurmClient,
  type JobInfo,
  type QueueState,
  type SlurmClient,
  SlurmCommandError,
  slurmUnavailable,
} from "./slurm_client.ts";
export { ProgressFileReporter } from "./progress.ts";

import { exec as _exec } from "./exec_kind.ts";
import type { NodeKind as _NodeKind } from "./types.ts";
/** The kinds built into the engine (`exec`). */
// deno-lint-ignore no-explicit-any
export const builtinKinds: readonly _NodeKind<any>[] = [_exec];
