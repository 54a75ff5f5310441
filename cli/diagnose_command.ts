/**
 * `./envsmith diagnose`: roll a policy out on freshly generated instances
 * and write the findings.
 *
 * ```sh
 * ./envsmith diagnose --policy model.onnx --preset easy --episodes 200 --seed 1 --out findings.json
 * ```
 *
 * Generates `--episodes` instances of the config (`--preset` or `--config`)
 * with seed `--seed`, plays each once with the ONNX policy (sampled actions
 * with that seed, or `--greedy`), diagnoses the trajectories, and writes the
 * findings JSON to `--out` (stdout when absent). A summary goes to stderr.
 *
 * @module
 */
import { Command } from "@commander-js/extra-typings";
import { UserError } from "@envsmith/engine/errors";
import { decodeTrajectories } from "../mapf/trajectory.ts";
import { generate, GenerationError } from "../mapf/generator.ts";
import { PolicyContractError } from "../policy/errors.ts";
import { obsSize } from "../policy/observation.ts";
import { OnnxPolicy } from "../policy/onnx_policy.ts";
import { onnxRunner, rollout } from "../policy/rollout.ts";
import { diagnose } from "../engineer/diagnose.ts";
import { episodesFromRollouts } from "../engineer/from_rollouts.ts";
import { parseEnvConfig } from "../schemas/env_config.ts";
import type { Findings } from "../schemas/findings.ts";
import { type CliIo, configFromFlags, defaultIo, intFlag } from "./_io.ts";
import { policyObs, readPolicy } from "../nodes/policy_io.ts";

/** Options of {@linkcode diagnoseFromPolicy}. */
export interface DiagnoseFromPolicyOptions {
  /** Instances (= episodes). */
  episodes: number;
  /** Seed of generation, actions/slip and the case sample. */
  seed: number;
  /** Greedy actions. @default {false} */
  greedy?: boolean;
  /** Failure cases sampled. @default {6} */
  cases?: number;
}

/** Generate, roll out and diagnose (the work of the subcommand, reusable). */
export async function diagnoseFromPolicy(
  policyFile: string,
  config: Parameters<typeof generate>[0],
  options: DiagnoseFromPolicyOptions,
): Promise<Findings> {
  const { bytes, source } = await readPolicy({ file: policyFile }, {
    baseDir: Deno.cwd(),
    readBlob: () => Promise.reject(new Error("unused")),
  });
  const obs = policyObs(bytes, source, undefined);
  const { instances } = generate(config, {
    count: options.episodes,
    seed: options.seed,
  });
  const policy = await OnnxPolicy.load(bytes, {
    source,
    inputSize: obsSize(obs),
  });
  try {
    const res = await rollout(onnxRunner(policy), instances, {
      obs,
      episodes: 1,
      seed: options.seed,
      greedy: options.greedy ?? false,
      record: true,
    });
    const episodes = decodeTrajectories(res.trajectories!);
    const cfg = parseEnvConfig(config);
    return diagnose(episodesFromRollouts(episodes, instances, cfg), {
      seed: options.seed,
      config: cfg,
      ...(options.cases === undefined ? {} : { maxCases: options.cases }),
    });
  } finally {
    await policy.release();
  }
}

/** The `diagnose` subcommand. */
export function diagnoseCommand(io: CliIo = defaultIo) {
  return new Command("diagnose")
    .description(
      "Roll a policy out on generated instances and write the findings (JSON)",
    )
    .requiredOption("--policy <file>", "ONNX policy file")
    .option("--preset <name>", "config: a preset (easy, medium, hard)")
    .option("--config <file>", "config: a JSON or YAML file")
    .option(
      "--episodes <n>",
      "instances generated and played once each",
      intFlag("--episodes", 1),
      100,
    )
    .option(
      "--seed <n>",
      "seed of generation, actions and the case sample",
      intFlag("--seed", 0),
      0,
    )
    .option("--greedy", "take the most likely action instead of sampling")
    .option("--cases <n>", "failure cases sampled", intFlag("--cases", 0))
    .option("--out <file>", "where to write findings.json (default: stdout)")
    .addHelpText(
      "after",
      "\nExample:\n  ./envsmith diagnose --policy model.onnx --preset easy --episodes 200 --seed 1 --out findings.json",
    )
    .action(async (o) => {
      const config = await configFromFlags(o);
      if (config === undefined) {
        throw new UserError("diagnose needs --preset NAME or --config FILE.");
      }
      let findings: Findings;
      try {
        findings = await diagnoseFromPolicy(o.policy, config, {
          episodes: o.episodes,
          seed: o.seed,
          greedy: o.greedy ?? false,
          ...(o.cases === undefined ? {} : { cases: o.cases }),
        });
      } catch (e) {
        if (
          e instanceof GenerationError || e instanceof PolicyContractError ||
          e instanceof RangeError
        ) {
          throw new UserError(e.message);
        }
        if (e instanceof Error && e.name === "PolicyInputError") {
          throw new UserError(e.message);
        }
        throw e;
      }
      const text = JSON.stringify(findings, null, 1);
      if (o.out === undefined) io.out(text);
      else await Deno.writeTextFile(o.out, text + "\n");
      const types = Object.entries(findings.outcomes).filter(([k, n]) =>
        k !== "success" && n > 0
      )
        .map(([k, n]) => `${k} ${n}`).join(", ");
      io.err(
        `${findings.episodes} episodes: success ${findings.success_rate}, agents on goal ${findings.agent_success_rate}, ` +
          `failures ${findings.failure_count}${
            types ? ` (${types})` : ""
          }, efficiency ${findings.efficiency.mean ?? "n/a"}${
            o.out === undefined ? "" : `; wrote ${o.out}`
          }`,
      );
    });
}
