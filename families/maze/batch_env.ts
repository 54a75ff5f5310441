/**
 * The maze dynamics, batched: many environments stepped at once on flat
 * typed arrays, with no allocation per step, and the literature's partial
 * egocentric view as the observation.
 *
 * ## Rules (MiniGrid's maze, as in `minimax`'s AMaze)
 * One step, for every environment that has not ended: action `0` turns the
 * agent left, `1` right, `2` moves it one cell forward unless a wall or the
 * grid's edge is there. Moving forward into the goal ends the episode as a
 * success with reward `1 - 0.9 * t / maxSteps` (`t` counts this step);
 * every other step's reward is 0. When `t` reaches the maze's `maxSteps`
 * the episode ends as a timeout. Larger action values do nothing.
 *
 * ## Observation ({@linkcode MAZE_OBS_SIZE} values per environment)
 * The 5 x 5 cells ahead of the agent in its own frame (the agent's cell at
 * the middle of the nearest row, four rows forward, two columns to each
 * side), two planes: wall (cells off the grid count as walls), goal; then
 * the agent's direction one-hot (4). The agent does not see its own cell's
 * contents (there is nothing else there).
 *
 * ## Interface
 * One stream (agent) per environment: stream `e` is environment `e`. There
 * is no auto-reset: an ended environment keeps its final state until
 * {@linkcode MazeBatchEnv.reset} or {@linkcode MazeBatchEnv.resetDone};
 * `ended[e]` is 1 only in the step in which environment `e` ended.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MazeBatchEnv } from "./batch_env.ts";
 * import { mazeFromRows } from "./maze.ts";
 * const maze = mazeFromRows("line", ["000"], [0, 0], [2, 0], 0, 10);
 * const env = new MazeBatchEnv([maze], { envs: 1 });
 * env.resetAll();
 * env.step(new Uint8Array([2])); // forward to the middle cell
 * env.step(new Uint8Array([2])); // forward into the goal
 * assert.equal(env.outcome[0], 1);
 * assert.ok(Math.abs(env.reward[0]! - (1 - 0.9 * 2 / 10)) < 1e-6);
 * ```
 *
 * @module
 */
import {
  DIR_DX,
  DIR_DY,
  FORWARD,
  type Maze,
  MAZE_ACTIONS,
  TURN_LEFT,
  TURN_RIGHT,
} from "./maze.ts";

/** Side of the egocentric view. */
export const VIEW = 5;
/** Values per observation row: wall and goal planes of the view, then the direction one-hot. */
export const MAZE_OBS_SIZE = VIEW * VIEW * 2 + 4;
/** Outcome code: still running. */
export const MAZE_RUNNING = 0;
/** Outcome code: the goal was reached. */
export const MAZE_SUCCESS = 1;
/** Outcome code: the step limit was reached. */
export const MAZE_TIMEOUT = 2;
/** Outcome names by code. */
export const MAZE_OUTCOME_NAMES: readonly string[] = [
  "running",
  "success",
  "timeout",
];

/** Options of {@linkcode MazeBatchEnv}. */
export interface MazeBatchEnvOptions {
  /** Parallel environments. */
  readonly envs: number;
}

/** Many mazes stepped together. */
export class MazeBatchEnv {
  /** Number of environments. */
  readonly envs: number;
  /** Streams per environment (one agent). */
  readonly slots = 1;
  /** Values per observation row. */
  readonly observationSize = MAZE_OBS_SIZE;
  /** Actions (left, right, forward). */
  readonly actions = MAZE_ACTIONS;
  /** Number of instances environments are reset to. */
  readonly instances: number;
  /** The longest step limit among the instances. */
  readonly maxHorizon: number;
  /** Outcome names by code. */
  readonly outcomeNames: readonly string[] = MAZE_OUTCOME_NAMES;
  /** Outcome code of a success. */
  readonly successCode = MAZE_SUCCESS;
  /** Instance of each environment (-1 before its first reset). */
  readonly instance: Int32Array;
  /** The agent's cell. */
  readonly pos: Int32Array;
  /** The agent's direction. */
  readonly dir: Uint8Array;
  /** Steps taken in the current episode. */
  readonly t: Int32Array;
  /** 1 once the episode has ended (until reset). */
  readonly done: Uint8Array;
  /** 1 only for environments whose episode ended in the latest step. */
  readonly ended: Uint8Array;
  /** Outcome code (0 while running). */
  readonly outcome: Uint8Array;
  /** Reward of each environment in the latest step. */
  readonly reward: Float32Array;
  readonly #walls: Uint8Array;
  readonly #off: Int32Array;
  readonly #w: Int32Array;
  readonly #h: Int32Array;
  readonly #start: Int32Array;
  readonly #dir0: Uint8Array;
  readonly #goal: Int32Array;
  readonly #max: Int32Array;

