/**
 * `./envsmith redesign`: one redesign step from the command line.
 *
 * ```sh
 * ./envsmith redesign --engineer rules --context full --preset easy --findings findings.json
 * ./envsmith redesign --engineer llm --context failures --config cfg.yaml --findings findings.json \
 *   --base-url http://127.0.0.1:11434/v1 --model qwen3:4b [--api-key-env OPENAI_API_KEY]
 * ./envsmith redesign --engineer llm --context none --preset easy --gguf qwen2.5-0.5b-instruct-q8_0.gguf
 * ENVSMITH_LLM_GGUF=model.gguf ./envsmith redesign --engineer llm --context none --preset easy
 * ```
 *
 * The llm engineer's model: `--gguf FILE` (a local model run in-process,
 * no server), or `--base-url URL --model M`; without either, the variable
 * `ENVSMITH_LLM_GGUF`, else `ENVSMITH_LLM_BASE_URL` and `ENVSMITH_LLM_MODEL`
 * (the variables the shipped experiments read).
 *
 * Prints the next config as JSON on stdout and the rationale (and events) on
 * stderr. The current config comes from `--preset`/`--config`, else from
 * the findings' `config`. With `llm`, an unusable reply or an unreachable
 * endpoint keeps the current config (exit 0, with a message); the command
 * exits non-zero only when no usable reply came and there is no current
 * config to keep. LLM replies are cached in `<cache>/aux/redesign/llm`, the
 * same cache the `redesign` node uses.
 *
 * @module
 */
import { Command, Option } from "@commander-js/extra-typings";
import { UserError } from "@envsmith/engine/errors";
import { CONTEXT_TYPES, type ContextType } from "../engineer/context.ts";
import { EngineerConfigError } from "../engineer/engineer_kind.ts";
import { engineers } from "../nodes/engineers.ts";
import { families } from "../nodes/families.ts";
import { LlmConfigError, LlmError } from "../llm/errors.ts";
import { type AnyEnvConfig, PRESETS } from "../schemas/env_config.ts";
import { FindingsError } from "../schemas/findings.ts";
import { LlmEndpointSchema } from "../schemas/llm.ts";
import { PROMPT_VARIANTS, type PromptVariant } from "../engineer/llm.ts";
import * as v from "valibot";
import {
  cacheOf,
  type CliIo,
  type ConfigFlags,
  configFromFlags,
  defaultIo,
  intFlag,
  type LlmFlags,
  readDataFile,
} from "./_io.ts";
import { redesign, type RedesignParams } from "../nodes/redesign.ts";

/** Exit code when no usable reply came and there was no config to keep. */
export const NO_CONFIG_EXIT = 4;

/**
 * The `redesign` subcommand. Long for a reason: one declaration per flag in
 * a single commander chain (the chain is what types the action's options);
 * the action is {@linkcode _redesignAction}.
 *
 * @param io Where to write (tests capture it).
 * @param onExit Receives the exit code (default: `Deno.exitCode`).
 */
