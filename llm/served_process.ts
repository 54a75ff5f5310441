/**
 * A model server started for a while and stopped: a command (envsmith's
 * own `serve-llm` over a GGUF file, or vLLM, or llama.cpp's server) that
 * listens on a given port with an OpenAI-compatible API.
 *
 * - **Ready** when `GET /v1/models` answers with a model; the first model's
 *   id is what requests name. The wait has a time limit; a command that
 *   exits first or never answers is an {@linkcode LlmServeError} carrying
 *   the tail of its stderr.
 * - **Stopped whole.** The command runs under a small `sh` in a new session
 *   (`setsid`), so it and everything it forks share one process group;
 *   {@linkcode ServedProcess.stop} sends the group SIGTERM, then SIGKILL
 *   after a grace, and returns once no process of the group is left. The
 *   `sh` also holds a pipe from this process: if this process dies without
 *   stopping it (SIGKILL, a crash), the pipe closes and the group is
 *   terminated, so a server never outlives the run that started it.
 *
 * @example
 * Not run: it needs vLLM and a model on this machine.
 * ```ts ignore
 * import { freePort, startServedProcess } from "./served_process.ts";
 * const port = await freePort();
 * await using server = await startServedProcess({
 *   command: ["vllm", "serve", "/models/qwen3-4b", "--port", String(port)],
 *   port,
 *   readyTimeoutMs: 600_000,
 * });
 * console.log(server.baseURL, server.model);
 * ```
 *
 * @module
 */
import { LlmError } from "./errors.ts";

/** A served model that did not start, or stopped answering. */
export class LlmServeError extends LlmError {
  /** The last lines the command wrote on stderr. */
  readonly stderrTail: string;
  /** Build the error. */
  constructor(
    message: string,
    data: { baseURL: string; model: string; stderrTail: string },
    options?: ErrorOptions,
  ) {
    super(message, { ...data, attempts: 0 }, options);
    this.name = "LlmServeError";
    this.stderrTail = data.stderrTail;
  }
}

/** Options of {@linkcode startServedProcess}. */
export interface ServedProcessOptions {
  /** The command and its arguments (argv; never a shell line). */
  readonly command: readonly string[];
  /** The port the command listens on (on 127.0.0.1). */
  readonly port: number;
  /** How long `GET /v1/models` may take to answer, from the start. */
  readonly readyTimeoutMs: number;
  /** Environment variables added to this process's. */
  readonly env?: Readonly<Record<string, string>>;
  /** Working directory. */
  readonly cwd?: string;
  /** Receives what the command writes, line by line (the first 200 lines), and what happens to it. */
  readonly log?: (line: string) => void;
  /** Aborting it stops the server. */
  readonly signal?: AbortSignal;
  /** Time between SIGTERM and SIGKILL of the group. @default {3000} */
  readonly killGraceMs?: number;
}

/** A ready server. */
export interface ServedProcess extends AsyncDisposable {
  /** `http://127.0.0.1:PORT/v1`. */
  readonly baseURL: string;
  /** The first model id `GET /v1/models` listed. */
  readonly model: string;
  /** Process group id (the `sh` that leads it). */
  readonly pgid: number;
  /** Milliseconds from the start until `GET /v1/models` answered. */
  readonly readyMs: number;
  /** The last lines of its stderr so far. */
  stderrTail(): string;
  /** Stop the whole group; resolves when none of it is left. Idempotent. */
  stop(): Promise<void>;
}

// The command runs in the background; `cat` holds this process's pipe (fd
// 3) and takes the group down when it closes. `wait` ends with the command.
const _WRAPPER = `exec 3<&0 </dev/null
"$@" 3<&- &
s=$!
( cat <&3 >/dev/null 2>&1; kill -TERM 0 2>/dev/null; sleep 5; kill -KILL 0 2>/dev/null ) >/dev/null 2>&1 &
exec 3<&-
wait "$s"`;

/** A port free on 127.0.0.1 right now (the OS picks it). */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/**
 * Whether any process of group `pgid` is alive (zombies count as gone),
 * read from `/proc`.
 */
export function groupAlive(pgid: number): boolean {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync("/proc")];
  } catch {
    // no /proc: ask the kernel (a zombie counts as alive here)
    try {
      Deno.kill(-pgid, "SIGCONT");
      return true;
    } catch {
      return false;
    }
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e.name)) continue;
    let stat: string;
    try {
      stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(rest[2]) === pgid && rest[0] !== "Z") return true;
  }
  return false;
}

