/**
 * The MAPF-FrozenLake dynamics, batched: many environments stepped at once on
 * flat typed arrays, with no allocation per step.
 *
 * ## Rules (DESIGN §5)
 * One step, for every environment that has not ended:
 * 1. Each agent's action (`0` stay, `1` up, `2` down, `3` left, `4` right;
 *    larger values are treated as stay) is applied. Agents already on their
 *    goal stay there and ignore their action.
 * 2. Slip: a move is replaced, with probability `slip`, by one of the two
 *    perpendicular moves (each with probability `slip / 2`), drawn from the
 *    environment's own RNG ({@linkcode mulberry32}, seeded per episode). Stay
 *    never slips. Gymnasium's slippery FrozenLake is `slip = 2/3`.
 * 3. A move off the grid or into a wall leaves the agent where it is, and so
 *    does a move into a hole in hole mode `blocked` (event `bumped`).
 * 4. Collisions, on the targets of step 3: a vertex conflict is two agents
 *    with the same target cell (including an agent moving into a cell whose
 *    occupant stays); an edge conflict is two agents swapping cells.
 *    Following (moving into a cell its occupant leaves this step) and
 *    rotations of three or more agents are legal.
 *    - Mode `fail`: the agents move, and the episode ends as
 *      `vertex_collision` or `edge_collision`.
 *    - Mode `block`: conflicting moves are cancelled (event `blocked`), then
 *      any move into a cell whose occupant stays is cancelled too, repeated to
 *      a fixed point. The episode goes on.
 * 5. An agent that enters a hole in mode `lethal` falls: the episode ends as
 *    `hole`. If a hole and a collision happen in the same step, the outcome
 *    is `hole` (then vertex, then edge).
 * 6. An agent that reaches its goal stays there for the rest of the episode.
 *    When every agent is on its goal the outcome is `success`; otherwise,
 *    when `t` reaches the horizon, `timeout`.
 *
 * ## Interface
 * Environment `e`'s agent `a` lives in slot `e * maxAgents + a` of the
 * per-agent arrays ({@linkcode BatchEnv.pos}, {@linkcode BatchEnv.arrived},
 * {@linkcode BatchEnv.events}, and the `actions` passed to
 * {@linkcode BatchEnv.step}); slots beyond the instance's agent count hold
 * `pos = -1` and are ignored. Positions are cell indices
 * `row * width + col` of the environment's instance in the
 * {@linkcode InstancePool}.
 *
 * There is no auto-reset: an ended environment keeps its final state
 * (`done[e] = 1`, `outcome[e]`, final `pos`) and is skipped by later steps
 * until it is reset with {@linkcode BatchEnv.reset} or
 * {@linkcode BatchEnv.resetDone}. `ended[e]` is 1 only for the step in which
 * environment `e` ended, so a rollout loop reads rewards after `step` and
 * then calls `resetDone`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { BatchEnv, InstancePool } from "./mod.ts";
 * import { parseInstanceLines } from "./instance.ts";
 * const [inst] = parseInstanceLines(
 *   '{"width":3,"height":1,"cells":["..."],"starts":[[0,0]],"goals":[[0,2]],"horizon":5}',
 * );
 * const env = new BatchEnv(InstancePool.from([inst!]), { envs: 1 });
 * env.reset(0, 0, 1);
 * env.step(new Uint8Array([4]));
 * env.step(new Uint8Array([4]));
 * assert.equal(env.done[0], 1);
 * assert.equal(env.outcome[0], 1); // success
 * ```
 *
 * @module
 */
import { mix32, mulberry32 } from "./rng.ts";
import type { InstancePool } from "./pool.ts";
import {
  EDGE_COLLISION,
  EV_BLOCKED,
  EV_BUMPED,
  EV_EDGE,
  EV_FELL,
  EV_MOVED,
  EV_REACHED,
  EV_SLIPPED,
  EV_VERTEX,
  HOLE_FALL,
  RUNNING,
  SUCCESS,
  TIMEOUT,
  VERTEX_COLLISION,
} from "./outcome.ts";

