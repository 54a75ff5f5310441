// Hand-made episodes for engineer/ tests.
import type { EpisodeView } from "./episode.ts";
import type { Outcome } from "../schemas/findings.ts";
import type { AnyEnvConfig, EnvConfig } from "../schemas/env_config.ts";
import { diagnose } from "./diagnose.ts";

/** Options of {@linkcode makeEpisode}. */
export interface EpisodeSpec {
  /** Rows of `.`, `H`, `#`. */
  map: string[];
  /** Goal (row, col) per agent. */
  goals: [number, number][];
  /** Per step, per agent (row, col); the first row is the start. */
  path: [number, number][][];
  /** Per step, per agent action (0..4); length path.length - 1. */
  actions?: number[][];
  outcome: Outcome;
  failAgents?: number[];
  horizon?: number;
  referenceSoc?: number;
  referenceMakespan?: number;
  component?: number;
  config?: EnvConfig;
}

/** Build an {@linkcode EpisodeView} from a readable spec. */
export function makeEpisode(s: EpisodeSpec): EpisodeView {
  const height = s.map.length;
  const width = s.map[0]!.length;
  const cells = new Uint8Array(width * height);
  s.map.forEach((row, r) => {
    for (let c = 0; c < width; c++) {
      cells[r * width + c] = row[c] === "H" ? 1 : row[c] === "#" ? 2 : 0;
    }
  });
  const agents = s.goals.length;
  const idx = ([r, c]: [number, number]) => r * width + c;
  const positions = new Int32Array(s.path.length * agents);
  s.path.forEach((step, t) =>
    step.forEach((p, i) => (positions[t * agents + i] = idx(p)))
  );
  const steps = s.path.length - 1;
  const actions = s.actions === undefined
    ? undefined
    : Uint8Array.from(s.actions.flat());
  return {
    width,
    height,
    cells,
    agents,
    starts: Int32Array.from(s.path[0]!.map(idx)),
    goals: Int32Array.from(s.goals.map(idx)),
    steps,
    positions,
    ...(actions === undefined ? {} : { actions }),
    outcome: s.outcome,
    failAgents: s.failAgents ?? [],
    horizon: s.horizon ?? 3 * Math.max(1, steps),
    referenceSoc: s.referenceSoc ?? steps * agents,
    referenceMakespan: s.referenceMakespan ?? steps,
    component: s.component ?? 0,
    ...(s.config === undefined ? {} : { config: s.config }),
  };
}

/** A successful 2-agent episode on a 3x3 map (agents swap corners via a detour). */
export function successEpisode(component = 0): EpisodeView {
  return makeEpisode({
    map: ["...", "...", "..."],
    goals: [[0, 2], [2, 0]],
    path: [
      [[0, 0], [2, 2]],
      [[0, 1], [2, 1]],
      [[0, 2], [2, 0]],
    ],
    actions: [[4, 3], [4, 3]],
    outcome: "success",
    referenceSoc: 4,
    referenceMakespan: 2,
    component,
  });
}

/** Agent 0 intends right, slips down into a hole. */
export function slipHoleEpisode(component = 0): EpisodeView {
  return makeEpisode({
    map: ["...", ".H.", "..."],
    goals: [[0, 2]],
    path: [[[0, 0]], [[0, 1]], [[1, 1]]],
    actions: [[4], [4]],
    outcome: "hole",
    failAgents: [0],
    referenceSoc: 2,
    referenceMakespan: 2,
    component,
  });
}

/** Two agents meet in a one-cell-wide corridor. */
export function corridorCollisionEpisode(component = 0): EpisodeView {
  return makeEpisode({
    map: ["#####", ".....", "#####"],
    goals: [[1, 4], [1, 0]],
    path: [
      [[1, 0], [1, 4]],
      [[1, 1], [1, 3]],
      [[1, 2], [1, 2]],
    ],
    actions: [[4, 3], [4, 3]],
    outcome: "vertex_collision",
    failAgents: [0, 1],
    referenceSoc: 10,
    referenceMakespan: 5,
    component,
  });
}

/** A timeout: agent 0 oscillates, agent 1 never moves. */
export function oscillationTimeoutEpisode(component = 0): EpisodeView {
  return makeEpisode({
    map: ["....", "....", "...."],
    goals: [[0, 3], [2, 3]],
    path: [
      [[0, 0], [2, 0]],
      [[0, 1], [2, 0]],
      [[0, 0], [2, 0]],
      [[0, 1], [2, 0]],
      [[0, 0], [2, 0]],
    ],
    actions: [[4, 0], [3, 0], [4, 0], [3, 0]],
    outcome: "timeout",
    horizon: 4,
    referenceSoc: 6,
    referenceMakespan: 3,
    component,
  });
}

/**
 * Findings of `config` at success rate `success` over 100 episodes (200
 * agent-episodes): an empty set diagnosed, its numbers patched.
 */
export function findingsAt(success: number, config: AnyEnvConfig) {
  const f = diagnose([], { seed: 1, config });
  return {
    ...f,
    episodes: 100,
    agent_episodes: 200,
    success_rate: success,
    agent_success_rate: success,
  };
}

/**
 * The llm engineer's counters after one call whose reply was cut off at the
 * token limit twice: asked, re-asked once, then the fallback kept.
 */
export const CUT_OFF_TWICE_LLM_STATS = {
  calls: 1,
  requests: 2,
  reasks: 1,
  clamped: 0,
  truncated: 2,
  fallback: 1,
  cached: 0,
};
