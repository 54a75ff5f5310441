/**
 * One request to a program: a JSON object on its stdin, one JSON value on
 * its stdout, run with {@linkcode runChild} (argv, its own process group,
 * a time limit, bounded output). A program that cannot start, times out,
 * crashes, floods stdout or writes something that is not JSON rejects with
 * a {@linkcode ProgramCallError} whose message is one line naming the
 * program, what went wrong and the end of its stderr; its output is never
 * used. Its stderr lines go to `log` (bounded).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { callProgram } from "./program_call.ts";
 * const reply = await callProgram(["cat"], { request: "echo" }, { timeoutMs: 5_000 });
 * assert.deepEqual(reply, { request: "echo" });
 * ```
 *
 * @module
 */
import { UserError } from "../errors.ts";
import { ChildSpawnError, runChild } from "./child_process.ts";

/** Most stdout bytes read from a program by default (16 MiB); more is a flood. */
export const PROGRAM_STDOUT_CAP: number = 16 << 20;

/**
 * Options of {@linkcode callProgram}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { callProgram, type ProgramCallOptions } from "./program_call.ts";
 * const lines: string[] = [];
 * const options: ProgramCallOptions = { timeoutMs: 5000, log: (l) => lines.push(l), name: "noisy" };
 * const reply = await callProgram(["sh", "-c", "echo working >&2; echo 7"], null, options);
 * assert.equal(reply, 7);
 * assert.deepEqual(lines, ["noisy: working"]);
 * ```
 */
export interface ProgramCallOptions {
  /** Working directory (relative paths in the command resolve against it). */
  readonly cwd?: string;
  /** The child's whole environment. @default {} */
  readonly env?: Readonly<Record<string, string>>;
  /** Time limit (ms); the whole process group is killed after it. @default 60_000 */
  readonly timeoutMs?: number;
  /** Aborting it kills the process group (the call rejects). */
  readonly signal?: AbortSignal;
  /** Most stdout bytes. @default PROGRAM_STDOUT_CAP */
  readonly stdoutCapBytes?: number;
  /** Receives the program's stderr lines (a node log). */
  readonly log?: (line: string) => void;
  /** Bytes of stderr lines given to `log` in all. @default 256 KiB */
  readonly logCapBytes?: number;
  /** Names the program in messages. @default the command's last argument */
  readonly name?: string;
}

/** Why a request to a program gave no usable reply. */
export type ProgramFailure =
  | "start"
  | "timeout"
  | "aborted"
  | "crash"
  | "flood"
  | "garbage";

/**
 * A request that gave no usable reply: one line, no stack.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { callProgram, ProgramCallError } from "./program_call.ts";
 * await assert.rejects(
 *   callProgram(["sh", "-c", "echo not json"], {}, { timeoutMs: 5000 }),
 *   (e) => e instanceof ProgramCallError && e.failure === "garbage",
 * );
 * ```
 */
export class ProgramCallError extends UserError {
  /** What went wrong. */
  readonly failure: ProgramFailure;
  /** Creates the error. */
  constructor(message: string, failure: ProgramFailure) {
    super(message);
    this.name = "ProgramCallError";
    this.failure = failure;
  }
}

function _tail(stderr: Uint8Array): string {
  const t = new TextDecoder().decode(stderr).trim().split("\n").slice(-2)
    .join(" | ");
  return t ? `; stderr ends: ${t.slice(-300)}` : "";
}

/**
 * Sends `request` (as JSON) to the program `command` (argv, no shell) and
 * returns the JSON value it writes to stdout.
 *
 * Long by design: one branch per way a program can fail (missing, aborted, timed out, too much output, failed, no JSON), each its own message.
 *
 * @throws {ProgramCallError} when the program gives no usable reply.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { callProgram } from "./program_call.ts";
 * const reply = await callProgram(["sh", "-c", "read line; echo \"[$line, 2]\""], 1, { timeoutMs: 5000 });
 * assert.deepEqual(reply, [1, 2]);
 * ```
 */
export async function callProgram(
  command: readonly string[],
  request: unknown,
  options: ProgramCallOptions = {},
): Promise<unknown> {
  const [program, ...args] = command;
  if (program === undefined) {
    throw new ProgramCallError("empty command", "start");
  }
  const name = options.name ?? command.at(-1)!;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const cap = options.stdoutCapBytes ?? PROGRAM_STDOUT_CAP;
  const log = options.log;
  let r;
  try {
    r = await runChild(program, {
      args,
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      env: { ...(options.env ?? {}) },
      clearEnv: true,
      stdin: JSON.stringify(request),
      timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
      stdoutCapBytes: cap,
      stderrCapBytes: 64 * 1024,
      logCapBytes: options.logCapBytes ?? 256 * 1024,
      ...(log
        ? {
          onLine: (stream: "stdout" | "stderr", line: string) => {
            if (stream === "stderr") log(`${name}: ${line}`);
          },
        }
        : {}),
    });
  } catch (e) {
    if (e instanceof ChildSpawnError) {
      throw new ProgramCallError(e.message, "start");
    }
    throw e;
  }
  if (r.aborted) {
    throw new ProgramCallError(
      `${name} was stopped (the run was interrupted)`,
      "aborted",
    );
  }
  if (r.timedOut) {
    throw new ProgramCallError(
      `${name} timed out after ${
        timeoutMs / 1000
      } s (its process group was killed); make it faster or raise timeout${
        _tail(r.stderr)
      }`,
      "timeout",
    );
  }
  if (r.stdoutDropped > 0) {
    throw new ProgramCallError(
      `${name} flooded stdout (over ${cap} bytes; ${r.stdoutDropped} dropped); write the reply only, and logs to stderr`,
      "flood",
    );
  }
  if (!r.success) {
    const how = r.signal !== null
      ? `was killed by ${r.signal}`
      : `exited with code ${r.code}`;
    throw new ProgramCallError(`${name} ${how}${_tail(r.stderr)}`, "crash");
  }
  const text = new TextDecoder().decode(r.stdout);
  try {
    return JSON.parse(text);
  } catch (e) {
    const start = text.trim().slice(0, 60).replaceAll("\n", " ");
    throw new ProgramCallError(
      `${name} wrote something that is not JSON on stdout (${
        (e as Error).message.replace(/\s+/g, " ").slice(0, 120)
      }; it begins ${
        JSON.stringify(start)
      }); write exactly one JSON value to stdout, and logs to stderr`,
      "garbage",
    );
  }
}
