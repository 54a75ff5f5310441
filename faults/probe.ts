/**
 * Runs the envsmith CLI as a hostile or unlucky user would meet it: in its
 * own process, with a wall-time and a memory bound, measuring how long it
 * took, its peak resident memory, its exit and what it printed.
 *
 * @module
 */
import { fromFileUrl } from "./_paths.ts";

/** The repository root (where `cli.ts` and `deno.json` are). */
export const ROOT: string = fromFileUrl(new URL("../", import.meta.url));

/** Options of {@linkcode probe}. */
export interface ProbeOptions {
  /** Working directory. @default ROOT */
  readonly cwd?: string;
  /** Extra environment variables (the rest is inherited, plus `CI=1`). */
  readonly env?: Readonly<Record<string, string>>;
  /** Kill it (SIGKILL) after this long: a hang fails the probe. @default 10000 */
  readonly timeoutMs?: number;
  /** V8 heap cap in MB, so a runaway dies instead of eating the machine. @default 450 */
  readonly heapMb?: number;
  /** Load the engine's test kinds (`--kinds engine/testdata/kinds.ts`). @default true */
  readonly testKinds?: boolean;
  /** Called once the process runs (e.g. to send it a signal later). */
  readonly started?: (child: Deno.ChildProcess, t0: number) => void;
}

/** What a probe saw. */
export interface ProbeResult {
  /** Exit code (128 + n when ended by signal n). */
  readonly code: number;
  /** The signal that ended it, if one did. */
  readonly signal: Deno.Signal | null;
  /** Standard output. */
  readonly out: string;
  /** Standard error. */
  readonly err: string;
  /** Wall time (ms). */
  readonly ms: number;
  /** Peak resident memory (MB, from /proc; 0 where there is no /proc). */
  readonly peakMb: number;
  /** Killed at the timeout. */
  readonly timedOut: boolean;
}

/** Peak resident memory of a live process in MB (VmHWM), or 0. */
function _peakMb(pid: number): number {
  try {
    const s = Deno.readTextFileSync(`/proc/${pid}/status`);
    const m = /VmHWM:\s+(\d+) kB/.exec(s);
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Runs `deno run -A cli.ts ARGS` (from the repository) and measures it.
 *
 * @example
 * Not run: it runs the CLI in a child process for seconds; faults_test.ts runs it.
 * ```ts ignore
 * const r = await probe(["plan", "experiments/quick.yaml"]);
 * console.log(r.code, r.ms, r.peakMb);
 * ```
 */
export async function probe(
  args: readonly string[],
  options: ProbeOptions = {},
): Promise<ProbeResult> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `--v8-flags=--max-old-space-size=${options.heapMb ?? 450}`,
      "--config",
      `${ROOT}deno.json`,
      `${ROOT}cli.ts`,
      ...(options.testKinds === false
        ? []
        : ["--kinds", `${ROOT}engine/testdata/kinds.ts`]),
      ...args,
    ],
    cwd: options.cwd ?? ROOT,
    env: { CI: "1", NO_COLOR: "1", ...options.env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const t0 = performance.now();
  let peak = 0;
  let timedOut = false;
  const sampler = setInterval(() => {
    peak = Math.max(peak, _peakMb(child.pid));
  }, 20);
  const killer = setTimeout(() => {
    timedOut = true;
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
  }, options.timeoutMs ?? 10_000);
  options.started?.(child, t0);
  const [status, out, err] = await Promise.all([
    child.status,
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  clearInterval(sampler);
  clearTimeout(killer);
  return {
    code: status.code,
    signal: status.signal,
    out,
    err,
    ms: performance.now() - t0,
    peakMb: peak,
    timedOut,
  };
}

/** Whether output holds a stack trace (`    at f (file:...)`). */
export function hasStackTrace(text: string): boolean {
  return /^\s+at .+[:(]/m.test(text) || /internal error/.test(text);
}
