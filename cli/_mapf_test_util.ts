// Test helper of the MAPF subcommand tests (private).
import type { Command } from "@commander-js/extra-typings";
import type { MapfCliIo } from "./_mapf.ts";

// deno-lint-ignore no-explicit-any
type AnyCommand = Command<any, any, any>;

/** Run a command factory with captured streams and a given stdin. */
export async function runCommand(
  make: (
    io: MapfCliIo,
    onExit: (code: number) => void,
  ) => AnyCommand,
  args: string[],
  stdin = "",
): Promise<{ out: string; err: string; code: number }> {
  const out: string[] = [];
  const err: string[] = [];
  let code = 0;
  const cmd = make({
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    stdin: () => Promise.resolve(stdin),
  }, (c) => (code = c));
  cmd.exitOverride();
  cmd.configureOutput({
    writeOut: (s) => out.push(s),
    writeErr: (s) => err.push(s),
  });
  await cmd.parseAsync(args, { from: "user" });
  return { out: out.join("\n"), err: err.join("\n"), code };
}
