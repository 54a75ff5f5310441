/**
 * Trajectories: what an episode did, and a compact versioned binary encoding
 * of many episodes in one `Uint8Array`.
 *
 * An {@linkcode Episode} names its instance, and holds every agent's cell at
 * every time (`positions[t * agents + a]`, `t = 0..steps`), the action each
 * agent chose at each step (`actions[t * agents + a]`, `t = 0..steps-1`;
 * the executed move can differ because of slip, bumps or blocking), the
 * outcome, the agents involved in a failure and the step it happened at.
 *
 * ## Binary format, version 1 (little-endian)
 * ```
 * header   "MFTR" | u8 version=1 | u8 0 | u16 0 | u32 episodes | u32 strings
 * strings  per string: u16 byte length | UTF-8 bytes      (instance ids)
 * episode  u32 string index | u32 seed | u32 steps | u8 width | u8 agents
 *          | u8 outcome code | u8 0 | i16 fail agent 0 | i16 fail agent 1
 *          | u32 fail step + 1 (0 = none)
 *          | agents x u16 start cell
 *          | steps x agents x u8: chosen action (bits 0-2) | executed move (bits 3-5)
 * ```
 * The executed move (0 stay, 1 up, 2 down, 3 left, 4 right) rebuilds the
 * positions from the starts, so an agent-step costs one byte.
 *
 * {@linkcode TrajectoryRecorder} records episodes from a
 * {@linkcode BatchEnv} while it steps.
 *
 * @module
 */
import type { BatchEnv } from "./batch_env.ts";
import { actionBetween } from "./grid.ts";
import { OUTCOME_NAMES, outcomeCode, type OutcomeName } from "./outcome.ts";

/** One episode of one instance. */
export interface Episode {
  /** Id of the instance played. */
  readonly instance: string;
  /** Width of the instance's grid (cells are `row * width + col`). */
  readonly width: number;
  /** Number of agents. */
  readonly agents: number;
  /** Episode seed (slip RNG). */
  readonly seed: number;
  /** Number of steps taken. */
  readonly steps: number;
  /** Cell of each agent at each time: `positions[t * agents + a]`, `(steps + 1) * agents` entries. */
  readonly positions: Int32Array;
  /** Action chosen by each agent at each step: `actions[t * agents + a]`, `steps * agents` entries. */
  readonly actions: Uint8Array;
  /** How it ended (`running` if it was cut off before ending). */
  readonly outcome: OutcomeName;
  /** Agents involved in the failure (hole: the fallen; collision: the pair), else empty. */
  readonly failAgents: readonly number[];
  /** Step (1-based count of steps taken) at which the episode ended in failure, or -1. */
  readonly failStep: number;
}

/** Current binary format version. */
export const TRAJECTORY_VERSION = 1;
const MAGIC = [0x4d, 0x46, 0x54, 0x52]; // "MFTR"

/** Malformed or unsupported trajectory bytes. */
export class TrajectoryFormatError extends RangeError {
  /** Byte offset where decoding failed. */
  readonly offset: number;
  /** Build from a message and the byte offset. */
  constructor(message: string, offset: number) {
    super(`Cannot decode trajectories at byte ${offset}: ${message}`);
    this.name = "TrajectoryFormatError";
    this.offset = offset;
  }
}

/**
 * Encode episodes into one `Uint8Array`.
 *
 * @throws {RangeError} if an episode moves an agent by more than one cell in
 *   a step, or exceeds the format's limits (width or agents > 255, cells > 65535).
 */