class _Tail {
  #lines: string[] = [];
  #partial = "";
  #logged = 0;
  constructor(
    readonly name: string,
    readonly log: ((line: string) => void) | undefined,
  ) {}
  push(text: string): void {
    const parts = (this.#partial + text).split("\n");
    this.#partial = parts.pop()!;
    for (const line of parts) this.#line(line);
  }
  end(): void {
    if (this.#partial !== "") this.#line(this.#partial);
    this.#partial = "";
  }
  #line(line: string): void {
    this.#lines.push(line.slice(0, 2000));
    if (this.#lines.length > 20) this.#lines.shift();
    if (this.log !== undefined && this.#logged < 200) {
      this.#logged++;
      this.log(`serve ${this.name}: ${line.slice(0, 500)}`);
    }
  }
  text(): string {
    return [...this.#lines, ...(this.#partial ? [this.#partial] : [])].join(
      "\n",
    );
  }
}

async function _pump(stream: ReadableStream<Uint8Array>, tail: _Tail) {
  const decoder = new TextDecoder();
  try {
    for await (const chunk of stream) {
      tail.push(decoder.decode(chunk, { stream: true }));
    }
  } catch { /* cancelled */ }
  tail.end();
}

const _sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Start `command` and wait until it answers `GET /v1/models` on `port`.
 *
 * @throws {LlmServeError} it could not be started, exited, or did not
 * answer within `readyTimeoutMs` (the group is stopped first; the message
 * ends with the tail of its stderr).
 */
export async function startServedProcess(
  o: ServedProcessOptions,
): Promise<ServedProcess> {
  const t0 = performance.now();
  const baseURL = `http://127.0.0.1:${o.port}/v1`;
  const shown = o.command.join(" ");
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command("sh", {
      args: ["-c", _WRAPPER, "envsmith-serve", ...o.command],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: true,
      ...(o.env === undefined ? {} : { env: { ...o.env } }),
      ...(o.cwd === undefined ? {} : { cwd: o.cwd }),
    }).spawn();
  } catch (e) {
    throw new LlmServeError(
      `cannot start the model server \`${shown}\`: ${(e as Error).message}`,
      { baseURL, model: "", stderrTail: "" },
      { cause: e },
    );
  }
  const pgid = child.pid;
  o.log?.(
    `serve: started \`${shown}\` (process group ${pgid}, port ${o.port})`,
  );
  const out = new _Tail("stdout", o.log);
  const err = new _Tail("stderr", o.log);
  const pumps = Promise.all([
    _pump(child.stdout, out),
    _pump(child.stderr, err),
  ]);
  const stdin = child.stdin.getWriter();
  let exited: Deno.CommandStatus | undefined;
  const status = child.status.then((s) => (exited = s));
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      o.signal?.removeEventListener("abort", onAbort);
      stdin.close().catch(() => {});
      const kill = (sig: Deno.Signal) => {
        try {
          Deno.kill(-pgid, sig);
        } catch { /* the group is gone */ }
      };
      kill("SIGTERM");
      const grace = o.killGraceMs ?? 3000;
      const t = performance.now();
      while (groupAlive(pgid) && performance.now() - t < grace) {
        await _sleep(50);
      }
      while (groupAlive(pgid)) {
        kill("SIGKILL");
        await _sleep(50);
      }
      await status;
      await Promise.race([pumps, _sleep(1000)]);
      o.log?.(
        `serve: stopped \`${o.command[0]}\` (process group ${pgid})`,
      );
    })();
    return stopping;
  };
  const onAbort = () => void stop();
  if (o.signal?.aborted) onAbort();
  else o.signal?.addEventListener("abort", onAbort, { once: true });
  const fail = async (why: string): Promise<never> => {
    await stop();
    const tail = err.text().trim() || out.text().trim();
    throw new LlmServeError(
      `the model server \`${shown}\` ${why}${
        tail === ""
          ? " (it wrote nothing on stderr)"
          : `; its stderr ends:\n${tail}`
      }`,
      { baseURL, model: "", stderrTail: tail },
    );
  };
  let model: string | undefined;
  while (model === undefined) {
    if (o.signal?.aborted) await fail("was stopped: the run was cancelled");
    if (exited !== undefined) {
      await fail(
        `exited (code ${exited.code}) before it answered GET ${baseURL}/models`,
      );
    }
    if (performance.now() - t0 > o.readyTimeoutMs) {
      await fail(
        `did not answer GET ${baseURL}/models within ${
          Math.round(o.readyTimeoutMs / 1000)
        } s (serve.ready_timeout_s); raise it for a large model, or check the command`,
      );
    }
    model = await _models(baseURL);
    if (model === undefined) await Promise.race([_sleep(200), status]);
  }
  const readyMs = performance.now() - t0;
  o.log?.(
    `serve: ${baseURL} ready in ${
      (readyMs / 1000).toFixed(1)
    } s (model ${model})`,
  );
  return {
    baseURL,
    model,
    pgid,
    readyMs,
    stderrTail: () => err.text(),
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/** The first model id of `GET /v1/models`, or undefined while it does not answer. */
async function _models(baseURL: string): Promise<string | undefined> {
  try {
    const res = await fetch(`${baseURL}/models`, {
      signal: AbortSignal.timeout(5000),
    });
    if (!res.ok) {
      await res.body?.cancel();
      return undefined;
    }
    const body = await res.json() as { data?: { id?: unknown }[] };
    const id = body.data?.[0]?.id;
    return typeof id === "string" && id !== "" ? id : undefined;
  } catch {
    return undefined;
  }
}
