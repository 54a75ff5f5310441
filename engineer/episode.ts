/**
 * The view of one rolled-out episode that `diagnose` reads.
 *
 * It is deliberately small and independent of how rollouts are stored:
 * {@linkcode episodesFromRollouts} (in `from_rollouts.ts`) builds it from the
 * MAPF trajectory format; tests build it by hand.
 *
 * Conventions: cells are row-major indices `row * width + col`; step `t`
 * positions are those after `t` joint actions (`positions[t * agents + i]`,
 * `t = 0..steps`); actions are `0 stay, 1 up, 2 down, 3 left, 4 right`
 * (`actions[t * agents + i]` moves from step `t` to `t + 1`).
 *
 * @module
 */
import type { EnvConfig } from "../schemas/env_config.ts";
import type { Outcome } from "../schemas/findings.ts";

/** Cell codes of {@linkcode EpisodeView.cells}. */
export const CELL = { free: 0, hole: 1, wall: 2 } as const;

/** One episode, as diagnose reads it. */
export interface EpisodeView {
  /** Grid width (columns). */
  readonly width: number;
  /** Grid height (rows). */
  readonly height: number;
  /** Row-major cell codes ({@linkcode CELL}). */
  readonly cells: Uint8Array;
  /** Number of agents. */
  readonly agents: number;
  /** Start cell of each agent. */
  readonly starts: Int32Array;
  /** Goal cell of each agent. */
  readonly goals: Int32Array;
  /** Joint actions executed (the trajectory has `steps + 1` position rows). */
  readonly steps: number;
  /** Positions, `(steps + 1) * agents`. */
  readonly positions: Int32Array;
  /** Actions, `steps * agents` (optional: deviations need it). */
  readonly actions?: Uint8Array;
  /** How the episode ended. */
  readonly outcome: Outcome;
  /** Agents involved in the failure (empty on success and timeout). */
  readonly failAgents: readonly number[];
  /** Episode horizon in steps. */
  readonly horizon: number;
  /** Reference (solver) sum-of-costs. */
  readonly referenceSoc: number;
  /** Reference makespan. */
  readonly referenceMakespan: number;
  /** Mixture component the instance was drawn from. */
  readonly component: number;
  /**
   * Measured path interaction of the instance (fraction of agent pairs whose
   * shortest paths collide; the paper's conflict density), when known.
   */
  readonly measuredInteraction?: number;
  /** The component's configuration, when known (per-dimension breakdowns use it). */
  readonly config?: EnvConfig;
}

/** Row/column deltas of the five actions. */
export const ACTION_DELTAS: readonly (readonly [number, number])[] = [
  [0, 0],
  [-1, 0],
  [1, 0],
  [0, -1],
  [0, 1],
];
