/**
 * Episode outcomes and per-agent step events of the MAPF-FrozenLake dynamics.
 *
 * @module
 */

/** Outcome code: the episode has not ended (or was cut off while running). */
export const RUNNING = 0;
/** Outcome code: every agent is on its goal. */
export const SUCCESS = 1;
/** Outcome code: an agent entered a hole (hole mode `lethal`). */
export const HOLE_FALL = 2;
/** Outcome code: two agents in one cell at one time (collision mode `fail`). */
export const VERTEX_COLLISION = 3;
/** Outcome code: two agents swapped cells (collision mode `fail`). */
export const EDGE_COLLISION = 4;
/** Outcome code: the horizon was reached first. */
export const TIMEOUT = 5;
/** Outcome code: a plan (e.g. from an LLM) could not be parsed or is malformed. */
export const INVALID_PLAN = 6;

/** Outcome names, as used in trajectories, findings and reports. */
export type OutcomeName =
  | "running"
  | "success"
  | "hole"
  | "vertex_collision"
  | "edge_collision"
  | "timeout"
  | "invalid_plan";

/** Names indexed by outcome code. */
export const OUTCOME_NAMES: readonly OutcomeName[] = [
  "running",
  "success",
  "hole",
  "vertex_collision",
  "edge_collision",
  "timeout",
  "invalid_plan",
];

/** Outcome code of a name, or -1. */
export function outcomeCode(name: string): number {
  return (OUTCOME_NAMES as readonly string[]).indexOf(name);
}

/** Event bit: the agent arrived on its goal this step (it stays there from now on). */
export const EV_REACHED = 1;
/** Event bit: the agent entered a hole (hole mode `lethal`). */
export const EV_FELL = 2;
/** Event bit: the agent was in a vertex conflict (same target cell as another agent, or moving into a staying agent). */
export const EV_VERTEX = 4;
/** Event bit: the agent was in an edge conflict (swap). */
export const EV_EDGE = 8;
/** Event bit: the agent's move was cancelled by collision resolution (mode `block`). */
export const EV_BLOCKED = 16;
/** Event bit: the agent's move slipped to a perpendicular move. */
export const EV_SLIPPED = 32;
/** Event bit: the move hit the grid edge, a wall, or a hole in mode `blocked` (the agent stayed). */
export const EV_BUMPED = 64;
/** Event bit: the agent changed cell. */
export const EV_MOVED = 128;

/** Names of the event bits, lowest bit first. */
export const EVENT_NAMES: readonly string[] = [
  "reached",
  "fell",
  "vertex",
  "edge",
  "blocked",
  "slipped",
  "bumped",
  "moved",
];

/** The names of the bits set in an event byte, e.g. `["slipped", "moved"]`. */
export function eventNames(bits: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < 8; i++) if (bits & (1 << i)) out.push(EVENT_NAMES[i]!);
  return out;
}
