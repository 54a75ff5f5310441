#!/usr/bin/env -S deno run -A
/**
 * The envsmith command line. Every `deno task` goes through it:
 * `./envsmith <subcommand> ...` reaches every subcommand.
 *
 * @module
 */
import { Command, CommanderError, Option } from "@commander-js/extra-typings";
import { resolve } from "node:path";
import { domainKinds, kinds as defaultDomainKinds } from "./nodes/mod.ts";
import {
  commands as domainCommands,
  engineerBenchRank,
  familyListing,
  familySchemas,
} from "./cli/mod.ts";
import { engineerPluginHandlers, projectEngineers } from "./nodes/engineers.ts";
import { familyPluginHandlers, projectFamilies } from "./nodes/families.ts";
import type { FamilyRegistry } from "./families/registry.ts";
import { paramDescription } from "./engineer/engineer_kind.ts";
import { engineerFamilies, requiredParams } from "./engineer/registry.ts";
import type { EngineerRegistry } from "./engineer/registry.ts";
import { missingFileMessage } from "@envsmith/engine/suggest";
import {
  CorruptEntryError,
  ExperimentError,
  ExperimentSyntaxError,
  UserError,
} from "@envsmith/engine/errors";
import { LIMITS, parseLimits } from "@envsmith/engine/limits";
import type { NodeKind } from "@envsmith/engine/kind";
import {
  type LoadedPlugin,
  loadPlugins,
  type PluginHandler,
  writeExperimentSchema,
} from "@envsmith/engine/compile";
import { cacheDir } from "@envsmith/engine/cache";
import { builtinKinds, type Reporter } from "@envsmith/engine/run";
import {
  builtinExecutors,
  type ExecutorKind,
  registerExecutors,
} from "@envsmith/engine/executor";
import {
  cacheExportCommand,
  cacheGcCommand,
  cacheImportCommand,
  cacheVerifyCommand,
  type CommandContext,
  consoleOutput,
  importResultsBundle,
  type Output,
  planCommand,
  pluginSummary,
  runCommand,
  runNodeCommand,
  runsCommand,
  runsDiffCommand,
  showCommand,
  statusCommand,
  tablesCommand,
} from "@envsmith/engine/cli";
import { fsProblem } from "@envsmith/engine";
import { fileURLToPath as fromFileUrl, pathToFileURL } from "node:url";
import {
  EXPERIMENT_EXTENSIONS,
  EXPERIMENTS_DIR,
  SHIPPED_BUNDLE,
  SHIPPED_BUNDLES,
} from "./nodes/project_paths.ts";
import { serveLlmCommand } from "./llm/serve_llm_command.ts";

/**
 * The subcommands besides the engine's: the domain ones (`cli/mod.ts`)
 * and `serve-llm` (an OpenAI-compatible server over a GGUF file).
 */
export const subcommands: NonNullable<MainOptions["commands"]> = [
  ...domainCommands,
  () => _serveLlm(),
];

/**
 * `serve-llm` with its example in the launcher's form. Its module keeps
 * its own older example: the served engineer starts that file, so it is in
 * the code digest of every redesign, and editing it would move their keys.
 */
function _serveLlm() {
  const c = serveLlmCommand();
  // commander's Command is an EventEmitter; addHelpText listens on
  // "afterHelp" (the typings do not show the emitter's methods)
  (c as unknown as { removeAllListeners(event: string): void })
    .removeAllListeners("afterHelp");
  return c.addHelpText(
    "after",
    "\nExample:\n  ./envsmith serve-llm --gguf model.gguf --port 8080 --threads 1",
  );
}

/** Options of {@linkcode main}. */
export interface MainOptions {
  /** Kinds besides the built-in and domain ones. */
  readonly kinds?: readonly NodeKind[];
  /** Output. @default stdout/stderr */
  readonly output?: Output;
  /** Domain subcommand factories. @default {@linkcode subcommands} */
  // deno-lint-ignore no-explicit-any
  readonly commands?: readonly ((output?: Output) => Command<any, any, any>)[];
  /** Progress reporter of runs. @default live lines on a terminal, plain lines otherwise */
  readonly reporter?: Reporter;
  /**
   * Executors besides the built-in ones, registered as a plugin module's
   * `executors` export is (names must be new).
   */
  readonly executors?: readonly ExecutorKind[];
  /**
   * Environment lookup of the commands (`requires_env`, and the PATH the
   * executor's programs are looked up on). @default Deno.env.get
   */
  readonly env?: (name: string) => string | undefined;
}

const ABLATE_FILE = "experiments/ablate-context.yaml";

/**
 * Deno arguments that start this CLI on another machine (the Slurm
 * executor's jobs): the same module, the deno.json beside it, and the
 * extra kind and plugin modules of this invocation.
 */
