/**
 * Levels of the instance-level engineers (`plr`, `accel`): a level is one
 * MAPF-FrozenLake instance with a score, the stage it was last seen, and
 * where it came from. The node that runs such an engineer stores the buffer
 * between stages as a level set (see `nodes/level_set.ts`).
 *
 * @module
 */
import type { Instance } from "../mapf/instance.ts";
import type { AnyEnvConfig } from "../schemas/env_config.ts";

/** Where a level came from. */
export type LevelOrigin = "start" | "new" | "edit";

/** One level of a replay buffer. */
export interface Level {
  /** Instance id (unique in the buffer). */
  id: string;
  /** The instance. */
  instance: Instance;
  /** Its score (positive value loss); higher is replayed sooner. */
  score: number;
  /** The stage it was last trained on or scored in. */
  seen: number;
  /** `start` (trained on in stage 0), `new` (drawn and scored), `edit` (an edited level). */
  origin: LevelOrigin;
  /** Latest success rate measured on it (null when never measured). */
  success: number | null;
  /** The level it was edited from (`edit` only). */
  parent: string | null;
}

/** What a rollout without learning measured on one instance. */
export interface MeasuredLevel {
  /** Episodes played. */
  episodes: number;
  /** Of which successful. */
  successes: number;
  /** Agent-steps taken. */
  agentSteps: number;
  /** Positive value loss (mean positive GAE advantage per agent-step). */
  pvl: number;
}

/** The outcome of an instance-level engineer: the buffer and how to replay it. */
export interface LevelSetProposal {
  /** The buffer after this stage. */
  levels: Level[];
  /** Replay probability of each level (sums to 1). */
  replay: number[];
  /** The configuration new levels are drawn from (describes the set). */
  source: AnyEnvConfig;
}

/** What an engineer spent rolling a policy out with no learning. */
export interface EngineerCost {
  /** Episodes played. */
  episodes: number;
  /** Agent-steps taken. */
  agentSteps: number;
}
