/**
 * "Did you mean ...?" (`@envsmith/engine/suggest`): the one-line hints the
 * engine's messages end with, for code outside the engine that reports a
 * wrong name or a missing file the same way.
 *
 * @module
 */
export { didYouMean, missingFileMessage } from "./suggest.ts";
