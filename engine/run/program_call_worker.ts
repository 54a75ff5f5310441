/**
 * The worker behind {@linkcode callProgramSync}: runs one
 * {@linkcode callProgram}, writes `{ok, value}` or `{ok: false, message,
 * failure}` as JSON to the file it was given, then wakes the waiting thread.
 *
 * @module
 */
import { callProgram, ProgramCallError } from "./program_call.ts";
import type { ProgramCallOptions } from "./program_call.ts";

/** What the worker is sent. */
export interface SyncCallMessage {
  /** The program (argv). */
  readonly command: readonly string[];
  /** The request. */
  readonly request: unknown;
  /** Options but `log` and `signal` (functions do not cross threads). */
  readonly options: Omit<ProgramCallOptions, "log" | "signal">;
  /** Where the outcome is written. */
  readonly out: string;
  /** Int32 flag: set to 1 when the outcome is written. */
  readonly flag: SharedArrayBuffer;
}

(globalThis as unknown as {
  onmessage: (e: MessageEvent<SyncCallMessage>) => void;
}).onmessage = async (e) => {
  const m = e.data;
  let outcome: unknown;
  const lines: string[] = [];
  try {
    const value = await callProgram(m.command, m.request, {
      ...m.options,
      log: (l) => lines.push(l),
    });
    outcome = { ok: true, value, lines };
  } catch (err) {
    outcome = err instanceof ProgramCallError
      ? { ok: false, message: err.message, failure: err.failure, lines }
      : { ok: false, message: String(err), failure: "start", lines };
  }
  try {
    Deno.writeTextFileSync(m.out, JSON.stringify(outcome));
  } finally {
    const flag = new Int32Array(m.flag);
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
  }
};
