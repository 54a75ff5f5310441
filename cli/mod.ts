/**
 * The domain subcommands of envsmith that are not node kinds: `generate`,
 * `render`, `solve`, `reward`, `lm-data`, `train`, `evaluate`, `import`,
 * `diagnose`, `redesign` and `report` (over MAPF-FrozenLake files and
 * policies, outside any experiment), the `families` listing, and the
 * ranking of `engineer-bench`'s results.
 *
 * This is the door `cli.ts` and `mod.ts` use. No node kind, engine file or
 * library folder imports `cli/` (`architecture_test.ts` checks it), so
 * editing a subcommand never moves a cache key.
 *
 * @module
 */
import type { Command } from "@commander-js/extra-typings";
import type { Output } from "@envsmith/engine/cli";
import { domainKinds } from "../nodes/mod.ts";
import { reportCommand } from "../report/mod.ts";
import { redesignCommand } from "./redesign_command.ts";
import { diagnoseCommand } from "./diagnose_command.ts";
import { generateCommand } from "./generate_command.ts";
import { importCommand } from "./import_command.ts";
import { renderCommand } from "./render_command.ts";
import { solveCommand } from "./solve_command.ts";
import { rewardCommand } from "./reward_command.ts";
import { lmDataCommand } from "./lm_data_command.ts";
import { trainCommand } from "./train_command.ts";
import { evaluateCommand } from "./evaluate_command.ts";

export { familyListing, familySchemas } from "./families_command.ts";
export { engineerBenchRank } from "./engineer_bench_rank.ts";

// deno-lint-ignore no-explicit-any
type _AnyCommand = Command<any, any, any>;

/**
 * Factories of the domain subcommands (`./envsmith generate ...`); the
 * CLI passes its output (stdout/stderr, or a test's capture).
 */
export const commands: readonly ((output?: Output) => _AnyCommand)[] = [
  // one line per subcommand factory, e.g. `generateCommand,` from "./generate_command.ts"
  () => generateCommand(),
  () => renderCommand(),
  () => solveCommand(),
  () => rewardCommand(),
  () => lmDataCommand(),
  () => trainCommand(),
  () => evaluateCommand(),
  () => importCommand(),
  () => diagnoseCommand(),
  () => redesignCommand(),
  (output) => reportCommand(domainKinds, output),
];
