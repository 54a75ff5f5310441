/**
 * The `exec` engineer: any program is an engineer.
 *
 * ```yaml
 * engineer: { name: exec, command: [python3, engineers/threshold.py], timeout: 60 }
 * ```
 *
 * - **Input.** The program gets one JSON object on stdin
 *   ({@linkcode ExecEngineerInput}): the context type, the structured
 *   context an LLM engineer gets (`stats`, `failures`, `behavior`,
 *   `history`, each `null` when the context type leaves it out), the
 *   current `config`, the `reply_schema` and `config_schema` (JSON Schema),
 *   the dimension `bounds`, the rendered `context_text` (what an LLM reads),
 *   the stage, a seed, and on a re-ask the `errors` of its earlier replies.
 * - **Output.** One JSON object on stdout: `{"config": ..., "rationale":
 *   "..."}` or a bare config. It goes through the path LLM replies take
 *   (`reply_check.ts`): extraction, validation, clamping of mild problems
 *   (event `clamped`), a generator check, and a re-ask (the program is run
 *   again with `errors`, default twice: event `retry`), then a `fallback`
 *   that keeps the current config. The tally (`report.llm`: requests,
 *   re-asks, clamps, fallback) is counted in the tables like an LLM's.
 * - **Running.** No shell: `command` is argv, run in the experiment file's
 *   directory with an empty environment but `PATH`, `HOME`, `LANG`,
 *   `TMPDIR` and the names in `env`. The program's stderr goes to the node
 *   log. A timeout kills its whole process group. A program that times
 *   out, crashes (non-zero exit, a signal), floods stdout (over 1 MiB) or
 *   cannot start is the event `program_error` and a `fallback` (no re-run:
 *   it would only repeat); its output is never used.
 * - **Keys.** The program's files enter the key by content: every element
 *   of `command` that names an existing file (relative to the experiment
 *   file; the interpreter found on `PATH` is not), and the files and
 *   folders in `inputs`. Editing the script recomputes the redesigns that
 *   run it and what follows them.
 * - **Bad input at plan.** A program that is not on `PATH`, a path that
 *   does not exist or is not executable, or a script argument that does not
 *   exist refuses the experiment with one line naming the fix.
 *
 * @module
 */
import * as v from "valibot";
import {
  checkProgramCommand,
  InputFileError,
  ProgramCommandError,
} from "@envsmith/engine/kind";
import { DEFAULT_LIMITS } from "@envsmith/engine/limits";
import { type AnyEnvConfig, ENV_CONFIG_BOUNDS } from "../schemas/env_config.ts";
import { heaviest } from "./config_ops.ts";
import type {
  Engineer,
  EngineerEvent,
  LlmTally,
  Proposal,
  ProposeInput,
} from "./engineer.ts";
import {
  EngineerConfigError,
  type EngineerEnv,
  type EngineerKind,
  type ProgramResult,
  type ProgramRunner,
} from "./engineer_kind.ts";
import { checkReply } from "./reply_check.ts";
import { checkFamilyReply, familyExecInput } from "./family_reply.ts";
import { DEFAULT_FAMILY } from "../families/family.ts";
import { replyJsonSchema } from "./reply_format.ts";

/** Most stdout bytes read from the program; more is a flood (`program_error`). */
export const EXEC_STDOUT_CAP = 1 << 20;

/** Parameters of the `exec` engineer. */
export interface ExecEngineerParams {
  /** The program and its arguments (argv; no shell). */
  command: string[];
  /** Time limit per run, seconds. */
  timeout: number;
  /** Runs again with the errors after a rejected reply. */
  reasks: number;
  /** More files and folders whose content enters the key. */
  inputs: string[];
  /** Environment variables passed through. */
  env: string[];
}

/** What the program reads on stdin. */
export interface ExecEngineerInput {
  /** Protocol version. */
  envsmith: 1;
  /** The context type: none, stats, failures, behavior, full. */
  context_type: string;
  /** Stage index (null when unknown). */
  stage: number | null;
  /** Seed for programs that draw random numbers. */
  seed: number;
  /** The current configuration. */
  config: AnyEnvConfig;
  /** `stats`, `full`: success rates overall, per dimension, per component. */
  stats: unknown;
  /** `failures`, `full`: failure histogram and rendered cases. */
  failures: unknown;
  /** `behavior`, `full`: behaviour summaries. */
  behavior: unknown;
  /** `full`: earlier configurations and their scores. */
  history: unknown;
  /** The context as an LLM reads it. */
  context_text: string;
  /** JSON Schema of a reply `{config, rationale}`. */
  reply_schema: unknown;
  /** JSON Schema of a configuration. */
  config_schema: unknown;
  /** Bounds of every dimension. */
  bounds: typeof ENV_CONFIG_BOUNDS;
  /** 1 on the first run; 2, 3... on re-asks. */
  attempt: number;
  /** Why earlier replies were rejected (empty on the first run). */
  errors: string[];
}

