/**
 * Runs a program as a child process the engine can always stop: argv only
 * (never a shell), in its own process group, with optional stdin, a time
 * limit, an `AbortSignal`, and output read in bounded chunks.
 *
 * - **Process group.** The child starts a new session (`setsid`), so it and
 *   everything it forks share one process group. A timeout, an abort (the
 *   run's SIGINT/SIGTERM aborts its signal) or the child's own exit kill the
 *   whole group: no process of the child outlives {@linkcode runChild}. Each
 *   process that runs children also starts one small watchdog (`sh`, in its
 *   own session) that holds a pipe from this process; if this process dies
 *   without cleaning up (SIGKILL, a crash), the pipe closes and the watchdog
 *   kills the groups still listed.
 * - **Bounded output.** stdout and stderr are captured up to a cap each
 *   (past it the *tail* is kept and the number of bytes dropped is
 *   returned); lines handed to `onLine` are cut at `maxLineBytes`, and after
 *   `logCapBytes` of lines the rest is dropped except a tail given at the
 *   end with a note saying how much was dropped. Memory is bounded by the
 *   caps, whatever the child writes (one 1 GB line included).
 *
 * Use it for anything that starts a program: the `exec` node kind, and a
 * program engineer (JSON on stdin, a config JSON on stdout):
 *
 * @example
 * ```ts
 * import { describeExit, runChild } from "./child_process.ts";
 * const r = await runChild("cat", { stdin: '{"a":1}', timeoutMs: 5_000 });
 * if (!r.success) throw new Error(describeExit("cat", r));
 * const config = JSON.parse(new TextDecoder().decode(r.stdout));
 * if (config.a !== 1) throw new Error("cat did not echo");
 * ```
 *
 * @module
 */

/** Options of {@linkcode runChild}. */
export interface ChildOptions {
  /** Arguments (argv after the program; never interpreted by a shell). @default [] */
  readonly args?: readonly string[];
  /** Working directory. @default the current one */
  readonly cwd?: string;
  /** Environment of the child. With `clearEnv` (the default) it is all the child gets. @default {} */
  readonly env?: Readonly<Record<string, string>>;
  /** Start from an empty environment (then only `env`). @default true */
  readonly clearEnv?: boolean;
  /** Bytes (or text, as UTF-8) written to the child's stdin, which is then closed; without it stdin is `/dev/null`. */
  readonly stdin?: Uint8Array | string;
  /** Time limit in ms; when reached the group gets SIGTERM, then SIGKILL after `killGraceMs`. */
  readonly timeoutMs?: number;
  /** Aborting it stops the child the same way as the timeout. */
  readonly signal?: AbortSignal;
  /** Time between SIGTERM and SIGKILL of the group when stopping it. @default 1000 */
  readonly killGraceMs?: number;
  /** Captured stdout bytes; past this, the tail is kept. @default 16 MiB */
  readonly stdoutCapBytes?: number;
  /** Captured stderr bytes; past this, the tail is kept. @default 64 KiB */
  readonly stderrCapBytes?: number;
  /** Called with every output line (without its newline), for logs. */
  readonly onLine?: (stream: ChildStream, line: string) => void;
  /** Longest line given to `onLine`; a longer one is cut and says how much. @default 8 KiB */
  readonly maxLineBytes?: number;
  /** Bytes of lines given to `onLine` in all; the rest is dropped but for a tail given at the end. @default 64 MiB */
  readonly logCapBytes?: number;
}

/** Which output a line came from. */
export type ChildStream = "stdout" | "stderr";

/** What {@linkcode runChild} returns once the child and its group are gone. */
export interface ChildResult {
  /** Exit code 0 and not stopped. */
  readonly success: boolean;
  /** Exit code (128 + n when ended by signal n). */
  readonly code: number;
  /** The signal that ended it, if one did. */
  readonly signal: Deno.Signal | null;
  /** It was stopped because the time limit was reached. */
  readonly timedOut: boolean;
  /** It was stopped because `signal` aborted. */
  readonly aborted: boolean;
  /** Captured stdout (its tail when over the cap). */
  readonly stdout: Uint8Array;
  /** stdout bytes not kept (0 when all of it was). */
  readonly stdoutDropped: number;
  /** Captured stderr (its tail when over the cap). */
  readonly stderr: Uint8Array;
  /** stderr bytes not kept. */
  readonly stderrDropped: number;
  /** Bytes of lines not given to `onLine` (log cap). */
  readonly logDropped: number;
  /** Wall time (ms). */
  readonly ms: number;
}

