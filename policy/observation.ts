/**
 * Per-agent observations of MAPF-FrozenLake, the input of every policy.
 *
 * ## Layout, version {@linkcode OBS_VERSION} (the one place it is defined)
 *
 * One row of {@linkcode obsSize}`(spec)` float32 values per agent, with
 * `S = 2 * radius + 1` (the window side) and `C = 6` channels:
 *
 * 1. **Egocentric window**, `C x S x S` values, channel-major
 *    (`index = ch * S * S + (dr + radius) * S + (dc + radius)`, where `dr`
 *    and `dc` are the row/column offsets from the agent, row 0 on top), each
 *    0 or 1:
 *
 *    | ch | meaning |
 *    | -- | ------- |
 *    | 0 | hole |
 *    | 1 | wall |
 *    | 2 | another agent stands there (including agents parked on their goal) |
 *    | 3 | the agent's own goal |
 *    | 4 | another agent's goal |
 *    | 5 | outside the grid |
 *
 *    (A PyTorch user reshapes `obs[:, :C*S*S]` to `[batch, C, S, S]`.)
 * 2. **Scalar features**, {@linkcode SCALAR_FEATURES} values, at offset
 *    `C * S * S`:
 *
 *    | k | feature | range |
 *    | - | ------- | ----- |
 *    | 0 | goal column offset `(goal_col - col) / max(width, height)` | -1..1 |
 *    | 1 | goal row offset `(goal_row - row) / max(width, height)` | -1..1 |
 *    | 2 | shortest-path distance to the goal `/ (width + height)` (1 if unreachable) | 0..1 |
 *    | 3-6 | for up, down, left, right: `d(here) - d(there)` in moves (+1 the move shortens the shortest path, -1 it lengthens it or enters a hole, 0 the move is blocked by a wall or the edge) | -1..1 |
 *    | 7 | fraction of the horizon left, `(horizon - t) / horizon` | 0..1 |
 *    | 8 | slip probability | 0..1 |
 *    | 9 | collision mode is `block` | 0/1 |
 *    | 10 | hole mode is `blocked` | 0/1 |
 *    | 11 | the agent is on its goal | 0/1 |
 *
 * Distances are the BFS maps of the instance (`pool.dist`, over free cells;
 * other agents are not obstacles). Any change of this layout must bump
 * {@linkcode OBS_VERSION}: node kinds put `{ version, radius }` into their
 * parameters, so the version enters every cache key, and checkpoints record
 * it in their metadata (`envsmith.obs`).
 *
 * @module
 */
import type { BatchEnv } from "../mapf/batch_env.ts";

/** Version of the observation layout documented above. */
export const OBS_VERSION = 1;
/** Window channels. */
export const OBS_CHANNELS = 6;
/** Scalar features after the window. */
export const SCALAR_FEATURES = 12;

/** Which observation an encoder produces; stored in checkpoints and node parameters. */
export interface ObsSpec {
  /** Layout version; must equal {@linkcode OBS_VERSION}. */
  readonly version: number;
  /** Window radius (the window is `(2r+1) x (2r+1)` cells). */
  readonly radius: number;
}

/** The default observation: version {@linkcode OBS_VERSION}, radius 2 (5x5 window, 162 values). */
export const DEFAULT_OBS: ObsSpec = { version: OBS_VERSION, radius: 2 };

/** Largest supported window radius. */
export const MAX_RADIUS = 8;

/** Check an observation spec, throwing a RangeError that names the fix. */
export function checkObsSpec(spec: ObsSpec): ObsSpec {
  if (spec.version !== OBS_VERSION) {
    throw new RangeError(
      `Observation layout version ${spec.version} is not supported by this build (version ${OBS_VERSION}); retrain the policy or use a matching envsmith version`,
    );
  }
  if (
    !Number.isInteger(spec.radius) || spec.radius < 0 ||
    spec.radius > MAX_RADIUS
  ) {
    throw new RangeError(
      `Observation radius must be an integer in 0..${MAX_RADIUS} (got ${spec.radius})`,
    );
  }
  return spec;
}

/**
 * Number of values per agent row.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DEFAULT_OBS, obsSize } from "./observation.ts";
 * assert.equal(obsSize(DEFAULT_OBS), 162); // 6 * 25 + 12
 * ```
 */
export function obsSize(spec: ObsSpec): number {
  const s = 2 * spec.radius + 1;
  return OBS_CHANNELS * s * s + SCALAR_FEATURES;
}

/**
 * The observation spec whose row width is `size` (version
 * {@linkcode OBS_VERSION}), or `undefined`: used to evaluate ONNX files that
 * carry no envsmith metadata.
 */
export function obsSpecForSize(size: number): ObsSpec | undefined {
  for (let r = 0; r <= MAX_RADIUS; r++) {
    const spec = { version: OBS_VERSION, radius: r };
    if (obsSize(spec) === size) return spec;
  }
  return undefined;
}

/**
 * The reference encoder: observations of agents of a {@linkcode BatchEnv},
 * written out cell by cell in TypeScript. `ObservationEncoder`
 * (`observation_encoder.ts`, a WebAssembly kernel) produces the same bytes
 * about three times faster and is what training and rollouts use; this one
 * is the definition it is tested against. Allocates its scratch once;
 * {@linkcode encode} allocates nothing.
 */
export class ReferenceObservationEncoder {
  /** The layout produced. */
  readonly spec: ObsSpec;
  /** Values per row. */
  readonly size: number;
  #env: BatchEnv;
  #occStamp: Int32Array;
  #goalStamp: Int32Array;
  #goalCount: Int32Array;
  #occCount: Int32Array;
  #stamp = 0;