function _cliCommand(
  extraKindModules: readonly string[],
  pluginModules: readonly string[] = [],
): string[] {
  const url = new URL(import.meta.url);
  const main = url.protocol === "file:" ? fromFileUrl(url) : url.href;
  const args = ["run", "-A"];
  if (url.protocol === "file:") {
    const config = fromFileUrl(new URL("./deno.json", url));
    try {
      Deno.statSync(config);
      args.push("--config", config);
    } catch { /* none: deno finds one from the working directory */ }
  }
  args.push(main);
  for (const m of new Set(extraKindModules)) args.push("--kinds", m);
  for (const m of new Set(pluginModules)) args.push("--plugins", m);
  return args;
}

/** `--executor`: its help lists the registered executors (built-in and registered ones). */
function _executorOption(executors: readonly ExecutorKind[]) {
  return new Option(
    "--executor <name>",
    `where nodes run (default: the experiment's executor block, else ${
      executors[0]?.name ?? "local"
    }). ${executors.map((e) => `${e.name}: ${e.description}`).join(". ")}.`,
  ).env("ENVSMITH_EXECUTOR");
}

/** The `--set PATH=VALUE` option (repeatable) of plan, run, status and tables. */
function _setOption() {
  return new Option(
    "--set <path=value...>",
    "override a value of the experiment file (repeatable; the value is YAML; a list where the file has one takes a,b; a trial: its tables are written as NAME.trial-DIGEST), e.g. --set curriculum.each.policy.with.samples=60000 --set matrix.seed=1,2",
  ).argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]);
}

/** The context of a command with its `--set` overrides. */
function _withSets(
  ctx: CommandContext,
  sets: readonly string[] | undefined,
): CommandContext {
  return sets?.length ? { ...ctx, overrides: sets } : ctx;
}

/** Whether `path` is an existing file (an experiment could be named "diff"). */
function existsSyncFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** An experiment file argument: it must exist (else a did-you-mean error). */
function _file(v: string): string {
  const problem = missingFileMessage(v, "experiment file", {
    extensions: EXPERIMENT_EXTENSIONS,
  });
  if (problem !== null) throw new UserError(problem);
  return v;
}

/** A repeatable experiment file argument. */
function _files(v: string, prev: string[] | undefined): string[] {
  return [...(prev ?? []), _file(v)];
}

function _int(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) {
      throw new UserError(`${name} must be a positive integer, got "${v}"`);
    }
    return n;
  };
}

/** The global options. */
interface _Globals {
  cache?: string | undefined;
  kinds?: string[] | undefined;
  plugins?: string[] | undefined;
  limit?: string[] | undefined;
}

/** The context of one invocation: the engine's, and this project's engineer registry. */
export interface ProjectContext extends CommandContext {
  /** The engineers `engineer:` may name (built-in and the plugins'). */
  readonly engineers: EngineerRegistry;
  /** The environment families `family:` may name (built-in and the plugins'). */
  readonly families?: FamilyRegistry;
}

/** Builds the commander program; `run` receives the context of each invocation. */
export function createProgram(
  makeContext: (globals: _Globals) => Promise<ProjectContext>,
  setCode: (code: number) => void,
  executors: readonly ExecutorKind[] = builtinExecutors,
): Command {
  const program = new Command()
    .name("envsmith")
    .description(
      "Declarative experiments for LLM-designed RL training environments: plan, run, cache, tables.",
    )
    .option(
      "--cache <dir>",
      "cache directory (default: $ENVSMITH_CACHE or .envsmith/cache)",
    )
    .addOption(
      new Option(
        "--kinds <module>",
        "extra node-kind module exporting `kinds` or `kind` (repeatable; env: comma-separated)",
      )
        .env("ENVSMITH_KINDS")
        .argParser((
          v: string,
          prev: string[] | undefined,
        ) => [...(prev ?? []), ...v.split(",").filter((x) => x)]),
    )
    .addOption(
      new Option(
        "--plugins <module>",
        "plugin module exporting engineers, kinds and/or executors to register (repeatable; env: comma-separated); experiment files name theirs in plugins:",
      )
        .env("ENVSMITH_PLUGINS")
        .argParser((
          v: string,
          prev: string[] | undefined,
        ) => [...(prev ?? []), ...v.split(",").filter((x) => x)]),
    )
    .addOption(
      new Option(
        "--limit <name=n>",
        `raise a resource limit of experiment files (repeatable; env: comma-separated); names: ${
          LIMITS.map((l) => l.name).join(", ")
        }`,
      )
        .env("ENVSMITH_LIMITS")
        .argParser((
          v: string,
          prev: string[] | undefined,
        ) => [...(prev ?? []), ...v.split(",").filter((x) => x)]),
    )
    .addHelpText(
      "after",
      `
Examples:
  ./envsmith plan experiments/quick.yaml
  ./envsmith run experiments/quick.yaml --jobs 2
  ./envsmith ablate
  ./envsmith engineers --plugins my_engineers.ts   # the engineers and their parameters`,
    );

  const env: _Env = {
    ctxOf: (cmd: Command) => makeContext(cmd.optsWithGlobals() as _Globals),
    setCode,
    executors,
  };
  _addRunCommands(program, env);
  _addEngineerBenchCommand(program, env);
  _addInspectCommands(program, env);
  _addTableCommands(program, env);
  _addCacheCommands(program, env);
  return program;
}

