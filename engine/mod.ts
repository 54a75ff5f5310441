/**
 * The generic experiment engine of envsmith (`@envsmith/engine`): load an
 * experiment file, validate it, expand its variants into a static graph,
 * key every node by content, plan against the cache, run what is missing
 * (in parallel, heavy kinds in workers, or on Slurm), and build tables from
 * cached results. This module is the package's only public door: code
 * outside `engine/` imports `@envsmith/engine` and nothing else of it.
 *
 * Node kinds implement {@linkcode NodeKind}; the engine never imports domain
 * code: `cli.ts` passes the registered kinds in.
 *
 * For kind authors:
 * - Import the engine's types with `import type { ... } from
 *   "@envsmith/engine"`: type imports are erased, so they never enter the
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
 * ({@linkcode compileExperiment}), keys ({@linkcode computeKeys},
 * {@linkcode codeDigest}), the plan ({@linkcode makePlan}), the scheduler
 * ({@linkcode runPlan}: ready queue, manifest, input resolution), jobs
 * ({@linkcode executeJob}: one node, one lock-and-cache wait), executors
 * registered like kinds ({@linkcode ExecutorKind}; {@linkcode builtinExecutors}
 * are `local` and `slurm`), the store ({@linkcode Store}) and tables
 * ({@linkcode buildTable}). The job spec of every cacheable job is in
 * `CACHE/jobs/KEY.json` before an executor runs it, so an executor can start
 * `deno run -A cli.ts --cache DIR run-node KEY` anywhere the cache directory
 * is shared and resolve once {@linkcode Store.loadVerified} finds the entry.
 *
 * @example
 * ```ts ignore
 * import { loadExperiment, makePlan, runPlan, Store } from "@envsmith/engine";
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
  type ExecutorSpec,
  EXPERIMENT_KEYS,
  TABLE_KEYS,
  type TableColumn,
  type TableCompare,
  type TableSpec,
} from "./experiment_schema.ts";
export { type FieldPath, getField, InputRef, type Resolvable } from "./refs.ts";
export {
  asFileSystemError,
  cacheAdvice,
  FileSystemError,
  type FsProblem,
  fsProblem,
  onDisk,
} from "./fs_errors.ts";
export {
  DEFAULT_LIMITS,
  type LimitInfo,
  LIMITS,
  type Limits,
  parseLimits,
  resolveLimits,
} from "./limits.ts";
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
  type PreviousKey,
  seedOfKey,
} from "./keys.ts";
export {
  canonicalJson,
  hashJson,
  sha256Hex,
  UnhashableError,
} from "./canonical.ts";
export {
  didYouMean,
  editDistance,
  missingFileMessage,
  suggest,
} from "./suggest.ts";
export {
  clearDigestCache,
  type CodeDigest,
  codeDigest,
  DigestError,
  modulesDigest,
  nodeCodeDigest,
} from "./digest.ts";
export {
  blobsIn,
  cacheDir,
  DEFAULT_CACHE,
  type Entry,
  type ImportMark,
  Store,
  tmpName,
  tmpOwner,
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
  type PlanOptions,
  type PlanStatus,
  selectNodes,
} from "./plan.ts";
export {
  displayParams,
  ReadyQueue,
  resolveJob,
  runManifest,
  runPlan,
  type RunPlanOptions,
  type RunResult,
} from "./scheduler.ts";
export { EntryMap } from "./entry_map.ts";
export {
  claimKey,
  type ClaimOptions,
  executeJob,
  type ExecuteOptions,
  type Job,
  type JobOutcome,
  type JobRunner,
  NodeFailure,
  type NodeFailureOptions,
} from "./job.ts";
export { jobFromSpec, type JobSpec, writeJobSpec } from "./job_spec.ts";
export {
  type BlockIssues,
  builtinExecutors,
  createExecutor,
  type Executor,
  type ExecutorKind,
  type ExecutorRun,
} from "./executor.ts";
export {
  local,
  localExecutor,
  type LocalExecutorOptions,
  type LocalExecutorSpec,
} from "./executors/local.ts";
export {
  slurm,
  SlurmExecutor,
  slurmExecutorKind,
  type SlurmExecutorKindOptions,
  type SlurmExecutorOptions,
} from "./executors/slurm.ts";
export {
  type SlurmExecutorSpec,
  type SlurmResources,
} from "./executors/slurm_spec.ts";
export {
  commandSlurmClient,
  type JobInfo,
  type QueueState,
  runCommandLine,
  type SlurmClient,
  SlurmCommandError,
  slurmUnavailable,
} from "./executors/slurm_client.ts";
export {
  defaultReporter,
  formatDuration,
  PlainReporter,
  ProgressFileReporter,
  type Reporter,
  SilentReporter,
  TtyReporter,
} from "./progress.ts";
export {
  estimateNode,
  formatRunSnapshot,
  type NodeTimes,
  nodeTimes,
  type OutlineNode,
  progressBar,
  type RunOutline,
  runOutline,
  RunProgress,
  type RunSnapshot,
} from "./run_progress.ts";
export {
  type CommandContext,
  consoleOutput,
  load,
  type Output,
  planCommand,
  type PlanCommandOptions,
  pluginSummary,
  printFailures,
  resumeCommand,
  runCommand,
  type RunCommandOptions,
  runNodeCommand,
  showCommand,
  type ShowOptions,
  statusCommand,
} from "./commands.ts";
export { exec, type ExecParams, outputName } from "./exec_kind.ts";
export {
  type ChildOptions,
  type ChildResult,
  ChildSpawnError,
  type ChildStream,
  describeExit,
  runChild,
} from "./child_process.ts";
export {
  buildTable,
  type Cell,
  formatCell,
  type Lookup,
  type Sample,
  type Table,
  tableCsv,
  tableMarkdown,
  tableNotes,
} from "./tables.ts";
export {
  buildTables,
  DEFAULT_TABLES_DIR,
  experimentsWithTables,
  importResultsBundle,
  SHIPPED_BUNDLE,
  tablesCommand,
} from "./tables_command.ts";
export {
  BUNDLE_HEADER,
  cacheExportCommand,
  cacheImportCommand,
  exportBundle,
  type ExportOptions,
  importBundle,
  type ImportOptions,
  type ImportResult,
} from "./bundle.ts";
export {
  cacheGcCommand,
  cacheVerifyCommand,
  gc,
  type GcResult,
  verifyCache,
  type VerifyResult,
} from "./gc.ts";
export { experimentJsonSchema, writeExperimentSchema } from "./json_schema.ts";
export { Lock, type LockInfo, type LockOptions, tryLock } from "./lock.ts";
export {
  declaredPlugins,
  type LoadedPlugin,
  loadKindModules,
  loadPlugins,
  type LoadPluginsOptions,
  type PluginHandler,
  type PluginSet,
  pluginUrl,
} from "./plugins.ts";

import { exec as _exec } from "./exec_kind.ts";
import type { NodeKind as _NodeKind } from "./types.ts";
/** The kinds built into the engine (`exec`). */
// deno-lint-ignore no-explicit-any
export const builtinKinds: readonly _NodeKind<any>[] = [_exec];
export {
  type CompareCell,
  type Comparison,
  comparisonCsv,
  comparisonMarkdown,
  formatDifference,
  formatPValues,
} from "./table_compare.ts";
export {
  type CompareOptions,
  comparePaired,
  holm,
  minSignFlipP,
  type Pair,
  type PairedComparison,
  signFlipP,
} from "./paired_stats.ts";
