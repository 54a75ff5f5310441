/**
 * `deno task cli evaluate`: score an ONNX policy on a suite.
 *
 * ```sh
 * deno task cli evaluate --policy easy.onnx --suite base
 * deno task cli evaluate --policy easy.onnx --suite corridors --episodes 3 --json
 * deno task cli evaluate --policy torch_export.onnx --preset hard --count 100
 * ```
 *
 * Instances: a benchmark `--suite` (its fixed instances), a `--preset` or
 * `--config` generated in a held-out seed space (suite `preset:<name>` /
 * `config`, never drawn by training), or a JSON-lines `--instances` file.
 * Any ONNX file with the policy contract works (see policy/onnx_export.ts);
 * one without envsmith metadata is fed the observation layout its input
 * width selects. Prints the success rate, each failure type's rate and the
 * path efficiency; `--json` prints them as one JSON object on stdout.
 *
 * @module
 */
import { Command } from "@commander-js/extra-typings";
import { UserError } from "../engine/mod.ts";
import type { Instance } from "../mapf/mod.ts";
import {
  obsSize,
  OnnxPolicy,
  onnxRunner,
  PolicyContractError,
  rollout,
} from "../policy/mod.ts";
import { configFromFlags, intFlag } from "./_cli_io.ts";
import {
  generateOrExplain,
  type PolicyCliIo,
  policyIo,
  readInstanceFile,
  suiteInstances,
} from "./policy_cli.ts";
import { policyObs } from "./policy_io.ts";
import { roundJson } from "./rollout.ts";

/** The `evaluate` subcommand. */
export function evaluateCommand(io: PolicyCliIo = policyIo) {
  return new Command("evaluate")
    .description(
      "Evaluate an ONNX policy: success rate, failure types, path efficiency",
    )
    .requiredOption("--policy <file>", "the ONNX policy")
    .option("--suite <name>", "a benchmark suite")
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
    .action(async (o) => {
      const sources = [o.suite, o.preset, o.config, o.instances].filter((x) =>
        x !== undefined
      ).length;
      if (sources !== 1) {
        throw new UserError(
          "Give exactly one of --suite, --preset, --config and --instances.",
        );
      }
      let instances: Instance[], what: string;
      if (o.suite !== undefined) {
        instances = suiteInstances(o.suite, o.count, 0);
        what = `suite ${o.suite}`;
      } else if (o.instances !== undefined) {
        instances = await readInstanceFile(o.instances);
        what = o.instances;
      } else {
        const config = (await configFromFlags(o))!;
        const tag = o.preset !== undefined ? `preset:${o.preset}` : "config";
        instances = generateOrExplain(config, {
          count: o.count ?? 100,
          seed: o.seed,
          suite: tag,
        });
        what = o.preset !== undefined
          ? `preset ${o.preset}`
          : `config ${o.config}`;
      }
      let bytes: Uint8Array;
      try {
        bytes = await Deno.readFile(o.policy);
      } catch (e) {
        throw new UserError(
          `Cannot read policy ${o.policy}: ${(e as Error).message}`,
        );
      }
      let policy: OnnxPolicy;
      let obs;
      try {
        obs = policyObs(bytes, o.policy, undefined);
        policy = await OnnxPolicy.load(bytes, {
          source: o.policy,
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
          record: false,
          onProgress: (d, t) =>
            io.status(`evaluate: ${d}/${t} episodes`),
        });
      } finally {
        await policy.release();
      }
      io.endStatus();
      const s = res.summary;
      if (o.json) {
        io.out(JSON.stringify(roundJson({
          policy: o.policy,
          instances: what,
          count: instances.length,
          ...s,
          ...(Object.keys(res.suites).length > 1 ? { suites: res.suites } : {}),
        })));
        return;
      }
      const f = (x: number | null, d = 3) => (x === null ? "-" : x.toFixed(d));
      const lines = [
        `${o.policy} on ${what}: ${instances.length} instances x ${o.episodes} episode${
          o.episodes > 1 ? "s" : ""
        } (${o.greedy ? "greedy" : "sampled"} actions)`,
        `success rate           ${f(s.success_rate)}`,
        ...Object.entries(s.outcome_rates).filter(([k]) => k !== "success").map(
          ([k, x]) => `${(k + " rate").padEnd(22)} ${f(x)}`,
        ),
        `path efficiency        ${
          f(s.efficiency)
        }  (reference SoC / achieved SoC, mean over successes)`,
        `SoC / reference        ${f(s.soc_ratio)}`,
        `makespan               ${f(s.makespan, 2)}  (mean over successes)`,
        `steps                  ${f(s.steps, 2)}`,
      ];
      io.out(lines.join("\n"));
    });
}
