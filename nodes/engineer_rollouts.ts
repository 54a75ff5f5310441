/**
 * Rollouts the redesign step runs for engineers that consult a policy:
 * `probe`/`probe-base` score candidate configurations, `plr`/`accel` score
 * new and edited levels. They never train: their cost (episodes and
 * agent-steps) is counted, and the redesign report carries it as
 * `engineer_cost`, beside the training experience and never in it.
 *
 * Both run `policy/level_scores.ts` (the checkpoint's TypeScript forward
 * pass, actions sampled, seeded) on instances drawn with the generator, so a
 * redesign stays deterministic for its key.
 *
 * @module
 */
import type { Instance } from "../mapf/instance.ts";
import { generate } from "../mapf/generator.ts";
import { hashString, Rng } from "../mapf/rng.ts";
import type { Checkpoint } from "../policy/checkpoint.ts";
import { type LevelScore, scoreLevels } from "../policy/level_scores.ts";
import type { RewardSpec } from "../policy/reward.ts";
import type { AnyEnvConfig } from "../schemas/env_config.ts";
import { drawBoxMixture, type DrBox } from "../engineer/dr.ts";
import type { Level, MeasuredLevel } from "../engineer/levels.ts";
import type { LevelIo, TrainedLevel } from "../engineer/plr.ts";
import type { Prober, ProbeScore } from "../engineer/probe.ts";

/** Options shared by the probing rollouts. */
export interface EngineerRolloutOptions {
  /** Reward coefficients of the trainer (PVL uses them). */
  reward?: Partial<RewardSpec>;
}

function _seed31(x: number): number {
  return (x >>> 0) & 0x7fffffff;
}

/**
 * A {@linkcode Prober}: for each candidate, `instances` fresh instances
 * (generated with the probe seed), each played `episodes` times by `ck`.
 */
export function checkpointProber(
  ck: Checkpoint,
  options: EngineerRolloutOptions & { instances: number; episodes: number },
): Prober {
  return (candidates, seed) => {
    const out: ProbeScore[] = [];
    for (const config of candidates) {
      // the same instance seed for every candidate: paired draws
      const { instances } = generate(config, {
        count: options.instances,
        seed: _seed31(seed),
      });
      const scores = scoreLevels(ck, instances, {
        episodes: options.episodes,
        seed,
        ...(options.reward === undefined ? {} : { reward: options.reward }),
      });
      let ep = 0, ok = 0, steps = 0, learnable = 0;
      for (const s of scores) {
        ep += s.episodes;
        ok += s.successes;
        steps += s.agentSteps;
        if (s.successes > 0 && s.successes < s.episodes) learnable++;
      }
      out.push({
        success: ep > 0 ? ok / ep : 0,
        learnable: scores.length > 0 ? learnable / scores.length : 0,
        instances: scores.length,
        episodes: ep,
        agentSteps: steps,
      });
    }
    return Promise.resolve(out);
  };
}

function _measured(s: LevelScore): MeasuredLevel {
  return {
    episodes: s.episodes,
    successes: s.successes,
    agentSteps: s.agentSteps,
    pvl: s.pvl,
  };
}

/** Per-instance training scores as the train node's value carries them. */
export interface TrainLevelScores {
  /** Ended episodes per training instance. */
  episodes: readonly number[];
  /** Their successes. */
  successes: readonly number[];
  /** Acting agent-steps. */
  steps: readonly number[];
  /** Positive value loss. */
  pvl: readonly number[];
}

/**
 * The {@linkcode LevelIo} of `plr`/`accel`: the previous buffer, this stage's
 * training instances with the trainer's scores (aligned with `trained`),
 * new levels drawn from `box` (16 uniform points a draw, as `dr`) and scored
 * once each with `ck`.
 */
export function checkpointLevelIo(
  ck: Checkpoint,
  options: EngineerRolloutOptions & {
    buffer: readonly Level[] | null;
    trained: readonly Instance[];
    scores: TrainLevelScores;
    box: DrBox;
    stage: number;
    seed: number;
  },
): { io: LevelIo; source: AnyEnvConfig } {
  const { scores, trained } = options;
  if (scores.pvl.length !== trained.length) {
    throw new TypeError(
      `policy.level_scores covers ${scores.pvl.length} instances but envs has ${trained.length}: give this stage's train node as policy and its generate node as envs`,
    );
  }
  const rows: TrainedLevel[] = trained.map((instance, i) => ({
    instance,
    measured: {
      episodes: scores.episodes[i]!,
      successes: scores.successes[i]!,
      agentSteps: scores.steps[i]!,
      pvl: scores.pvl[i]!,
    },
  }));
  const rng = new Rng(options.seed, hashString("plr-source"), options.stage);
  const source = drawBoxMixture(options.box, 16, rng);
  const reward = options.reward === undefined ? {} : { reward: options.reward };
  const io: LevelIo = {
    buffer: options.buffer,
    trained: rows,
    source,
    fresh(count, seed) {
      const { instances } = generate(source, { count, seed: _seed31(seed) });
      const s = scoreLevels(ck, instances, { episodes: 1, seed, ...reward });
      return Promise.resolve(
        instances.map((instance, i) => ({
          instance,
          measured: _measured(s[i]!),
        })),
      );
    },
    score(instances, seed) {
      return Promise.resolve(
        scoreLevels(ck, instances, { episodes: 1, seed, ...reward }).map(
          _measured,
        ),
      );
    },
  };
  return { io, source };
}
