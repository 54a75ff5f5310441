/**
 * The observation encoder used by training and rollouts: the layout of
 * `observation.ts`, produced by the WebAssembly kernel `kernels/obs.wat`
 * byte for byte as `ReferenceObservationEncoder` writes it, about
 * three times faster (static window channels are copied from per-instance
 * planes padded by the window radius, four floats at a time, instead of
 * being decided cell by cell).
 *
 * @example Encode every agent of a batch of environments
 * ```ts
 * import { BatchEnv, generate, InstancePool } from "../mapf/mod.ts";
 * import { DEFAULT_OBS } from "./observation.ts";
 * import { ObservationEncoder } from "./observation_encoder.ts";
 * import assert from "node:assert/strict";
 * const pool = InstancePool.from(generate({ preset: "easy" }, { count: 4, seed: 1 }).instances);
 * const env = new BatchEnv(pool, { envs: 4, seed: 1 });
 * env.resetAll();
 * const enc = new ObservationEncoder(DEFAULT_OBS, env);
 * const slots = Int32Array.from({ length: 4 }, (_, e) => e * env.maxAgents);
 * const rows = enc.encode(slots, 4); // the encoder's own output rows
 * assert.equal(rows.subarray(0, 4 * enc.size).length, 4 * 162);
 * ```
 *
 * @module
 */
import type { BatchEnv } from "../mapf/batch_env.ts";
import type { InstancePool } from "../mapf/pool.ts";
import { KernelArena } from "./kernels/arena.ts";
import {
  instantiateMlp,
  instantiateObs,
  type MlpKernels,
  type ObsKernels,
} from "./kernels/modules.ts";
import type { SparseRows } from "./learner.ts";
import { checkObsSpec, obsSize, type ObsSpec } from "./observation.ts";

/** Options of {@linkcode ObservationEncoder}. */
export interface ObservationEncoderOptions {
  /**
   * Lay the encoder's buffers out in this arena instead of its own (the
   * caller commits it), so that it can write straight into other buffers of
   * the same memory, such as a learner's sample buffer.
   */
  arena?: KernelArena;
}

/** Bytes of an instance record (see obs.wat). */
const REC = 64;

/**
 * Encodes observations of agents of a {@linkcode BatchEnv} with the
 * WebAssembly kernel. Static data of the environment's instance pool is laid
 * out once; {@linkcode encode} allocates nothing.
 */