/** The program could not be started (not found, not executable, bad directory). */
export class ChildSpawnError extends Error {
  /** The program. */
  readonly command: string;
  /** Makes the error. */
  constructor(command: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ChildSpawnError";
    this.command = command;
  }
}

const MiB = 1024 * 1024;

/**
 * The environment variable that marks every child of this process (its
 * value names this process): the watchdog finds by it what a dead engine
 * left, even a child that left its process group.
 */
export const CHILD_MARK = "ENVSMITH_CHILD_OF";

/**
 * Runs `command` with `options` and resolves once it has exited, its
 * process group is gone and its output is read. It rejects only when the
 * program cannot be started ({@linkcode ChildSpawnError}); a failing,
 * timed-out or aborted child resolves with `success: false` (see
 * {@linkcode describeExit}).
 *
 * Long by design: the watchdog, the child and the group kill are set up in this order with no gap between them (see the comments).
 *
 * @example
 * ```ts
 * import { runChild } from "./child_process.ts";
 * const r = await runChild("sh", { args: ["-c", "sleep 60 & sleep 60"], timeoutMs: 200 });
 * if (!r.timedOut || r.success) throw new Error("not stopped");
 * ```
 */
export async function runChild(
  command: string,
  options: ChildOptions = {},
): Promise<ChildResult> {
  const t0 = performance.now();
  const stdinBytes = typeof options.stdin === "string"
    ? new TextEncoder().encode(options.stdin)
    : options.stdin;
  let child: Deno.ChildProcess;
  // The watchdog exists before the child does, so there is no moment in
  // which this process can die and leave the child unwatched.
  _watchdog.start();
  const mark = `${_watchdog.token}-${++_children}`;
  try {
    child = new Deno.Command(command, {
      args: [...(options.args ?? [])],
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      env: { ...(options.env ?? {}), [CHILD_MARK]: mark },
      clearEnv: options.clearEnv ?? true,
      stdin: stdinBytes ? "piped" : "null",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
  } catch (e) {
    throw new ChildSpawnError(command, _spawnMessage(command, options, e), {
      cause: e,
    });
  }
  const pgid = child.pid;
  _watchdog.add(pgid);
  let timedOut = false;
  let aborted = false;
  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  const stop = () => {
    _killGroup(pgid, "SIGTERM");
    graceTimer ??= setTimeout(
      () => _killGroup(pgid, "SIGKILL"),
      options.killGraceMs ?? 1000,
    );
  };
  const onAbort = () => {
    aborted = true;
    stop();
  };
  const timer = options.timeoutMs !== undefined
    ? setTimeout(() => {
      timedOut = true;
      stop();
    }, options.timeoutMs)
    : undefined;
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener("abort", onAbort, { once: true });

  const log = new _LineLog(
    options.onLine,
    options.maxLineBytes ?? 8 * 1024,
    options.logCapBytes ?? 64 * MiB,
  );
  const out = new _Tail(options.stdoutCapBytes ?? 16 * MiB);
  const err = new _Tail(options.stderrCapBytes ?? 64 * 1024);
  const pumps = Promise.all([
    _pump(child.stdout, out, log, "stdout"),
    _pump(child.stderr, err, log, "stderr"),
  ]);
  const feed = stdinBytes ? _feed(child.stdin, stdinBytes) : Promise.resolve();
  let status: Deno.CommandStatus;
  try {
    status = await child.status;
  } finally {
    // Whatever the leader did, nothing it forked may stay behind: its
    // group, and what left the group (its own setsid) but carries its mark.
    _killGroup(pgid, "SIGKILL");
    _killMarked(mark);
    _watchdog.remove(pgid);
    if (timer !== undefined) clearTimeout(timer);
    if (graceTimer !== undefined) clearTimeout(graceTimer);
    options.signal?.removeEventListener("abort", onAbort);
  }
  // A process that left the group (its own setsid) may still hold the
  // pipes: read what is there for a moment, then stop reading.
  let giveUp: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    pumps,
    new Promise<void>((resolve) => {
      giveUp = setTimeout(resolve, 2000);
    }),
  ]);
  clearTimeout(giveUp);
  for (const s of [child.stdout, child.stderr]) {
    s.cancel().catch(() => {});
  }
  await feed;
  log.end();
  const stopped = timedOut || aborted;
  return {
    success: status.success && !stopped,
    code: status.code,
    signal: status.signal,
    timedOut,
    aborted,
    stdout: out.bytes(),
    stdoutDropped: out.dropped,
    stderr: err.bytes(),
    stderrDropped: err.dropped,
    logDropped: log.dropped,
    ms: performance.now() - t0,
  };
}

