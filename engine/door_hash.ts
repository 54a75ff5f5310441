/**
 * Canonical JSON and sha256 (`@envsmith/engine/hash`): the byte-level basis
 * of every key, for code that must hash the way the cache does.
 *
 * @module
 */
export { canonicalJson, hashJson, sha256Hex } from "./canonical.ts";
