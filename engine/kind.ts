/**
 * What a node kind's author needs (`@envsmith/engine/kind`): the kind interface, its context, JSON values, blob and input references, the hashing of declared input files.
 *
 * @module
 */
export type {
  BlobRef,
  FingerprintInfo,
  Json,
  NodeContext,
  NodeKind,
  NodeResult,
} from "./types.ts";
export { hashInputs, InputFileError } from "./input_files.ts";
export { type FieldPath, getField, InputRef, type Resolvable } from "./refs.ts";
export {
  checkProgramCommand,
  findOnPath,
  ProgramCommandError,
  type ProgramCommandOptions,
} from "./program_command.ts";