  /** `options.envs` environments over `mazes` (reset them before stepping). */
  constructor(mazes: readonly Maze[], options: MazeBatchEnvOptions) {
    const envs = options.envs;
    if (!Number.isInteger(envs) || envs < 1) {
      throw new RangeError(`envs must be a positive integer (got ${envs})`);
    }
    if (mazes.length === 0) {
      throw new RangeError("Cannot build maze environments on no mazes");
    }
    this.envs = envs;
    this.instances = mazes.length;
    const n = mazes.length;
    this.#off = new Int32Array(n);
    this.#w = new Int32Array(n);
    this.#h = new Int32Array(n);
    this.#start = new Int32Array(n);
    this.#dir0 = new Uint8Array(n);
    this.#goal = new Int32Array(n);
    this.#max = new Int32Array(n);
    let total = 0, maxH = 0;
    mazes.forEach((m, i) => {
      this.#off[i] = total;
      total += m.width * m.height;
      maxH = Math.max(maxH, m.maxSteps);
    });
    this.maxHorizon = maxH;
    this.#walls = new Uint8Array(total);
    mazes.forEach((m, i) => {
      this.#walls.set(m.walls, this.#off[i]!);
      this.#w[i] = m.width;
      this.#h[i] = m.height;
      this.#start[i] = m.start;
      this.#dir0[i] = m.dir;
      this.#goal[i] = m.goal;
      this.#max[i] = m.maxSteps;
    });
    this.instance = new Int32Array(envs).fill(-1);
    this.pos = new Int32Array(envs);
    this.dir = new Uint8Array(envs);
    this.t = new Int32Array(envs);
    this.done = new Uint8Array(envs).fill(1);
    this.ended = new Uint8Array(envs);
    this.outcome = new Uint8Array(envs);
    this.reward = new Float32Array(envs);
  }

  /** Start a new episode of environment `env` on instance `instance`. */
  reset(env: number, instance: number): void {
    if (!(instance >= 0 && instance < this.instances)) {
      throw new RangeError(
        `instance ${instance} is not among the ${this.instances} mazes`,
      );
    }
    this.instance[env] = instance;
    this.pos[env] = this.#start[instance]!;
    this.dir[env] = this.#dir0[instance]!;
    this.t[env] = 0;
    this.done[env] = 0;
    this.ended[env] = 0;
    this.outcome[env] = MAZE_RUNNING;
    this.reward[env] = 0;
  }

  /** Reset every environment, `choose(e)` naming its instance (default `e % instances`). */
  resetAll(choose: (env: number) => number = (e) => e % this.instances): void {
    for (let e = 0; e < this.envs; e++) this.reset(e, choose(e));
  }

  /** Reset the ended environments (`choose` as in resetAll); returns how many. */
  resetDone(
    choose: (env: number) => number = (e) => e % this.instances,
  ): number {
    let n = 0;
    for (let e = 0; e < this.envs; e++) {
      if (this.done[e]) {
        this.reset(e, choose(e));
        n++;
      }
    }
    return n;
  }

  /** Start environment `env` again on `instance` (a GRPO group's replay). */
  restart(env: number, instance: number): void {
    this.reset(env, instance);
  }

  /** The streams still acting, into `out`; returns their count. */
  activeSlots(out: Int32Array): number {
    let n = 0;
    for (let e = 0; e < this.envs; e++) if (!this.done[e]) out[n++] = e;
    return n;
  }