export function redesignCommand(
  io: CliIo = defaultIo,
  onExit: (code: number) => void = (c) => (Deno.exitCode = c),
) {
  return new Command("redesign")
    .description(
      "Propose the next training config from findings (prints the config as JSON on stdout, the rationale on stderr)",
    )
    .addOption(
      new Option(
        "--engineer <name>",
        "environment engineer (scripted, blind and exec need parameters: run them in an experiment)",
      ).choices(engineers.names()).makeOptionMandatory(),
    )
    .addOption(
      new Option("--context <type>", "what the engineer sees").choices(
        CONTEXT_TYPES,
      ).default("full"),
    )
    .option("--preset <name>", "current config: a preset (easy, medium, hard)")
    .option("--config <file>", "current config: a JSON or YAML file")
    .option(
      "--findings <file>",
      "findings.json from `diagnose` (omit only with --context none)",
    )
    .option(
      "--history <file>",
      "JSON list of earlier findings (or {findings, config}), oldest first; read by --context full",
    )
    .option("--stage <n>", "stage index", intFlag("--stage", 0))
    .option(
      "--seed <n>",
      "seed of random/replay engineers",
      intFlag("--seed", 0),
      0,
    )
    .option(
      "--budget <chars>",
      "character budget of the context text",
      intFlag("--budget", 200),
    )
    .option("--base-url <url>", "llm: OpenAI-compatible base URL")
    .option("--model <name>", "llm: model name")
    .option(
      "--gguf <file>",
      "llm: a local GGUF model file, run in-process (default: $ENVSMITH_LLM_GGUF)",
    )
    .option(
      "--threads <n>",
      "llm --gguf: CPU threads (default 1)",
      intFlag("--threads", 1),
    )
    .option(
      "--context-size <tokens>",
      "llm --gguf: context size (default 8192)",
      intFlag("--context-size", 256),
    )
    .option(
      "--llm-seed <n>",
      "llm: sampling seed (default 0)",
      intFlag("--llm-seed", 0),
    )
    .option(
      "--max-tokens <n>",
      "llm: reply token limit (server default 4096; local: the rest of the context)",
      intFlag("--max-tokens", 1),
    )
    .addOption(
      new Option("--thinking <mode>", "llm: let a thinking model think")
        .choices(["on", "off"] as const),
    )
    .addOption(
      new Option("--prompt <variant>", "llm: prompt variant").choices(
        PROMPT_VARIANTS,
      ).default("neutral" as const),
    )
    .option(
      "--api-key-env <var>",
      "llm: NAME of the environment variable holding the API key",
    )
    .option("--temperature <t>", "llm: sampling temperature", parseFloat)
    .option(
      "--timeout-ms <ms>",
      "llm: timeout per HTTP attempt",
      intFlag("--timeout-ms", 1),
    )
    .option(
      "--max-retries <n>",
      "llm: HTTP retries",
      intFlag("--max-retries", 0),
    )
    .option(
      "--reasks <n>",
      "llm: re-asks after an invalid reply",
      intFlag("--reasks", 0),
    )
    .option("--offline", "llm: answer only from the reply cache")
    .option(
      "--report <file>",
      "also write the full report (diff, events, usage) as JSON",
    )
    .addHelpText(
      "after",
      "\nExamples:\n  ./envsmith redesign --engineer rules --context full --preset easy --findings findings.json\n  ENVSMITH_LLM_GGUF=model.gguf ./envsmith redesign --engineer llm --context none --preset easy",
    )
    .action((o, cmd) => _redesignAction(o, cmd, io, onExit));
}

/** The `redesign` action: current config, findings and history, one step, the output. */
async function _redesignAction(
  o: _Flags,
  cmd: { optsWithGlobals(): unknown },
  io: CliIo,
  onExit: (code: number) => void,
): Promise<void> {
  const given = await configFromFlags(o);
  const findings = await _findingsOf(o);
  const fromFindings = (findings as { config?: unknown } | null)?.config ??
    undefined;
  let current: AnyEnvConfig | unknown = given ?? fromFindings;
  const hasPrevious = current !== undefined && current !== null;
  if (!hasPrevious) {
    if (o.engineer !== "llm") {
      throw new UserError(
        "No current config: give --preset or --config (the findings carry none).",
      );
    }
    current = PRESETS.easy; // shown to the model only; never kept
  }
  const history = await _historyOf(o);
  const llm = o.engineer === "llm" ? _llmEndpoint(o, io) : undefined;
  const params: RedesignParams = {
    engineer: {
      name: o.engineer,
      ...(llm === undefined ? {} : {
        llm,
        prompt: o.prompt,
        ...(o.reasks === undefined ? {} : { reasks: o.reasks }),
      }),
    },
    context: o.context,
    config: current as RedesignParams["config"],
    findings,
    ...(history === undefined ? {} : { history }),
    ...(o.stage === undefined ? {} : { stage: o.stage }),
    ...(o.budget === undefined ? {} : { budget: o.budget }),
  };
  const result = await _redesignOnce(
    params,
    o.seed,
    `${cacheOf(io, cmd)}/aux/redesign`,
    llm,
  );
  const events = result.report.events as { type: string; detail: string }[];
  const fellBack = events.some((e) => e.type === "fallback");
  io.err(result.rationale);
  for (const e of events) io.err(`[${e.type}] ${e.detail}`);
  if (fellBack && !hasPrevious) {
    io.err(
      "redesign: no usable reply from the LLM and no current config to keep (give --preset or --config to fall back to it).",
    );
    onExit(NO_CONFIG_EXIT);
    return;
  }
  io.out(JSON.stringify(result.config, null, 2));
  if (o.report !== undefined) {
    await Deno.writeTextFile(
      o.report,
      JSON.stringify(result.report, null, 2) + "\n",
    );
  }
}

