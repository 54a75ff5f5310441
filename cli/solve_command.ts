/**
 * `./envsmith solve`: solve instances and print their plans.
 *
 * ```sh
 * ./envsmith generate --preset medium --count 5 | ./envsmith solve --solver cbs
 * ./envsmith solve --solver pp instances.jsonl --json > plans.jsonl
 * ```
 *
 * Reads JSON lines from FILE or stdin. For each instance prints its id,
 * sum-of-costs, makespan and solver, then the plan as one line per agent
 * (`Agent 0: R R D S`, the answer format of the text prompt); with `--json`,
 * one JSON object per instance instead. Every plan is replayed through the
 * dynamics (without slip) before it is printed. The exit code is 0 when
 * every instance was solved, 1 otherwise.
 *
 * @module
 */
import { Command, Option } from "@commander-js/extra-typings";
import { ACTION_LETTERS } from "../mapf/grid.ts";
import { compileInstance } from "../mapf/instance.ts";
import { pathsToPlan, replayPlan } from "../mapf/replay.ts";
import { solve, type SolverName } from "../mapf/solve.ts";
import { intFlag } from "./_io.ts";
import { type MapfCliIo, mapfIo, readInstanceInput } from "./_mapf.ts";

/** The `solve` subcommand; `onExit` receives 1 when some instance was not solved. */
export function solveCommand(
  io: MapfCliIo = mapfIo,
  onExit: (code: number) => void = (c) => (Deno.exitCode = c),
) {
  return new Command("solve")
    .description(
      "Solve instances (JSON lines from FILE or stdin); print SoC, makespan and the plan",
    )
    .argument("[file]", "instances as JSON lines (default: stdin)")
    .addOption(
      new Option(
        "--solver <name>",
        "pp (prioritized planning), cbs (optimal SoC) or auto (pp, then cbs)",
      )
        .choices(["pp", "cbs", "auto"] as const).default("auto" as const),
    )
    .option(
      "--max-nodes <n>",
      "CBS: high-level node limit",
      intFlag("--max-nodes", 1),
      5000,
    )
    .option("--json", "one JSON object per instance")
    .addHelpText(
      "after",
      "\nExamples:\n  ./envsmith generate --preset medium --count 5 | ./envsmith solve --solver cbs\n  ./envsmith solve --solver pp instances.jsonl --json > plans.jsonl",
    )
    .action(async (file, o) => {
      const instances = await readInstanceInput(io, file);
      let unsolved = 0;
      for (const [k, inst] of instances.entries()) {
        const name = inst.id || `instance ${k}`;
        const compiled = compileInstance(inst);
        const t0 = performance.now();
        const sol = solve(compiled, {
          solver: o.solver as SolverName,
          cbs: { maxNodes: o.maxNodes },
        });
        const ms = Math.round((performance.now() - t0) * 1000) / 1000;
        if (!sol) {
          unsolved++;
          if (o.json) {
            io.out(
              JSON.stringify({
                id: inst.id,
                solved: false,
                solver: o.solver,
                ms,
              }),
            );
          } else io.out(`${name}: not solved by ${o.solver} (${ms} ms)`);
          continue;
        }
        const plan = pathsToPlan(sol.paths, inst.width);
        const replay = replayPlan(compiled, plan, {
          noSlip: true,
          id: inst.id,
        });
        if (replay.outcome !== "success") {
          throw new Error(
            `internal: the ${sol.solver} plan of ${inst.id} replays as ${replay.outcome}`,
          );
        }
        const letters = plan.map((acts) => acts.map((a) => ACTION_LETTERS[a]!));
        if (o.json) {
          io.out(JSON.stringify({
            id: inst.id,
            solved: true,
            solver: sol.solver,
            soc: sol.soc,
            makespan: sol.makespan,
            within_horizon: sol.makespan <= inst.horizon,
            ms,
            plan: letters.map((l) => l.join("")),
          }));
        } else {
          io.out(
            `${name}: soc ${sol.soc} makespan ${sol.makespan} solver ${sol.solver} (${ms} ms)` +
              (sol.makespan > inst.horizon
                ? ` - longer than the horizon ${inst.horizon}`
                : ""),
          );
          letters.forEach((l, a) => io.out(`Agent ${a}: ${l.join(" ")}`));
        }
      }
      if (instances.length > 1 || unsolved > 0) {
        io.err(
          `${
            instances.length - unsolved
          } of ${instances.length} instances solved by ${o.solver}`,
        );
      }
      onExit(unsolved === 0 ? 0 : 1);
    });
}
