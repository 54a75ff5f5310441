/**
 * The compiler (`@envsmith/engine/compile`): experiment files to a static, validated graph (YAML with positions, matrix, stages, references, parameters, table specs), and the JSON Schema editors check files against.
 *
 * @module
 */
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
export { experimentJsonSchema, writeExperimentSchema } from "./json_schema.ts";
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