  /** An encoder for `env` (its pool fixes the scratch size). */
  constructor(spec: ObsSpec, env: BatchEnv) {
    this.spec = checkObsSpec(spec);
    this.size = obsSize(spec);
    this.#env = env;
    const cells = Math.max(1, env.pool.maxCells);
    this.#occStamp = new Int32Array(cells);
    this.#goalStamp = new Int32Array(cells);
    this.#goalCount = new Int32Array(cells);
    this.#occCount = new Int32Array(cells);
  }

  /**
   * Write the observation of agent slots `slots[0..n)` (slot = `env *
   * maxAgents + agent`, grouped by environment) into rows
   * `out[(row0 + i) * size ..]`.
   */
  encode(slots: Int32Array, n: number, out: Float32Array, row0 = 0): void {
    const env = this.#env, pool = env.pool, m = env.maxAgents;
    const r = this.spec.radius, S = 2 * r + 1, SS = S * S;
    const D = this.size, sc = OBS_CHANNELS * SS;
    const occStamp = this.#occStamp, occCount = this.#occCount;
    const goalStamp = this.#goalStamp, goalCount = this.#goalCount;
    if (this.#stamp > 0x3fffffff) {
      occStamp.fill(0);
      goalStamp.fill(0);
      this.#stamp = 0;
    }
    let curEnv = -1, stamp = this.#stamp;
    let W = 0,
      H = 0,
      cells = 0,
      gOff = 0,
      aOff = 0,
      dOff = 0,
      L = 1,
      horizon = 1;
    let slip = 0, block = 0, blockedHoles = 0, t = 0;
    for (let i = 0; i < n; i++) {
      const slot = slots[i]!;
      const e = (slot / m) | 0, a = slot - e * m;
      if (e !== curEnv) {
        curEnv = e;
        stamp++;
        const inst = env.instance[e]!;
        W = pool.width[inst]!;
        H = pool.height[inst]!;
        cells = pool.cellCount[inst]!;
        gOff = pool.cellOffset[inst]!;
        aOff = pool.agentOffset[inst]!;
        dOff = pool.distOffset[inst]!;
        L = Math.max(W, H);
        horizon = pool.horizon[inst]!;
        slip = pool.slip[inst]!;
        block = pool.collision[inst]!;
        blockedHoles = pool.holes[inst]!;
        t = env.t[e]!;
        const na = env.agentCount[e]!;
        for (let b = 0; b < na; b++) {
          const p = env.pos[e * m + b]!;
          if (occStamp[p] !== stamp) {
            occStamp[p] = stamp;
            occCount[p] = 0;
          }
          occCount[p]!++;
          const g = pool.goals[aOff + b]!;
          if (goalStamp[g] !== stamp) {
            goalStamp[g] = stamp;
            goalCount[g] = 0;
          }
          goalCount[g]!++;
        }
      }
      const p = env.pos[slot]!, goal = pool.goals[aOff + a]!;
      const pr = (p / W) | 0, pc = p - pr * W;
      const o = (row0 + i) * D;
      out.fill(0, o, o + D);
      for (let dr = -r; dr <= r; dr++) {
        const rr = pr + dr;
        for (let dc = -r; dc <= r; dc++) {
          const cc = pc + dc;
          const w = (dr + r) * S + (dc + r);
          if (rr < 0 || rr >= H || cc < 0 || cc >= W) {
            out[o + 5 * SS + w] = 1;
            continue;
          }
          const q = rr * W + cc;
          const code = pool.grid[gOff + q]!;
          if (code === 1) out[o + w] = 1;
          else if (code === 2) out[o + SS + w] = 1;
          if (occStamp[q] === stamp) {
            const others = occCount[q]! - (q === p ? 1 : 0);
            if (others > 0) out[o + 2 * SS + w] = 1;
          }
          if (q === goal) out[o + 3 * SS + w] = 1;
          if (goalStamp[q] === stamp) {
            const others = goalCount[q]! - (q === goal ? 1 : 0);
            if (others > 0) out[o + 4 * SS + w] = 1;
          }
        }
      }
      const gr = (goal / W) | 0, gc = goal - gr * W;
      out[o + sc] = (gc - pc) / L;
      out[o + sc + 1] = (gr - pr) / L;
      const dist = pool.dist;
      const dm = dOff + a * cells;
      const dHere = dist[dm + p]!;
      out[o + sc + 2] = dHere === 0xffff ? 1 : Math.min(1, dHere / (W + H));
      for (let act = 1; act <= 4; act++) {
        let q: number;
        if (act === 1) q = pr > 0 ? p - W : -1;
        else if (act === 2) q = pr < H - 1 ? p + W : -1;
        else if (act === 3) q = pc > 0 ? p - 1 : -1;
        else q = pc < W - 1 ? p + 1 : -1;
        let f = 0;
        if (q >= 0) {
          const code = pool.grid[gOff + q]!;
          if (code === 2 || (code === 1 && blockedHoles)) f = 0;
          else {
            const dq = dist[dm + q]!;
            if (dq === 0xffff || dHere === 0xffff) f = -1;
            else f = Math.max(-1, Math.min(1, dHere - dq));
          }
        }
        out[o + sc + 2 + act] = f;
      }
      out[o + sc + 7] = (horizon - t) / horizon;
      out[o + sc + 8] = slip;
      out[o + sc + 9] = block;
      out[o + sc + 10] = blockedHoles;
      out[o + sc + 11] = p === goal ? 1 : 0;
    }
    this.#stamp = stamp;
  }
}
