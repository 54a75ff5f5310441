/**
 * The cache (`@envsmith/engine/cache`): content keys and code digests, the store of entries and blobs, locks, run manifests, bundles, garbage collection and verification.
 *
 * @module
 */
export {
  computeKeys,
  explainChange,
  KEY_FORMAT,
  type KeyComponents,
  type NodeKey,
  type PreviousKey,
  seedOfKey,
} from "./keys.ts";
export {
  clearDigestCache,
  type CodeDigest,
  codeDigest,
  DigestError,
  importSpecifiers,
  modulesDigest,
  nodeCodeDigest,
} from "./digest.ts";
export {
  blobsIn,
  cacheDir,
  DEFAULT_CACHE,
  type Entry,
  type ImportMark,
  Store,
  tmpName,
  tmpOwner,
} from "./store.ts";
export {
  latestManifest,
  latestManifestWhere,
  listManifests,
  type Manifest,
  type ManifestNode,
  type NodeStatus,
  ranWith,
  readManifest,
} from "./manifest.ts";
export { EntryMap } from "./entry_map.ts";
export {
  BUNDLE_HEADER,
  exportBundle,
  type ExportOptions,
  importBundle,
  type ImportOptions,
  type ImportResult,
  selectBlobKeys,
  SELECTED_BLOB_BYTES,
} from "./bundle.ts";
export {
  COMPACT_HEADER,
  type CompactOptions,
  decodeCompact,
  encodeCompact,
  isCompactBundle,
} from "./compact_bundle.ts";
export {
  gc,
  GcRefusedError,
  type GcResult,
  verifyCache,
  type VerifyResult,
} from "./gc.ts";
export { type AnnounceOptions, announceRun } from "./run_start.ts";
export { type ReferenceCheck, verifyReferences } from "./verify_refs.ts";
export { Lock, type LockInfo, type LockOptions, tryLock } from "./lock.ts";
export {
  describeChanges,
  diffRuns,
  nodePattern,
  type ParamChange,
  type RunChanges,
  wallMs,
} from "./run_history.ts";