/** Options of {@linkcode BatchEnv}. */
export interface BatchEnvOptions {
  /** Number of parallel environments. */
  envs: number;
  /** Agent slots per environment. @default pool.maxAgents */
  maxAgents?: number;
  /** Base seed of the episode seeds chosen by {@linkcode BatchEnv.resetDone}. @default 0 */
  seed?: number;
  /** Ignore the instances' slip (e.g. to replay solver plans). @default false */
  noSlip?: boolean;
}

/** Many MAPF-FrozenLake environments stepped together. */
export class BatchEnv {
  /** The instances environments are reset to. */
  readonly pool: InstancePool;
  /** Number of environments. */
  readonly envs: number;
  /** Agent slots per environment. */
  readonly maxAgents: number;
  /** Instance index of each environment (-1 before its first reset). */
  readonly instance: Int32Array;
  /** Agent count of each environment's instance. */
  readonly agentCount: Int32Array;
  /** Steps taken in the current episode. */
  readonly t: Int32Array;
  /** 1 once the episode has ended (until reset). */
  readonly done: Uint8Array;
  /** 1 only for environments whose episode ended in the latest step. */
  readonly ended: Uint8Array;
  /** Outcome code of each environment (see outcome.ts; 0 while running). */
  readonly outcome: Uint8Array;
  /** The (up to) two agents of the failure (-1 if none): `failAgents[2 * e]`, `failAgents[2 * e + 1]`. */
  readonly failAgents: Int16Array;
  /** Cell of each agent slot (-1 for unused slots). */
  readonly pos: Int32Array;
  /** Cell of each agent slot before the latest step. */
  readonly prevPos: Int32Array;
  /** 1 for agents on their goal. */
  readonly arrived: Uint8Array;
  /** Event bits of each agent in the latest step (see `EV_*` in outcome.ts). */
  readonly events: Uint8Array;
  /** Number of agents on their goal, per environment. */
  readonly arrivedCount: Int32Array;
  /** Episode counter of each environment (incremented by every reset). */
  readonly episode: Uint32Array;
  /** Seed of each environment's current episode. */
  readonly episodeSeed: Uint32Array;
  /** Slip RNG state of each environment. */
  readonly rngState: Uint32Array;

  #seed: number;
  #noSlip: boolean;
  #tgt: Int32Array;
  #curStamp: Int32Array;
  #curAgent: Int32Array;
  #tgtStamp: Int32Array;
  #tgtAgent: Int32Array;
  #tgtCount: Int32Array;
  #cancel: Uint8Array;
  #stamp = 0;

  /** Create `options.envs` environments over `pool` (reset them before stepping). */
  constructor(pool: InstancePool, options: BatchEnvOptions) {
    const envs = options.envs;
    const m = options.maxAgents ?? pool.maxAgents;
    if (!Number.isInteger(envs) || envs < 1) {
      throw new RangeError(`envs must be a positive integer (got ${envs})`);
    }
    if (m < pool.maxAgents) {
      throw new RangeError(
        `maxAgents ${m} is smaller than the pool's largest agent count ${pool.maxAgents}`,
      );
    }
    this.pool = pool;
    this.envs = envs;
    this.maxAgents = m;
    this.#seed = (options.seed ?? 0) >>> 0;
    this.#noSlip = options.noSlip ?? false;
    this.instance = new Int32Array(envs).fill(-1);
    this.agentCount = new Int32Array(envs);
    this.t = new Int32Array(envs);
    this.done = new Uint8Array(envs).fill(1);
    this.ended = new Uint8Array(envs);
    this.outcome = new Uint8Array(envs);
    this.failAgents = new Int16Array(2 * envs).fill(-1);
    this.pos = new Int32Array(envs * m).fill(-1);
    this.prevPos = new Int32Array(envs * m).fill(-1);
    this.arrived = new Uint8Array(envs * m);
    this.events = new Uint8Array(envs * m);
    this.arrivedCount = new Int32Array(envs);
    this.episode = new Uint32Array(envs);
    this.episodeSeed = new Uint32Array(envs);
    this.rngState = new Uint32Array(envs);
    const cells = Math.max(1, pool.maxCells);
    this.#tgt = new Int32Array(m);
    this.#curStamp = new Int32Array(cells);
    this.#curAgent = new Int32Array(cells);
    this.#tgtStamp = new Int32Array(cells);
    this.#tgtAgent = new Int32Array(cells);
    this.#tgtCount = new Int32Array(cells);
    this.#cancel = new Uint8Array(m);
  }