/** What the subcommands' actions need. */
interface _Env {
  /** The context of an invocation. */
  readonly ctxOf: (cmd: Command) => Promise<ProjectContext>;
  /** Sets the exit code. */
  readonly setCode: (code: number) => void;
  /** The registered executors (for `--executor`'s help). */
  readonly executors: readonly ExecutorKind[];
}

/** `run`, `run-node`, `ablate`. */
function _addRunCommands(
  program: Command,
  { ctxOf, setCode, executors }: _Env,
): void {
  program.command("run")
    .description("run every node that is not cached (parallel; resumable)")
    .argument("<file>", "experiment file", _file)
    .option(
      "-j, --jobs <n>",
      "nodes in parallel (default: number of cores)",
      _int("--jobs"),
    )
    .option(
      "--only <node...>",
      "only these nodes (ids, plain ids, groups or * globs) and their inputs",
    )
    .option("--tables", "print the experiment's tables afterwards")
    .addOption(_executorOption(executors))
    .addOption(_setOption())
    .addHelpText(
      "after",
      "\nExamples:\n  ./envsmith run experiments/quick.yaml --jobs 2 --tables\n  ./envsmith run experiments/template.yaml --set curriculum.each.policy.with.samples=60000\n  ./envsmith run experiments/quick.yaml --executor slurm --cache /shared/envsmith-cache",
    )
    .action(async (file, o, cmd) => {
      const ctx = _withSets(await ctxOf(cmd as unknown as Command), o.set);
      const r = await runCommand(ctx, file, {
        ...(o.jobs ? { jobs: o.jobs } : {}),
        ...(o.only ? { only: o.only } : {}),
        ...(o.executor ? { executor: o.executor } : {}),
      });
      let code = r.code;
      if (o.tables && code !== 130) {
        const t = await tablesCommand(ctx, [file], {});
        code = code || t;
      }
      setCode(code);
    });

  program.command("run-node")
    .description(
      "run exactly one node whose inputs are cached: by KEY (job spec written by run) or by FILE NODE_ID",
    )
    .argument(
      "<key-or-file>",
      "a node key, or an experiment file",
      (v: string) => /^[0-9a-f]{64}$/.test(v) ? v : _file(v),
    )
    .argument("[node]", "node id (with FILE)")
    .addHelpText(
      "after",
      "\nExamples:\n  ./envsmith run-node experiments/quick.yaml 'score[seed=1]'\n  ./envsmith run-node 3f2a…(64 hex digits)",
    )
    .action(async (a, b, _o, cmd) => {
      setCode(
        await runNodeCommand(await ctxOf(cmd as unknown as Command), a, b),
      );
    });

  program.command("ablate")
    .description(
      `run the context ablation (${ABLATE_FILE}) and print its tables`,
    )
    .option(
      "-j, --jobs <n>",
      "nodes in parallel (default: number of cores)",
      _int("--jobs"),
    )
    .addOption(_executorOption(executors))
    .addHelpText("after", "\nExample:\n  ./envsmith ablate --jobs 2")
    .action(async (o, cmd) => {
      try {
        Deno.statSync(ABLATE_FILE);
      } catch {
        throw new UserError(
          `${ABLATE_FILE} does not exist (yet): the context ablation experiment is not in this checkout. Run another experiment with: ./envsmith run experiments/<file>.yaml`,
        );
      }
      const ctx = await ctxOf(cmd as unknown as Command);
      const r = await runCommand(ctx, ABLATE_FILE, {
        ...(o.jobs ? { jobs: o.jobs } : {}),
        ...(o.executor ? { executor: o.executor } : {}),
      });
      let code = r.code;
      if (code !== 130) {
        code = code || await tablesCommand(ctx, [ABLATE_FILE], {});
      }
      setCode(code);
    });
}

/** The experiment `engineer-bench` reads by default. */
const LEARNED_FILE = "experiments/ablate-learned.yaml";

/**
 * `engineer-bench`: runs an experiment's `engineer_bench` nodes (and what
 * they need), prints its tables and the rank correlation of the
 * benchmark with the ablation's ranking where both have rows.
 */
