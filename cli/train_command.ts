/**
 * `./envsmith train`: train a policy outside experiments.
 *
 * ```sh
 * ./envsmith train --preset easy --minutes 5 --seed 1 --out easy.onnx
 * ./envsmith train --config stage2.yaml --updates 100 --policy easy.onnx --out stage2.onnx
 * ./envsmith train --instances train.jsonl --algo grpo --minutes 2 --out grpo.onnx
 * ```
 *
 * Training instances come from `--preset`/`--config` (`--count` of them,
 * generated with `--seed` in the training seed space) or from a JSON-lines
 * file (`--instances`). The budget is `--minutes` of wall time (default 5)
 * and/or `--updates`; training stops at the first one reached (`--updates`
 * alone is deterministic; a wall-time budget is not). `--policy` resumes a
 * checkpoint (weights, optimiser, normaliser, counters); otherwise a fresh
 * MLP is built (`--hidden`, `--activation`, `--radius`). `--kernel ts` trains
 * on the TypeScript reference kernels instead of the WebAssembly SIMD ones
 * (same learning, different rounding, about 15x slower). A progress line
 * (updates, samples, training success) is shown on stderr; at the end the
 * checkpoint is written to `--out` and a summary printed. `--curve FILE`
 * writes the training curve as JSON.
 *
 * @module
 */
import { Command, Option } from "@commander-js/extra-typings";
import { UserError } from "@envsmith/engine/errors";
import { InstancePool } from "../mapf/pool.ts";
import {
  type Checkpoint,
  initCheckpoint,
  loadCheckpoint,
  saveCheckpoint,
} from "../policy/checkpoint.ts";
import { PolicyContractError } from "../policy/errors.ts";
import { OBS_VERSION } from "../policy/observation.ts";
import { Trainer } from "../policy/trainer.ts";
import { mapfTrainingSource } from "../policy/mapf_training_env.ts";
import { configFromFlags, intFlag } from "./_io.ts";
import {
  generateOrExplain,
  hiddenFlag,
  numberFlag,
  type PolicyCliIo,
  policyIo,
  readInstanceFile,
} from "./_policy.ts";
import { readPolicyFile } from "../nodes/policy_io.ts";
import { curvePointJson, trainerOptions } from "../nodes/train.ts";

/** The `train` subcommand. */
export function trainCommand(io: PolicyCliIo = policyIo) {
  return new Command("train")
    .description(
      "Train a policy (multi-agent PPO or GRPO) and write an ONNX checkpoint",
    )
    .option("--preset <name>", "training config: a preset (easy, medium, hard)")
    .option("--config <file>", "training config: a JSON or YAML file")
    .option(
      "--instances <file>",
      "train on these instances (JSON lines) instead of generating",
    )
    .option("--count <n>", "instances to generate", intFlag("--count", 1), 4000)
    .option(
      "--seed <n>",
      "seed of generation, initialisation and training",
      intFlag("--seed", 0),
      0,
    )
    .option("--minutes <m>", "wall-time budget", numberFlag("--minutes", 0), 5)
    .option(
      "--updates <n>",
      "update budget (deterministic)",
      intFlag("--updates", 1),
    )
    .addOption(
      new Option("--algo <name>", "algorithm").choices(["ppo", "grpo"] as const)
        .default("ppo" as const),
    )
    .option("--policy <file>", "resume from this checkpoint")
    .option("--hidden <sizes>", "hidden layers of a new policy", hiddenFlag)
    .addOption(
      new Option("--activation <fn>", "activation of a new policy").choices(
        ["tanh", "relu"] as const,
      ),
    )
    .option(
      "--radius <r>",
      "observation window radius of a new policy",
      intFlag("--radius", 0),
    )
    .option("--lr <x>", "Adam learning rate", numberFlag("--lr", 0))
    .addOption(
      new Option(
        "--kernel <name>",
        "learner kernels: simd (WebAssembly SIMD) or ts (the TypeScript reference)",
      ).choices(["simd", "ts"] as const).default("simd" as const),
    )
    .option("--parallel <n>", "parallel environments", intFlag("--parallel", 1))
    .option("--curve <file>", "write the training curve (JSON) here")
    .requiredOption("--out <file>", "where to write the ONNX checkpoint")
    .addHelpText(
      "after",
      "\nExamples:\n  ./envsmith train --preset easy --minutes 5 --seed 1 --out easy.onnx\n  ./envsmith train --config stage2.yaml --updates 100 --policy easy.onnx --out stage2.onnx",
    )
    .action((o) => _train(io, o));
}

