/**
 * The compiler (`@envsmith/engine/compile`): experiment files to a static, validated graph (YAML with positions, matrix, stages, references, parameters, table specs), the keys a file's top level and its tables take, loading plugin modules, and the JSON Schema editors check files against.
 *
 * @module
 */
export {
  compileExperiment,
  type Experiment,
  type GraphNode,
  loadExperiment,
} from "./experiment.ts";
export { EXPERIMENT_KEYS, TABLE_KEYS } from "./experiment_schema.ts";
export { experimentJsonSchema, writeExperimentSchema } from "./json_schema.ts";
export {
  type LoadedPlugin,
  loadPlugins,
  type PluginHandler,
} from "./plugins.ts";
