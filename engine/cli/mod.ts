/**
 * The engine's commands (`@envsmith/engine/cli`): plan, run, status, show, run-node, tables, cache maintenance, and loading plugin modules; a project's command line wires them up.
 *
 * @module
 */
export {
  type CommandContext,
  consoleOutput,
  load,
  type Output,
  planCommand,
  pluginSummary,
  resumeCommand,
  runCommand,
  runNodeCommand,
  showCommand,
  statusCommand,
} from "./commands.ts";
export {
  buildTables,
  experimentsWithTables,
  importResultsBundle,
  tablesCommand,
  unkeyableReason,
} from "./tables_command.ts";
export {
  cacheExportCommand,
  cacheGcCommand,
  cacheImportCommand,
  cacheVerifyCommand,
} from "./cache_commands.ts";
export { runsCommand, runsDiffCommand } from "./runs_command.ts";
