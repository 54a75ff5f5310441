/**
 * `./envsmith evaluate`: score an ONNX policy on a suite.
 *
 * ```sh
 * ./envsmith evaluate --policy easy.onnx --suite base
 * ./envsmith evaluate --policy easy.onnx --suite corridors --episodes 3 --json
 * ./envsmith evaluate --policy torch_export.onnx --preset hard --count 100
 * ./envsmith evaluate --base-url http://127.0.0.1:11434/v1 --model qwen3:4b --suite mini --json
 * ./envsmith evaluate --gguf qwen2.5-0.5b-instruct-q8_0.gguf --suite mini --count 5
 * ```
 *
 * Instances: a benchmark `--suite` (its fixed instances), a `--preset` or
 * `--config` generated in a held-out seed space (suite `preset:<name>` /
 * `config`, never drawn by training), or a JSON-lines `--instances` file.
 * Any ONNX file with the policy contract works (see policy/onnx_export.ts);
 * one without envsmith metadata is fed the observation layout its input
 * width selects. With `--base-url` and `--model` (or `--gguf FILE`, a local
 * model run in-process) instead of `--policy`, the
 * LLM policy plays (an OpenAI-compatible endpoint plans each instance; an
 * unusable reply counts as `invalid_plan`); replies are cached in
 * `<cache>/aux/evaluate/llm`, shared with the `evaluate` node, and
 * `--offline` replays them. Prints the success rate, each failure type's
 * rate and the path efficiency, and the paper's metrics (every episode read
 * as a joint plan: valid rate, optimal rate by sum of costs and by makespan
 * against exact optima, agents on goal, tokens per answer for an LLM; per
 * cell of agents x map size with `--json`); `--json` prints them as one JSON
 * object on stdout.
 *
 * @module
 */
import { Command } from "@commander-js/extra-typings";
import * as v from "valibot";
import { UserError } from "@envsmith/engine/errors";
import { LlmEndpointSchema } from "../schemas/llm.ts";
import type { Instance } from "../mapf/instance.ts";
import type { SuiteSplit } from "../mapf/generator.ts";
import { PolicyContractError } from "../policy/errors.ts";
import { llmRollout } from "../policy/llm_policy.ts";
import { obsSize } from "../policy/observation.ts";
import { OnnxPolicy } from "../policy/onnx_policy.ts";
import { onnxRunner, rollout, type RolloutResult } from "../policy/rollout.ts";
import {
  cacheOf,
  type ConfigFlags,
  configFromFlags,
  intFlag,
  type LlmFlags,
  splitFlag,
} from "./_io.ts";
import { decodeTrajectories } from "../mapf/trajectory.ts";
import type { LlmEpisodeInfo } from "../policy/llm_policy.ts";
import {
  answersFromCache,
  metricsBy,
  type PaperMetrics,
  paperMetrics,
  readEpisodes,
} from "../nodes/evaluate_metrics.ts";
import {
  generateOrExplain,
  numberFlag,
  type PolicyCliIo,
  policyIo,
  readInstanceFile,
  suiteInstances,
} from "./_policy.ts";
import { policyObs, readPolicyFile } from "../nodes/policy_io.ts";
import { roundJson } from "../nodes/rollout.ts";

/** The `evaluate` subcommand. */
export function evaluateCommand(io: PolicyCliIo = policyIo) {
  return new Command("evaluate")
    .description(
      "Evaluate an ONNX policy: success rate, failure types, path efficiency",
    )
    .option("--policy <file>", "the ONNX policy")
    .option(
      "--base-url <url>",
      "LLM policy: OpenAI-compatible endpoint (instead of --policy)",
    )
    .option("--model <name>", "LLM policy: model name")
    .option(
      "--gguf <file>",
      "LLM policy: a local GGUF model file run in-process (instead of --policy)",
    )
    .option(
      "--threads <n>",
      "LLM policy --gguf: CPU threads (default 1)",
      intFlag("--threads", 1),
    )
    .option(
      "--api-key-env <NAME>",
      "LLM policy: environment variable holding the API key",
    )
    .option(
      "--temperature <t>",
      "LLM policy: sampling temperature (default 0)",
      numberFlag("--temperature", 0),
    )
    .option(
      "--concurrency <n>",
      "LLM policy: requests in flight",
      intFlag("--concurrency", 1),
      4,
    )
    .option("--offline", "LLM policy: answer only from the reply cache")
    .option("--suite <name>", "a benchmark suite")
    .option(
      "--split <split>",
      "with --suite: validation (designing, tuning) or test (reported results)",
      splitFlag,
      "validation" as const,
    )
    .option("--preset <name>", "instances of a preset (held-out seed space)")
    .option(
      "--config <file>",
      "instances of a config file (held-out seed space)",
    )
    .option("--instances <file>", "instances from a JSON-lines file")
    .option(
      "--count <n>",
      "number of instances (default: the suite's, or 100)",
      intFlag("--count", 1),
    )
    .option(
      "--episodes <n>",
      "episodes per instance",
      intFlag("--episodes", 1),
      1,
    )
    .option(
      "--seed <n>",
      "seed of action sampling, slip and generation",
      intFlag("--seed", 0),
      0,
    )
    .option("--greedy", "take the most likely action instead of sampling")
    .option("--json", "print the metrics as one JSON object")
    .addHelpText(
      "after",
      "\nExamples:\n  ./envsmith evaluate --policy easy.onnx --suite base\n  ./envsmith evaluate --base-url http://127.0.0.1:11434/v1 --model qwen3:4b --suite mini --json",
    )
    .action((o, cmd) => _evaluate(io, o, cacheOf(io, cmd)));
}

