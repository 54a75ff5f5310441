/**
 * `./envsmith lm-data`: instances as language-model training data, in
 * the exact messages the LLM policy sends, with solver plans as reference
 * answers (for supervised fine-tuning) and the instance ids the reward
 * process answers to (for RL).
 *
 * ```sh
 * ./envsmith generate --config lm/configs/micro.yaml --count 4000 --seed 1 > train.jsonl
 * ./envsmith lm-data train.jsonl --prompt bare > sft.jsonl
 * ```
 *
 * One JSON object per instance:
 * `{id, agents, system, prompt, plan, solver, soc, makespan}`, where
 * `system` and `prompt` are the LLM policy's system and user messages and
 * `plan` is the reference answer (`Agent 0: R R D` lines, from CBS/PP,
 * replayed through the dynamics before it is written), or `null` when no
 * solver solves the instance within its horizon. `--prompt bare` is the
 * public benchmark's prompt without our rules block (the LLM policy's
 * `prompt: bare`); `full` (default) adds the rules and answer format.
 *
 * @module
 */
import { Command, Option } from "@commander-js/extra-typings";
import type { SolverName } from "../mapf/solve.ts";
import type { PromptStyle } from "../policy/llm_policy.ts";
import { lmRow } from "../nodes/lm_rows.ts";
import { type MapfCliIo, mapfIo, readInstanceInput } from "./_mapf.ts";

/** The `lm-data` subcommand. */
export function lmDataCommand(io: MapfCliIo = mapfIo) {
  return new Command("lm-data")
    .description(
      "Instances as LM training data: the LLM policy's messages plus a solver's reference plan (JSON lines)",
    )
    .argument("[file]", "instances as JSON lines (default: stdin)")
    .addOption(
      new Option(
        "--prompt <style>",
        "full (rules and answer format) or bare (the benchmark's prompt alone)",
      )
        .choices(["full", "bare"] as const).default("full" as const),
    )
    .addOption(
      new Option(
        "--solver <name>",
        "pp, cbs (optimal SoC) or auto (pp, then cbs)",
      )
        .choices(["pp", "cbs", "auto"] as const).default("auto" as const),
    )
    .addHelpText(
      "after",
      "\nExample:\n  ./envsmith generate --config lm/configs/micro.yaml --count 100 --seed 1 | ./envsmith lm-data --prompt bare > sft.jsonl",
    )
    .action(async (file, o) => {
      const instances = await readInstanceInput(io, file);
      let unsolved = 0;
      for (const inst of instances) {
        const row = lmRow(
          inst,
          o.prompt as PromptStyle,
          o.solver as SolverName,
        );
        if (row.plan === null) unsolved++;
        io.out(JSON.stringify(row));
      }
      io.err(
        `lm-data: ${instances.length} instances, ${unsolved} without a reference plan`,
      );
    });
}
