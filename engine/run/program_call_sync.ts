/**
 * {@linkcode callProgram} for synchronous callers: the same bounded run
 * (argv, process group, time limit, output caps), in a worker, while the
 * calling thread waits. For hooks that cannot be asynchronous (a family's
 * `generate`, a kind's `fingerprint` at plan).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { callProgramSync } from "./program_call_sync.ts";
 * assert.deepEqual(callProgramSync(["cat"], { a: 1 }, { timeoutMs: 5_000 }), { a: 1 });
 * ```
 *
 * @module
 */
import { join } from "node:path";
import {
  ProgramCallError,
  type ProgramCallOptions,
  type ProgramFailure,
} from "./program_call.ts";
import type { SyncCallMessage } from "./program_call_worker.ts";

/**
 * Sends `request` to `command` and waits for its JSON reply.
 *
 * @throws {ProgramCallError} when the program gives no usable reply.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { callProgramSync } from "./program_call_sync.ts";
 * const reply = callProgramSync(["sh", "-c", "read line; echo \"[$line, 2]\""], 1, { timeoutMs: 5000 });
 * assert.deepEqual(reply, [1, 2]);
 * ```
 */
export function callProgramSync(
  command: readonly string[],
  request: unknown,
  options: Omit<ProgramCallOptions, "signal"> = {},
): unknown {
  const { log, ...rest } = options;
  const dir = Deno.makeTempDirSync({ prefix: "envsmith-call-" });
  const out = join(dir, "outcome.json");
  const flag = new SharedArrayBuffer(4);
  const worker = new Worker(
    new URL("./program_call_worker.ts", import.meta.url),
    { type: "module" },
  );
  try {
    const message: SyncCallMessage = {
      command,
      request,
      options: rest,
      out,
      flag,
    };
    worker.postMessage(message);
    // the worker's own time limit bounds the wait; this one is a backstop
    const limit = (rest.timeoutMs ?? 60_000) + 30_000;
    if (Atomics.wait(new Int32Array(flag), 0, 0, limit) === "timed-out") {
      throw new ProgramCallError(
        `${options.name ?? command.at(-1)} gave no answer in ${limit / 1000} s`,
        "timeout",
      );
    }
    const outcome = JSON.parse(Deno.readTextFileSync(out)) as {
      ok: boolean;
      value?: unknown;
      message?: string;
      failure?: ProgramFailure;
      lines: string[];
    };
    for (const l of outcome.lines) log?.(l);
    if (!outcome.ok) {
      throw new ProgramCallError(outcome.message!, outcome.failure!);
    }
    return outcome.value;
  } finally {
    worker.terminate();
    Deno.removeSync(dir, { recursive: true });
  }
}
