/**
 * `./envsmith generate`: instances as JSON lines.
 *
 * ```sh
 * ./envsmith generate --preset easy --count 100 --seed 1 > easy.jsonl
 * ./envsmith generate --config my_config.yaml --count 512 --seed 3 --out train.jsonl
 * ./envsmith generate --suite corridors --count 200 --out corridors.jsonl
 * ```
 *
 * Writes one instance per line (see mapf/instance.ts) to stdout or `--out`,
 * and a one-line summary (draws, rejections by reason) to stderr. An invalid
 * config or one that cannot produce instances is reported without a stack
 * trace (exit code 2).
 *
 * @module
 */
import { Command } from "@commander-js/extra-typings";
import { UserError } from "@envsmith/engine/errors";
import {
  generate,
  GenerationError,
  type GenerationReport,
} from "../mapf/generator.ts";
import { instancesToJsonLines } from "../mapf/instance.ts";
import { generateSuite, getSuite, SUITE_NAMES } from "../mapf/suites.ts";
import { configFromFlags, intFlag, splitFlag } from "./_io.ts";
import { type MapfCliIo, mapfIo, writeOutput } from "./_mapf.ts";

/** One line summarising a generation report. */
export function summarizeReport(r: GenerationReport): string {
  const rej = Object.entries(r.rejected).filter(([, n]) => n > 0).map((
    [k, n],
  ) => `${n} ${k}`);
  return `${
    r.suite ? `suite ${r.suite}` : `config ${r.config_id}`
  }: ${r.accepted} instances from ${r.attempts} draws` +
    ` (rejection rate ${r.rejection_rate}${
      rej.length ? `: ${rej.join(", ")}` : ""
    }); mean SoC ${r.mean.soc}, makespan ${r.mean.makespan}, measured interaction ${r.mean.interaction}`;
}

/** The `generate` subcommand. */
export function generateCommand(io: MapfCliIo = mapfIo) {
  return new Command("generate")
    .description(
      "Generate MAPF-FrozenLake instances as JSON lines (one instance per line)",
    )
    .option("--preset <name>", "config: a preset (easy, medium, hard)")
    .option(
      "--config <file>",
      "config: a JSON or YAML file (a component, preset with overrides, or mixture)",
    )
    .option(
      "--suite <name>",
      `a benchmark suite (${
        SUITE_NAMES.join(", ")
      }), drawn from the suite seed space`,
    )
    .option(
      "--split <split>",
      "with --suite: validation (designing, tuning) or test (reported results)",
      splitFlag,
      "validation" as const,
    )
    .option(
      "--count <n>",
      "number of instances (default 100, or the suite's count; per cell for paper-grid)",
      intFlag("--count", 1),
    )
    .option("--seed <n>", "seed (0..2147483647)", intFlag("--seed", 0), 0)
    .option(
      "--max-attempts <n>",
      "draws per instance before giving up",
      intFlag("--max-attempts", 1),
      100,
    )
    .option("--out <file>", "write to a file instead of stdout")
    .addHelpText(
      "after",
      "\nExamples:\n  ./envsmith generate --preset easy --count 100 --seed 1 > easy.jsonl\n  ./envsmith generate --suite corridors --split test --count 200 --out corridors.jsonl",
    )
    .action(async (o) => {
      const given = [o.preset, o.config, o.suite].filter((x) =>
        x !== undefined
      ).length;
      if (given !== 1) {
        throw new UserError(
          "Give exactly one of --preset, --config and --suite.",
        );
      }
      if (o.seed > 0x7fffffff) {
        throw new UserError(
          `--seed must be at most 2147483647, got ${o.seed}`,
        );
      }
      let result;
      try {
        if (o.suite !== undefined) {
          let suite;
          try {
            suite = getSuite(o.suite);
          } catch (e) {
            throw new UserError((e as Error).message);
          }
          result = generateSuite(suite.name, {
            count: o.count ?? suite.count,
            seed: o.seed,
            split: o.split,
            maxAttempts: o.maxAttempts,
          });
        } else {
          const config = (await configFromFlags(o))!;
          result = generate(config, {
            count: o.count ?? 100,
            seed: o.seed,
            maxAttempts: o.maxAttempts,
          });
        }
      } catch (e) {
        if (e instanceof GenerationError) throw new UserError(e.message);
        throw e;
      }
      const lines = instancesToJsonLines(result.instances);
      if (o.out !== undefined) await writeOutput(o.out, lines);
      else io.out(lines.replace(/\n$/, ""));
      io.err(summarizeReport(result.report));
    });
}
