/**
 * Training driven by a {@linkcode LevelSampler}: batch after batch, the
 * sampler says which levels the policy plays (one episode each, in
 * parallel) and whether it learns from them; a `Trainer` plays the batch
 * (`episodes: "once"`: the checkpoint, its optimiser state and value
 * normaliser carry over from batch to batch) and its per-level positive
 * value loss goes back to the sampler, which re-ranks its buffer.
 *
 * The budget counts what the policy learned from: `maxSamples` agent-steps
 * and `maxUpdates` updates of trained batches. Batches played without
 * learning (robust PLR's new levels, ACCEL's edits) are the sampler's cost,
 * counted apart (`scoredSamples`, `scoredEpisodes`), as the per-stage
 * engineers count their scoring rollouts.
 *
 * @module
 */
import { InstancePool } from "../mapf/pool.ts";
import { mapfTrainingSource } from "./mapf_training_env.ts";
import { mix32 } from "../mapf/rng.ts";
import type { Checkpoint } from "./checkpoint.ts";
import type { Batch, LevelSampler } from "./level_sampler.ts";
import { type CurvePoint, Trainer, type TrainerOptions } from "./trainer.ts";

/** Options of {@linkcode trainWithSampler}. */
export interface SamplerTrainingOptions {
  /** Trainer options (`envs`, `steps` and `episodes` are the sampler's). */
  trainer: TrainerOptions;
  /** Budget in trained updates. @default Infinity */
  maxUpdates?: number;
  /** Budget in trained agent-steps. @default Infinity */
  maxSamples?: number;
  /**
   * Batches in a row without learning before the run stops with an error
   * (a sampler that never replays). @default 100000
   */
  maxIdle?: number;
  /** Called after every batch (progress, cancellation). */
  onBatch?: (point: CurvePoint, batch: Batch) => void;
}

/** What a sampler-driven run did. */
export interface SamplerTrainingResult {
  /** One point per trained batch. */
  curve: CurvePoint[];
  /** Batches played, trained or not. */
  batches: number;
  /** Agent-steps trained on. */
  samples: number;
  /** Agent-steps played without learning. */
  scoredSamples: number;
  /** Episodes played without learning. */
  scoredEpisodes: number;
  /** Episodes trained on, and their successes. */
  episodes: number;
  successes: number;
}

/**
 * Train `ck` in place with levels from `sampler` until a budget is met.
 *
 * @example
 * Not run: it trains for 50,000 samples (minutes); the sampler's tests train briefly.
 * ```ts ignore
 * const sampler = new LevelSampler({ kind: "plr", seed: 1, buffer: 256 });
 * const r = trainWithSampler(ck, sampler, { trainer: { seed: 1 }, maxSamples: 50_000 });
 * ```
 */
export function trainWithSampler(
  ck: Checkpoint,
  sampler: LevelSampler,
  options: SamplerTrainingOptions,
): SamplerTrainingResult {
  const maxUpdates = options.maxUpdates ?? Infinity;
  const maxSamples = options.maxSamples ?? Infinity;
  const maxIdle = options.maxIdle ?? 100_000;
  const seed = options.trainer.seed ?? 0;
  const r: SamplerTrainingResult = {
    curve: [],
    batches: 0,
    samples: 0,
    scoredSamples: 0,
    scoredEpisodes: 0,
    episodes: 0,
    successes: 0,
  };
  let idle = 0;
  while (r.curve.length < maxUpdates && r.samples < maxSamples) {
    const batch = sampler.next();
    const trainer = new Trainer(
      ck,
      mapfTrainingSource(InstancePool.from(batch.levels)),
      {
        ...options.trainer,
        algo: "ppo",
        episodes: "once",
        seed: mix32((seed ^ mix32(sampler.batches + 1)) >>> 0),
      },
    );
    const before = ck.counters.samples;
    const pt = trainer.update(
      batch.learn ? { maxSamples: maxSamples - r.samples } : { learn: false },
    );
    sampler.observe(batch, { pvl: trainer.levelScores().pvl });
    r.batches++;
    if (batch.learn) {
      idle = 0;
      r.curve.push(pt);
      r.samples += ck.counters.samples - before;
      r.episodes += pt.episodes;
      r.successes += Number.isNaN(pt.success) ? 0 : pt.success * pt.episodes;
    } else {
      r.scoredSamples += pt.stats.samples;
      r.scoredEpisodes += pt.episodes;
      if (++idle >= maxIdle) {
        throw new RangeError(
          `the level sampler played ${idle} batches in a row without learning: raise sampler.replay_prob or lower sampler.min_fill`,
        );
      }
    }
    options.onBatch?.(pt, batch);
  }
  return r;
}
