/**
 * The domain node kinds of envsmith.
 *
 * Node kinds bind the plain libraries (mapf/, policy/, engineer/, llm/) to the
 * generic engine. Each kind lives in its own file and exports `kind`; this
 * module lists them for the engine. The subcommands that are not node kinds
 * live in `cli/`, the HTML report in `report/`.
 *
 * @module
 */
import type { NodeKind } from "@envsmith/engine/kind";
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
