/**
 * `file:` URL <-> path conversion (node:url), kept in one place.
 *
 * @module
 */
import { fileURLToPath, pathToFileURL } from "node:url";

/** Path of a `file:` URL. */
export function fromFileUrl(url: string | URL): string {
  return fileURLToPath(url);
}

/** `file:` URL (string) of an absolute path. */
export function toFileUrl(path: string): string {
  return pathToFileURL(path).href;
}
