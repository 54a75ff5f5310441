/**
 * The command line as the engine benchmarks run it: a subprocess with the
 * engine's fixture kinds.
 *
 * @module
 */

/**
 * `deno run -A cli.ts --kinds engine/testdata/kinds.ts ARGS` in the
 * repository root, with `CI=1` added to `env`; output goes where `io` says.
 */
export function fixtureKindsCli(
  args: string[],
  io: {
    env?: Record<string, string>;
    stdout: "null" | "piped";
    stderr: "null" | "piped";
  },
): Deno.Command {
  const cli = ["run", "-A", "cli.ts", "--kinds", "engine/testdata/kinds.ts"];
  return new Deno.Command(Deno.execPath(), {
    args: [...cli, ...args],
    cwd: new URL("..", import.meta.url).pathname,
    env: { ...io.env, CI: "1" },
    stdout: io.stdout,
    stderr: io.stderr,
  });
}
