/**
 * `./envsmith import`: instances from the paper's benchmark prompts or
 * from MovingAI files, as JSON lines.
 *
 * ```sh
 * # one prompt per file, or a JSON-lines dump of the benchmark ({"sample_id", "text"} per line)
 * ./envsmith import --format prompt benchmark.jsonl > paper.jsonl
 * ./envsmith import --format movingai room.map room.scen --agents 8 > room.jsonl
 * ```
 *
 * Each imported instance gets a reference from the solvers and a horizon of
 * `--horizon-factor` (default 3) times its makespan, or `--horizon` steps.
 * Holes are impassable (`--holes blocked`, the benchmark's reading) unless
 * `--holes lethal` is given.
 *
 * `--suite paper-grid` reads the benchmark file as envsmith's `paper-grid`
 * suite (mapf/paper_grid_import.ts): ids, cells, modes and exact optima as
 * the generated grid has them, every record checked first; a bad record is
 * one line naming it and its field, and nothing is written.
 *
 * @module
 */
import { Command, Option } from "@commander-js/extra-typings";
import { UserError } from "@envsmith/engine/errors";
import {
  type Instance,
  InstanceError,
  instancesToJsonLines,
} from "../mapf/instance.ts";
import { importMovingAI, MovingAIError } from "../mapf/movingai.ts";
import { parsePrompt, PromptParseError } from "../mapf/render_text.ts";
import {
  GridImportError,
  importGridRecords,
} from "../mapf/paper_grid_import.ts";
import { intFlag } from "./_io.ts";
import { type MapfCliIo, mapfIo, readInput, writeOutput } from "./_mapf.ts";

/** The `import` subcommand. */
export function importCommand(io: MapfCliIo = mapfIo) {
  return new Command("import")
    .description(
      "Import benchmark prompts or MovingAI .map/.scen files as instance JSON lines",
    )
    .argument(
      "<file>",
      "a prompt text file, a JSON-lines file of {sample_id, text}, or a .map file",
    )
    .argument("[scen]", "movingai: the .scen file")
    .addOption(
      new Option("--format <format>", "input format").choices(
        ["prompt", "movingai"] as const,
      ).makeOptionMandatory(),
    )
    .option(
      "--agents <n>",
      "movingai: use the first N scenario lines",
      intFlag("--agents", 1),
    )
    .addOption(
      new Option("--holes <mode>", "hole mode").choices(
        ["lethal", "blocked"] as const,
      ).default("blocked" as const),
    )
    .addOption(
      new Option("--collision <mode>", "collision mode").choices(
        ["fail", "block"] as const,
      ).default("fail" as const),
    )
    .option(
      "--horizon-factor <x>",
      "horizon as a factor of the reference makespan",
      parseFloat,
      3,
    )
    .option("--horizon <steps>", "absolute horizon", intFlag("--horizon", 1))
    .addOption(
      new Option(
        "--suite <name>",
        "prompt: read the file as this suite (the paper's benchmark grid: checked record by record, exact optima)",
      ).choices(["paper-grid"] as const),
    )
    .option("--out <file>", "write to a file instead of stdout")
    .addHelpText(
      "after",
      "\nExamples:\n  ./envsmith import --format prompt benchmark.jsonl > paper.jsonl\n  ./envsmith import --format prompt --suite paper-grid benchmark.jsonl --out grid.jsonl\n  ./envsmith import --format movingai room.map room.scen --agents 8 > room.jsonl",
    )
    .action(async (file, scen, o) => {
      const common = {
        holes: o.holes,
        collision: o.collision,
        horizonFactor: o.horizonFactor,
        ...(o.horizon !== undefined ? { horizonSteps: o.horizon } : {}),
      };
      let out: Instance[];
      try {
        if (o.suite !== undefined && o.format !== "prompt") {
          throw new UserError("--suite goes with --format prompt");
        }
        if (o.format === "prompt" && o.suite !== undefined) {
          out = _importGrid(file, await readInput(io, file));
        } else if (o.format === "prompt") {
          out = _importPrompts(file, await readInput(io, file), common);
        } else {
          if (scen === undefined) {
            throw new UserError(
              "--format movingai needs the .map and the .scen file",
            );
          }
          const id = file.replace(/^.*\//, "").replace(/\.map$/, "");
          out = [importMovingAI(
            await readInput(io, file),
            await readInput(io, scen),
            {
              id,
              ...common,
              ...(o.agents !== undefined ? { agents: o.agents } : {}),
            },
          )];
        }
      } catch (e) {
        if (
          e instanceof PromptParseError || e instanceof MovingAIError ||
          e instanceof InstanceError
        ) {
          throw new UserError(`${file}: ${e.message}`);
        }
        throw e;
      }
      const unsolved = out.filter((i) => i.reference === null).length;
      const lines = instancesToJsonLines(out);
      if (o.out !== undefined) await writeOutput(o.out, lines);
      else io.out(lines.replace(/\n$/, ""));
      io.err(
        `imported ${out.length} instances${
          unsolved ? ` (${unsolved} without a solver reference)` : ""
        }`,
      );
    });
}

/** The paper's benchmark file (JSON lines of `{sample_id, text}`) as the paper-grid suite. */
function _importGrid(file: string, text: string): Instance[] {
  const records = text.split("\n").flatMap((l, i) => {
    if (l.trim() === "") return [];
    let row: { sample_id?: unknown; id?: unknown; text?: unknown };
    try {
      row = JSON.parse(l);
    } catch (e) {
      throw new UserError(
        `${file} line ${i + 1}: not a JSON record {sample_id, text} (${
          (e as Error).message
        })`,
      );
    }
    if (row === null || typeof row !== "object" || Array.isArray(row)) {
      throw new UserError(
        `${file} line ${i + 1}: not a JSON record {sample_id, text}`,
      );
    }
    return [{ line: i + 1, id: row.sample_id ?? row.id, text: row.text }];
  });
  try {
    return importGridRecords(records);
  } catch (e) {
    if (e instanceof GridImportError) {
      throw new UserError(
        `${file}${e.line > 0 ? " " : ": "}${e.message}`,
      );
    }
    throw e;
  }
}

/** Instances of a prompt text file, or of a JSON-lines file of `{sample_id, text}`. */
function _importPrompts(
  file: string,
  text: string,
  common: Omit<Parameters<typeof parsePrompt>[1], "id">,
): Instance[] {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  const jsonl = lines.length > 0 &&
    lines.every((l) => l.trimStart().startsWith("{"));
  if (!jsonl) {
    const id = file.replace(/^.*\//, "").replace(/\.[^.]*$/, "");
    return [parsePrompt(text, { id, ...common })];
  }
  return lines.map((l, i) => {
    let row: { sample_id?: unknown; id?: unknown; text?: unknown };
    try {
      row = JSON.parse(l);
    } catch (e) {
      throw new UserError(
        `${file} line ${i + 1}: not JSON (${(e as Error).message})`,
      );
    }
    if (typeof row.text !== "string") {
      throw new UserError(`${file} line ${i + 1}: no "text" field`);
    }
    const id = typeof row.sample_id === "string"
      ? row.sample_id
      : typeof row.id === "string"
      ? row.id
      : `prompt-${i}`;
    try {
      return parsePrompt(row.text, { id, ...common });
    } catch (e) {
      if (e instanceof PromptParseError) {
        throw new UserError(`${file} line ${i + 1} (${id}): ${e.message}`);
      }
      throw e;
    }
  });
}
