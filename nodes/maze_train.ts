/**
 * The `maze.train` node kind: PPO on mazes, through the trainer's seam to
 * the maze family's batched environment (the egocentric 5x5 view).
 *
 * ```yaml
 * policy: { kind: maze.train, with: { policy: $prev.policy, envs: $envs, samples: 250000, seed: $seed } }
 * ```
 *
 * Parameters: `policy` (a `maze.train` value; absent or null: a fresh MLP of
 * `hidden` sizes, default [64, 64], seeded by `seed`), `envs` (a
 * `maze.generate` value), `samples` (agent-steps, default 250,000), `lr`
 * (3e-4), `entropy` (0.01), `gamma` (0.995), `parallel` (64
 * environments), `steps` (64 per rollout), `seed`. Value: the maze policy
 * value (`{ onnx, family: "maze", hidden, updates, samples, episodes,
 * level_scores }`, the scores per training maze that `plr-stage` and
 * `accel-stage` rank levels by);
 * report: the last training point.
 *
 * @module
 */
import * as v from "valibot";
import type { NodeKind } from "@envsmith/engine/kind";
import {
  MAZE_OBS_SIZE,
  mazeTrainingSource,
} from "../families/maze/batch_env.ts";
import { MAZE_ACTIONS } from "../families/maze/maze.ts";
import { initCheckpoint } from "../policy/checkpoint.ts";
import { Trainer } from "../policy/trainer.ts";
import {
  MazePolicyValueSchema,
  MazesValueSchema,
  readMazePolicy,
  readMazes,
  writeMazePolicy,
} from "./maze_io.ts";

/** Parameters of `maze.train`. */
export const MazeTrainParamsSchema = v.strictObject({
  policy: v.optional(v.nullable(MazePolicyValueSchema)),
  envs: MazesValueSchema,
  hidden: v.optional(
    v.pipe(
      v.array(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1024))),
      v.minLength(1),
      v.maxLength(8),
    ),
  ),
  samples: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  lr: v.optional(v.pipe(v.number(), v.gtValue(0), v.maxValue(1))),
  entropy: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
  gamma: v.optional(v.pipe(v.number(), v.gtValue(0), v.maxValue(1))),
  parallel: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(4096)),
  ),
  steps: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(4096)),
  ),
  seed: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(0xffffffff)),
  ),
});

/** The `maze.train` kind. */
export const kind: NodeKind<v.InferOutput<typeof MazeTrainParamsSchema>> = {
  name: "maze.train",
  description:
    "PPO on mazes (egocentric 5x5 view, left/right/forward) -> a maze policy",
  params: MazeTrainParamsSchema,
  paramDocs: {
    policy: "a maze.train value to continue; absent or null: a fresh network",
    envs: "the training mazes (a maze.generate value)",
    hidden: "hidden layer sizes of a fresh network (default [64, 64])",
    samples: "agent-steps to train on (default 250000)",
    lr: "Adam learning rate (default 3e-4)",
    entropy: "entropy bonus (default 0.01)",
    gamma: "discount (default 0.995)",
    parallel: "environments stepped together (default 64)",
    steps: "rollout length per update (default 64)",
    seed:
      "seed of the fresh network, action sampling and maze draws (default: the node's seed)",
  },
  module: import.meta.url,
  heavy: true,
  async run(p, ctx) {
    const seed = p.seed ?? ctx.seed;
    const ck = p.policy ? await readMazePolicy(p.policy, ctx) : initCheckpoint({
      hidden: p.hidden ?? [64, 64],
      seed,
      inputSize: MAZE_OBS_SIZE,
      actions: MAZE_ACTIONS,
      family: "maze",
    });
    const mazes = await readMazes(p.envs, ctx);
    const trainer = new Trainer(ck, mazeTrainingSource(mazes), {
      envs: p.parallel ?? 64,
      steps: p.steps ?? 64,
      minibatch: 1024,
      epochs: 4,
      lr: p.lr ?? 3e-4,
      entropyCoef: p.entropy ?? 0.01,
      gamma: p.gamma ?? 0.995,
      seed,
    });
    const budget = p.samples ?? 250_000, start = ck.counters.samples;
    let last;
    while (ck.counters.samples - start < budget) {
      ctx.signal.throwIfAborted();
      last = trainer.update({
        maxSamples: budget - (ck.counters.samples - start),
      });
      ctx.progress(
        ck.counters.samples - start,
        budget,
        `success ${Number.isNaN(last.success) ? "-" : last.success.toFixed(2)}`,
      );
    }
    const value = await writeMazePolicy(ck, ctx);
    // per-maze scores for level-replay engineers (plr-stage, accel-stage),
    // aligned with the order of `envs`, with the discount they were computed with
    const lv = trainer.levelScores();
    value.level_scores = {
      episodes: Array.from(lv.episodes),
      successes: Array.from(lv.successes),
      steps: Array.from(lv.steps),
      pvl: Array.from(lv.pvl, (x) => Math.round(x * 1e6) / 1e6),
      gamma: trainer.options.gamma,
    };
    return {
      value,
      report: {
        updates: ck.counters.updates,
        samples: ck.counters.samples,
        success: last && !Number.isNaN(last.success) ? last.success : null,
      },
    };
  },
};
