/**
 * File references (`$node.FIELD`, a field the producer's kind declares in
 * `NodeKind.files`): what the reading node is handed, and the check after
 * it ran.
 *
 * The reading node never gets the store's blob: it gets a read-only copy
 * (mode 0444, in a read-only folder of `CACHE/tmp/`) made for this one
 * execution, streamed from the blob with its sha256 checked on the way
 * (so the bytes it reads are verified when it reads them, whatever read
 * the blob before in this process). After the node ran, every copy is
 * hashed again: a node that changed one (a root process ignores the mode)
 * fails with one line naming the reference, and nothing it computed is
 * stored. The copies are removed with the node's work directory.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { resolve } from "node:path";
import { MAX_BLOB_BYTES, type Store } from "../cache/store.ts";
import { CorruptEntryError } from "../errors.ts";
import { NotRegularFileError, openRegularFile } from "../regular_file.ts";
import type { Json } from "../types.ts";

/** A file reference of a job: where its blob is, what it holds, whose it is. */
export interface FileReference {
  /** The blob's path in the store (what the resolved parameters hold until the job runs). */
  readonly path: string;
  /** sha256 of the blob. */
  readonly hash: string;
  /** The producing node's id. */
  readonly input: string;
  /** The file field, e.g. `gguf`. */
  readonly field: string;
}

/**
 * The store path of the blob a file field holds (absolute even when the
 * cache was given as a relative path), recorded in `refs` so the job can
 * hand the node a verified read-only copy instead (see
 * {@linkcode handFiles}).
 *
 * @throws {Error} naming the input when the field is not a blob reference
 * (the producing kind broke its `files` declaration) or the blob is
 * missing or not a regular file.
 */
export function filePathOf(
  value: Json,
  input: string,
  field: string,
  store: Store | undefined,
  refs?: FileReference[],
): string {
  const hash = typeof value === "object" && value !== null &&
      !Array.isArray(value) && typeof value.$blob === "string"
    ? value.$blob
    : undefined;
  if (hash === undefined || !/^[0-9a-f]{64}$/.test(hash)) {
    throw new Error(
      `input ${input}: field ${field} is declared a file by its kind but holds no blob reference`,
    );
  }
  if (store === undefined) {
    throw new Error(
      `input ${input}: the file ${field} needs the store to resolve to a path`,
    );
  }
  const path = resolve(store.blobPath(hash));
  if (refs === undefined) {
    store.verifyBlob(hash);
  } else {
    // (verified while it is copied for the node, in handFiles)
    try {
      openRegularFile(path, MAX_BLOB_BYTES).file.close();
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) {
        throw new Error(
          `input ${input}: its file ${field} (blob ${hash}) is missing from the store; run again to recompute ${input}`,
        );
      }
      throw e;
    }
    refs.push({ path, hash, input, field });
  }
  return path;
}

/** Streams `src` to `dest` (when given) and returns the sha256 of what was read. */
function _stream(src: string, dest?: string): string {
  const { file } = openRegularFile(src, MAX_BLOB_BYTES);
  const out = dest === undefined
    ? undefined
    : Deno.openSync(dest, { write: true, createNew: true, mode: 0o600 });
  try {
    const hash = createHash("sha256");
    const buf = new Uint8Array(1 << 20);
    for (;;) {
      const n = file.readSync(buf);
      if (n === null || n === 0) break;
      hash.update(buf.subarray(0, n));
      let off = 0;
      while (out !== undefined && off < n) {
        off += out.writeSync(buf.subarray(off, n));
      }
    }
    return hash.digest("hex");
  } finally {
    file.close();
    out?.close();
  }
}

/** Replaces every string of `params` that is a key of `paths` by its value. */
function _substitute(t: Json, paths: ReadonlyMap<string, string>): Json {
  if (typeof t === "string") return paths.get(t) ?? t;
  if (t === null || typeof t !== "object") return t;
  if (Array.isArray(t)) return t.map((x) => _substitute(x, paths));
  const out: { [k: string]: Json } = {};
  for (const [k, x] of Object.entries(t)) out[k] = _substitute(x, paths);
  return out;
}

/** The copies handed to one execution (see {@linkcode handFiles}). */
export interface HandedFiles {
  /** The parameters with each blob path replaced by its copy's. */
  readonly params: Json;
  /** Copy path -> the reference it copies. */
  readonly copies: ReadonlyMap<string, FileReference>;
  /** The folder of the copies (remove with {@linkcode removeHanded}). */
  readonly dir: string;
}

/**
 * Copies each referenced blob into `dir` (created here), checking its
 * sha256 while it streams, makes the copies and `dir` read-only, and
 * returns `params` pointing at the copies.
 *
 * @throws {CorruptEntryError} when a blob does not hold what its name
 * says (it is moved to `CACHE/corrupt/`; the producer is recomputed by the
 * next run).
 */
export function handFiles(
  store: Store,
  refs: readonly FileReference[],
  params: Json,
  dir: string,
): HandedFiles {
  Deno.mkdirSync(dir, { recursive: true });
  const byPath = new Map<string, string>();
  const copies = new Map<string, FileReference>();
  for (const ref of refs) {
    if (byPath.has(ref.path)) continue;
    // (named by the producer, its blob and the field: unique, and a
    // `.gguf` field keeps its extension)
    const name = ref.input.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 100);
    // Absolute: a node may resolve a relative path against its experiment
    // file's folder, not the folder the cache was named from.
    const copy = resolve(
      dir,
      `${name}-${ref.hash.slice(0, 12)}.${ref.field}`,
    );
    const got = _stream(ref.path, copy);
    if (got !== ref.hash) {
      store.quarantine(ref.path);
      throw new CorruptEntryError(
        ref.hash,
        ref.path,
        `the file ${ref.field} of ${ref.input} does not hold what its name says (sha256 ${got}); it was moved aside, and the next run recomputes ${ref.input}`,
      );
    }
    Deno.chmodSync(copy, 0o444);
    byPath.set(ref.path, copy);
    copies.set(copy, ref);
  }
  Deno.chmodSync(dir, 0o555);
  return { params: _substitute(params, byPath), copies, dir };
}

/**
 * After the node ran: every copy must still be the regular file it was,
 * with the same sha256.
 *
 * @throws {Error} one line naming the reference the node changed.
 */
export function checkHanded(handed: HandedFiles): void {
  for (const [copy, ref] of handed.copies) {
    let got: string;
    try {
      got = _stream(copy);
    } catch (e) {
      if (
        !(e instanceof Deno.errors.NotFound || e instanceof NotRegularFileError)
      ) {
        throw e;
      }
      got = e instanceof NotRegularFileError ? e.what : "removed";
    }
    if (got !== ref.hash) {
      throw new Error(
        `the node changed its input file $${ref.input}.${ref.field} (${copy}: ${
          /^[0-9a-f]{64}$/.test(got) ? "other bytes" : got
        }); a file reference is read-only: write a new file in the work directory instead. Nothing of this node was stored.`,
      );
    }
  }
}

/** Removes the copies of {@linkcode handFiles} (their folder is read-only). */
export function removeHanded(dir: string): void {
  try {
    Deno.chmodSync(dir, 0o755);
    Deno.removeSync(dir, { recursive: true });
  } catch { /* already gone */ }
}
