/**
 * What a node kind's author needs (`@envsmith/engine/kind`): the kind interface, its context, JSON values, blob and input references.
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
export { type FieldPath, getField, InputRef, type Resolvable } from "./refs.ts";
