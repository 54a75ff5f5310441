/**
 * The path a file reference (`$node.FIELD`, a field the producer's kind
 * declares in `NodeKind.files`) resolves to when the reading node runs:
 * the producer's blob in the store, hash-verified first.
 *
 * @module
 */
import { resolve } from "node:path";
import type { Store } from "../cache/store.ts";
import type { Json } from "../types.ts";

/**
 * The absolute path of the blob a file field holds (absolute even when the
 * cache was given as a relative path: the reading node may resolve a
 * relative path against another folder, e.g. its experiment file's).
 *
 * @throws {Error} naming the input when the field is not a blob reference
 * (the producing kind broke its `files` declaration) or the blob is
 * missing or corrupt.
 */
export function filePathOf(
  value: Json,
  input: string,
  field: string,
  store: Store | undefined,
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
  store.verifyBlob(hash);
  return resolve(store.blobPath(hash));
}
