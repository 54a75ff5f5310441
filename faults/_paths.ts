// file: URL -> path (node:url), private to faults/.
import { fileURLToPath } from "node:url";

/** Path of a `file:` URL (with a trailing slash kept for directories). */
export function fromFileUrl(url: URL): string {
  const p = fileURLToPath(url);
  return url.pathname.endsWith("/") && !p.endsWith("/") ? p + "/" : p;
}