export function encodeTrajectories(episodes: readonly Episode[]): Uint8Array {
  const strings: string[] = [];
  const index = new Map<string, number>();
  for (const ep of episodes) {
    if (!index.has(ep.instance)) {
      index.set(ep.instance, strings.length);
      strings.push(ep.instance);
    }
  }
  const enc = new TextEncoder();
  const bytes = strings.map((s) => enc.encode(s));
  let size = 16;
  for (const b of bytes) {
    if (b.length > 0xffff) {
      throw new RangeError("instance id longer than 65535 bytes");
    }
    size += 2 + b.length;
  }
  for (const ep of episodes) size += 24 + 2 * ep.agents + ep.steps * ep.agents;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out.set(MAGIC, 0);
  out[4] = TRAJECTORY_VERSION;
  view.setUint32(8, episodes.length, true);
  view.setUint32(12, strings.length, true);
  let o = 16;
  for (const b of bytes) {
    view.setUint16(o, b.length, true);
    out.set(b, o + 2);
    o += 2 + b.length;
  }
  for (const ep of episodes) {
    const n = ep.agents, w = ep.width;
    if (w < 1 || w > 255 || n < 1 || n > 255) {
      throw new RangeError(
        `episode of ${ep.instance}: width ${w} and agents ${n} must be in 1..255`,
      );
    }
    if (
      ep.positions.length !== (ep.steps + 1) * n ||
      ep.actions.length !== ep.steps * n
    ) {
      throw new RangeError(
        `episode of ${ep.instance}: positions/actions lengths do not match ${ep.steps} steps x ${n} agents`,
      );
    }
    view.setUint32(o, index.get(ep.instance)!, true);
    view.setUint32(o + 4, ep.seed >>> 0, true);
    view.setUint32(o + 8, ep.steps, true);
    out[o + 12] = w;
    out[o + 13] = n;
    out[o + 14] = Math.max(0, outcomeCode(ep.outcome));
    view.setInt16(o + 16, ep.failAgents[0] ?? -1, true);
    view.setInt16(o + 18, ep.failAgents[1] ?? -1, true);
    view.setUint32(o + 20, ep.failStep < 0 ? 0 : ep.failStep + 1, true);
    o += 24;
    for (let a = 0; a < n; a++) {
      const p = ep.positions[a]!;
      if (p < 0 || p > 0xffff) {
        throw new RangeError(
          `episode of ${ep.instance}: start cell ${p} out of range`,
        );
      }
      view.setUint16(o, p, true);
      o += 2;
    }
    for (let t = 0; t < ep.steps; t++) {
      for (let a = 0; a < n; a++) {
        const from = ep.positions[t * n + a]!,
          to = ep.positions[(t + 1) * n + a]!;
        const move = actionBetween(from, to, w);
        if (move < 0) {
          throw new RangeError(
            `episode of ${ep.instance}: agent ${a} jumps from cell ${from} to ${to} at step ${t}`,
          );
        }
        out[o++] = (ep.actions[t * n + a]! & 7) | (move << 3);
      }
    }
  }
  return out;
}

/**
 * Decode episodes encoded by {@linkcode encodeTrajectories}.
 *
 * @throws {TrajectoryFormatError} on a wrong magic number, an unknown version,
 *   or truncated or inconsistent data.
 */
