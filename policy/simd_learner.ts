/**
 * The PPO/GRPO learner on WebAssembly SIMD kernels: the fused update path of
 * {@linkcode Learner} (minibatches gathered by index from the sample buffer,
 * PPO loss and its gradient, backward pass, gradient-norm clipping folded
 * into Adam) with every buffer in one kernel memory, including the sample
 * buffer the trainer fills. The buffer keeps its observation rows in sparse
 * form ({@linkcode SparseRows}), which the observation encoder writes
 * directly and every minibatch of every epoch reads by index: a row is
 * compressed once, not once per epoch. Same options, same statistics, same order of
 * random draws as the TypeScript learner; float results differ from it by
 * rounding (see `simd_mlp.ts`).
 *
 * @module
 */
import type { AdamState } from "./adam.ts";
import { KernelArena } from "./kernels/arena.ts";
import type {
  Kernel,
  LearnerOptions,
  PolicyLearner,
  UpdateStats,
} from "./learner.ts";
import {
  learnerOptions,
  SampleBuffer,
  sampleFromLogProbs,
  type SparseRows,
} from "./learner.ts";
import type { Mlp } from "./mlp.ts";
import { RunningMeanStd } from "./ppo_loss.ts";
import { pad4, SimdMlp } from "./simd_mlp.ts";
import type { Rng } from "../mapf/rng.ts";

/** Sizes a {@linkcode SimdLearner} lays out its memory for. */
export interface SimdLearnerSizes {
  /** Rows of the sample buffer (see {@linkcode SimdLearner.createBuffer}). */
  capacity: number;
  /** Most rows passed to one {@linkcode SimdLearner.act} call. */
  actRows: number;
  /**
   * Lay the learner out in this arena (the caller commits it before the
   * learner's first use), e.g. to share it with an `ObservationEncoder`
   * that writes straight into the sample buffer.
   */
  arena?: KernelArena;
}

/**
 * A learner whose network, optimiser state, workspace and sample buffer live
 * in WebAssembly memory. `net.params` is copied in at construction and on
 * {@linkcode pull}, and copied back after every {@linkcode update}.
 */