/** The flags of `evaluate`. */
interface _EvalFlags extends ConfigFlags, LlmFlags {
  readonly policy?: string | undefined;
  readonly concurrency: number;
  readonly suite?: string | undefined;
  readonly split: SuiteSplit;
  readonly instances?: string | undefined;
  readonly count?: number | undefined;
  readonly episodes: number;
  readonly seed: number;
  readonly greedy?: true | undefined;
  readonly json?: true | undefined;
}

async function _evaluate(
  io: PolicyCliIo,
  o: _EvalFlags,
  cache: string,
): Promise<void> {
  const { instances, what } = await _instances(o);
  const given = [o.policy, o.baseUrl, o.gguf].filter((x) => x !== undefined)
    .length;
  if (given !== 1) {
    throw new UserError(
      "Give either --policy FILE.onnx, or an LLM policy: --base-url URL --model NAME (a server) or --gguf FILE (a local model).",
    );
  }
  if (o.baseUrl !== undefined || o.gguf !== undefined) {
    const res = await _llmEvaluation(io, o, instances, cache);
    const answers = await answersFromCache(
      (res as { info?: LlmEpisodeInfo[] }).info ?? [],
      `${cache}/aux/evaluate/llm`,
    );
    report(
      io,
      o.gguf ?? `${o.model} at ${o.baseUrl}`,
      what,
      instances.length,
      o.episodes,
      "planned",
      res,
      _paper(instances, res, answers),
      o.json,
    );
    return;
  }
  const res = await _onnxEvaluation(io, o, instances);
  report(
    io,
    o.policy!,
    what,
    instances.length,
    o.episodes,
    o.greedy ? "greedy" : "sampled",
    res,
    _paper(instances, res),
    o.json,
  );
}

/** The paper's metrics of a rollout, overall and per cell. */
function _paper(
  instances: readonly Instance[],
  res: RolloutResult,
  answers?: Parameters<typeof readEpisodes>[2],
): { all: PaperMetrics; cells: Record<string, PaperMetrics> } {
  const read = readEpisodes(
    instances,
    decodeTrajectories(res.trajectories!),
    answers,
  );
  return { all: paperMetrics(read), cells: metricsBy(read, (e) => e.cell) };
}

/** The instances the flags name (exactly one source), and how to name them. */
async function _instances(
  o: _EvalFlags,
): Promise<{ instances: Instance[]; what: string }> {
  const sources =
    [o.suite, o.preset, o.config, o.instances].filter((x) => x !== undefined)
      .length;
  if (sources !== 1) {
    throw new UserError(
      "Give exactly one of --suite, --preset, --config and --instances.",
    );
  }
  if (o.suite !== undefined) {
    return {
      instances: suiteInstances(o.suite, o.count, 0, o.split),
      what: `suite ${o.suite} (${o.split})`,
    };
  }
  if (o.instances !== undefined) {
    return {
      instances: await readInstanceFile(o.instances),
      what: o.instances,
    };
  }
  const config = (await configFromFlags(o))!;
  const tag = o.preset !== undefined ? `preset:${o.preset}` : "config";
  return {
    instances: generateOrExplain(config, {
      count: o.count ?? 100,
      seed: o.seed,
      suite: tag,
    }),
    what: o.preset !== undefined ? `preset ${o.preset}` : `config ${o.config}`,
  };
}