function _addEngineerBenchCommand(
  program: Command,
  { ctxOf, setCode, executors }: _Env,
): void {
  program.command("engineer-bench")
    .description(
      "the cheap engineer benchmark: regret of each engineer's choice against the best change in hindsight, its table, and its rank correlation with the full ablation",
    )
    .argument("[file]", `experiment file (default ${LEARNED_FILE})`)
    .option(
      "-j, --jobs <n>",
      "nodes in parallel (default: number of cores)",
      _int("--jobs"),
    )
    .option("--out <dir>", "where CSV/JSON go (default: .envsmith/tables)")
    .option(
      "--import <bundle>",
      "first import this results bundle into the cache as computed results (cache import --trust: the shipped hindsight states and fitted models, so only the benchmark's own nodes run; a missing file is skipped; repeat for several); `./envsmith engineer-bench` imports results/extra.esb.gz",
      (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
    )
    .addOption(_executorOption(executors))
    .addOption(_setOption())
    .addHelpText(
      "after",
      "\nExamples:\n  ./envsmith engineer-bench   # experiments/ablate-learned.yaml, with the shipped hindsight states\n  ./envsmith engineer-bench bench/learned_micro.yaml --jobs 2",
    )
    .action(async (file, o, cmd) => {
      const f = file ?? LEARNED_FILE;
      const ctx = _withSets(await ctxOf(cmd as unknown as Command), o.set);
      // trusted: the benchmark builds on the shipped hindsight states and models
      for (const b of o.import ?? []) {
        await importResultsBundle(ctx, b, { trust: true });
      }
      const r = await runCommand(ctx, f, {
        only: ["engineer_bench*"],
        ...(o.jobs ? { jobs: o.jobs } : {}),
        ...(o.executor ? { executor: o.executor } : {}),
      });
      let code = r.code;
      if (code === 130) return setCode(code);
      const out = o.out ?? ".envsmith/tables";
      code = code || await tablesCommand(ctx, [f], { out });
      setCode(code || engineerBenchRank(f, out, (l) => console.log(l)));
    });
}

/** `plan`, `status`, `show`, `schema`. */
function _addInspectCommands(
  program: Command,
  { ctxOf, setCode, executors }: _Env,
): void {
  program.command("plan")
    .description(
      "list every node as cached / run / blocked / skipped, and why a node is not cached",
    )
    .argument("<file>", "experiment file", _file)
    .option(
      "--only <node...>",
      "only these nodes (ids, plain ids, groups or * globs) and their inputs",
    )
    .option("--json", "print JSON")
    .option("--no-cached", "hide cached nodes")
    .addOption(_executorOption(executors))
    .addOption(
      new Option(
        "--format <format>",
        "text (the list), or the graph collapsed by stage and variant: dot (Graphviz) or mermaid",
      ).choices(["text", "dot", "mermaid"] as const).default("text" as const),
    )
    .addOption(_setOption())
    .addHelpText(
      "after",
      "\nExamples:\n  ./envsmith plan experiments/quick.yaml --only score\n  ./envsmith plan experiments/template.yaml --set matrix.seed=1,2,3\n  ./envsmith plan experiments/ablate-context.yaml --format dot | dot -Tsvg > plan.svg",
    )
    .action(async (file, o, cmd) => {
      const ctx = _withSets(await ctxOf(cmd as unknown as Command), o.set);
      setCode(
        await planCommand(ctx, file, {
          ...(o.only ? { only: o.only } : {}),
          ...(o.executor ? { executor: o.executor } : {}),
          json: o.json === true,
          all: o.cached !== false,
          format: o.format,
        }),
      );
    });

  program.command("status")
    .description(
      "what the cache holds for each node and what the last run of the file as committed did (with --set: the last trial run with those overrides)",
    )
    .argument("<file>", "experiment file", _file)
    .addOption(_setOption())
    .addHelpText(
      "after",
      "\nExample:\n  ./envsmith status experiments/quick.yaml",
    )
    .action(async (file, o, cmd) => {
      setCode(
        await statusCommand(
          _withSets(await ctxOf(cmd as unknown as Command), o.set),
          file,
        ),
      );
    });

  program.command("runs")
    .description(
      "the runs of an experiment (when, wall time, nodes computed, what changed against the run before), or `runs diff A B`: changed parameters and table cells of two runs",
    )
    .argument(
      "<experiment>",
      "experiment file or name; or `diff` followed by two run ids (or unique parts of them)",
    )
    .argument("[runs...]", "with diff: runs A and B")
    .addHelpText(
      "after",
      "\nExamples:\n  ./envsmith runs experiments/template.yaml\n  ./envsmith runs diff 3f1c 9a2e   # unique parts of two run ids",
    )
    .action(async (experiment, runs, _o, cmd) => {
      const ctx = await ctxOf(cmd as unknown as Command);
      if (experiment === "diff" && !existsSyncFile("diff")) {
        if (runs.length !== 2) {
          throw new UserError(
            `runs diff takes two runs (ids or unique parts of them), got ${runs.length}: ./envsmith runs diff A B`,
          );
        }
        setCode(await runsDiffCommand(ctx, runs[0]!, runs[1]!));
        return;
      }
      if (runs.length) {
        throw new UserError(
          `runs takes one experiment (or: runs diff A B); got ${
            [experiment, ...runs].join(" ")
          }`,
        );
      }
      setCode(await runsCommand(ctx, experiment));
    });

  program.command("show")
    .description(
      "print what the cache holds for one node (its value, or a field of its value or report) as JSON",
    )
    .argument("<file>", "experiment file", _file)
    .argument("<node>", "node id, as plan lists it")
    .argument(
      "[path]",
      "field path: value (default), value.FIELD..., report...",
    )
    .addHelpText(
      "after",
      "\nExamples:\n  ./envsmith show experiments/quick.yaml 'score[context=full]' value.suites\n  ./envsmith show experiments/quick.yaml 'curriculum.1.config[context=full]' report.rationale",
    )
    .action(async (file, node, path, _o, cmd) => {
      setCode(
        await showCommand(
          await ctxOf(cmd as unknown as Command),
          file,
          node,
          path === undefined ? {} : { path },
        ),
      );
    });

  program.command("schema")
    .description("write the JSON Schema of experiment files (for YAML editors)")
    .option("--out <file>", "output file", "schemas/experiment.schema.json")
    .addHelpText(
      "after",
      "\nExample:\n  ./envsmith schema   # then: # yaml-language-server: $schema=../schemas/experiment.schema.json",
    )
    .action(async (o, cmd) => {
      const ctx = await ctxOf(cmd as unknown as Command);
      const n = writeExperimentSchema(
        ctx.kinds,
        o.out,
        ctx.executors ?? builtinExecutors,
      );
      const families = ctx.families === undefined
        ? []
        : familySchemas(ctx.families, o.out);
      ctx.output.err(
        `wrote ${o.out} (${n} node kinds, ${ctx.engineers.names().length} engineers)${
          families.length === 0 ? "" : ` and ${families.join(", ")}`
        }`,
      );
      setCode(0);
    });

  program.command("engineers")
    .description(
      "list the registered engineers (built-in and --plugins') with their parameters",
    )
    .addHelpText(
      "after",
      "\nExamples:\n  ./envsmith engineers\n  ./envsmith engineers --plugins examples/engineers/crowd.ts",
    )
    .action(async (_o, cmd) => {
      const ctx = await ctxOf(cmd as unknown as Command);
      for (const p of ctx.plugins ?? []) {
        ctx.output.out(`plugin ${p.module}: ${pluginSummary(p)}`);
      }
      const families = (ctx.families ?? projectFamilies()).names();
      for (const line of engineerListing(ctx.engineers, families)) {
        ctx.output.out(line);
      }
      setCode(0);
    });

  program.command("families")
    .description(
      "list the environment families (built-in and --plugins') with their dimensions: bounds, step, direction of difficulty",
    )
    .addHelpText(
      "after",
      "\nExamples:\n  ./envsmith families\n  ./envsmith families --plugins my_family.ts",
    )
    .action(async (_o, cmd) => {
      const ctx = await ctxOf(cmd as unknown as Command);
      for (const line of familyListing(ctx.families ?? projectFamilies())) {
        ctx.output.out(line);
      }
      setCode(0);
    });
}

/**
 * The engineers and their parameters, one block each:
 * `rules: a transparent rule-based curriculum ...` then `  name  description`
 * per parameter (required ones marked).
 */
export function engineerListing(
  engineers: EngineerRegistry,
  /** The registered families, named where an engineer supports any. */
  families: readonly string[] = [],
): string[] {
  const out: string[] = [];
  const every = families.length === 0
    ? "any"
    : `any (registered: ${families.join(", ")})`;
  for (const e of engineers.list()) {
    const fams = engineerFamilies(e);
    out.push(
      `${e.name}: ${e.description} [families: ${
        fams === "any" ? every : fams.join(", ")
      }]`,
    );
    const required = new Set(requiredParams(e));
    for (const key of Object.keys(e.params.entries)) {
      out.push(
        `  ${key}${required.has(key) ? " (required)" : ""}: ${
          paramDescription(e, key) ?? ""
        }`.trimEnd(),
      );
    }
  }
  return out;
}

/** `tables`. */
function _addTableCommands(program: Command, { ctxOf, setCode }: _Env): void {
  program.command("tables")
    .description(
      "print the experiments' tables from the cache (never runs anything); writes CSV and JSON",
    )
    .argument(
      "[files...]",
      "experiment files (default: every experiments/*.yaml with tables)",
      _files,
    )
    .option("--out <dir>", "where CSV/JSON go (default: .envsmith/tables)")
    .option(
      "--wide",
      "print every column and the full comparison grids (default: aggregates and a compact summary per comparison; per-suite numbers are in the CSV)",
    )
    .option(
      "--import <bundle>",
      `first import this results bundle into the cache: a file, or an http(s) URL (a release asset, a results branch's raw file; downloaded once into the cache) (a missing file is skipped; nothing cached is overwritten; repeat for several); \`./envsmith tables\` imports ${
        SHIPPED_BUNDLES.join(" and ")
      }`,
      (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
    )
    .option(
      "--memo-out <file>",
      "also write the table comparisons these tables used (remembered by their inputs' keys) to this gzip JSON file, to ship beside a results bundle as X.memo.json.gz next to X.esb.gz; with --import, the tables are built in a fresh cache holding only those bundles and also written to X.tables.json.gz, which tables then prints without importing while every key matches",
    )
    .addOption(_setOption())
    .addHelpText(
      "after",
      `\nExamples:\n  ./envsmith tables                                   # every experiment, with the shipped results\n  ./envsmith tables experiments/quick.yaml --out results/\n  ./envsmith tables --import ${SHIPPED_BUNDLE}`,
    )
    .action(async (files, o, cmd) => {
      const ctx = _withSets(await ctxOf(cmd as unknown as Command), o.set);
      if (o.set?.length && !files?.length) {
        throw new UserError(
          "--set changes one experiment file: name it (./envsmith tables experiments/FILE.yaml --set PATH=VALUE)",
        );
      }
      files ??= [];
      setCode(
        await tablesCommand(ctx, files, {
          experimentsDir: EXPERIMENTS_DIR,
          imports: o.import ?? [],
          ...(o.out ? { out: o.out } : {}),
          ...(o.wide ? { wide: true } : {}),
          ...(o.memoOut ? { memoOut: o.memoOut } : {}),
        }),
      );
    });
}

/** `cache export|import|verify|gc`. */
function _addCacheCommands(program: Command, { ctxOf, setCode }: _Env): void {
  const cache = program.command("cache").description(
    "inspect and move the cache",
  );
  cache.command("export")
    .description(
      "write a self-contained bundle of cache entries (and their blobs)",
    )
    .argument("<file>", "bundle file to write")
    .option("--only <what>", "json: entries only, without blobs")
    .option(
      "--filter <pattern...>",
      "only entries whose node id or kind matches (`*` globs), plus their inputs",
    )
    .option(
      "--experiment <file...>",
      "only the nodes of these experiment files (current keys)",
    )
    .option(
      "--blobs-of <pattern...>",
      "with --only json: still carry the blobs of these nodes of the --experiment files (ids, * globs; at most 16 MiB), e.g. the first seed's last-stage rollouts, so the report can draw failure cases",
    )
    .option(
      "--omit <kind:field...>",
      "leave these fields out of those kinds' entries (e.g. train:value.level_scores, which tables and report never read); such entries are exported marked imported, so no import uses them as cached results",
    )
    .option(
      "--compact",
      "write the compact format (outcomes as columns, brotli): a fraction of the gzip size, the same entries byte for byte; import recognises it",
    )
    .addHelpText(
      "after",
      "\nExample:\n  ./envsmith cache export results.esb --only json --experiment experiments/ablate-context.yaml",
    )
    .action(async (file, o, cmd) => {
      const ctx = await ctxOf(cmd as unknown as Command);
      setCode(
        await cacheExportCommand(ctx, file, {
          jsonOnly: o.only === "json",
          ...(o.filter ? { filter: o.filter } : {}),
          ...(o.experiment ? { experiments: o.experiment } : {}),
          ...(o.blobsOf ? { blobsOf: o.blobsOf } : {}),
          ...(o.compact ? { compact: true } : {}),
          ...(o.omit ? { omit: o.omit } : {}),
        }),
      );
    });
  cache.command("import")
    .description(
      "add the entries and blobs of a bundle to the cache (all checked first; existing entries are kept; entries are marked imported: tables shows them, run recomputes them)",
    )
    .argument("<file>", "bundle file", (v: string) => {
      const problem = missingFileMessage(v, "bundle");
      if (problem !== null) throw new UserError(problem);
      return v;
    })
    .option(
      "--trust",
      "use the bundle's complete entries as if computed here, and import its LLM reply caches (only for bundles from your own machines)",
    )
    .addHelpText(
      "after",
      "\nExamples:\n  ./envsmith cache import results.esb && ./envsmith tables\n  ./envsmith cache import from-cluster.esb.gz --trust",
    )
    .action(async (file, o, cmd) => {
      const ctx = await ctxOf(cmd as unknown as Command);
      setCode(await cacheImportCommand(ctx, file, { trust: o.trust === true }));
    });
  cache.command("verify")
    .description(
      "check the hash of every entry and blob; move corrupt ones aside",
    )
    .addHelpText(
      "after",
      "\nExample:\n  ./envsmith cache verify --cache /shared/envsmith-cache",
    )
    .action(async (_o, cmd) => {
      const ctx = await ctxOf(cmd as unknown as Command);
      setCode(await cacheVerifyCommand(ctx));
    });
  cache.command("gc")
    .description("remove entries and blobs that no run manifest references")
    .option("--dry-run", "only list what would be removed")
    .option(
      "--keep-runs <n>",
      "also remove all but the newest N manifests per experiment",
      _int("--keep-runs"),
    )
    .addHelpText("after", "\nExample:\n  ./envsmith cache gc --dry-run")
    .action(async (o, cmd) => {
      const ctx = await ctxOf(cmd as unknown as Command);
      setCode(
        await cacheGcCommand(ctx, {
          dryRun: o.dryRun === true,
          ...(o.keepRuns ? { keepRuns: o.keepRuns } : {}),
        }),
      );
    });
}

/**
 * Interrupts (SIGINT, SIGTERM) abort `controller`; a second one exits at
 * once. Returns the function that stops listening (and gives the signals
 * back their default action: ending the process at once). Commands call it
 * only around phases that stop cleanly on the abort (a run's scheduler), so
 * an interrupt during loading or planning, which do not yield to the event
 * loop, is never held back until they finish.
 */
function _listenForInterrupts(
  output: Output,
  controller: AbortController,
): () => void {
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts > 1) Deno.exit(130);
    output.err(
      "interrupt: stopping (finished nodes stay cached); press Ctrl-C again to quit at once",
    );
    controller.abort();
  };
  // SIGTERM (a batch system stopping this process: scancel, a time limit)
  // stops a run the same way: executors cancel their jobs, locks are
  // released, finished nodes stay cached.
  const onSigterm = () => {
    interrupts++;
    if (interrupts > 1) Deno.exit(143);
    output.err("terminated (SIGTERM): stopping; finished nodes stay cached");
    controller.abort();
  };
  const signals: [Deno.Signal, () => void][] = [];
  for (
    const [sig, f] of [["SIGINT", onSigint], ["SIGTERM", onSigterm]] as const
  ) {
    try {
      Deno.addSignalListener(sig, f);
      signals.push([sig, f]);
    } catch { /* not supported here */ }
  }
  return () => {
    for (const [sig, f] of signals) Deno.removeSignalListener(sig, f);
  };
}