/**
 * One line saying how a child ended, with the end of its stderr:
 * `python3 timed out after 2000 ms`, `cat exited with code 1; stderr ends: ...`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeExit, runChild } from "./child_process.ts";
 * const r = await runChild("sh", { args: ["-c", "echo no such file >&2; exit 2"] });
 * assert.equal(describeExit("sh", r), "sh exited with code 2; stderr ends:\nno such file");
 * ```
 */
export function describeExit(
  command: string,
  r: ChildResult,
  options: { timeoutMs?: number; stderrTailChars?: number } = {},
): string {
  const how = r.timedOut
    ? `timed out${
      options.timeoutMs !== undefined ? ` after ${options.timeoutMs} ms` : ""
    } (its process group was killed)`
    : r.aborted
    ? "was stopped (the run was interrupted)"
    : r.signal
    ? `was killed by ${r.signal}`
    : `exited with code ${r.code}`;
  const text = new TextDecoder().decode(r.stderr).trimEnd();
  const tail = text.slice(-(options.stderrTailChars ?? 2000));
  return `${command} ${how}${
    tail
      ? `; stderr ends${
        r.stderrDropped || tail.length < text.length ? " (tail)" : ""
      }:\n${tail}`
      : ""
  }`;
}

function _spawnMessage(
  command: string,
  options: ChildOptions,
  e: unknown,
): string {
  if (e instanceof Deno.errors.NotFound) {
    return options.cwd !== undefined && !_isDir(options.cwd)
      ? `cannot start ${command}: working directory ${options.cwd} does not exist`
      : `cannot start ${command}: no such program (not found${
        command.includes("/") ? "" : " on PATH"
      }); install it or give its full path`;
  }
  if (e instanceof Deno.errors.PermissionDenied) {
    return `cannot start ${command}: permission denied (is it executable?)`;
  }
  return `cannot start ${command}: ${(e as Error).message}`;
}