export class ObservationEncoder {
  /** The layout produced. */
  readonly spec: ObsSpec;
  /** Values per row. */
  readonly size: number;
  readonly #env: BatchEnv;
  readonly #arena: KernelArena;
  readonly #rows: number;
  readonly #at: {
    ctx: number;
    recs: number;
    planes: number[];
    goals: number;
    cellInfo: number;
    shared: number;
    occ: number;
    rc: number;
    lut: number;
    envInst: number;
    envT: number;
    envCount: number;
    pos: number;
    slots: number;
    out: number;
    table: number;
  };
  #k: ObsKernels | undefined;
  #csr: MlpKernels | undefined;
  #views:
    | {
      envInst: Int32Array;
      envT: Int32Array;
      envCount: Int32Array;
      pos: Int32Array;
      slots: Int32Array;
      out: Float32Array<ArrayBuffer>;
    }
    | undefined;

  /** An encoder for `env` (its pool's instances are laid out now). */
  constructor(
    spec: ObsSpec,
    env: BatchEnv,
    options: ObservationEncoderOptions = {},
  ) {
    this.spec = checkObsSpec(spec);
    this.size = obsSize(spec);
    this.#env = env;
    const arena = options.arena ?? new KernelArena();
    this.#arena = arena;
    const pool = env.pool, r = spec.radius, m = env.maxAgents;
    this.#rows = env.envs * m;
    const planes: number[] = [];
    let maxPadded = 0;
    for (let i = 0; i < pool.count; i++) {
      const cells = (pool.width[i]! + 2 * r) * (pool.height[i]! + 2 * r);
      maxPadded = Math.max(maxPadded, cells);
      // slack: the kernel reads 8 bytes from a window row's first cell
      planes.push(arena.reserve(cells + 8));
    }
    const agents = pool.goals.length;
    this.#at = {
      ctx: arena.reserve(64),
      recs: arena.reserve(REC * pool.count),
      planes,
      goals: arena.reserve(4 * agents),
      cellInfo: arena.reserve(4 * pool.dist.length),
      shared: arena.reserve(agents),
      occ: arena.reserve(4 * (maxPadded + 8)),
      rc: arena.reserve(4 * pool.grid.length),
      lut: arena.reserve(256 * 16),
      envInst: arena.reserve(4 * env.envs),
      envT: arena.reserve(4 * env.envs),
      envCount: arena.reserve(4 * env.envs),
      pos: arena.reserve(4 * this.#rows),
      slots: arena.reserve(4 * this.#rows),
      out: arena.reserve(4 * this.#rows * this.size),
      table: arena.reserve(256),
    };
    if (!options.arena) {
      arena.commit();
      this.#init();
    }
  }

  /** Lay out the pool's static data (once the arena is committed). */
  #init(): void {
    const a = this.#arena, at = this.#at, pool = this.#env.pool;
    const env = this.#env, r = this.spec.radius;
    a.i32(at.goals, pool.goals.length).set(pool.goals);
    const shared = a.u8(at.shared, pool.goals.length);
    const recs = a.i32(at.recs, (REC / 4) * pool.count);
    const recF = a.f32(at.recs, (REC / 4) * pool.count);
    for (let i = 0; i < pool.count; i++) {
      const W = pool.width[i]!, H = pool.height[i]!, Wp = W + 2 * r;
      const g0 = pool.cellOffset[i]!, a0 = pool.agentOffset[i]!;
      const na = pool.agents[i]!;
      const o = i * (REC / 4);
      recs[o] = W;
      recs[o + 1] = H;
      recs[o + 2] = Wp;
      recs[o + 3] = at.planes[i]!;
      recs[o + 5] = g0;
      recs[o + 6] = a0;
      recs[o + 7] = pool.distOffset[i]!;
      recs[o + 8] = pool.horizon[i]!;
      recF[o + 11] = pool.slip[i]!;
      recs[o + 12] = pool.cellCount[i]!;
      recF[o + 13] = pool.collision[i]!;
      recF[o + 14] = pool.holes[i]!;
      // one byte per padded cell: 1 hole, 2 wall, 4 a goal, 8 outside
      const plane = a.u8(at.planes[i]!, Wp * (H + 2 * r));
      for (let y = 0; y < H + 2 * r; y++) {
        for (let x = 0; x < Wp; x++) {
          const gy = y - r, gx = x - r;
          if (gy < 0 || gy >= H || gx < 0 || gx >= W) plane[y * Wp + x] = 8;
          else {
            const code = pool.grid[g0 + gy * W + gx]!;
            if (code === 1) plane[y * Wp + x] = 1;
            else if (code === 2) plane[y * Wp + x] = 2;
          }
        }
      }
      for (let b = 0; b < na; b++) {
        const g = pool.goals[a0 + b]!;
        plane[((g / W) | 0) * Wp + r * Wp + (g % W) + r]! |= 4;
        let others = 0;
        for (let c = 0; c < na; c++) {
          if (c !== b && pool.goals[a0 + c] === g) others++;
        }
        shared[a0 + b] = others > 0 ? 1 : 0;
      }
    }
    // distance | move features << 16, per agent and cell
    const info = a.i32(at.cellInfo, pool.dist.length);
    _moveFeatures(pool, info);
    for (let i = 0; i < info.length; i++) {
      info[i] = pool.dist[i]! | info[i]! << 16;
    }
    const rc = a.i32(at.rc, pool.grid.length);
    for (let i = 0; i < pool.count; i++) {
      const W = pool.width[i]!, g0 = pool.cellOffset[i]!;
      for (let p = 0; p < pool.cellCount[i]!; p++) {
        rc[g0 + p] = ((p / W) | 0) | (p % W) << 16;
      }
    }
    const lut = a.f32(at.lut, 256 * 4);
    for (let b = 0; b < 256; b++) {
      for (let k = 0; k < 4; k++) lut[b * 4 + k] = ((b >> (2 * k)) & 3) - 1;
    }
    const ctx = a.i32(at.ctx, 16);
    ctx.set([
      env.maxAgents,
      r,
      this.size,
      at.recs,
      at.envInst,
      at.envT,
      at.envCount,
      at.pos,
      at.rc,
      at.goals,
      at.cellInfo,
      at.shared,
      at.occ,
      0,
      at.lut,
    ]);
    this.#views = {
      envInst: a.i32(at.envInst, env.envs),
      envT: a.i32(at.envT, env.envs),
      envCount: a.i32(at.envCount, env.envs),
      pos: a.i32(at.pos, this.#rows),
      slots: a.i32(at.slots, this.#rows),
      out: a.f32(at.out, this.#rows * this.size),
    };
    this.#k = instantiateObs(a.memory);
  }

  /**
   * The encoder's own output rows (room for every agent slot of the
   * environment): {@linkcode encode} writes here when given no `out`.
   */
  get output(): Float32Array<ArrayBuffer> {
    if (!this.#views) this.#init();
    return this.#views!.out;
  }

  /**
   * Write the observation of agent slots `slots[0..n)` (slot = `env *
   * maxAgents + agent`, grouped by environment) into rows
   * `out[(row0 + i) * size ..]` and return `out`. A view of this encoder's
   * memory (its {@linkcode output}, or another buffer of a shared arena) is
   * written in place; any other array receives a copy.
   */
  encode(
    slots: Int32Array,
    n: number,
    out?: Float32Array,
    row0 = 0,
  ): Float32Array {
    if (!this.#views) this.#init();
    const v = this.#views!, env = this.#env, D = this.size;
    if (n > this.#rows) {
      throw new RangeError(
        `Cannot encode ${n} rows: the environment has ${this.#rows} agent slots`,
      );
    }
    const dst = out ?? v.out;
    if (dst.length < (row0 + n) * D) {
      throw new RangeError(
        `Observation buffer has ${dst.length} values; rows ${row0}..${
          row0 + n
        } of ${D} need ${(row0 + n) * D}`,
      );
    }
    v.envInst.set(env.instance);
    v.envT.set(env.t);
    v.envCount.set(env.agentCount);
    v.pos.set(env.pos);
    v.slots.set(n === slots.length ? slots : slots.subarray(0, n));
    const mem = this.#arena.memory.buffer;
    if (dst.buffer === mem) {
      this.#k!.encode(
        this.#at.ctx,
        this.#at.slots,
        n,
        dst.byteOffset + 4 * row0 * D,
      );
    } else {
      this.#k!.encode(this.#at.ctx, this.#at.slots, n, this.#at.out);
      dst.set(v.out.subarray(0, n * D), row0 * D);
    }
    return dst;
  }

  /**
   * Write the observations of agent slots `slots[0..n)` as sparse rows
   * `row0 .. row0 + n` of `rows` (which must lie in this encoder's kernel
   * memory, e.g. the sample buffer of a learner sharing its arena): the
   * non-zero values of each row in ascending column order, exactly the
   * values {@linkcode encode} writes densely. Rows past `row0` are
   * replaced; `row0` may not lie past `rows.rows`.
   */
  encodeSparse(
    slots: Int32Array,
    n: number,
    rows: SparseRows,
    row0: number,
  ): void {
    if (row0 > rows.rows) {
      throw new RangeError(
        `Cannot append sparse row ${row0}: the rows end at ${rows.rows}`,
      );
    }
    const mem = this.#arena.memory.buffer;
    if (
      rows.rowptr.buffer !== mem || rows.cols.buffer !== mem ||
      rows.vals.buffer !== mem
    ) {
      throw new Error(
        "ObservationEncoder.encodeSparse writes only rows in its own kernel memory (share the arena)",
      );
    }
    const D = this.size;
    if (row0 + n >= rows.rowptr.length) {
      throw new RangeError(
        `Sparse rows hold ${rows.rowptr.length - 1} rows, not ${row0 + n}`,
      );
    }
    const end = rows.rowptr[row0]! + n * D;
    if (end + 3 > rows.cols.length || end + 3 > rows.vals.length) {
      throw new RangeError(
        `Sparse rows have room for ${rows.cols.length} values; rows up to ${
          row0 + n
        } may need ${end + 3}`,
      );
    }
    this.encode(slots, n);
    if (!this.#csr) {
      this.#csr = instantiateMlp(this.#arena.memory);
      this.#csr.csr_table(this.#at.table);
    }
    this.#csr.csr(
      this.#at.out,
      D,
      0,
      n,
      D,
      rows.rowptr.byteOffset + 4 * row0,
      rows.cols.byteOffset,
      rows.vals.byteOffset,
      this.#at.table,
    );
    rows.rows = row0 + n;
  }
}

/**
 * The four move features (scalars 3-6 of `observation.ts`) of every agent
 * of every instance in every cell: they depend on nothing else. One byte
 * value per (agent, cell) in the pool's distance layout, two bits per move
 * (up, down, left, right) holding the feature + 1. The same rules as the
 * reference encoder's.
 */
function _moveFeatures(pool: InstancePool, out: Int32Array): void {
  for (let i = 0; i < pool.count; i++) {
    const W = pool.width[i]!, H = pool.height[i]!, cells = pool.cellCount[i]!;
    const g0 = pool.cellOffset[i]!, blocked = pool.holes[i]!;
    for (let a = 0; a < pool.agents[i]!; a++) {
      const dm = pool.distOffset[i]! + a * cells;
      for (let p = 0; p < cells; p++) {
        const pr = (p / W) | 0, pc = p - pr * W, dHere = pool.dist[dm + p]!;
        let byte = 0;
        for (let act = 1; act <= 4; act++) {
          let q: number;
          if (act === 1) q = pr > 0 ? p - W : -1;
          else if (act === 2) q = pr < H - 1 ? p + W : -1;
          else if (act === 3) q = pc > 0 ? p - 1 : -1;
          else q = pc < W - 1 ? p + 1 : -1;
          let f = 0;
          if (q >= 0) {
            const code = pool.grid[g0 + q]!;
            if (code === 2 || (code === 1 && blocked)) f = 0;
            else {
              const dq = pool.dist[dm + q]!;
              if (dq === 0xffff || dHere === 0xffff) f = -1;
              else f = Math.max(-1, Math.min(1, dHere - dq));
            }
          }
          byte |= (f + 1) << (2 * (act - 1));
        }
        out[dm + p] = byte;
      }
    }
  }
}