/** What an invocation registered: kinds, executors, engineers and the plugin modules loaded. */
interface _Registries {
  readonly kinds: NodeKind[];
  readonly executors: ExecutorKind[];
  readonly engineers: EngineerRegistry;
  readonly families: FamilyRegistry;
  readonly handlers: Readonly<Record<string, PluginHandler>>;
  readonly plugins: readonly LoadedPlugin[];
}

/**
 * The registries of one invocation: built-in, domain and the caller's
 * kinds (names unique), a fresh engineer registry with the built-in
 * engineers, and what the `--kinds` and `--plugins` modules register.
 */
async function _registries(
  options: MainOptions,
  g: _Globals,
  registered: readonly ExecutorKind[],
): Promise<_Registries> {
  const engineers = projectEngineers();
  const families = projectFamilies();
  const kinds: NodeKind[] = [
    ...builtinKinds,
    ...domainKinds(engineers, families),
    ...(options.kinds ?? []),
  ];
  const seen = new Map<string, string>();
  for (const k of kinds) {
    const prev = seen.get(k.name);
    if (prev !== undefined && prev !== k.module) {
      throw new UserError(
        `Two node kinds are named "${k.name}" (${prev} and ${k.module}); rename one`,
      );
    }
    if (k.name === "stages") {
      throw new UserError(
        `A node kind cannot be named "stages" (${k.module}): it is the built-in stages construct`,
      );
    }
    seen.set(k.name, k.module);
  }
  const handlers = {
    ...engineerPluginHandlers(engineers),
    ...familyPluginHandlers(families),
  };
  const executors: ExecutorKind[] = [...registered];
  const plugins: LoadedPlugin[] = [];
  for (
    const [from, modules] of [
      ["--kinds", g.kinds ?? []],
      ["--plugins", g.plugins ?? []],
    ] as const
  ) {
    const set = await loadPlugins(modules, {
      from,
      baseDir: Deno.cwd(),
      kinds,
      executors,
      handlers,
    });
    kinds.push(...set.kinds);
    // loadPlugins checked that each has `create`: they are executor kinds.
    executors.push(...set.executors as readonly ExecutorKind[]);
    plugins.push(...set.modules);
  }
  return { kinds, executors, engineers, families, handlers, plugins };
}

