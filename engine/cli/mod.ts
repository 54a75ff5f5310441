/**
 * The engine's commands (`@envsmith/engine/cli`): plan, run, status, show, run-node, tables, cache maintenance, and loading plugin modules; a project's command line wires them up.
 *
 * @module
 */
export {
  fetchBundle,
  type FetchBundleOptions,
  isBundleUrl,
} from "./bundle_url.ts";
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
export {
  buildTables,
  DEFAULT_TABLES_DIR,
  experimentsWithTables,
  importResultsBundle,
  tablesCommand,
  UnkeyableExperimentError,
  unkeyableReason,
} from "./tables_command.ts";
export {
  cacheExportCommand,
  cacheGcCommand,
  cacheImportCommand,
  cacheVerifyCommand,
} from "./cache_commands.ts";
export { changedCells, runsCommand, runsDiffCommand } from "./runs_command.ts";
