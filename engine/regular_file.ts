/**
 * Reading files that must be plain files: the cache's entries, blobs,
 * manifests, locks and marks, bundles, and the outputs of `exec` nodes.
 * The path is checked with `lstat` (a symlink is never followed), anything
 * but a regular file is refused before it is opened (so a FIFO cannot hang
 * the reader and `/dev/zero` cannot feed it forever), the opened file is
 * checked again (`fstat`: same file, still regular), and reads stop at a
 * size limit.
 *
 * @example
 * ```ts
 * import { readRegularFile, NotRegularFileError } from "./regular_file.ts";
 * const dir = Deno.makeTempDirSync();
 * Deno.symlinkSync("/dev/zero", `${dir}/x`);
 * try {
 *   readRegularFile(`${dir}/x`, 1024);
 *   throw new Error("read a symlink");
 * } catch (e) {
 *   if (!(e instanceof NotRegularFileError) || e.what !== "a symlink to /dev/zero") throw e;
 * }
 * ```
 *
 * @module
 */

/** A path that exists but is not a regular file (or is larger than allowed). */
export class NotRegularFileError extends Error {
  /** The path. */
  readonly path: string;
  /** What it is instead: `a directory`, `a symlink to /etc`, `a FIFO`, `larger than 1024 bytes (5000)`... */
  readonly what: string;
  /** Makes the error: "`path` is `what`, not a regular file". */
  constructor(path: string, what: string) {
    super(
      what.startsWith("larger")
        ? `${path} is ${what}`
        : `${path} is ${what}, not a regular file`,
    );
    this.name = "NotRegularFileError";
    this.path = path;
    this.what = what;
  }
}

/**
 * What is at `path` when it is not a regular file (`"a directory"`,
 * `"a symlink to /etc"`, `"a dangling symlink to x"`, `"a FIFO"`,
 * `"a socket"`, `"a device"`), null for a regular file.
 *
 * @throws {Deno.errors.NotFound} when nothing is there.
 */
export function notRegular(path: string): string | null {
  const st = Deno.lstatSync(path);
  return _describe(path, st);
}

function _describe(path: string, st: Deno.FileInfo): string | null {
  if (st.isFile) return null;
  if (st.isDirectory) return "a directory";
  if (st.isSymlink) {
    let target = "?";
    try {
      target = Deno.readLinkSync(path);
    } catch { /* unreadable link */ }
    let dangling = false;
    try {
      Deno.statSync(path);
    } catch {
      dangling = true;
    }
    return `${dangling ? "a dangling symlink" : "a symlink"} to ${target}`;
  }
  if (st.isFifo) return "a FIFO";
  if (st.isSocket) return "a socket";
  if (st.isCharDevice || st.isBlockDevice) return "a device";
  return "not a regular file";
}

/**
 * The bytes of the regular file at `path`, at most `maxBytes` of them.
 *
 * @throws {Deno.errors.NotFound} when nothing is there.
 * @throws {NotRegularFileError} when it is not a regular file, or larger than `maxBytes`.
 */
export function readRegularFile(path: string, maxBytes: number): Uint8Array {
  const what = notRegular(path);
  if (what !== null) throw new NotRegularFileError(path, what);
  const f = Deno.openSync(path, { read: true });
  try {
    const st = f.statSync();
    if (!st.isFile) {
      throw new NotRegularFileError(
        path,
        _describe(path, st) ?? "not a regular file",
      );
    }
    if (st.size > maxBytes) {
      throw new NotRegularFileError(
        path,
        `larger than ${maxBytes} bytes (${st.size})`,
      );
    }
    const out = new Uint8Array(st.size);
    let n = 0;
    while (n < out.length) {
      const r = f.readSync(out.subarray(n));
      if (r === null || r === 0) break;
      n += r;
    }
    return n === out.length ? out : out.subarray(0, n);
  } finally {
    f.close();
  }
}

/** {@linkcode readRegularFile} as UTF-8 text. */
export function readRegularText(path: string, maxBytes: number): string {
  return new TextDecoder().decode(readRegularFile(path, maxBytes));
}

/**
 * Opens the regular file at `path` for streaming reads (after the same
 * checks as {@linkcode readRegularFile}); returns the open file and its size.
 */
export function openRegularFile(
  path: string,
  maxBytes = Number.MAX_SAFE_INTEGER,
): { file: Deno.FsFile; size: number } {
  const what = notRegular(path);
  if (what !== null) throw new NotRegularFileError(path, what);
  const file = Deno.openSync(path, { read: true });
  const st = file.statSync();
  if (!st.isFile || st.size > maxBytes) {
    file.close();
    throw new NotRegularFileError(
      path,
      !st.isFile
        ? _describe(path, st) ?? "not a regular file"
        : `larger than ${maxBytes} bytes (${st.size})`,
    );
  }
  return { file, size: st.size };
}
