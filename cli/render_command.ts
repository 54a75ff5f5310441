/**
 * `./envsmith render`: instances as text prompts, compact grids or SVG.
 *
 * ```sh
 * ./envsmith generate --preset easy --count 1 | ./envsmith render --format text
 * ./envsmith render --format svg instances.jsonl --out-dir pictures/
 * ./envsmith render --format movingai instance.jsonl --out-dir maps/
 * ```
 *
 * Formats: `text` (the paper's benchmark prompt with our instructions;
 * `--bare` without them), `state` (compact grid with agents at their
 * starts), `svg` (one picture per instance), `movingai` (`.map` + `.scen`).
 * Text formats go to stdout, separated by blank lines; `svg` and `movingai`
 * write `<id>.svg` / `<id>.map` + `<id>.scen` into `--out-dir` (a single
 * SVG may go to stdout).
 *
 * @module
 */
import { Command, Option } from "@commander-js/extra-typings";
import { join } from "node:path";
import { UserError } from "@envsmith/engine/errors";
import type { Instance } from "../mapf/instance.ts";
import { exportMap, exportScen } from "../mapf/movingai.ts";
import { renderState } from "../mapf/render_state.ts";
import { renderSvg } from "../mapf/render_svg.ts";
import { renderPrompt } from "../mapf/render_text.ts";
import {
  type MapfCliIo,
  mapfIo,
  readInstanceInput,
  writeOutput,
} from "./_mapf.ts";

function _fileName(inst: Instance, i: number): string {
  const safe = inst.id.replace(/[^A-Za-z0-9._-]/g, "_");
  return safe === "" ? `instance-${i}` : safe;
}

/** The `render` subcommand. */
export function renderCommand(io: MapfCliIo = mapfIo) {
  return new Command("render")
    .description(
      "Render instances (JSON lines from FILE or stdin) as text prompts, grids, SVG or MovingAI files",
    )
    .argument("[file]", "instances as JSON lines (default: stdin)")
    .addOption(
      new Option("--format <format>", "output format").choices(
        ["text", "state", "svg", "movingai"] as const,
      )
        .default("text" as const),
    )
    .option(
      "--bare",
      "text: the benchmark prompt only, without our rules and answer format",
    )
    .option(
      "--out-dir <dir>",
      "svg/movingai: write one file (set) per instance here",
    )
    .addHelpText(
      "after",
      "\nExamples:\n  ./envsmith generate --preset easy --count 1 | ./envsmith render --format text\n  ./envsmith render --format svg instances.jsonl --out-dir pictures/",
    )
    .action(async (file, o) => {
      const instances = await readInstanceInput(io, file);
      if (o.format === "text" || o.format === "state") {
        const blocks = instances.map((inst) => {
          if (o.format === "state") {
            return `${inst.id}\n${
              renderState(inst, inst.starts.map(([r, c]) => r * inst.width + c))
            }`;
          }
          try {
            return renderPrompt(inst, o.bare ? { instructions: false } : {})
              .replace(/\n$/, "");
          } catch (e) {
            throw new UserError(`${inst.id}: ${(e as Error).message}`);
          }
        });
        io.out(blocks.join("\n\n"));
        return;
      }
      if (o.outDir === undefined) {
        if (o.format === "svg" && instances.length === 1) {
          io.out(renderSvg(instances[0]!).replace(/\n$/, ""));
          return;
        }
        throw new UserError(
          `--format ${o.format} writes one file per instance: give --out-dir DIR`,
        );
      }
      await Deno.mkdir(o.outDir, { recursive: true });
      const written: string[] = [];
      for (let i = 0; i < instances.length; i++) {
        const inst = instances[i]!;
        const name = _fileName(inst, i);
        if (o.format === "svg") {
          await writeOutput(join(o.outDir, `${name}.svg`), renderSvg(inst));
          written.push(`${name}.svg`);
        } else {
          await writeOutput(join(o.outDir, `${name}.map`), exportMap(inst));
          await writeOutput(
            join(o.outDir, `${name}.scen`),
            exportScen(inst, `${name}.map`),
          );
          written.push(`${name}.map`, `${name}.scen`);
        }
      }
      io.err(`wrote ${written.length} files to ${o.outDir}`);
    });
}
