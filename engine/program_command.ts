/**
 * Checks a program's command line before anything runs and digests the
 * program's files, for everything that runs a user's program as argv (the
 * `exec` engineer, a family or trainer behind the program protocol).
 *
 * - the program: a path (relative to the experiment file's folder) must be
 *   an executable regular file, and is hashed; a bare name must be on
 *   `PATH` (the interpreter is not hashed);
 * - every argument that names an existing file is hashed (the script); an
 *   argument that looks like a script but does not exist is refused;
 * - `inputs`: more files or folders, hashed.
 *
 * Files are hashed together, streamed, within the input-bytes limit.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkProgramCommand } from "./program_command.ts";
 * assert.throws(
 *   () => checkProgramCommand(["python3", "missing.py"], [], "/tmp", { label: "family" }),
 *   /family command argument missing\.py does not exist/,
 * );
 * ```
 *
 * @module
 */
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { UserError } from "./errors.ts";
import { hashInputs } from "./input_files.ts";
import { DEFAULT_LIMITS } from "./limits.ts";

/**
 * A command that cannot run as given: one line naming the fix.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkProgramCommand, ProgramCommandError } from "./program_command.ts";
 * assert.throws(
 *   () => checkProgramCommand(["./no_such_program"], [], "/tmp"),
 *   ProgramCommandError,
 * );
 * ```
 */
export class ProgramCommandError extends UserError {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "ProgramCommandError";
  }
}

/** Options of {@linkcode checkProgramCommand}. */
export interface ProgramCommandOptions {
  /** Who runs the command, in messages: `exec` gives `exec command python4 is not on PATH`. @default "the" */
  readonly label?: string;
  /** The `PATH` searched for a bare program name. @default Deno.env.get("PATH") */
  readonly path?: string | undefined;
  /** Most bytes of all hashed files together. @default DEFAULT_LIMITS.inputBytes */
  readonly inputBytes?: number | undefined;
}

const _SCRIPT_RE = /\.(py|js|mjs|cjs|ts|sh|bash|rb|pl|r|R|jl|lua|php)$/;

function _stat(path: string): Deno.FileInfo | null {
  try {
    return Deno.statSync(path);
  } catch {
    return null;
  }
}

/** The program on `path` (a `PATH` value), or null. */
export function findOnPath(
  program: string,
  path: string | undefined,
): string | null {
  for (const dir of (path ?? "").split(delimiter)) {
    if (!dir) continue;
    const st = _stat(join(dir, program));
    if (st?.isFile && ((st.mode ?? 0o111) & 0o111) !== 0) {
      return join(dir, program);
    }
  }
  return null;
}

/**
 * Checks `command` (argv) and `inputs` against `baseDir` and returns the
 * digests of the program's files (relative path -> sha256).
 *
 * @throws {ProgramCommandError} for a program that is missing or not
 * executable, a script argument or an input that does not exist.
 * @throws {InputFileError} for a file that is not a regular file or files
 * over the input-bytes limit (from {@linkcode hashInputs}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkProgramCommand } from "./program_command.ts";
 * import { sha256Hex } from "./canonical.ts";
 * const dir = await Deno.makeTempDir();
 * Deno.writeTextFileSync(`${dir}/fit.py`, "print(1)\n");
 * const digests = checkProgramCommand(["python3", "fit.py"], [], dir);
 * assert.deepEqual(digests, { "fit.py": sha256Hex("print(1)\n") });
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function checkProgramCommand(
  command: unknown,
  inputs: unknown,
  baseDir: string,
  options: ProgramCommandOptions = {},
): Record<string, string> {
  const label = options.label ?? "the";
  const path = "path" in options ? options.path : Deno.env.get("PATH");
  const hashed: string[] = [];
  if (!Array.isArray(command) || typeof command[0] !== "string") {
    throw new ProgramCommandError(
      `${label} command must be [PROGRAM, ARGS...], e.g. [python3, program.py]`,
    );
  }
  const [program, ...args] = command as [string, ...unknown[]];
  if (program.startsWith("$")) {
    throw new ProgramCommandError(
      `${label} command must be written literally (its files enter the key)`,
    );
  }
  if (program.includes("/")) {
    const st = _stat(resolve(baseDir, program));
    if (st === null || !st.isFile) {
      throw new ProgramCommandError(
        `${label} command ${program} does not exist (relative to ${baseDir}, the experiment file's directory); correct the path`,
      );
    }
    if (((st.mode ?? 0o111) & 0o111) === 0) {
      throw new ProgramCommandError(
        `${label} command ${program} is not executable: chmod +x ${program}, or run it through its interpreter ([python3, ${program}])`,
      );
    }
    hashed.push(program);
  } else if (findOnPath(program, path) === null) {
    throw new ProgramCommandError(
      `${label} command ${program} is not on PATH; install it, or give its path ([/usr/bin/${program}, ...])`,
    );
  }
  for (const a of args) {
    if (typeof a !== "string" || a.startsWith("-")) continue;
    const st = _stat(isAbsolute(a) ? a : resolve(baseDir, a));
    if (st?.isFile) hashed.push(a);
    else if (st === null && _SCRIPT_RE.test(a)) {
      throw new ProgramCommandError(
        `${label} command argument ${a} does not exist (relative to ${baseDir}, the experiment file's directory); correct the path`,
      );
    }
  }
  for (const f of Array.isArray(inputs) ? inputs : []) {
    if (typeof f !== "string" || f.startsWith("$")) {
      throw new ProgramCommandError(
        `${label} inputs must be literal paths, got ${JSON.stringify(f)}`,
      );
    }
    if (_stat(resolve(baseDir, f)) === null) {
      throw new ProgramCommandError(
        `${label} input ${f} does not exist (relative to ${baseDir}, the experiment file's directory); correct the path in inputs:`,
      );
    }
    hashed.push(f);
  }
  return hashInputs(
    baseDir,
    hashed,
    options.inputBytes ?? DEFAULT_LIMITS.inputBytes,
  );
}
