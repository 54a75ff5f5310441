// Test helper: small random instances (not a suite; the generator lives in mapf/).
import { BatchEnv } from "../mapf/batch_env.ts";
import { generate } from "../mapf/generator.ts";
import { bfsDistances } from "../mapf/grid.ts";
import { type Instance, parseInstanceLines } from "../mapf/instance.ts";
import { InstancePool } from "../mapf/pool.ts";
import { Rng } from "../mapf/rng.ts";
import { DEFAULT_OBS } from "./observation.ts";
import { ObservationEncoder } from "./observation_encoder.ts";

/** Reward weights that pay +1 on reaching the goal and nothing else. */
export const GOAL_ONLY_REWARD = {
  goal: 1,
  progress: 0,
  hole: 0,
  collision: 0,
  blocked: 0,
  step: 0,
} as const;

/** Random `size x size` instances with scattered holes and reachable goals. */
export function randomInstances(
  count: number,
  seed: number,
  opts: {
    size?: number;
    agents?: number;
    holes?: number;
    collision?: "fail" | "block";
    slip?: number;
  } = {},
): Instance[] {
  const { size = 6, agents = 2, holes = 0.1, collision = "fail", slip = 0 } =
    opts;
  const rng = new Rng(seed);
  const out: Instance[] = [];
  while (out.length < count) {
    const grid = new Uint8Array(size * size).map(
      () => (rng.float() < holes ? 1 : 0),
    );
    const free: number[] = [];
    grid.forEach((c, i) => c === 0 && free.push(i));
    if (free.length < 2 * agents) continue;
    rng.shuffle(free);
    const starts = free.slice(0, agents),
      goals = free.slice(agents, 2 * agents);
    let ok = true, maxD = 0;
    for (let a = 0; a < agents; a++) {
      const d = bfsDistances(grid, size, size, goals[a]!)[starts[a]!]!;
      if (d === 0xffff) ok = false;
      maxD = Math.max(maxD, d);
    }
    if (!ok) continue;
    const cells = Array.from(
      { length: size },
      (_, r) =>
        Array.from(
          grid.subarray(r * size, r * size + size),
          (c) => (c ? "H" : "."),
        ).join(""),
    );
    const pos = (c: number) => [Math.floor(c / size), c % size];
    out.push(
      parseInstanceLines(JSON.stringify({
        id: `t${seed}-${out.length}`,
        width: size,
        height: size,
        cells,
        starts: starts.map(pos),
        goals: goals.map(pos),
        slip,
        horizon: Math.max(4, 3 * maxD),
        collision,
        holes: "lethal",
        reference: null,
      }))[0]!,
    );
  }
  return out;
}

/**
 * `envs` environments over `instances` generated `preset` instances
 * (generator seed 1, environment seed 1) after three steps of random actions
 * (action seed 2), ended episodes reset after each step.
 */
export function randomlySteppedEnv(
  preset: "easy" | "medium" | "hard",
  instances: number,
  envs: number,
): BatchEnv {
  const pool = InstancePool.from(
    generate({ preset }, { count: instances, seed: 1 }).instances,
  );
  const env = new BatchEnv(pool, { envs, seed: 1 });
  env.resetAll();
  const rng = new Rng(2);
  const act = new Uint8Array(env.envs * env.maxAgents);
  for (let t = 0; t < 3; t++) {
    for (let i = 0; i < act.length; i++) act[i] = rng.int(5);
    env.step(act);
    env.resetDone();
  }
  return env;
}

/**
 * Observation rows of real agents: generated `easy` instances (default
 * radius-2 layout) after a few random steps, `rows` of them.
 */
export function realObservations(
  rows: number,
  preset: "easy" | "medium" | "hard" = "easy",
): { obs: Float32Array; size: number; rows: number } {
  const env = randomlySteppedEnv(preset, 64, rows);
  const enc = new ObservationEncoder(DEFAULT_OBS, env);
  const slots = new Int32Array(rows).map((_, i) => i * env.maxAgents);
  const obs = new Float32Array(rows * enc.size);
  enc.encode(slots, rows, obs);
  return { obs, size: enc.size, rows };
}
