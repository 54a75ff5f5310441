/**
 * The references between entries and blobs, checked by `cache verify`
 * whatever wrote them (a run, an import with or without `--trust`): an
 * entry whose blob is missing is dangling (moved aside like a corrupt
 * entry, so it is recomputed), and a blob no entry references is dangling
 * too (reported; `cache gc` removes it). An entry imported results-only
 * (a bundle without its blobs) is complete as it is.
 *
 * @module
 */
import { CorruptEntryError } from "../errors.ts";
import type { Store } from "./store.ts";

/** What {@linkcode verifyReferences} found. */
export interface ReferenceCheck {
  /** One line per dangling entry (each moved to `corrupt/` unless listed in `stuck`). */
  readonly danglingEntries: string[];
  /** Dangling entry files that could not be moved aside (a read-only cache). */
  readonly stuck: string[];
  /** One line per blob no entry references. */
  readonly danglingBlobs: string[];
}

/**
 * Finds dangling entries (their blob is missing; moved aside) and dangling
 * blobs (no entry references them; reported). Entries that cannot be read
 * are left to the corruption check.
 *
 * @example
 * ```ts
 * import { Store } from "./store.ts";
 * import { verifyReferences } from "./verify_refs.ts";
 * import assert from "node:assert/strict";
 * const store = new Store(Deno.makeTempDirSync());
 * const ref = store.writeBlob(new TextEncoder().encode("x"), "text/plain");
 * assert.equal(verifyReferences(store).danglingBlobs.length, 1);
 * assert.match(verifyReferences(store).danglingBlobs[0]!, new RegExp(ref.$blob));
 * ```
 */
export function verifyReferences(store: Store): ReferenceCheck {
  const referenced = new Set<string>();
  const danglingEntries: string[] = [];
  const stuck: string[] = [];
  for (const key of [...store.keys()]) {
    let blobs: readonly string[];
    try {
      const entry = store.readEntry(key);
      if (entry === null) continue;
      blobs = entry.blobs;
    } catch (e) {
      if (e instanceof CorruptEntryError) continue;
      throw e;
    }
    for (const b of blobs) referenced.add(b);
    if (store.importMark(key)?.resultsOnly) continue;
    const missing = blobs.find((b) => !store.hasBlob(b));
    if (missing === undefined) continue;
    const file = store.entryPath(key);
    const mark = store.importMark(key);
    danglingEntries.push(
      `Dangling cache entry ${key} (${file}): its blob ${missing} is missing${
        mark ? ` (imported from ${mark.bundle})` : ""
      }; moved aside, it will be recomputed`,
    );
    if (store.quarantine(file) === null) stuck.push(file);
  }
  const danglingBlobs: string[] = [];
  for (const h of [...store.blobHashes()]) {
    if (h.includes(".") || referenced.has(h)) continue;
    danglingBlobs.push(
      `Dangling blob ${h} (${
        store.blobPath(h)
      }): no entry references it; \`cache gc\` removes it`,
    );
  }
  return { danglingEntries, stuck, danglingBlobs };
}