/** The flags the action reads (as commander parses them). */
interface _Flags extends ConfigFlags, LlmFlags {
  readonly engineer: string;
  readonly context: ContextType;
  readonly stage?: number | undefined;
  readonly seed: number;
  readonly budget?: number | undefined;
  readonly prompt: PromptVariant;
  readonly reasks?: number | undefined;
  readonly report?: string | undefined;
  readonly findings?: string | undefined;
  readonly history?: string | undefined;
  readonly timeoutMs?: number | undefined;
  readonly maxRetries?: number | undefined;
  readonly contextSize?: number | undefined;
  readonly llmSeed?: number | undefined;
  readonly maxTokens?: number | undefined;
  readonly thinking?: "on" | "off" | undefined;
}

/** `--findings`, or null with `--context none`. */
async function _findingsOf(o: _Flags): Promise<unknown> {
  if (o.findings !== undefined) {
    return await readDataFile(o.findings, "findings file");
  }
  if (o.context !== "none") {
    throw new UserError(
      `--findings is required with --context ${o.context} (use --context none to redesign blind).`,
    );
  }
  return null;
}

/** `--history`: a JSON list, or undefined without the flag. */
async function _historyOf(o: _Flags): Promise<unknown[] | undefined> {
  if (o.history === undefined) return undefined;
  const h = await readDataFile(o.history, "history file");
  if (!Array.isArray(h)) {
    throw new UserError(
      `${o.history}: the history must be a JSON list of findings`,
    );
  }
  return h;
}

/**
 * The llm engineer's endpoint from the flags, else the variables
 * `ENVSMITH_LLM_GGUF`, `ENVSMITH_LLM_BASE_URL`, `ENVSMITH_LLM_MODEL` and
 * `ENVSMITH_LLM_API_KEY`; one line naming the flags when there is no model.
 */
function _llmEndpoint(o: _Flags, io: CliIo): unknown {
  const env = (n: string) => (io.env ?? Deno.env.get)(n) || undefined;
  const gguf = o.gguf ??
    (o.baseUrl === undefined ? env("ENVSMITH_LLM_GGUF") : undefined);
  const remote = gguf === undefined
    ? {
      base_url: o.baseUrl ?? env("ENVSMITH_LLM_BASE_URL"),
      model: o.model ?? env("ENVSMITH_LLM_MODEL"),
      ...(o.apiKeyEnv === undefined
        ? (o.baseUrl === undefined && env("ENVSMITH_LLM_API_KEY")
          ? { api_key_env: "ENVSMITH_LLM_API_KEY" }
          : {})
        : { api_key_env: o.apiKeyEnv }),
      ...(o.timeoutMs === undefined ? {} : { timeout_ms: o.timeoutMs }),
      ...(o.maxRetries === undefined ? {} : { max_retries: o.maxRetries }),
    }
    : {
      gguf,
      ...(o.threads === undefined ? {} : { threads: o.threads }),
      ...(o.contextSize === undefined ? {} : { context_size: o.contextSize }),
    };
  const r = v.safeParse(LlmEndpointSchema, {
    ...remote,
    ...(o.temperature === undefined ? {} : { temperature: o.temperature }),
    ...(o.llmSeed === undefined ? {} : { seed: o.llmSeed }),
    ...(o.maxTokens === undefined ? {} : { max_tokens: o.maxTokens }),
    ...(o.thinking === undefined ? {} : { thinking: o.thinking }),
    ...(o.offline ? { offline: true } : {}),
  });
  if (!r.success) {
    throw new UserError(
      `--engineer llm needs a model: --gguf FILE (or ENVSMITH_LLM_GGUF=FILE), or --base-url URL and --model M: ${
        r.issues.map((i) => `${v.getDotPath(i) ?? ""} ${i.message}`.trim())
          .join("; ")
      }`,
    );
  }
  return r.output;
}

/** One redesign step; the errors a user can fix become one line. */
async function _redesignOnce(
  params: RedesignParams,
  seed: number,
  auxDir: string,
  llm: unknown,
): Promise<Awaited<ReturnType<typeof redesign>>> {
  try {
    return await redesign(params, seed, {
      engineers,
      families,
      auxDir,
      // A local model that cannot be loaded is an error, not a
      // passing outage of a server: only remote endpoints fall back.
      onEndpointError: typeof llm === "object" && llm !== null && "gguf" in llm
        ? "throw"
        : "fallback",
    });
  } catch (e) {
    if (
      e instanceof FindingsError || e instanceof LlmConfigError ||
      e instanceof EngineerConfigError ||
      e instanceof LlmError ||
      (e instanceof TypeError && e.name === "EnvConfigError")
    ) throw new UserError(e.message);
    throw e;
  }
}
