/**
 * The engine's typed errors (`@envsmith/engine/errors`): what code outside
 * the engine throws for bad input (`UserError`) or catches and tells apart
 * (a file's mistakes, its YAML syntax, a damaged cache entry).
 *
 * @module
 */
export {
  CorruptEntryError,
  ExperimentError,
  ExperimentSyntaxError,
  UserError,
} from "./errors.ts";
