/**
 * The Slurm commands the Slurm executor uses (`sbatch`, `squeue`,
 * `scontrol show job`, `scancel`, `sinfo`), behind a small interface so the
 * executor can be tested without a cluster. Accounting (`sacct`) is not
 * needed: job states come from the controller's memory, which keeps a
 * finished job for `MinJobAge` (300 s by default).
 *
 * @module
 */

/** What the controller says about one job (or array task). */
export interface QueueState {
  /** Job id as Slurm prints it: `123` or `123_4` for an array task. */
  readonly id: string;
  /** `PENDING`, `RUNNING`, `COMPLETED`, `FAILED`, `CANCELLED`, `TIMEOUT`, ... */
  readonly state: string;
  /** Why it is pending or why it ended (`Priority`, `Resources`, `TimeLimit`, `None`, ...). */
  readonly reason: string;
  /** Nodes it runs or ran on (may be empty while pending). */
  readonly nodes: string;
}

/** `scontrol show job` of one job: the fields failure reports use. */
export interface JobInfo extends QueueState {
  /** `exit:signal`, e.g. `1:0` or `0:15`. */
  readonly exitCode: string;
  /** Run time so far, e.g. `00:01:04`. */
  readonly runTime: string;
  /** Time limit, e.g. `00:01:00` or `UNLIMITED`. */
  readonly timeLimit: string;
}

/**
 * The Slurm operations the executor needs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { SlurmClient } from "./slurm_client.ts";
 * import { slurmExecutorKind } from "./slurm.ts";
 * // A client that keeps jobs in memory (tests and benchmarks pass one).
 * const submitted: string[] = [];
 * const client: SlurmClient = {
 *   submit: (script) => Promise.resolve(String(submitted.push(script))),
 *   queue: (ids) => Promise.resolve(new Map(ids.map((id) => [id, { id, state: "COMPLETED", reason: "", nodes: "n1" }]))),
 *   show: () => Promise.resolve(null),
 *   cancel: () => Promise.resolve(),
 * };
 * assert.equal(await client.submit("/tmp/s1.sh", []), "1");
 * // With its own client, the kind needs no Slurm command on PATH.
 * assert.deepEqual(slurmExecutorKind({ client }).capabilities?.programs, []);
 * ```
 */
export interface SlurmClient {
  /** Submits a batch script with extra sbatch arguments; returns the job id (for an array, the array's id). */
  submit(scriptPath: string, args: readonly string[]): Promise<string>;
  /**
   * States of the given jobs (array tasks one by one). Jobs the controller
   * no longer knows are absent from the map. `null` when the controller did
   * not answer (nothing can be concluded).
   */
  queue(ids: readonly string[]): Promise<Map<string, QueueState> | null>;
  /** Details of one job; `null` when unknown or unreachable. */
  show(id: string): Promise<JobInfo | null>;
  /** Cancels jobs (ids or array tasks); never throws. */
  cancel(ids: readonly string[]): Promise<void>;
}

/** A Slurm command failed. */
export class SlurmCommandError extends Error {
  /** The command line. */
  readonly command: string;
  /** Its exit code (-1 when it could not start or timed out). */
  readonly code: number;
  /** Its standard error. */
  readonly stderr: string;
  /** Creates the error. */
  constructor(command: string, code: number, stderr: string) {
    super(
      `${command} failed${code >= 0 ? ` (exit ${code})` : ""}: ${
        stderr.trim() || "no output"
      }`,
    );
    this.name = "SlurmCommandError";
    this.command = command;
    this.code = code;
    this.stderr = stderr;
  }
}

/** Options of {@linkcode commandSlurmClient}. */
export interface CommandSlurmClientOptions {
  /** Seconds a Slurm command may take before it counts as failed. @default 30 */
  readonly timeoutSeconds?: number;
  /** Directory of the Slurm commands. @default found on PATH */
  readonly binDir?: string;
}

/**
 * Runs a command; returns its exit code and output (code -1 when it could not start or timed out).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runCommandLine } from "./slurm_client.ts";
 * const r = await runCommandLine("sh", ["-c", "echo queued; exit 3"], 5);
 * assert.deepEqual([r.code, r.stdout], [3, "queued\n"]);
 * assert.equal((await runCommandLine("envsmith-no-such-command", [], 5)).code, -1);
 * ```
 */
export async function runCommandLine(
  cmd: string,
  args: readonly string[],
  timeoutSeconds = 30,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const out = await new Deno.Command(cmd, {
      args: [...args],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(timeoutSeconds * 1000),
    }).output();
    const dec = new TextDecoder();
    return {
      code: out.success ? 0 : out.code || -1,
      stdout: dec.decode(out.stdout),
      stderr: dec.decode(out.stderr),
    };
  } catch (e) {
    return { code: -1, stdout: "", stderr: (e as Error).message };
  }
}

/** Parses `squeue -h -o '%i|%T|%r|%N'` lines. */
export function parseQueue(text: string): Map<string, QueueState> {
  const out = new Map<string, QueueState>();
  for (const line of text.split("\n")) {
    const [id, state, reason, nodes] = line.trim().split("|");
    if (!id || !state) continue;
    out.set(id, {
      id,
      state,
      reason: reason ?? "",
      nodes: nodes === "(null)" ? "" : nodes ?? "",
    });
  }
  return out;
}