/** Adds the domain subcommands; one broken factory must not take the engine's commands down. */
function _addDomainCommands(
  program: Command,
  options: MainOptions,
  output: Output,
): void {
  for (const make of options.commands ?? subcommands) {
    try {
      program.addCommand(make(output) as unknown as Command);
    } catch (e) {
      output.err(
        `warning: the subcommand factory ${
          make.name || make.toString().replace(/\s+/g, " ").slice(0, 60)
        } failed: ${(e as Error)?.message ?? e}`,
      );
    }
  }
}

/**
 * Commander writes through `output` and throws instead of exiting, in every
 * subcommand; after a usage error it prints the command's one-line usage and
 * where its help is, not the whole help (which scrolled the error away).
 */
function _configure(c: Command, output: Output, path: string[] = []): void {
  c.exitOverride();
  c.configureOutput({
    writeOut: (s) => output.out(s.replace(/\n$/, "")),
    writeErr: (s) => output.err(s.replace(/\n$/, "")),
  });
  const name = path.join(" ");
  const commands = c.commands.filter((x) =>
    !(x as { _hidden?: boolean })._hidden
  )
    .map((x) => x.name());
  c.showHelpAfterError(
    path.length === 0
      ? `Usage: envsmith [options] <command>  (commands: ${
        commands.join(", ")
      })\nHelp: ./envsmith --help, ./envsmith <command> --help`
      : `Usage: envsmith ${name} ${c.usage()}\nHelp: ./envsmith ${name} --help`,
  );
  for (const sub of c.commands) {
    _configure(sub as unknown as Command, output, [...path, sub.name()]);
  }
}

