/**
 * The `report` subcommand: `./envsmith report [FILE...] [--out PATH]`.
 *
 * ```sh
 * ./envsmith report                                  # every experiments/*.yaml with tables
 * ./envsmith report experiments/quick.yaml --out quick.html
 * ```
 *
 * Writes one self-contained HTML file (default
 * `.envsmith/report/index.html`) from the cache alone; exits 1 when some
 * node the report needs is not in the cache (the page lists them with the
 * command that computes them), like `tables`.
 *
 * @module
 */
import { Command } from "@commander-js/extra-typings";
import { dirname, resolve } from "node:path";
import { missingFileMessage } from "@envsmith/engine/suggest";
import { UserError } from "@envsmith/engine/errors";
import { parseLimits } from "@envsmith/engine/limits";
import type { NodeKind } from "@envsmith/engine/kind";
import { loadPlugins } from "@envsmith/engine/compile";
import { cacheDir } from "@envsmith/engine/cache";
import { builtinKinds } from "@envsmith/engine/run";
import {
  type CommandContext,
  consoleOutput,
  experimentsWithTables,
  importResultsBundle,
  type Output,
  unkeyableReason,
} from "@envsmith/engine/cli";
import { buildReport, DEFAULT_REPORT_FILE, secretEnvValues } from "./build.ts";
import {
  engineerPluginHandlers,
  projectEngineers,
} from "../nodes/engineers.ts";
import {
  EXPERIMENT_EXTENSIONS,
  EXPERIMENTS_DIR,
  SHIPPED_BUNDLES,
} from "../nodes/project_paths.ts";
import type { EngineerRegistry } from "../engineer/registry.ts";

/** Options of {@linkcode runReport}. */
export interface RunReportOptions {
  /** Output file. @default {@linkcode DEFAULT_REPORT_FILE} */
  readonly out?: string;
  /** Failure cases per variant and source. @default 2 */
  readonly cases?: number;
  /** Results bundles to import into the cache first, in order (each skipped with a note when the file does not exist). */
  readonly import?: readonly string[];
}

/**
 * Builds and writes the report of `files` (default: every experiments/*.yaml
 * with tables). Returns 0, or 1 when nodes are missing from the cache.
 */
export async function runReport(
  ctx: CommandContext,
  files: readonly string[],
  options: RunReportOptions = {},
): Promise<number> {
  const list = files.length > 0 ? [...files] : [];
  if (files.length === 0) {
    // as `tables`: an experiment that cannot be keyed here is skipped, said
    for (const file of experimentsWithTables(EXPERIMENTS_DIR)) {
      const why = await unkeyableReason(ctx, file);
      if (why === undefined) list.push(file);
      else ctx.output.err(`skipped ${file}: ${why}`);
    }
  }
  if (list.length === 0) {
    throw new UserError(
      "report: no experiment file given and no experiments/*.yaml has tables; e.g. ./envsmith report experiments/quick.yaml",
    );
  }
  for (const bundle of options.import ?? []) {
    await importResultsBundle(ctx, bundle);
  }
  const out = options.out ?? DEFAULT_REPORT_FILE;
  const { html, experiments } = await buildReport(ctx, list, {
    redact: secretEnvValues(),
    ...(options.cases === undefined ? {} : { cases: options.cases }),
  });
  Deno.mkdirSync(dirname(resolve(out)), { recursive: true });
  Deno.writeTextFileSync(out, html);
  let missing = 0;
  for (const e of experiments) {
    missing += e.missing.length;
    if (e.missing.length) {
      ctx.output.err(
        `${e.file}: ${e.missing.length} node${
          e.missing.length > 1 ? "s are" : " is"
        } not in the cache; compute with: ${e.command}`,
      );
    }
  }
  ctx.output.err(
    `wrote ${out} (${
      Math.round(html.length / 1024)
    } KiB, ${experiments.length} experiment${
      experiments.length === 1 ? "" : "s"
    }${
      missing
        ? `, incomplete: ${missing} missing node${missing > 1 ? "s" : ""}`
        : ""
    })`,
  );
  return missing > 0 ? 1 : 0;
}

/**
 * Parses `--cases`: an integer >= 0. (The report needs no other flag parser
 * of `cli/`, and `report/` imports nothing of `cli/`, which wires it.)
 */
function _casesFlag(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) {
    throw new UserError(`--cases must be an integer >= 0, got "${v}"`);
  }
  return n;
}

/**
 * The `report` subcommand; `domainKinds` gives the domain kinds over an
 * engineer registry (the engine's built-in kinds and the `--kinds` and
 * `--plugins` modules are added).
 */
export function reportCommand(
  domainKinds: (engineers: EngineerRegistry) => readonly NodeKind[],
  output: Output = consoleOutput,
) {
  return new Command("report")
    .description(
      "write a self-contained HTML report (tables, learning curves, config trajectories, failure cases) from the cache",
    )
    .argument(
      "[files...]",
      "experiment files (default: every experiments/*.yaml with tables)",
      (v: string, prev: string[] | undefined) => {
        const problem = missingFileMessage(v, "experiment file", {
          extensions: EXPERIMENT_EXTENSIONS,
        });
        if (problem !== null) throw new UserError(problem);
        return [...(prev ?? []), v];
      },
    )
    .option("--out <path>", `output file (default: ${DEFAULT_REPORT_FILE})`)
    .option(
      "--cases <n>",
      "failure cases per variant and source (default 2)",
      _casesFlag,
    )
    .option(
      "--import <bundle>",
      `first import this results bundle into the cache (a missing file is skipped; nothing cached is overwritten; repeat for several); \`./envsmith report\` imports ${
        SHIPPED_BUNDLES.join(" and ")
      }`,
      (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
    )
    .addHelpText(
      "after",
      `\nExamples:\n  ./envsmith report                                   # every experiment, with the shipped results\n  ./envsmith report experiments/quick.yaml --out quick.html`,
    )
    .action(async (files, o, cmd) => {
      const g = cmd.optsWithGlobals() as {
        cache?: string;
        kinds?: string[];
        plugins?: string[];
        limit?: string[];
      };
      // The engineers of this invocation: the built-ins, and the plugins'
      // (`--plugins`, and each experiment file's `plugins:`).
      const engineers = projectEngineers();
      const handlers = engineerPluginHandlers(engineers);
      const base = [...builtinKinds, ...domainKinds(engineers)];
      const plugins = await loadPlugins(
        [...g.kinds ?? [], ...g.plugins ?? []],
        {
          from: "--plugins",
          baseDir: Deno.cwd(),
          kinds: base,
          executors: [],
          handlers,
        },
      );
      const ctx: CommandContext = {
        kinds: [...base, ...plugins.kinds],
        pluginHandlers: handlers,
        cache: cacheDir(g.cache),
        ...(g.limit ? { limits: parseLimits(g.limit.join(",")) } : {}),
        output,
      };
      Deno.exitCode = await runReport(ctx, files ?? [], {
        ...(o.out ? { out: o.out } : {}),
        ...(o.cases !== undefined ? { cases: o.cases } : {}),
        ...(o.import !== undefined ? { import: o.import } : {}),
      });
    });
}
