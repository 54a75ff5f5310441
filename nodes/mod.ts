/**
 * The domain node kinds and command-line subcommands of envsmith.
 *
 * Node kinds bind the plain libraries (mapf/, policy/, engineer/, llm/) to the
 * generic engine. Each kind lives in its own file and exports `kind`; this
 * module lists them for the engine and lists the domain subcommands for
 * `cli.ts`.
 *
 * @module
 */
import type { Command } from "@commander-js/extra-typings";
import type { NodeKind } from "@envsmith/engine/kind";
import type { Output } from "@envsmith/engine/cli";
import { generateKind } from "./generate.ts";
import { kind as policyInit } from "./policy_init.ts";
import { kind as train } from "./train.ts";
import { kind as rollout } from "./rollout.ts";
import { kind as evaluate } from "./evaluate.ts";
import { kind as diagnose } from "./diagnose.ts";
import { kind as mazeGenerate } from "./maze_generate.ts";
import { kind as mazeTrain } from "./maze_train.ts";
import { kind as mazeEvaluate } from "./maze_evaluate.ts";
import { kind as lmInit } from "./lm_init.ts";
import { kind as trainLm } from "./lm_train.ts";
import { redesignKind } from "./redesign.ts";
import { kind as generateSizes } from "./generate_sizes.ts";
import { redesignSizesKind } from "./redesign_sizes.ts";
import { kind as programGenerate } from "./program_generate.ts";
import { kind as programTrain } from "./program_train.ts";
import { kind as programEvaluate } from "./program_evaluate.ts";
import { transitions } from "./transitions.ts";
import { candidate as learnedCandidate } from "./learned_candidate.ts";
import { hindsight } from "./hindsight.ts";
import { fit as learnedFit } from "./learned_fit.ts";
import { engineerBenchKind } from "./engineer_bench.ts";
import { sizeEngineers } from "./size_engineers.ts";
import { engineers } from "./engineers.ts";
import type { EngineerRegistry } from "../engineer/registry.ts";
import type { FamilyRegistry } from "../families/registry.ts";
import { families as builtinFamilies } from "./families.ts";
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
import { reportCommand } from "./report_command.ts";

/**
 * Every domain node kind, in the order `--help` lists them, with the
 * `redesign` kind over `registry` (the CLI passes a registry per invocation,
 * into which plugin modules register their engineers).
 */
export function domainKinds(
  registry: EngineerRegistry,
  families: FamilyRegistry = builtinFamilies,
  // deno-lint-ignore no-explicit-any
): NodeKind<any>[] {
  return [
    // one line per kind, e.g. `generate,` imported from "./generate.ts"
    generateKind(families),
    policyInit,
    train,
    rollout,
    evaluate,
    diagnose,
    redesignKind(registry, families),
    lmInit,
    trainLm,
    generateSizes,
    redesignSizesKind(sizeEngineers),
    mazeGenerate,
    mazeTrain,
    mazeEvaluate,
    programGenerate,
    programTrain,
    programEvaluate,
    transitions,
    learnedCandidate,
    hindsight,
    learnedFit,
    engineerBenchKind(registry),
  ];
}

/** Every domain node kind, the `redesign` kind over the built-in engineers. */
// deno-lint-ignore no-explicit-any
export const kinds: readonly NodeKind<any>[] = domainKinds(engineers);

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
