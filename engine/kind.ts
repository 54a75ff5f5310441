/**
 * What a node kind's author needs (`@envsmith/engine/kind`): the kind interface, its context, its result, JSON values, blob references, the error of a declared input file, and the check of a program a kind runs.
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
export { InputFileError } from "./input_files.ts";
export { checkProgramCommand, ProgramCommandError } from "./program_command.ts";