  /**
   * Start a new episode of environment `env` on pool instance `instance`,
   * with slip RNG seeded by `episodeSeed`.
   */
  reset(env: number, instance: number, episodeSeed: number): void {
    const pool = this.pool;
    if (instance < 0 || instance >= pool.count) {
      throw new RangeError(
        `instance ${instance} is not in the pool (0..${pool.count - 1})`,
      );
    }
    const m = this.maxAgents;
    const n = pool.agents[instance]!;
    const off = pool.agentOffset[instance]!;
    const base = env * m;
    this.instance[env] = instance;
    this.agentCount[env] = n;
    this.t[env] = 0;
    this.done[env] = 0;
    this.ended[env] = 0;
    this.outcome[env] = RUNNING;
    this.failAgents[2 * env] = -1;
    this.failAgents[2 * env + 1] = -1;
    this.arrivedCount[env] = 0;
    this.episode[env] = (this.episode[env]! + 1) >>> 0;
    this.episodeSeed[env] = episodeSeed >>> 0;
    this.rngState[env] = mix32(episodeSeed ^ 0x5bd1e995);
    let arrived = 0;
    for (let a = 0; a < m; a++) {
      const p = a < n ? pool.starts[off + a]! : -1;
      this.pos[base + a] = p;
      this.prevPos[base + a] = p;
      const on = a < n && p === pool.goals[off + a] ? 1 : 0;
      this.arrived[base + a] = on;
      arrived += on;
      this.events[base + a] = 0;
    }
    this.arrivedCount[env] = arrived;
  }

  /** The episode seed {@linkcode resetDone} uses for environment `env`'s next episode. */
  nextEpisodeSeed(env: number): number {
    return mix32(
      this.#seed ^
        mix32((Math.imul(env, 0x9e3779b1) + this.episode[env]!) >>> 0),
    );
  }

  /**
   * Reset every environment, environment `e` to instance `choose(e)`.
   * @param choose Instance of each environment. @default e => e % pool.count
   */
  resetAll(choose: (env: number) => number = (e) => e % this.pool.count): void {
    for (let e = 0; e < this.envs; e++) {
      this.reset(e, choose(e), this.nextEpisodeSeed(e));
    }
  }

  /**
   * Reset every ended environment to instance `choose(e)` with a fresh
   * episode seed. Returns how many were reset.
   * @param choose @default the same instance again
   */
  resetDone(choose?: (env: number) => number): number {
    let k = 0;
    for (let e = 0; e < this.envs; e++) {
      if (this.done[e] === 1) {
        const inst = choose ? choose(e) : this.instance[e]!;
        if (inst < 0) continue;
        this.reset(e, inst, this.nextEpisodeSeed(e));
        k++;
      }
    }
    return k;
  }