function _isDir(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

let _children = 0;

/**
 * SIGKILLs every live process whose environment holds `CHILD_MARK=mark`
 * (Linux /proc; nothing elsewhere). Up to 3 passes, for what they fork
 * meanwhile.
 */
function _killMarked(mark: string): void {
  const needle = new TextEncoder().encode(`${CHILD_MARK}=${mark}\0`);
  for (let pass = 0; pass < 3; pass++) {
    let list: Deno.DirEntry[];
    try {
      list = [...Deno.readDirSync("/proc")];
    } catch {
      return;
    }
    let found = 0;
    for (const e of list) {
      const c = e.name.charCodeAt(0);
      if (c < 48 || c > 57) continue;
      let env: Uint8Array;
      try {
        env = Deno.readFileSync(`/proc/${e.name}/environ`);
      } catch {
        continue;
      }
      if (!_holds(env, needle)) continue;
      try {
        Deno.kill(Number(e.name), "SIGKILL");
        found++;
      } catch { /* gone */ }
    }
    if (found === 0) return;
  }
}

/** Whether `env` (NUL-separated) holds the entry `needle` (which ends in NUL). */
function _holds(env: Uint8Array, needle: Uint8Array): boolean {
  for (
    let i = env.indexOf(needle[0]!);
    i >= 0 && i + needle.length <= env.length + 1;
    i = env.indexOf(needle[0]!, i + 1)
  ) {
    if (i > 0 && env[i - 1] !== 0) continue;
    let j = 1;
    for (; j < needle.length; j++) {
      const b = i + j < env.length ? env[i + j] : 0;
      if (b !== needle[j]) break;
    }
    if (j === needle.length) return true;
  }
  return false;
}

function _killGroup(pgid: number, sig: Deno.Signal): void {
  try {
    Deno.kill(-pgid, sig);
  } catch { /* the group is gone */ }
}

async function _feed(
  stdin: WritableStream<Uint8Array>,
  bytes: Uint8Array,
): Promise<void> {
  const w = stdin.getWriter();
  try {
    // In slices, so a child that stops reading is noticed between them.
    for (let i = 0; i < bytes.length; i += 64 * 1024) {
      await w.write(bytes.subarray(i, i + 64 * 1024));
    }
    await w.close();
  } catch { /* the child closed its stdin or ended: not our failure */ }
}

async function _pump(
  stream: ReadableStream<Uint8Array>,
  tail: _Tail,
  log: _LineLog,
  tag: ChildStream,
): Promise<void> {
  try {
    for await (const chunk of stream) {
      tail.push(chunk);
      log.push(tag, chunk);
    }
  } catch { /* cancelled */ }
  log.flush(tag);
}

/** The last `cap` bytes of a stream, in chunks (never a copy per chunk). */
class _Tail {
  readonly #cap: number;
  #chunks: Uint8Array[] = [];
  #size = 0;
  dropped = 0;
  constructor(cap: number) {
    this.#cap = Math.max(0, cap);
  }
  push(chunk: Uint8Array): void {
    if (this.#cap === 0) {
      this.dropped += chunk.length;
      return;
    }
    if (chunk.length >= this.#cap) {
      this.dropped += this.#size + chunk.length - this.#cap;
      this.#chunks = [chunk.slice(chunk.length - this.#cap)];
      this.#size = this.#cap;
      return;
    }
    this.#chunks.push(chunk.slice());
    this.#size += chunk.length;
    while (this.#size > this.#cap) {
      const first = this.#chunks[0]!;
      const over = this.#size - this.#cap;
      if (first.length <= over) {
        this.#chunks.shift();
        this.#size -= first.length;
        this.dropped += first.length;
      } else {
        this.#chunks[0] = first.subarray(over);
        this.#size -= over;
        this.dropped += over;
      }
    }
  }
  bytes(): Uint8Array {
    const out = new Uint8Array(this.#size);
    let o = 0;
    for (const c of this.#chunks) {
      out.set(c, o);
      o += c.length;
    }
    return out;
  }
}

/** Splits output into lines for `onLine`, bounded per line and in all. */
class _LineLog {
  readonly #onLine: ((s: ChildStream, l: string) => void) | undefined;
  readonly #maxLine: number;
  readonly #cap: number;
  readonly #partial = new Map<
    ChildStream,
    { parts: Uint8Array[]; kept: number; cut: number }
  >();
  #given = 0;
  dropped = 0;
  /** Lines kept after the cap, given at the end (at most 64 KiB). */
  #tail: [ChildStream, string][] = [];
  #tailBytes = 0;
  readonly #decoder = new TextDecoder();
  constructor(
    onLine: ((s: ChildStream, l: string) => void) | undefined,
    maxLine: number,
    cap: number,
  ) {
    this.#onLine = onLine;
    this.#maxLine = maxLine;
    this.#cap = cap;
  }
  push(tag: ChildStream, chunk: Uint8Array): void {
    if (!this.#onLine) return;
    let p = this.#partial.get(tag);
    if (!p) this.#partial.set(tag, p = { parts: [], kept: 0, cut: 0 });
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(10, start);
      const end = nl < 0 ? chunk.length : nl;
      const room = this.#maxLine - p.kept;
      const take = Math.min(room, end - start);
      if (take > 0) {
        p.parts.push(chunk.slice(start, start + take));
        p.kept += take;
      }
      p.cut += end - start - Math.max(0, take);
      if (nl < 0) break;
      this.#emit(tag, p);
      start = nl + 1;
    }
  }
  flush(tag: ChildStream): void {
    const p = this.#partial.get(tag);
    if (p && (p.kept > 0 || p.cut > 0)) this.#emit(tag, p);
  }
  end(): void {
    if (!this.#onLine || this.dropped === 0) return;
    this.#onLine(
      "stderr",
      `[log cap of ${this.#cap} bytes reached: ${this.dropped} bytes of output dropped; its last ${this.#tailBytes} bytes follow]`,
    );
    for (const [tag, line] of this.#tail) this.#onLine(tag, line);
  }
  #emit(
    tag: ChildStream,
    p: { parts: Uint8Array[]; kept: number; cut: number },
  ) {
    const bytes = new Uint8Array(p.kept);
    let o = 0;
    for (const part of p.parts) {
      bytes.set(part, o);
      o += part.length;
    }
    let line = this.#decoder.decode(bytes);
    if (p.cut > 0) line += ` [... ${p.cut} more bytes of this line dropped]`;
    const size = p.kept + p.cut + 1;
    p.parts = [];
    p.kept = 0;
    p.cut = 0;
    if (this.#given + size <= this.#cap) {
      this.#given += size;
      this.#onLine!(tag, line);
      return;
    }
    this.dropped += size;
    this.#tail.push([tag, line]);
    this.#tailBytes += line.length;
    while (this.#tailBytes > 64 * 1024 && this.#tail.length > 1) {
      const [, first] = this.#tail.shift()!;
      this.#tailBytes -= first.length;
    }
  }
}

/**
 * The process groups of live children, told to a watchdog process that
 * kills those still listed when this process dies (its stdin reaches end of
 * file). Started on the first child; it does not keep the process alive.
 */
class _Watchdog {
  #proc: Deno.ChildProcess | undefined;
  #writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
  #failed = false;
  readonly #live = new Set<number>();
  readonly #enc = new TextEncoder();

  /** Marks this process's children (their environment's {@linkcode CHILD_MARK}). */
  readonly token = `${Deno.pid}-${crypto.randomUUID().slice(0, 12)}`;

  add(pgid: number): void {
    this.#live.add(pgid);
    this.start();
    this.#send(`+${pgid}\n`);
  }
  remove(pgid: number): void {
    this.#live.delete(pgid);
    this.#send(`-${pgid}\n`);
  }
  /** Kills every live group now (the process is exiting). */
  killAll(): void {
    for (const g of this.#live) _killGroup(g, "SIGKILL");
    this.#live.clear();
  }
  #send(line: string): void {
    this.#writer?.write(this.#enc.encode(line)).catch(() => {});
  }
  /** Starts the watchdog (once). */
  start(): void {
    if (this.#proc || this.#failed) return;
    try {
      this.#proc = new Deno.Command("/bin/sh", {
        args: ["-c", _WATCHDOG_SCRIPT, "envsmith-watchdog", this.token],
        stdin: "piped",
        stdout: "null",
        stderr: "null",
        clearEnv: true,
        env: { PATH: "/usr/bin:/bin" },
        detached: true,
      }).spawn();
      this.#proc.unref();
      this.#writer = this.#proc.stdin.getWriter();
      // An open pipe must not keep this process alive.
      (this.#proc.stdin as unknown as { unref?: () => void }).unref?.();
    } catch {
      this.#failed = true; // no sh: children are still killed in-process
    }
  }
}

// Reads "+PGID" / "-PGID" lines; at end of input (this process is gone)
// SIGKILLs every group still listed, then every process whose environment
// carries this process's mark (a child registered too late, or one that
// left its group), until none is left. Only numbers reach `kill`.
const _WATCHDOG_SCRIPT = `trap '' INT TERM HUP
live=" "
while IFS= read -r l; do
  case "$l" in
    +*[!0-9]*|-*[!0-9]*) ;;
    +?*) live="$live\${l#+} " ;;
    -?*) live=$(printf '%s' "$live" | sed "s/ \${l#-} / /") ;;
  esac
done
for g in $live; do kill -9 "-$g" 2>/dev/null; done
n=0
while [ $n -lt 5 ]; do
  found=$(grep -l -s -z -x "${CHILD_MARK}=$1-[0-9]*" /proc/[0-9]*/environ 2>/dev/null)
  [ -z "$found" ] && break
  for f in $found; do p=\${f#/proc/}; p=\${p%/environ}; kill -9 "$p" 2>/dev/null; done
  n=$((n+1))
  sleep 0.1
done
`;

const _watchdog = new _Watchdog();

// Deno.exit (a second Ctrl-C) and a normal end run "unload": kill what is
// left at once instead of waiting for the watchdog.
globalThis.addEventListener?.("unload", () => _watchdog.killAll());