  /** Step every running environment with `actions[e]`; returns how many ended. */
  step(actions: Uint8Array): number {
    let endedCount = 0;
    for (let e = 0; e < this.envs; e++) {
      this.ended[e] = 0;
      if (this.done[e]) continue;
      const i = this.instance[e]!, w = this.#w[i]!, h = this.#h[i]!;
      const t = this.t[e]! + 1;
      this.t[e] = t;
      let r = 0;
      const a = actions[e]!, d = this.dir[e]!;
      if (a === TURN_LEFT) this.dir[e] = (d + 3) & 3;
      else if (a === TURN_RIGHT) this.dir[e] = (d + 1) & 3;
      else if (a === FORWARD) {
        const p = this.pos[e]!, row = (p / w) | 0, col = p - row * w;
        const nr = row + DIR_DY[d]!, nc = col + DIR_DX[d]!;
        if (nr >= 0 && nr < h && nc >= 0 && nc < w) {
          const f = nr * w + nc;
          if (f === this.#goal[i]) {
            r = 1 - 0.9 * t / this.#max[i]!;
            this.outcome[e] = MAZE_SUCCESS;
          } else if (!this.#walls[this.#off[i]! + f]) this.pos[e] = f;
        }
      }
      if (this.outcome[e] === MAZE_RUNNING && t >= this.#max[i]!) {
        this.outcome[e] = MAZE_TIMEOUT;
      }
      this.reward[e] = r;
      if (this.outcome[e] !== MAZE_RUNNING) {
        this.done[e] = 1;
        this.ended[e] = 1;
        endedCount++;
      }
    }
    return endedCount;
  }

  /**
   * Rewards and episode-end flags of the streams `slots[0..n)` that acted in
   * the latest step (call right after `step`).
   */
  rewards(
    slots: Int32Array,
    n: number,
    reward: Float32Array,
    done: Uint8Array,
  ): void {
    for (let k = 0; k < n; k++) {
      const e = slots[k]!;
      reward[k] = this.reward[e]!;
      done[k] = this.ended[e]!;
    }
  }

  /**
   * Observation rows of the streams `slots[0..n)` into `buf.obs` rows
   * `row0 ..` ({@linkcode MAZE_OBS_SIZE} values each).
   */
  observe(
    slots: Int32Array,
    n: number,
    buf: { readonly obs: Float32Array },
    row0 = 0,
  ): void {
    this.observeInto(slots, n, buf.obs, row0);
  }

  /** {@linkcode observe} into a plain array. */
  observeInto(slots: Int32Array, n: number, out: Float32Array, row0 = 0): void {
    const V = VIEW, half = V >> 1, P = V * V;
    for (let k = 0; k < n; k++) {
      const e = slots[k]!, i = this.instance[e]!;
      const w = this.#w[i]!,
        h = this.#h[i]!,
        off = this.#off[i]!,
        goal = this.#goal[i]!;
      const p = this.pos[e]!,
        row = (p / w) | 0,
        col = p - row * w,
        d = this.dir[e]!;
      const fx = DIR_DX[d]!,
        fy = DIR_DY[d]!,
        rx = DIR_DX[(d + 1) & 3]!,
        ry = DIR_DY[(d + 1) & 3]!;
      const base = (row0 + k) * MAZE_OBS_SIZE;
      out.fill(0, base, base + MAZE_OBS_SIZE);
      for (let f = 0; f < V; f++) {
        for (let l = -half; l <= half; l++) {
          const c = col + f * fx + l * rx, r = row + f * fy + l * ry;
          // view row 0 is the farthest, the agent's row is the last (as in the image)
          const v = (V - 1 - f) * V + (l + half);
          if (r < 0 || r >= h || c < 0 || c >= w) out[base + v] = 1;
          else {
            const cell = r * w + c;
            if (this.#walls[off + cell]) out[base + v] = 1;
            else if (cell === goal) out[base + P + v] = 1;
          }
        }
      }
      out[base + 2 * P + d] = 1;
    }
  }
}

/**
 * The trainer's view of `mazes`: their count and a builder of batched
 * environments over them (what `Trainer` takes in place of a MAPF pool).
 */
export function mazeTrainingSource(mazes: readonly Maze[]): {
  readonly count: number;
  create(
    options: { readonly envs: number; readonly seed: number },
  ): MazeBatchEnv;
} {
  return {
    count: mazes.length,
    create: (options) => new MazeBatchEnv(mazes, { envs: options.envs }),
  };
}