export class SimdLearner implements PolicyLearner {
  /** This learner runs the WebAssembly SIMD kernels. */
  readonly kernel: Kernel = "simd";
  /** The network being trained (its parameters are refreshed after each update). */
  readonly net: Mlp;
  /** Running statistics of value targets. */
  readonly valueNorm: RunningMeanStd;
  /** Options in force. */
  readonly options: Required<LearnerOptions>;
  /** The kernel-side network. */
  readonly simd: SimdMlp;
  readonly #arena: KernelArena;
  readonly #capacity: number;
  readonly #actRows: number;
  readonly #buf: {
    obs: number;
    rowptr: number;
    cols: number;
    vals: number;
    table: number;
    actions: number;
    logp: number;
    adv: number;
    ret: number;
    val: number;
  };
  readonly #perm: number;
  readonly #mb: {
    act: number;
    logp: number;
    adv: number;
    ret: number;
    val: number;
  };
  readonly #actOut: number;
  readonly #actLogp: number;
  readonly #scratch: number;
  readonly #stats: number;
  #buffer: SampleBuffer | undefined;
  #packed = false;
  #t = 0;

  /** A learner for `net` with memory for `sizes`. */
  constructor(
    net: Mlp,
    sizes: SimdLearnerSizes,
    options: LearnerOptions = {},
    valueNorm: RunningMeanStd = new RunningMeanStd(),
  ) {
    this.options = learnerOptions(options);
    this.net = net;
    this.valueNorm = valueNorm;
    const arena = sizes.arena ?? new KernelArena();
    this.#arena = arena;
    const mb = pad4(this.options.minibatch);
    const cap = Math.max(1, sizes.capacity);
    this.#capacity = cap;
    this.#actRows = Math.max(1, sizes.actRows);
    // the workspace serves minibatches; act() passes are chunked to it
    this.simd = new SimdMlp(net.spec, arena, Math.max(mb, 64));
    const D = net.spec.inputSize, A = net.spec.actions;
    const f = (n: number) => arena.reserve(4 * n);
    this.#buf = {
      obs: f(cap * D),
      rowptr: f(cap + 1),
      // whole vectors are stored: 3 values of slack
      cols: f(cap * D + 4),
      vals: f(cap * D + 4),
      table: arena.reserve(256),
      actions: arena.reserve(cap),
      logp: f(cap),
      adv: f(cap),
      ret: f(cap),
      val: f(cap),
    };
    this.#perm = f(cap);
    this.#mb = {
      act: f(mb),
      logp: f(mb),
      adv: f(mb),
      ret: f(mb),
      val: f(mb),
    };
    const actRows = pad4(this.#actRows);
    this.#actOut = f(actRows * this.simd.headStride);
    this.#actLogp = f(actRows * this.simd.headStride);
    this.#scratch = f(12 * (A + 1));
    this.#stats = arena.reserve(8 * 8);
    if (!sizes.arena) arena.commit();
  }

  /** Copy the parameters in at first use (the arena is committed by then). */
  #ready(): void {
    if (this.#packed) return;
    this.#packed = true;
    this.simd.pack(this.net.params);
  }

  /** Bytes of kernel memory this learner uses. */
  get memoryBytes(): number {
    return this.#arena.size;
  }

  /**
   * The sample buffer in kernel memory (`capacity` must not exceed the
   * capacity given at construction; every call returns the same storage).
   */
  createBuffer(capacity: number): SampleBuffer {
    if (capacity > this.#capacity) {
      throw new RangeError(
        `SimdLearner was laid out for ${this.#capacity} samples, not ${capacity}`,
      );
    }
    if (!this.#buffer) {
      const a = this.#arena, b = this.#buf, D = this.net.spec.inputSize;
      const cap = this.#capacity;
      const sparse: SparseRows = {
        rowptr: a.i32(b.rowptr, cap + 1),
        cols: a.i32(b.cols, cap * D + 4),
        vals: a.f32(b.vals, cap * D + 4),
        rows: 0,
      };
      this.simd.kernels.csr_table(b.table);
      this.#buffer = new SampleBuffer(cap, D, {
        obs: a.f32(b.obs, cap * D),
        actions: a.u8(b.actions, cap),
        logp: a.f32(b.logp, cap),
        advantages: a.f32(b.adv, cap),
        returns: a.f32(b.ret, cap),
        values: a.f32(b.val, cap),
      }, sparse);
    }
    return this.#buffer;
  }

  /** Compress dense rows `sparse.rows .. upto` of the buffer (rows the encoder did not write sparse). */
  #sparseUpTo(buf: SampleBuffer, upto: number): void {
    const sp = buf.sparse!;
    if (sp.rows >= upto) return;
    const D = this.net.spec.inputSize, b = this.#buf, r0 = sp.rows;
    this.simd.kernels.csr(
      b.obs + 4 * r0 * D,
      D,
      0,
      upto - r0,
      D,
      b.rowptr + 4 * r0,
      b.cols,
      b.vals,
      b.table,
    );
    sp.rows = upto;
  }

  #check(buf: SampleBuffer): void {
    if (buf !== this.#buffer) {
      throw new Error(
        "SimdLearner reads only the sample buffer it created (createBuffer)",
      );
    }
  }

  #forwardRows(buf: SampleBuffer, row0: number, n: number): void {
    this.#check(buf);
    this.#ready();
    if (n > this.#actRows) {
      throw new RangeError(
        `SimdLearner was laid out for ${this.#actRows} rows per act call, not ${n}`,
      );
    }
    this.#sparseUpTo(buf, row0 + n);
    const b = this.#buf;
    this.simd.forwardSparse(
      b.rowptr + 4 * row0,
      b.cols,
      b.vals,
      0,
      n,
      this.#actOut,
    );
  }

  /**
   * See {@linkcode PolicyLearner.act}. Log-probabilities come from the same
   * kernel code as the loss's, so an update's first minibatch sees ratios of
   * exactly 1.
   */
  act(
    buf: SampleBuffer,
    row0: number,
    n: number,
    rng: Rng,
    action: Uint8Array,
    logp: Float32Array,
    value: Float32Array,
    greedy = false,
  ): void {
    this.#forwardRows(buf, row0, n);
    const s = this.simd, A = this.net.spec.actions, st = s.headStride;
    s.kernels.log_softmax(
      this.#actOut,
      st,
      n,
      A,
      this.#actLogp,
      st,
      this.#scratch,
    );
    const lp = this.#arena.f32(this.#actLogp, n * st);
    sampleFromLogProbs(lp, st, A, n, rng, action, logp, greedy);
    const out = this.#arena.f32(this.#actOut, n * st);
    for (let i = 0; i < n; i++) value[i] = out[i * st + A]!;
  }

  /** See {@linkcode PolicyLearner.values}. */
  values(
    buf: SampleBuffer,
    row0: number,
    n: number,
    value: Float32Array,
  ): void {
    this.#forwardRows(buf, row0, n);
    const A = this.net.spec.actions, st = this.simd.headStride;
    const out = this.#arena.f32(this.#actOut, n * st);
    for (let i = 0; i < n; i++) value[i] = out[i * st + A]!;
  }

  /** Copy `net.params` into kernel memory. */
  pull(): void {
    this.#packed = true;
    this.simd.pack(this.net.params);
  }

  /** See {@linkcode PolicyLearner.adamState}. */
  adamState(): AdamState {
    const m = new Float32Array(this.net.size),
      v = new Float32Array(this.net.size);
    this.simd.unpack(m, this.simd.adamM);
    this.simd.unpack(v, this.simd.adamV);
    return { t: this.#t, m, v };
  }

  /** See {@linkcode PolicyLearner.loadAdam}. */
  loadAdam(state: AdamState): void {
    if (state.m.length !== this.net.size || state.v.length !== this.net.size) {
      throw new RangeError(
        `Optimiser state has ${state.m.length} moments but the network has ${this.net.size} parameters`,
      );
    }
    this.#t = state.t;
    this.simd.pack(state.m, this.simd.adamM);
    this.simd.pack(state.v, this.simd.adamV);
  }

  /** Run the update epochs on `buf` (same semantics as {@linkcode Learner.update}). */
  update(buf: SampleBuffer, rng: Rng): UpdateStats {
    this.#check(buf);
    this.#ready();
    const o = this.options, s = this.simd, k = s.kernels;
    const n = buf.count, A = this.net.spec.actions;
    const stats: UpdateStats = {
      samples: n,
      steps: 0,
      loss: 0,
      policyLoss: 0,
      valueLoss: 0,
      entropy: 0,
      approxKl: 0,
      clipFrac: 0,
      gradNorm: 0,
    };
    if (n === 0) return stats;
    this.#sparseUpTo(buf, n);
    if (o.valueCoef > 0) this.valueNorm.update(buf.returns, n);
    const vm = this.valueNorm.mean, vs = this.valueNorm.std;
    const perm = this.#arena.i32(this.#perm, n);
    for (let i = 0; i < n; i++) perm[i] = i;
    const mbSize = Math.min(o.minibatch, n);
    const st = this.#arena.f64(this.#stats, 5);
    const b = this.#buf, mb = this.#mb;
    for (let epoch = 0; epoch < o.epochs; epoch++) {
      rng.shuffle(perm, n);
      let epochKl = 0, epochSteps = 0;
      for (let s0 = 0; s0 < n; s0 += mbSize) {
        const m = Math.min(mbSize, n - s0);
        if (m < mbSize && 2 * m < mbSize) break;
        const idx = this.#perm + 4 * s0;
        k.ppo_gather(
          idx,
          m,
          b.actions,
          b.logp,
          b.adv,
          b.ret,
          b.val,
          o.normalizeAdvantages ? 1 : 0,
          vm,
          vs,
          mb.act,
          mb.logp,
          mb.adv,
          mb.ret,
          mb.val,
        );
        s.forwardSparse(b.rowptr, b.cols, b.vals, idx, m);
        k.ppo_loss(
          s.headOut,
          s.headStride,
          s.dOut,
          m,
          A,
          mb.act,
          mb.logp,
          mb.adv,
          mb.ret,
          mb.val,
          o.clip,
          o.valueCoef,
          o.entropyCoef,
          o.clipValue ? 1 : 0,
          this.#scratch,
          this.#stats,
        );
        s.backward(m);
        const norm = Math.sqrt(s.gradSumSq());
        const gscale = norm > o.maxGradNorm && norm > 0
          ? o.maxGradNorm / norm
          : 1;
        s.adamStep(++this.#t, o.lr, gscale);
        const inv = 1 / m;
        const pl = st[0]! * inv, vl = st[1]! * inv, ent = st[2]! * inv;
        const kl = st[3]! * inv;
        stats.gradNorm += norm;
        stats.steps++;
        stats.loss += pl + o.valueCoef * vl - o.entropyCoef * ent;
        stats.policyLoss += pl;
        stats.valueLoss += vl;
        stats.entropy += ent;
        stats.approxKl += kl;
        stats.clipFrac += st[4]! * inv;
        epochKl += kl;
        epochSteps++;
      }
      if (o.targetKl > 0 && epochKl / Math.max(1, epochSteps) > o.targetKl) {
        break;
      }
    }
    const q = 1 / Math.max(1, stats.steps);
    stats.loss *= q;
    stats.policyLoss *= q;
    stats.valueLoss *= q;
    stats.entropy *= q;
    stats.approxKl *= q;
    stats.clipFrac *= q;
    stats.gradNorm *= q;
    s.unpack(this.net.params);
    return stats;
  }
}