const _Params = v.strictObject({
  command: v.pipe(
    v.array(v.pipe(v.string(), v.minLength(1))),
    v.minLength(
      1,
      "command is [PROGRAM, ARGS...], e.g. [python3, engineer.py]",
    ),
    v.description(
      "the program and its arguments, no shell: [python3, engineers/threshold.py] (paths relative to the experiment file)",
    ),
  ),
  timeout: v.optional(
    v.pipe(
      v.number(),
      v.minValue(0.1),
      v.maxValue(3600),
      v.description(
        "seconds per run; the whole process group is killed after it; default 60",
      ),
    ),
    60,
  ),
  reasks: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(0),
      v.maxValue(5),
      v.description(
        "runs again with the errors after a rejected reply; default 2",
      ),
    ),
    2,
  ),
  inputs: v.optional(
    v.pipe(
      v.array(v.pipe(v.string(), v.minLength(1))),
      v.description(
        "more files or folders the program reads (relative to the experiment file); their content enters the key",
      ),
    ),
    [],
  ),
  env: v.optional(
    v.pipe(
      v.array(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/))),
      v.description(
        "environment variables passed through (besides PATH, HOME, LANG, TMPDIR)",
      ),
    ),
    [],
  ),
});

/**
 * Checks the command before anything runs and digests the program's files
 * (the engine's {@linkcode checkProgramCommand}).
 *
 * @throws {EngineerConfigError} for a program that is missing or not
 * executable, or a script argument that does not exist.
 */
export function execFingerprint(
  params: { command?: unknown; inputs?: unknown },
  baseDir: string,
  path: string | undefined = Deno.env.get("PATH"),
  inputBytes: number = DEFAULT_LIMITS.inputBytes,
): { files: Record<string, string> } {
  if (!Array.isArray(params.command)) {
    throw new EngineerConfigError(
      "the exec engineer needs command: [PROGRAM, ARGS...], e.g. command: [python3, engineer.py]",
    );
  }
  try {
    return {
      files: checkProgramCommand(params.command, params.inputs, baseDir, {
        label: "exec",
        path,
        inputBytes,
      }),
    };
  } catch (e) {
    if (e instanceof ProgramCommandError) {
      throw new EngineerConfigError(e.message);
    }
    if (e instanceof InputFileError) {
      throw new EngineerConfigError(`exec engineer: ${e.message}`);
    }
    throw e;
  }
}

/** One line for a program that ended without a usable stdout. */
function _failure(program: string, r: ProgramResult, timeout: number): string {
  const tail = new TextDecoder().decode(r.stderr).trim().split("\n").slice(-2)
    .join(" | ").slice(-300);
  const why = r.timedOut
    ? `timed out after ${timeout} s (its process group was killed)`
    : r.stdoutDropped > 0
    ? `flooded stdout (over ${EXEC_STDOUT_CAP} bytes; ${r.stdoutDropped} dropped)`
    : r.signal !== null
    ? `was killed by ${r.signal}`
    : `exited with code ${r.code}`;
  return `${program} ${why}${tail ? `; stderr ends: ${tail}` : ""}`;
}

/** The stdin of one run. */
export function execInput(
  input: ProposeInput,
  attempt: number,
  errors: readonly string[],
): ExecEngineerInput {
  const j = input.context.json;
  const reply = replyJsonSchema() as {
    properties?: { config?: unknown };
  };
  return {
    envsmith: 1,
    context_type: j.type,
    stage: j.stage,
    seed: input.seed,
    config: input.config,
    stats: j.stats ?? null,
    failures: j.failures ?? null,
    behavior: j.behavior ?? null,
    history: j.history ?? null,
    context_text: input.context.text,
    reply_schema: reply,
    config_schema: reply.properties?.config ?? null,
    bounds: ENV_CONFIG_BOUNDS,
    attempt,
    errors: [...errors],
  };
}

/**
 * The exec engineer.
 *
 * Long by design: one proposal (run, check, re-ask, fall back) reads in order inside `propose`.
 *
 * @throws {EngineerConfigError} without a program runner in `env`.
 */