/** Parses one job of `scontrol show job -o` (space-separated `Key=Value`). */
export function parseShowJob(text: string): JobInfo | null {
  const line = text.split("\n").find((l) => l.startsWith("JobId="));
  if (!line) return null;
  const f = new Map<string, string>();
  // Values never contain " Key=" except Command/WorkDir/StdOut paths with
  // spaces; those are not read here.
  for (const m of line.matchAll(/(?:^|\s)([A-Za-z:/]+)=(\S*)/g)) {
    if (!f.has(m[1]!)) f.set(m[1]!, m[2]!);
  }
  const arrayJob = f.get("ArrayJobId");
  const task = f.get("ArrayTaskId");
  const id = arrayJob && task && /^\d+$/.test(task)
    ? `${arrayJob}_${task}`
    : f.get("JobId") ?? "?";
  return {
    id,
    state: f.get("JobState") ?? "?",
    reason: f.get("Reason") ?? "",
    nodes: (f.get("NodeList") ?? "").replace("(null)", ""),
    exitCode: f.get("ExitCode") ?? "?",
    runTime: f.get("RunTime") ?? "?",
    timeLimit: f.get("TimeLimit") ?? "?",
  };
}

/**
 * The Slurm client that runs the real commands.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { commandSlurmClient } from "./slurm_client.ts";
 * // Where no squeue runs, the controller "did not answer": null, not an empty queue.
 * const client = commandSlurmClient({ binDir: "/envsmith-no-such-dir", timeoutSeconds: 5 });
 * assert.equal(await client.queue(["12"]), null);
 * assert.equal(await client.show("12"), null);
 * ```
 */
export function commandSlurmClient(
  options: CommandSlurmClientOptions = {},
): SlurmClient {
  const t = options.timeoutSeconds ?? 30;
  const bin = (name: string) =>
    options.binDir ? `${options.binDir}/${name}` : name;
  return {
    async submit(scriptPath, args) {
      const argv = ["--parsable", ...args, scriptPath];
      const r = await runCommandLine(bin("sbatch"), argv, t);
      const id = r.stdout.trim().split(";")[0]?.trim() ?? "";
      if (r.code !== 0 || !/^\d+$/.test(id)) {
        throw new SlurmCommandError(
          `sbatch ${argv.join(" ")}`,
          r.code,
          r.stderr || r.stdout,
        );
      }
      return id;
    },
    async queue(ids) {
      if (ids.length === 0) return new Map();
      const out = new Map<string, QueueState>();
      // Long id lists are split so the command line stays reasonable.
      for (let i = 0; i < ids.length; i += 500) {
        const r = await runCommandLine(bin("squeue"), [
          "-h",
          "-r",
          "--states=all",
          "-o",
          "%i|%T|%r|%N",
          "-j",
          ids.slice(i, i + 500).join(","),
        ], t);
        if (r.code !== 0) {
          // Every id unknown: squeue exits 1 with this message.
          if (/Invalid job id/i.test(r.stderr)) continue;
          return null;
        }
        for (const [k, s] of parseQueue(r.stdout)) out.set(k, s);
      }
      return out;
    },
    async show(id) {
      const r = await runCommandLine(
        bin("scontrol"),
        ["show", "job", "-o", id],
        t,
      );
      return r.code === 0 ? parseShowJob(r.stdout) : null;
    },
    async cancel(ids) {
      if (ids.length === 0) return;
      await runCommandLine(bin("scancel"), [...ids], t);
    },
  };
}

/**
 * Whether a Slurm controller answers: `null` when it does, else why not
 * (e.g. `sbatch is not on PATH`). Used to skip integration tests.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { slurmUnavailable } from "./slurm_client.ts";
 * // A test on a real cluster skips itself, saying why, where there is none.
 * const why = await slurmUnavailable(5);
 * if (why !== null) assert.match(why, /not on PATH|Slurm/);
 * ```
 */
export async function slurmUnavailable(
  timeoutSeconds = 10,
): Promise<string | null> {
  const which = await runCommandLine("sh", [
    "-c",
    "command -v sbatch && command -v squeue && command -v sinfo",
  ], timeoutSeconds);
  if (which.code !== 0) return "sbatch/squeue/sinfo are not on PATH";
  const r = await runCommandLine(
    "sinfo",
    ["-h", "-o", "%T"],
    timeoutSeconds,
  );
  if (r.code !== 0) {
    return `no Slurm controller answers (sinfo: ${
      (r.stderr.trim().split("\n")[0] ?? "").slice(0, 120) || `exit ${r.code}`
    })`;
  }
  const states = r.stdout.split("\n").map((s) => s.trim()).filter((s) => s);
  if (!states.some((s) => /^(idle|mixed|allocated|completing)/.test(s))) {
    return `no usable Slurm node (sinfo says: ${
      states.join(", ") || "no nodes"
    })`;
  }
  return null;
}