  /**
   * Advance every running environment by one step.
   *
   * @param actions One action per agent slot (`envs * maxAgents`).
   * @returns How many environments ended in this step.
   */
  step(actions: Uint8Array): number {
    if (actions.length < this.envs * this.maxAgents) {
      throw new RangeError(
        `actions has ${actions.length} entries; expected envs * maxAgents = ${
          this.envs * this.maxAgents
        }`,
      );
    }
    if (this.#stamp > 0x3fffffff) this.#rewindStamps();
    let endedCount = 0;
    const done = this.done;
    const ended = this.ended;
    for (let e = 0; e < this.envs; e++) {
      if (done[e] !== 0) {
        ended[e] = 0;
        continue;
      }
      if (this.#stepEnv(e, actions)) endedCount++;
    }
    return endedCount;
  }

  /** Step environment `e`; returns true if its episode ended. */
  #stepEnv(e: number, actions: Uint8Array): boolean {
    const pool = this.pool;
    const inst = this.instance[e]!;
    const n = this.agentCount[e]!;
    const W = pool.width[inst]!;
    const cells = pool.cellCount[inst]!;
    const gOff = pool.cellOffset[inst]!;
    const aOff = pool.agentOffset[inst]!;
    const grid = pool.grid;
    const goals = pool.goals;
    const slip = this.#noSlip ? 0 : pool.slip[inst]!;
    const holesBlocked = pool.holes[inst] === 1;
    const block = pool.collision[inst] === 1;
    const base = e * this.maxAgents;
    const pos = this.pos;
    const prev = this.prevPos;
    const arrived = this.arrived;
    const events = this.events;
    const tgt = this.#tgt;
    const curStamp = this.#curStamp;
    const curAgent = this.#curAgent;
    const tgtStamp = this.#tgtStamp;
    const tgtAgent = this.#tgtAgent;
    const stamp = ++this.#stamp;

    // 1-3: targets (after slip, bumps).
    let anyMove = false;
    let fell = 0;
    for (let a = 0; a < n; a++) {
      const i = base + a;
      const p = pos[i]!;
      prev[i] = p;
      curStamp[p] = stamp;
      curAgent[p] = a;
      if (arrived[i] === 1) {
        tgt[a] = p;
        events[i] = 0;
        continue;
      }
      let act = actions[i]!;
      let ev = 0;
      if (act === 0 || act > 4) {
        tgt[a] = p;
        events[i] = 0;
        continue;
      }
      if (slip > 0) {
        const u = mulberry32(this.rngState, e) / 4294967296;
        if (u < slip) {
          ev = EV_SLIPPED;
          const second = u >= slip * 0.5;
          // up/down slip to left/right; left/right slip to up/down
          act = act <= 2 ? (second ? 4 : 3) : (second ? 2 : 1);
        }
      }
      let q: number;
      const c = p % W;
      if (act === 1) q = p >= W ? p - W : -1;
      else if (act === 2) q = p + W < cells ? p + W : -1;
      else if (act === 3) q = c > 0 ? p - 1 : -1;
      else q = c < W - 1 ? p + 1 : -1;
      if (q < 0) {
        q = p;
        ev |= EV_BUMPED;
      } else {
        const code = grid[gOff + q]!;
        if (code === 2 || (code === 1 && holesBlocked)) {
          q = p;
          ev |= EV_BUMPED;
        } else {
          anyMove = true;
          if (code === 1) fell++;
        }
      }
      tgt[a] = q;
      events[i] = ev;
    }

    // 4: collisions.
    let vertex = 0, edge = 0;
    let fa = -1, fb = -1;
    if (anyMove) {
      if (!block) {
        for (let a = 0; a < n; a++) {
          const q = tgt[a]!;
          if (tgtStamp[q] === stamp) {
            const b = tgtAgent[q]!;
            events[base + a]! |= EV_VERTEX;
            events[base + b]! |= EV_VERTEX;
            if (vertex === 0) {
              fa = b;
              fb = a;
            }
            vertex++;
          } else {
            tgtStamp[q] = stamp;
            tgtAgent[q] = a;
          }
        }
        for (let a = 0; a < n; a++) {
          const q = tgt[a]!;
          const p = pos[base + a]!;
          if (q === p || curStamp[q] !== stamp) continue;
          const b = curAgent[q]!;
          if (b > a && tgt[b] === p) {
            events[base + a]! |= EV_EDGE;
            events[base + b]! |= EV_EDGE;
            if (vertex === 0 && edge === 0) {
              fa = a;
              fb = b;
            }
            edge++;
          }
        }
      } else {
        this.#resolveBlock(base, n, stamp);
        // moves into holes may have been cancelled
        fell = 0;
        for (let a = 0; a < n; a++) {
          if (tgt[a] !== pos[base + a] && grid[gOff + tgt[a]!] === 1) fell++;
        }
      }
    }

    // 5-6: apply.
    let arrivedCount = this.arrivedCount[e]!;
    let firstFall = -1, secondFall = -1;
    for (let a = 0; a < n; a++) {
      const i = base + a;
      const q = tgt[a]!;
      if (q !== prev[i]) {
        pos[i] = q;
        let ev = events[i]! | EV_MOVED;
        if (fell > 0 && grid[gOff + q] === 1) {
          ev |= EV_FELL;
          if (firstFall < 0) firstFall = a;
          else if (secondFall < 0) secondFall = a;
        } else if (q === goals[aOff + a]) {
          arrived[i] = 1;
          arrivedCount++;
          ev |= EV_REACHED;
        }
        events[i] = ev;
      }
    }
    this.arrivedCount[e] = arrivedCount;
    const t = ++this.t[e]!;
    let outcome = RUNNING;
    if (firstFall >= 0) {
      outcome = HOLE_FALL;
      fa = firstFall;
      fb = secondFall;
    } else if (vertex > 0) outcome = VERTEX_COLLISION;
    else if (edge > 0) outcome = EDGE_COLLISION;
    else if (arrivedCount === n) outcome = SUCCESS;
    else if (t >= pool.horizon[inst]!) outcome = TIMEOUT;
    if (outcome !== RUNNING) {
      this.outcome[e] = outcome;
      this.done[e] = 1;
      this.ended[e] = 1;
      if (outcome !== SUCCESS && outcome !== TIMEOUT) {
        this.failAgents[2 * e] = fa;
        this.failAgents[2 * e + 1] = fb;
      }
      return true;
    }
    this.ended[e] = 0;
    return false;
  }

  /** Mode `block`: cancel conflicting moves until none remain. */
  #resolveBlock(base: number, n: number, stamp0: number): void {
    const pos = this.pos;
    const events = this.events;
    const tgt = this.#tgt;
    const cancel = this.#cancel;
    const curStamp = this.#curStamp;
    const curAgent = this.#curAgent;
    const tgtStamp = this.#tgtStamp;
    const tgtCount = this.#tgtCount;
    let changed = true;
    while (changed) {
      changed = false;
      const stamp = ++this.#stamp;
      for (let a = 0; a < n; a++) {
        const q = tgt[a]!;
        if (tgtStamp[q] !== stamp) {
          tgtStamp[q] = stamp;
          tgtCount[q] = 1;
        } else tgtCount[q]!++;
      }
      // decide on the current targets, then apply, so both agents of a swap
      // are labelled as an edge conflict
      for (let a = 0; a < n; a++) {
        const q = tgt[a]!;
        const p = pos[base + a]!;
        let bit = 0;
        if (q !== p) {
          if (tgtCount[q]! > 1) bit = EV_VERTEX;
          else if (curStamp[q] === stamp0) {
            const b = curAgent[q]!;
            const pb = pos[base + b]!;
            if (tgt[b] === pb) bit = EV_VERTEX; // the occupant stays
            else if (tgt[b] === p) bit = EV_EDGE; // swap
          }
        }
        cancel[a] = bit;
      }
      for (let a = 0; a < n; a++) {
        const bit = cancel[a]!;
        if (bit !== 0) {
          tgt[a] = pos[base + a]!;
          events[base + a]! |= bit | EV_BLOCKED;
          changed = true;
        }
      }
    }
  }

  /** Restart the occupancy stamps before they overflow. */
  #rewindStamps(): void {
    this.#curStamp.fill(0);
    this.#tgtStamp.fill(0);
    this.#stamp = 0;
  }
}