export function decodeTrajectories(bytes: Uint8Array): Episode[] {
  if (bytes.length < 16) {
    throw new TrajectoryFormatError("too short for a header", 0);
  }
  for (let i = 0; i < 4; i++) {
    if (bytes[i] !== MAGIC[i]) {
      throw new TrajectoryFormatError(
        'not a trajectory file (magic "MFTR" missing)',
        0,
      );
    }
  }
  if (bytes[4] !== TRAJECTORY_VERSION) {
    throw new TrajectoryFormatError(
      `unsupported version ${
        bytes[4]
      } (this build reads ${TRAJECTORY_VERSION})`,
      4,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.getUint32(8, true);
  const nStrings = view.getUint32(12, true);
  let o = 16;
  const need = (k: number) => {
    if (o + k > bytes.length) {
      throw new TrajectoryFormatError(`truncated (need ${k} more bytes)`, o);
    }
  };
  const dec = new TextDecoder();
  const strings: string[] = [];
  for (let i = 0; i < nStrings; i++) {
    need(2);
    const len = view.getUint16(o, true);
    need(2 + len);
    strings.push(dec.decode(bytes.subarray(o + 2, o + 2 + len)));
    o += 2 + len;
  }
  const out: Episode[] = [];
  const dr = [0, -1, 1, 0, 0];
  for (let k = 0; k < count; k++) {
    need(24);
    const si = view.getUint32(o, true);
    if (si >= strings.length) {
      throw new TrajectoryFormatError(`instance index ${si} out of range`, o);
    }
    const seed = view.getUint32(o + 4, true);
    const steps = view.getUint32(o + 8, true);
    const width = bytes[o + 12]!;
    const n = bytes[o + 13]!;
    const oc = bytes[o + 14]!;
    if (oc >= OUTCOME_NAMES.length) {
      throw new TrajectoryFormatError(`unknown outcome code ${oc}`, o + 14);
    }
    if (width < 1 || n < 1) {
      throw new TrajectoryFormatError("zero width or agents", o + 12);
    }
    const f0 = view.getInt16(o + 16, true), f1 = view.getInt16(o + 18, true);
    const failStep = view.getUint32(o + 20, true) - 1;
    o += 24;
    need(2 * n + steps * n);
    const positions = new Int32Array((steps + 1) * n);
    const actions = new Uint8Array(steps * n);
    for (let a = 0; a < n; a++) {
      positions[a] = view.getUint16(o, true);
      o += 2;
    }
    for (let t = 0; t < steps; t++) {
      for (let a = 0; a < n; a++) {
        const b = bytes[o++]!;
        const move = (b >> 3) & 7;
        if (move > 4) {
          throw new TrajectoryFormatError(`bad move code ${move}`, o - 1);
        }
        actions[t * n + a] = b & 7;
        const p = positions[t * n + a]!;
        positions[(t + 1) * n + a] = p + dr[move]! * width +
          (move === 3 ? -1 : move === 4 ? 1 : 0);
      }
    }
    const failAgents = [f0, f1].filter((x) => x >= 0);
    out.push({
      instance: strings[si]!,
      width,
      agents: n,
      seed,
      steps,
      positions,
      actions,
      outcome: OUTCOME_NAMES[oc]!,
      failAgents,
      failStep,
    });
  }
  if (o !== bytes.length) {
    throw new TrajectoryFormatError(`${bytes.length - o} trailing bytes`, o);
  }
  return out;
}

/** Options of {@linkcode TrajectoryRecorder}. */
export interface TrajectoryRecorderOptions {
  /** Record only environments `0 .. envs - 1`. @default all */
  envs?: number;
  /** Stop starting new recordings once this many episodes are finished. @default Infinity */
  maxEpisodes?: number;
}

/**
 * Records the episodes of a {@linkcode BatchEnv}. Call
 * {@linkcode TrajectoryRecorder.record} right after every `env.step(actions)`
 * (before `resetDone`); take the finished episodes with
 * {@linkcode TrajectoryRecorder.take}.
 *
 * @example
 * Not run: `env`, `actions` and `instanceIds` are a running rollout's; trajectory_test.ts records real episodes.
 * ```ts ignore
 * const rec = new TrajectoryRecorder(env, instanceIds);
 * for (let k = 0; k < 128; k++) {
 *   env.step(actions);
 *   rec.record(actions);
 *   env.resetDone();
 * }
 * const bytes = encodeTrajectories(rec.take());
 * ```
 */
export class TrajectoryRecorder {
  #env: BatchEnv;
  #ids: readonly string[];
  #envs: number;
  #max: number;
  #finished: Episode[] = [];
  #episode: Uint32Array;
  #active: Uint8Array;
  #starts: Int32Array[];
  #steps: Int32Array;
  #bytes: Uint8Array[];

  /**
   * @param env The environments to record.
   * @param instanceIds Id of each pool instance (`pool.compiled[i]` has id `instanceIds[i]`).
   */
  constructor(
    env: BatchEnv,
    instanceIds: readonly string[],
    options: TrajectoryRecorderOptions = {},
  ) {
    this.#env = env;
    this.#ids = instanceIds;
    this.#envs = Math.min(env.envs, options.envs ?? env.envs);
    this.#max = options.maxEpisodes ?? Infinity;
    this.#episode = new Uint32Array(this.#envs);
    this.#active = new Uint8Array(this.#envs);
    this.#starts = Array.from(
      { length: this.#envs },
      () => new Int32Array(env.maxAgents),
    );
    this.#steps = new Int32Array(this.#envs);
    this.#bytes = Array.from({ length: this.#envs }, () => new Uint8Array(64));
  }

  /** Number of finished episodes waiting in {@linkcode take}. */
  get finished(): number {
    return this.#finished.length;
  }

  /** Record the step just taken with `actions`. */
  record(actions: Uint8Array): void {
    const env = this.#env;
    const m = env.maxAgents;
    for (let e = 0; e < this.#envs; e++) {
      if (env.done[e] === 1 && env.ended[e] === 0) continue; // idle
      const n = env.agentCount[e]!;
      const inst = env.instance[e]!;
      const w = env.pool.width[inst]!;
      if (this.#active[e] === 0 || this.#episode[e] !== env.episode[e]) {
        if (this.#finished.length >= this.#max) {
          this.#active[e] = 0;
          continue;
        }
        this.#active[e] = 1;
        this.#episode[e] = env.episode[e]!;
        this.#steps[e] = 0;
        const s = this.#starts[e]!;
        for (let a = 0; a < n; a++) s[a] = env.prevPos[e * m + a]!;
      }
      const t = this.#steps[e]!;
      let buf = this.#bytes[e]!;
      if ((t + 1) * n > buf.length) {
        const bigger = new Uint8Array(Math.max(buf.length * 2, (t + 1) * n));
        bigger.set(buf);
        buf = this.#bytes[e] = bigger;
      }
      for (let a = 0; a < n; a++) {
        const i = e * m + a;
        const move = actionBetween(env.prevPos[i]!, env.pos[i]!, w);
        buf[t * n + a] = (actions[i]! & 7) | (move << 3);
      }
      this.#steps[e] = t + 1;
      if (env.ended[e] === 1) {
        this.#finished.push(this.#build(e, env.outcome[e]!));
        this.#active[e] = 0;
      }
    }
  }

  /** Episodes still running, as `running` episodes (for rollouts cut off at a fixed length). */
  partial(): Episode[] {
    const out: Episode[] = [];
    for (let e = 0; e < this.#envs; e++) {
      if (this.#active[e] === 1 && this.#steps[e]! > 0) {
        out.push(this.#build(e, 0));
      }
    }
    return out;
  }

  /** Return and forget the finished episodes. */
  take(): Episode[] {
    const out = this.#finished;
    this.#finished = [];
    return out;
  }

  #build(e: number, outcome: number): Episode {
    const env = this.#env;
    const inst = env.instance[e]!;
    const n = env.agentCount[e]!;
    const w = env.pool.width[inst]!;
    const steps = this.#steps[e]!;
    const buf = this.#bytes[e]!;
    const positions = new Int32Array((steps + 1) * n);
    const actions = new Uint8Array(steps * n);
    positions.set(this.#starts[e]!.subarray(0, n));
    const delta = [0, -w, w, -1, 1];
    for (let t = 0; t < steps; t++) {
      for (let a = 0; a < n; a++) {
        const b = buf[t * n + a]!;
        actions[t * n + a] = b & 7;
        positions[(t + 1) * n + a] = positions[t * n + a]! +
          delta[(b >> 3) & 7]!;
      }
    }
    const failed = outcome >= 2 && outcome <= 4;
    const fa = env.failAgents[2 * e]!, fb = env.failAgents[2 * e + 1]!;
    return {
      instance: this.#ids[inst] ?? String(inst),
      width: w,
      agents: n,
      seed: env.episodeSeed[e]!,
      steps,
      positions,
      actions,
      outcome: OUTCOME_NAMES[outcome]!,
      failAgents: failed ? [fa, fb].filter((x) => x >= 0) : [],
      failStep: failed ? steps : -1,
    };
  }
}
