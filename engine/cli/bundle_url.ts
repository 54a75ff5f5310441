/**
 * Results bundles named by URL (`tables --import https://…`): a project that
 * keeps its bundle out of its history (a release asset, a file on a results
 * branch) is read from there. The file is downloaded once per URL into the
 * cache (`CACHE/downloads/`), then imported like a local file.
 *
 * @module
 */
import { join } from "node:path";
import { sha256Hex } from "../canonical.ts";
import { UserError } from "../errors.ts";
import { BUNDLE_MAX_BYTES } from "../cache/bundle.ts";

/** Whether a `--import` argument is a URL rather than a file. */
export function isBundleUrl(arg: string): boolean {
  return /^https?:\/\//i.test(arg);
}

/** Options of {@linkcode fetchBundle}. */
export interface FetchBundleOptions {
  /** Fetch again even when this URL was downloaded before. @default false */
  readonly refresh?: boolean;
  /** Refuse a download larger than this. @default BUNDLE_MAX_BYTES */
  readonly maxBytes?: number;
  /** Told about a download that starts, one line. */
  readonly onProgress?: (line: string) => void;
}

/**
 * The local copy of the bundle at `url` under `cacheRoot/downloads/`,
 * downloaded when there is none yet (written whole, then renamed, so a
 * broken download leaves nothing). Fails with one line naming the URL and
 * the fix: unreachable, an HTTP error, or too large.
 *
 * Not run: it downloads from the network.
 *
 * @example
 * ```ts ignore
 * const file = await fetchBundle("https://example.org/r/tables.esb", ".envsmith/cache");
 * ```
 */
export async function fetchBundle(
  url: string,
  cacheRoot: string,
  options: FetchBundleOptions = {},
): Promise<string> {
  const dir = join(cacheRoot, "downloads");
  const dest = join(dir, `${sha256Hex(new TextEncoder().encode(url))}.bundle`);
  if (!options.refresh) {
    try {
      if (Deno.statSync(dest).isFile) return dest;
    } catch { /* not downloaded yet */ }
  }
  const max = options.maxBytes ?? BUNDLE_MAX_BYTES;
  options.onProgress?.(`downloading ${url}…`);
  let res: Response;
  try {
    res = await fetch(url);
  } catch (e) {
    throw new UserError(
      `--import ${url}: cannot reach it (${
        (e as Error).message.split("\n")[0]
      }); check the address and the network, or download the file and give its path`,
    );
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new UserError(
      `--import ${url}: the server answered ${res.status} ${res.statusText}; check the address (a release asset or a raw file URL of a results branch)`,
    );
  }
  Deno.mkdirSync(dir, { recursive: true });
  const tmp = `${dest}.${Deno.pid}.part`;
  const out = Deno.openSync(tmp, { write: true, create: true, truncate: true });
  let size = 0;
  try {
    for await (const chunk of res.body ?? []) {
      size += chunk.length;
      if (size > max) {
        throw new UserError(
          `--import ${url}: larger than ${max} bytes, the most a bundle may hold; check the address`,
        );
      }
      let off = 0;
      while (off < chunk.length) off += out.writeSync(chunk.subarray(off));
    }
    out.close();
    Deno.renameSync(tmp, dest);
  } catch (e) {
    try {
      out.close();
    } catch { /* closed */ }
    try {
      Deno.removeSync(tmp);
    } catch { /* gone */ }
    if (e instanceof UserError) throw e;
    throw new UserError(
      `--import ${url}: the download broke off (${
        (e as Error).message.split("\n")[0]
      }); try again`,
    );
  }
  return dest;
}
