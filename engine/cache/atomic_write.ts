/**
 * Replacing a file atomically: the data goes to a temporary file that is
 * then renamed over the target, so readers see the old file or the new one,
 * never half of one.
 *
 * @module
 */
import { onDisk } from "../fs_errors.ts";

/**
 * Writes `data` (text or bytes) to `path` through the temporary file `tmp` (same file system)
 * and a rename; the temporary file is removed when either step fails.
 *
 * @throws {FileSystemError} when the file cannot be written; `action` names
 * what was being done ("write the run manifest").
 *
 * @example
 * ```ts
 * import { writeAtomic } from "./atomic_write.ts";
 * const dir = Deno.makeTempDirSync();
 * writeAtomic(`${dir}/a.json`, `${dir}/a.json.tmp`, "{}", "write a file");
 * console.assert(Deno.readTextFileSync(`${dir}/a.json`) === "{}");
 * ```
 */
export function writeAtomic(
  path: string,
  tmp: string,
  data: string | Uint8Array,
  action: string,
): void {
  onDisk(path, action, () => {
    try {
      if (typeof data === "string") Deno.writeTextFileSync(tmp, data);
      else Deno.writeFileSync(tmp, data);
      Deno.renameSync(tmp, path);
    } catch (e) {
      try {
        Deno.removeSync(tmp);
      } catch { /* never written */ }
      throw e;
    }
  });
}
