/**
 * Whether anything is at a path, links not followed.
 *
 * @module
 */

/** Whether a file, directory or link (a dangling one too) is at `path`. */
export function pathExists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
