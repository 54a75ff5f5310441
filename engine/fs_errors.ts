/**
 * File-system failures that are the machine's, not the program's: a full
 * disk, a read-only file system, a permission denied. Each becomes a
 * {@linkcode FileSystemError}: one line naming the path, what failed and
 * what to do, printed without a stack trace (the CLI exits 2, or 1 when a
 * run's nodes could not be stored).
 *
 * @module
 */
import { dirname } from "node:path";
import { UserError } from "./errors.ts";

/** What went wrong. */
export type FsProblem = "full" | "read-only" | "permission";

const _WHY: Record<FsProblem, string> = {
  full: "no space left on the device",
  "read-only": "the file system is read-only",
  permission: "permission denied",
};

/** A file-system operation failed for a reason the user can fix (see the module doc). */
export class FileSystemError extends UserError {
  /** The file or directory. */
  readonly path: string;
  /** What went wrong. */
  readonly problem: FsProblem;
  /** The OS error code (`ENOSPC`, `EROFS`, `EACCES`...). */
  readonly code: string;
  /** What failed ("write", "create the directory"...). */
  readonly action: string;
  /** What to do. */
  readonly advice: string;
  /** Creates the error; `advice` says what to do. */
  constructor(
    path: string,
    problem: FsProblem,
    code: string,
    action: string,
    advice: string,
    options?: ErrorOptions,
  ) {
    super(`Cannot ${action} ${path}: ${_WHY[problem]} (${code}). ${advice}`);
    if (options?.cause !== undefined) this.cause = options.cause;
    this.name = "FileSystemError";
    this.path = path;
    this.problem = problem;
    this.code = code;
    this.action = action;
    this.advice = advice;
  }
}

/**
 * The problem behind an error thrown by a file-system call, or null for any other error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fsProblem } from "./fs_errors.ts";
 * assert.equal(fsProblem(Object.assign(new Error("write"), { code: "ENOSPC" })), "full");
 * assert.equal(fsProblem(Object.assign(new Error("open"), { code: "EROFS" })), "read-only");
 * assert.equal(fsProblem(new Error("something else")), null);
 * ```
 */
export function fsProblem(e: unknown): FsProblem | null {
  const code = (e as { code?: unknown } | null)?.code;
  if (code === "ENOSPC" || code === "EDQUOT") return "full";
  if (code === "EROFS") return "read-only";
  if (
    code === "EACCES" || code === "EPERM" ||
    e instanceof Deno.errors.PermissionDenied
  ) return "permission";
  return null;
}

/** What to do about a cache path. */
export function cacheAdvice(problem: FsProblem, path: string): string {
  switch (problem) {
    case "full":
      return "Free some space (`./envsmith cache gc` removes what no run references) or use --cache DIR on a disk with room; finished nodes stay cached and the next run resumes.";
    case "read-only":
      return "Use --cache DIR on a writable disk (commands that only read, such as plan, status and tables, work on a read-only cache).";
    case "permission":
      return `Check the owner and mode of ${
        dirname(path)
      } (ls -ld), or use --cache DIR in a directory you can write.`;
  }
}

/**
 * Runs `f`; a file-system failure it throws becomes a
 * {@linkcode FileSystemError} about `path` (`action`: e.g. "write",
 * "create the directory"). Other errors pass through.
 *
 * @param advice What to do, by problem. @default cacheAdvice
 *
 * @example
 * ```ts
 * import { FileSystemError, onDisk } from "./fs_errors.ts";
 * import assert from "node:assert/strict";
 * const full = Object.assign(new Error("No space left on device (os error 28)"), { code: "ENOSPC" });
 * assert.throws(
 *   () => onDisk("/cache/entries/ab/x.json", "write", () => { throw full; }),
 *   (e) => e instanceof FileSystemError && e.problem === "full" &&
 *     e.message.startsWith("Cannot write /cache/entries/ab/x.json: no space left on the device (ENOSPC)."),
 * );
 * ```
 */
export function onDisk<T>(
  path: string,
  action: string,
  f: () => T,
  advice: (problem: FsProblem, path: string) => string = cacheAdvice,
): T {
  try {
    return f();
  } catch (e) {
    throw asFileSystemError(e, path, action, advice) ?? e;
  }
}

/** The {@linkcode FileSystemError} for `e` (itself when it is one already), or null when `e` is not a file-system failure. */
export function asFileSystemError(
  e: unknown,
  path: string,
  action: string,
  advice: (problem: FsProblem, path: string) => string = cacheAdvice,
): FileSystemError | null {
  if (e instanceof FileSystemError) return e;
  const problem = fsProblem(e);
  if (problem === null) return null;
  const code = String((e as { code?: unknown }).code ?? "EACCES");
  return new FileSystemError(
    path,
    problem,
    code,
    action,
    advice(problem, path),
    { cause: e },
  );
}