/** Runs the CLI on `args`; returns the exit code (never exits the process). */
export async function main(
  args: readonly string[],
  options: MainOptions = {},
): Promise<number> {
  const output = options.output ?? consoleOutput;
  let code = 0;
  const controller = new AbortController();
  let executors: ExecutorKind[];
  try {
    // The built-in executors go through the same registration as a
    // plugin module's.
    executors = registerExecutors(
      registerExecutors(
        [],
        builtinExecutors,
        "engine/run/executors/builtin.ts",
      ),
      options.executors ?? [],
      "main(): options.executors",
    );
  } catch (e) {
    output.err((e as Error).message);
    return 2;
  }
  const makeContext = async (g: _Globals): Promise<ProjectContext> => {
    const r = await _registries(options, g, executors);
    const builtin = new Set(
      [...builtinKinds, ...defaultDomainKinds].map((k) => k.module),
    );
    const extraModules = [
      ...(options.kinds ?? []).map((k) => k.module),
      ...(g.kinds ?? []).map((m) =>
        m.includes("://") ? m : pathToFileURL(resolve(m)).href
      ),
    ].filter((m) => !builtin.has(m));
    const pluginModules = (g.plugins ?? []).map((m) =>
      m.includes("://") ? m : pathToFileURL(resolve(m)).href
    );
    return {
      kinds: r.kinds,
      executors: r.executors,
      engineers: r.engineers,
      families: r.families,
      pluginHandlers: r.handlers,
      plugins: r.plugins,
      cache: cacheDir(g.cache),
      ...(g.limit ? { limits: parseLimits(g.limit.join(",")) } : {}),
      output,
      signal: controller.signal,
      interruptible: () => _listenForInterrupts(output, controller),
      command: _cliCommand(extraModules, pluginModules),
      ...(options.env ? { env: options.env } : {}),
      ...(options.reporter ? { reporter: options.reporter } : {}),
    };
  };
  const program = createProgram(makeContext, (c) => (code = c), executors);
  _addDomainCommands(program, options, output);
  _configure(program, output);
  try {
    await program.parseAsync([...args], { from: "user" });
    // domain subcommands (cli/*_command.ts) report their exit code via Deno.exitCode
    if (code === 0 && Deno.exitCode !== 0) code = Deno.exitCode;
  } catch (e) {
    // Exit codes: 0 ok (and --help), 1 failures (nodes, incomplete tables),
    // 2 usage and input errors, 3 internal errors, 130 interrupted.
    if (e instanceof CommanderError) code = e.exitCode === 0 ? 0 : 2;
    else if (
      e instanceof ExperimentError || e instanceof ExperimentSyntaxError ||
      e instanceof UserError
    ) {
      output.err(e.message);
      code = 2;
    } else if (e instanceof CorruptEntryError) {
      output.err(
        `${e.message}; the next run recomputes it (./envsmith cache verify checks every entry)`,
      );
      code = 1;
    } else if (fsProblem(e) !== null) {
      // A full, read-only or forbidden file system outside the places that
      // name their path and advice already: still one line, no stack.
      output.err(
        `${(e as Error).message}: ${
          fsProblem(e) === "full"
            ? "free some space"
            : "check that the path is writable"
        } (use --cache DIR for another cache directory)`,
      );
      code = 2;
    } else {
      output.err(`internal error: ${(e as Error)?.stack ?? String(e)}`);
      code = 3;
    }
  }
  return code;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