/** The flags of `train`. */
interface _TrainFlags {
  readonly preset?: string | undefined;
  readonly config?: string | undefined;
  readonly instances?: string | undefined;
  readonly count: number;
  readonly seed: number;
  readonly minutes: number;
  readonly updates?: number | undefined;
  readonly algo: "ppo" | "grpo";
  readonly policy?: string | undefined;
  readonly hidden?: number[] | undefined;
  readonly activation?: "tanh" | "relu" | undefined;
  readonly radius?: number | undefined;
  readonly lr?: number | undefined;
  readonly kernel: "simd" | "ts";
  readonly parallel?: number | undefined;
  readonly curve?: string | undefined;
  readonly out: string;
}

async function _train(io: PolicyCliIo, o: _TrainFlags): Promise<void> {
  const sources =
    [o.preset, o.config, o.instances].filter((x) => x !== undefined).length;
  if (sources !== 1) {
    throw new UserError(
      "Give exactly one of --preset, --config and --instances.",
    );
  }
  const instances = o.instances !== undefined
    ? await readInstanceFile(o.instances)
    : generateOrExplain((await configFromFlags(o))!, {
      count: o.count,
      seed: o.seed,
    });
  const ck = await _checkpoint(o);
  const params: Parameters<typeof trainerOptions>[0] = {
    algo: o.algo,
    kernel: o.kernel,
  };
  if (o.lr !== undefined) params.lr = o.lr;
  if (o.parallel !== undefined) params.parallel = o.parallel;
  let trainer: Trainer;
  try {
    trainer = new Trainer(
      ck,
      mapfTrainingSource(InstancePool.from(instances)),
      trainerOptions(params, o.seed),
    );
  } catch (e) {
    if (e instanceof RangeError) throw new UserError(e.message);
    throw e;
  }
  const t0 = performance.now();
  const { done, curve } = _trainLoop(io, o, trainer, t0);
  try {
    await Deno.writeFile(o.out, saveCheckpoint(trainer.checkpoint()));
    if (o.curve !== undefined) {
      await Deno.writeTextFile(o.curve, JSON.stringify(curve, null, 1) + "\n");
    }
  } catch (e) {
    throw new UserError(`Cannot write ${o.out}: ${(e as Error).message}`);
  }
  const secs = (performance.now() - t0) / 1000;
  io.err(
    `trained ${done} updates (${ck.counters.updates} in total), ${
      ck.counters.samples.toLocaleString("en-US")
    } samples in total, ${
      secs.toFixed(1)
    } s on ${instances.length} instances; wrote ${o.out}`,
  );
}

/** The checkpoint to train: `--policy` resumed, or a new one shaped by the flags. */
async function _checkpoint(o: _TrainFlags): Promise<Checkpoint> {
  if (o.policy === undefined) {
    return initCheckpoint({
      hidden: o.hidden ?? [64, 64],
      activation: o.activation ?? "tanh",
      obs: { version: OBS_VERSION, radius: o.radius ?? 2 },
      seed: o.seed,
    });
  }
  if (o.hidden || o.activation || o.radius !== undefined) {
    throw new UserError(
      "--hidden, --activation and --radius shape a new policy; they cannot change --policy",
    );
  }
  let bytes: Uint8Array;
  try {
    bytes = await readPolicyFile(o.policy);
  } catch (e) {
    throw new UserError(
      `Cannot read policy ${o.policy}: ${(e as Error).message}`,
    );
  }
  try {
    return loadCheckpoint(bytes, o.policy);
  } catch (e) {
    if (e instanceof PolicyContractError) throw new UserError(e.message);
    throw e;
  }
}

/** Updates until the update or time budget is spent, with a status line. */
function _trainLoop(
  io: PolicyCliIo,
  o: _TrainFlags,
  trainer: Trainer,
  t0: number,
): { done: number; curve: ReturnType<typeof curvePointJson>[] } {
  const maxMs = o.minutes * 60_000, maxUpdates = o.updates ?? Infinity;
  const curve = [];
  let done = 0, ok = 0, eps = 0;
  while (done < maxUpdates && performance.now() - t0 < maxMs) {
    const pt = trainer.update();
    done++;
    curve.push(curvePointJson(pt));
    ok = 0.8 * ok + (pt.episodes > 0 ? pt.success * pt.episodes : 0);
    eps = 0.8 * eps + pt.episodes;
    const s = (performance.now() - t0) / 1000;
    io.status(
      `train ${o.algo}: update ${pt.update}, ${
        pt.samples.toLocaleString("en-US")
      } samples, ${s.toFixed(0)} s, training success ${
        (eps > 0 ? ok / eps : 0).toFixed(3)
      }`,
    );
  }
  io.endStatus();
  return { done, curve };
}
