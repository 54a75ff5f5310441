/**
 * The cache (`@envsmith/engine/cache`): content keys and code digests, the store of entries and blobs, run manifests, exporting a bundle, reading a compact bundle's columns, and verification.
 *
 * @module
 */
export { computeKeys } from "./keys.ts";
export { codeDigest, importSpecifiers, nodeCodeDigest } from "./digest.ts";
export { cacheDir, type Entry, Store } from "./store.ts";
export { listManifests, readManifest } from "./manifest.ts";
export { exportBundle } from "./bundle.ts";
export { compactColumns } from "./compact_bundle.ts";
export { verifyCache } from "./gc.ts";
