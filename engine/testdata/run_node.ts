/**
 * A minimal command line for the engine's own tests: `--cache DIR run-node
 * KEY` (what a Slurm job script runs) with the test kinds, so the executor
 * tests need nothing outside `engine/`.
 *
 * @module
 */
import { runNodeCommand } from "../cli/commands.ts";
import { UserError } from "../errors.ts";
import { kinds } from "./kinds.ts";

const args = [...Deno.args];
let cache = ".envsmith/cache";
const at = args.indexOf("--cache");
if (at >= 0) cache = args.splice(at, 2)[1] ?? cache;
if (args[0] !== "run-node" || !args[1]) {
  console.error("usage: run_node.ts --cache DIR run-node KEY | FILE NODE_ID");
  Deno.exit(2);
}
const controller = new AbortController();
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(sig, () => controller.abort());
}
try {
  Deno.exit(
    await runNodeCommand(
      {
        kinds,
        cache,
        output: {
          out: (l) => console.log(l),
          err: (l) => console.error(l),
        },
        signal: controller.signal,
      },
      args[1],
      args[2],
    ),
  );
} catch (e) {
  if (!(e instanceof UserError)) throw e;
  console.error(e.message);
  Deno.exit(2);
}