/** Rolls out an LLM policy (an OpenAI-compatible endpoint or a local GGUF model). */
async function _llmEvaluation(
  io: PolicyCliIo,
  o: _EvalFlags,
  instances: Instance[],
  cache: string,
): Promise<RolloutResult> {
  const ep = v.safeParse(LlmEndpointSchema, {
    ...(o.gguf !== undefined
      ? {
        gguf: o.gguf,
        ...(o.threads !== undefined ? { threads: o.threads } : {}),
      }
      : { base_url: o.baseUrl, model: o.model ?? "" }),
    ...(o.apiKeyEnv !== undefined ? { api_key_env: o.apiKeyEnv } : {}),
    ...(o.temperature !== undefined ? { temperature: o.temperature } : {}),
    ...(o.offline ? { offline: true } : {}),
  });
  if (!ep.success) {
    throw new UserError(
      `LLM policy: ${ep.issues.map((i) => i.message).join("; ")}`,
    );
  }
  let res;
  try {
    res = await llmRollout(instances, {
      endpoint: ep.output,
      cacheDir: `${cache}/aux/evaluate/llm`,
      episodes: o.episodes,
      seed: o.seed,
      concurrency: o.concurrency,
      record: true,
      onProgress: (d, t) => io.status(`evaluate: ${d}/${t} episodes`),
    });
  } catch (e) {
    if (
      e instanceof Error &&
      (e.name.startsWith("Llm") || e instanceof TypeError)
    ) {
      throw new UserError(e.message);
    }
    throw e;
  }
  io.endStatus();
  return res;
}

/** Rolls out an ONNX policy file. */
async function _onnxEvaluation(
  io: PolicyCliIo,
  o: _EvalFlags,
  instances: Instance[],
): Promise<RolloutResult> {
  const policyFile = o.policy!;
  let bytes: Uint8Array;
  try {
    bytes = await readPolicyFile(policyFile);
  } catch (e) {
    throw new UserError(
      `Cannot read policy ${o.policy}: ${(e as Error).message}`,
    );
  }
  let policy: OnnxPolicy;
  let obs;
  try {
    obs = policyObs(bytes, policyFile, undefined);
    policy = await OnnxPolicy.load(bytes, {
      source: policyFile,
      inputSize: obsSize(obs),
    });
  } catch (e) {
    if (e instanceof PolicyContractError) {
      throw new UserError(e.message);
    }
    throw e;
  }
  let res;
  try {
    res = await rollout(onnxRunner(policy), instances, {
      obs,
      episodes: o.episodes,
      seed: o.seed,
      greedy: o.greedy ?? false,
      record: true,
      onProgress: (d, t) => io.status(`evaluate: ${d}/${t} episodes`),
    });
  } finally {
    await policy.release();
  }
  io.endStatus();
  return res;
}

/** Print the metrics as text or one JSON object. */
function report(
  io: PolicyCliIo,
  policy: string,
  what: string,
  count: number,
  episodes: number,
  mode: string,
  res: RolloutResult,
  paper: { all: PaperMetrics; cells: Record<string, PaperMetrics> },
  json: boolean | undefined,
): void {
  const s = res.summary;
  if (json) {
    io.out(JSON.stringify(roundJson({
      policy,
      instances: what,
      count,
      ...s,
      ...paper.all,
      ...(Object.keys(res.suites).length > 1 ? { suites: res.suites } : {}),
      ...(Object.keys(paper.cells).length > 1 ? { cells: paper.cells } : {}),
    })));
    return;
  }
  const p = paper.all;
  const f = (x: number | null, d = 3) => (x === null ? "-" : x.toFixed(d));
  const lines = [
    `${policy} on ${what}: ${count} instances x ${episodes} episode${
      episodes > 1 ? "s" : ""
    } (${mode} actions)`,
    `success rate           ${f(s.success_rate)}`,
    ...Object.entries(s.outcome_rates as Record<string, number>).filter(([k]) =>
      k !== "success"
    ).map((
      [k, x],
    ) => `${(k + " rate").padEnd(22)} ${f(x)}`),
    `path efficiency        ${
      f(s.efficiency)
    }  (reference SoC / achieved SoC, mean over successes)`,
    `SoC / reference        ${f(s.soc_ratio)}`,
    `makespan               ${f(s.makespan, 2)}  (mean over successes)`,
    `steps                  ${f(s.steps, 2)}`,
    `valid rate             ${
      f(p.valid_rate)
    }  (every goal reached, no illegal move, no conflict)`,
    `optimal rate (SoC)     ${
      f(p.optimal_soc_rate)
    }  (valid, least sum of costs)`,
    `optimal rate (makespan) ${
      f(p.optimal_makespan_rate)
    } (valid, least makespan)`,
    `agents on goal         ${f(p.agent_success_rate)}`,
    ...(p.optimum_unknown > 0
      ? [
        `optimum unknown        ${p.optimum_unknown} valid episodes (counted not optimal)`,
      ]
      : []),
    ...(p.tokens_per_answer !== null
      ? [`tokens per answer      ${f(p.tokens_per_answer, 1)}`]
      : []),
  ];
  io.out(lines.join("\n"));
}