export function execEngineer(
  params: ExecEngineerParams,
  env: EngineerEnv,
): Engineer {
  const run: ProgramRunner | undefined = env.runProgram;
  if (run === undefined) {
    throw new EngineerConfigError(
      "the exec engineer needs a program runner (the redesign node passes the engine's)",
    );
  }
  const [program, ...args] = params.command as [string, ...string[]];
  const getEnv = env.env ?? ((n: string) => Deno.env.get(n));
  const childEnv: Record<string, string> = {};
  for (const n of ["PATH", "HOME", "LANG", "TMPDIR", ...params.env]) {
    const x = getEnv(n);
    if (x !== undefined) childEnv[n] = x;
  }
  return {
    name: "exec",
    // Long by design: one proposal (run, check, re-ask, fall back) in the order it happens.
    async propose(input: ProposeInput): Promise<Proposal> {
      const events: EngineerEvent[] = [];
      const tally: LlmTally = {
        calls: 1,
        requests: 0,
        reasks: 0,
        clamped: 0,
        truncated: 0,
        fallback: 0,
        cached: 0,
      };
      const reads = input.context.json.type === "none"
        ? []
        : [`context.${input.context.json.type}`];
      const keep = (why: string): Proposal => {
        tally.fallback = 1;
        events.push({ type: "fallback", detail: why });
        return {
          config: input.config,
          rationale:
            `exec engineer: no usable reply (${why}); kept the previous config.`,
          events,
          reads,
          llm: tally,
        };
      };
      // MAPF-FrozenLake's replies get its own check (clamping, a generator
      // check); another family's are checked against its space
      const other = env.family === undefined ||
          env.family.name === DEFAULT_FAMILY
        ? undefined
        : env.family;
      const previous = other === undefined ? heaviest(input.config) : undefined;
      const errors: string[] = [];
      for (let attempt = 0; attempt <= params.reasks; attempt++) {
        tally.requests++;
        let r: ProgramResult;
        try {
          r = await run(program, {
            args,
            cwd: env.baseDir,
            env: childEnv,
            clearEnv: true,
            stdin: JSON.stringify(
              other === undefined
                ? execInput(input, attempt + 1, errors)
                : familyExecInput(other, input, attempt + 1, errors),
            ),
            timeoutMs: Math.round(params.timeout * 1000),
            ...(env.signal ? { signal: env.signal } : {}),
            stdoutCapBytes: EXEC_STDOUT_CAP,
            stderrCapBytes: 64 * 1024,
            logCapBytes: 256 * 1024,
            onLine: (stream, line) => {
              if (stream === "stderr") env.log(`${program}: ${line}`);
            },
          });
        } catch (e) {
          const why = `${program} could not start: ${(e as Error).message}`;
          events.push({ type: "program_error", detail: why });
          return keep(why);
        }
        if (r.aborted) {
          // A cancelled run is not a reply: fail the node, cache nothing.
          throw new Error(
            `the exec engineer ${program} was stopped (run cancelled)`,
          );
        }
        if (!r.success || r.stdoutDropped > 0) {
          if (r.stdoutDropped > 0) tally.truncated++;
          const why = _failure(program, r, params.timeout);
          events.push({ type: "program_error", detail: why });
          return keep(why);
        }
        const text = new TextDecoder().decode(r.stdout);
        const check = other === undefined
          ? checkReply(text, previous!, { seed: input.seed })
          : checkFamilyReply(other, text, input.config);
        if (check.ok) {
          if (check.adjustments.length > 0) {
            tally.clamped = 1;
            events.push({
              type: "clamped",
              detail: check.adjustments.join("; "),
            });
          }
          return {
            config: check.config,
            rationale: `exec engineer: ${
              check.rationale || "(no rationale given)"
            }`,
            events,
            reads,
            llm: tally,
          };
        }
        errors.push(`reply ${attempt + 1} rejected: ${check.error}`);
        if (attempt < params.reasks) {
          tally.reasks++;
          events.push({
            type: "retry",
            detail: `reply ${attempt + 1} rejected: ${check.error}`,
          });
        }
      }
      return keep(errors.at(-1) ?? "no reply");
    },
  };
}

/** The `exec` engineer kind. */
export const engineer: EngineerKind<ExecEngineerParams> = {
  name: "exec",
  description:
    "runs a program as the engineer: context JSON on stdin, one config JSON on stdout (no shell; checked like LLM replies)",
  families: "any",
  params: _Params as unknown as EngineerKind<ExecEngineerParams>["params"],
  module: import.meta.url,
  fingerprint(params, info) {
    return execFingerprint(
      params as { command?: unknown; inputs?: unknown },
      info.baseDir,
      Deno.env.get("PATH"),
      // (the engine passes its input-bytes limit beside baseDir)
      (info as { inputBytes?: number }).inputBytes,
    );
  },
  create: (params, env) => execEngineer(params, env),
};
