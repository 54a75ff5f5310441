/**
 * The optimisation half of PPO and GRPO: given a buffer of samples with
 * advantages and value targets, run minibatch epochs of the clipped objective
 * with Adam and gradient-norm clipping. Knows nothing about environments.
 *
 * @module
 */
import { Adam, type AdamState, clipGradNorm } from "./adam.ts";
import { type Mlp, MlpWorkspace } from "./mlp.ts";
import {
  normalize,
  ppoLoss,
  type PpoLossOptions,
  RunningMeanStd,
} from "./ppo_loss.ts";
import type { Rng } from "../mapf/rng.ts";

/**
 * Observation rows in compressed sparse row form (they are about 90 %
 * zeros): row `r`'s non-zero values, in ascending column order, are
 * `vals[rowptr[r] .. rowptr[r + 1])` at columns `cols[...]`. Rows are
 * appended in order; `rows` says how many are valid. The SIMD learner keeps
 * a sample buffer's rows in this form in kernel memory: the observation
 * encoder writes them there directly, and dense rows written to
 * {@linkcode SampleBuffer.obs} are compressed once, when first read.
 */
export interface SparseRows {
  /** Row pointers (`capacity + 1` entries; `rowptr[0]` is 0). */
  readonly rowptr: Int32Array;
  /** Column of each non-zero value. */
  readonly cols: Int32Array;
  /** The non-zero values. */
  readonly vals: Float32Array;
  /** Rows stored (rows `0 .. rows`). */
  rows: number;
}

/**
 * Samples collected for one update; arrays are allocated for `capacity`
 * samples once and reused (`count` says how many are filled).
 */
export class SampleBuffer {
  /** Maximum samples. */
  readonly capacity: number;
  /** Observation width. */
  readonly inputSize: number;
  /** Observations, `capacity x inputSize`. */
  readonly obs: Float32Array;
  /** Actions taken. */
  readonly actions: Uint8Array;
  /** Log-probabilities of the actions under the behaviour policy. */
  readonly logp: Float32Array;
  /** Advantages. */
  readonly advantages: Float32Array;
  /** Value targets in return units (PPO); unused by GRPO. */
  readonly returns: Float32Array;
  /** Behaviour value-head outputs (normalised units). */
  readonly values: Float32Array;
  /**
   * The observation rows in sparse form, when the learner reads them so
   * (the SIMD learner's buffers): rows up to `sparse.rows` are read from
   * here, not from {@linkcode obs}.
   */
  readonly sparse: SparseRows | undefined;
  #count = 0;

  /**
   * Allocate a buffer, or wrap existing arrays (`storage`, each long enough
   * for `capacity` samples), e.g. views of kernel memory.
   */
  constructor(
    capacity: number,
    inputSize: number,
    storage?: Omit<
      SampleBuffer,
      "capacity" | "inputSize" | "count" | "sparse"
    >,
    sparse?: SparseRows,
  ) {
    this.capacity = capacity;
    this.inputSize = inputSize;
    this.obs = storage?.obs ?? new Float32Array(capacity * inputSize);
    this.actions = storage?.actions ?? new Uint8Array(capacity);
    this.logp = storage?.logp ?? new Float32Array(capacity);
    this.advantages = storage?.advantages ?? new Float32Array(capacity);
    this.returns = storage?.returns ?? new Float32Array(capacity);
    this.values = storage?.values ?? new Float32Array(capacity);
    this.sparse = sparse;
    if (
      this.obs.length < capacity * inputSize ||
      [this.actions, this.logp, this.advantages, this.returns, this.values]
        .some((a) => a.length < capacity)
    ) {
      throw new RangeError(
        `Sample buffer storage is smaller than ${capacity} samples of ${inputSize} values`,
      );
    }
  }

  /**
   * Filled samples. Lowering it also drops the sparse rows past it, so that
   * rows written again (dense or sparse) are read anew.
   */
  get count(): number {
    return this.#count;
  }

  set count(n: number) {
    this.#count = n;
    if (this.sparse && this.sparse.rows > n) this.sparse.rows = n;
  }
}

/** Which implementation of the network maths a learner runs. */
export type Kernel = "simd" | "ts";

/**
 * What a trainer needs from a learner: acting on buffered observation rows,
 * and the update epochs. Implemented by {@linkcode Learner} (the TypeScript
 * reference) and `SimdLearner` (WebAssembly SIMD kernels).
 */
export interface PolicyLearner {
  /** Which kernel this learner runs. */
  readonly kernel: Kernel;
  /** The network being trained; its parameters are current after every {@linkcode update}. */
  readonly net: Mlp;
  /** Running statistics of value targets. */
  readonly valueNorm: RunningMeanStd;
  /** Options in force. */
  readonly options: Required<LearnerOptions>;
  /** A sample buffer of `capacity` rows that {@linkcode act} and {@linkcode update} can read. */
  createBuffer(capacity: number): SampleBuffer;
  /**
   * Run the network on observation rows `row0 .. row0 + n` of `buf` and
   * sample one action per row (the most likely with `greedy`), writing the
   * action, its log-probability and the value-head output of each row to
   * `action`, `logp` and `value` (indices `0 .. n`).
   */
  act(
    buf: SampleBuffer,
    row0: number,
    n: number,
    rng: Rng,
    action: Uint8Array,
    logp: Float32Array,
    value: Float32Array,
    greedy?: boolean,
  ): void;
  /** Value-head outputs of rows `row0 .. row0 + n` of `buf` into `value`. */
  values(buf: SampleBuffer, row0: number, n: number, value: Float32Array): void;
  /**
   * Copy the network's parameters into the learner's own storage, if it
   * keeps one (call after changing `net.params` from outside).
   */
  pull(): void;
  /** Run the update epochs on `buf` (see {@linkcode Learner.update}). */
  update(buf: SampleBuffer, rng: Rng): UpdateStats;
  /** A copy of the optimiser state (for checkpoints). */
  adamState(): AdamState;
  /** Restore an optimiser state. */
  loadAdam(state: AdamState): void;
}

/** Hyper-parameters of {@linkcode Learner}. */
export interface LearnerOptions extends PpoLossOptions {
  /** Adam learning rate. @default 3e-4 */
  lr?: number;
  /** Passes over the buffer per update. @default 4 */
  epochs?: number;
  /** Rows per minibatch. @default 512 */
  minibatch?: number;
  /** Global gradient-norm clip. @default 0.5 */
  maxGradNorm?: number;
  /** Normalise advantages per minibatch. @default true */
  normalizeAdvantages?: boolean;
  /** Stop the epochs early when the mean approximate KL exceeds this (0 = never). @default 0 */
  targetKl?: number;
}

/** What one {@linkcode Learner.update} did (means over minibatches). */
export interface UpdateStats {
  /** Samples in the buffer. */
  samples: number;
  /** Minibatch gradient steps taken. */
  steps: number;
  /** Mean total loss. */
  loss: number;
  /** Mean clipped-surrogate loss. */
  policyLoss: number;
  /** Mean value loss (normalised units). */
  valueLoss: number;
  /** Mean entropy. */
  entropy: number;
  /** Mean approximate KL. */
  approxKl: number;
  /** Mean clip fraction. */
  clipFrac: number;
  /** Mean gradient norm before clipping. */
  gradNorm: number;
}

/** Learner options with their defaults filled in (shared by both kernels). */
export function learnerOptions(
  options: LearnerOptions = {},
): Required<LearnerOptions> {
  return {
    lr: 3e-4,
    epochs: 4,
    minibatch: 512,
    maxGradNorm: 0.5,
    normalizeAdvantages: true,
    targetKl: 0,
    clip: 0.2,
    valueCoef: 0.5,
    entropyCoef: 0.01,
    clipValue: false,
    ...options,
  };
}

/**
 * Holds the network, its optimiser and the value normaliser, and turns sample
 * buffers into parameter updates.
 */
export class Learner implements PolicyLearner {
  /** This learner runs the TypeScript reference maths. */
  readonly kernel: Kernel = "ts";
  /** The network being trained (updated in place). */
  readonly net: Mlp;
  /** Its optimiser. */
  readonly adam: Adam;
  /** Running statistics of value targets (the value head predicts `(R - mean) / std`). */
  readonly valueNorm: RunningMeanStd;
  /** Options in force. */
  readonly options: Required<LearnerOptions>;
  #ws: MlpWorkspace;
  #mbObs: Float32Array;
  #mbActions: Uint8Array;
  #mbLogp: Float32Array;
  #mbAdv: Float32Array;
  #mbRet: Float32Array;
  #mbVal: Float32Array;
  #perm = new Int32Array(0);
  #actWs: MlpWorkspace | undefined;

  /** A learner for `net` (parameters are updated in place). */
  constructor(
    net: Mlp,
    options: LearnerOptions = {},
    valueNorm = new RunningMeanStd(),
  ) {
    this.options = learnerOptions(options);
    this.net = net;
    this.adam = new Adam(net.size, { lr: this.options.lr });
    this.valueNorm = valueNorm;
    const mb = this.options.minibatch;
    this.#ws = new MlpWorkspace(net.spec, mb);
    this.#mbObs = new Float32Array(mb * net.spec.inputSize);
    this.#mbActions = new Uint8Array(mb);
    this.#mbLogp = new Float32Array(mb);
    this.#mbAdv = new Float32Array(mb);
    this.#mbRet = new Float32Array(mb);
    this.#mbVal = new Float32Array(mb);
  }

  /** A plain sample buffer. */
  createBuffer(capacity: number): SampleBuffer {
    return new SampleBuffer(capacity, this.net.spec.inputSize);
  }

  #forwardRows(buf: SampleBuffer, row0: number, n: number): MlpWorkspace {
    if (!this.#actWs || this.#actWs.capacity < n) {
      this.#actWs = new MlpWorkspace(this.net.spec, Math.max(n, 64));
    }
    const D = buf.inputSize;
    this.net.forward(
      buf.obs.subarray(row0 * D, (row0 + n) * D),
      n,
      this.#actWs,
    );
    return this.#actWs;
  }

  /** See {@linkcode PolicyLearner.act}: the TS forward pass and {@linkcode sampleActions}. */
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
    const ws = this.#forwardRows(buf, row0, n), A = this.net.spec.actions;
    sampleActions(ws.out, ws.stride, A, n, rng, action, logp, greedy);
    for (let i = 0; i < n; i++) value[i] = ws.out[i * ws.stride + A]!;
  }

  /** See {@linkcode PolicyLearner.values}. */
  values(
    buf: SampleBuffer,
    row0: number,
    n: number,
    value: Float32Array,
  ): void {
    const ws = this.#forwardRows(buf, row0, n), A = this.net.spec.actions;
    for (let i = 0; i < n; i++) value[i] = ws.out[i * ws.stride + A]!;
  }

  /** Nothing to do: this learner works on `net.params` directly. */
  pull(): void {}

  /** See {@linkcode PolicyLearner.adamState}. */
  adamState(): AdamState {
    return this.adam.state();
  }

  /** See {@linkcode PolicyLearner.loadAdam}. */
  loadAdam(state: AdamState): void {
    this.adam.load(state);
  }

  /**
   * Run the update epochs on `buf`. When `valueCoef > 0`, the value
   * normaliser is first updated with the buffer's returns and the targets
   * are normalised with it. Shuffles with `rng`.
   */
  update(buf: SampleBuffer, rng: Rng): UpdateStats {
    const o = this.options;
    const n = buf.count, D = buf.inputSize, A = this.net.spec.actions;
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
    if (o.valueCoef > 0) {
      this.valueNorm.update(buf.returns, n);
    }
    const vm = this.valueNorm.mean, vs = this.valueNorm.std;
    if (this.#perm.length < n) this.#perm = new Int32Array(buf.capacity);
    const perm = this.#perm;
    for (let i = 0; i < n; i++) perm[i] = i;
    const mbSize = Math.min(o.minibatch, n);
    const ws = this.#ws;
    for (let epoch = 0; epoch < o.epochs; epoch++) {
      rng.shuffle(perm, n);
      let epochKl = 0, epochSteps = 0;
      // A remainder smaller than half a minibatch is skipped this epoch (the
      // next shuffle gives those samples their turn).
      for (let s = 0; s < n; s += mbSize) {
        const m = Math.min(mbSize, n - s);
        if (m < mbSize && 2 * m < mbSize) break;
        for (let r = 0; r < m; r++) {
          const i = perm[s + r]!;
          this.#mbObs.set(buf.obs.subarray(i * D, i * D + D), r * D);
          this.#mbActions[r] = buf.actions[i]!;
          this.#mbLogp[r] = buf.logp[i]!;
          this.#mbAdv[r] = buf.advantages[i]!;
          this.#mbRet[r] = (buf.returns[i]! - vm) / vs;
          this.#mbVal[r] = buf.values[i]!;
        }
        if (o.normalizeAdvantages) normalize(this.#mbAdv, m);
        this.net.forward(this.#mbObs, m, ws);
        const st = ppoLoss(
          ws.out,
          ws.dOut,
          A,
          {
            actions: this.#mbActions,
            logpOld: this.#mbLogp,
            advantages: this.#mbAdv,
            returns: this.#mbRet,
            valuesOld: this.#mbVal,
          },
          m,
          o,
        );
        this.net.zeroGrad();
        this.net.backward(this.#mbObs, m, ws);
        stats.gradNorm += clipGradNorm(this.net.grads, o.maxGradNorm);
        this.adam.step(this.net.params, this.net.grads);
        stats.steps++;
        stats.loss += st.loss;
        stats.policyLoss += st.policyLoss;
        stats.valueLoss += st.valueLoss;
        stats.entropy += st.entropy;
        stats.approxKl += st.approxKl;
        stats.clipFrac += st.clipFrac;
        epochKl += st.approxKl;
        epochSteps++;
      }
      if (o.targetKl > 0 && epochKl / Math.max(1, epochSteps) > o.targetKl) {
        break;
      }
    }
    const k = 1 / Math.max(1, stats.steps);
    stats.loss *= k;
    stats.policyLoss *= k;
    stats.valueLoss *= k;
    stats.entropy *= k;
    stats.approxKl *= k;
    stats.clipFrac *= k;
    stats.gradNorm *= k;
    return stats;
  }
}

/**
 * Sample one action per row given log-probabilities `lp` (row stride
 * `stride`, first `actions` entries), writing the action and its
 * log-probability (`lp` of the action, as given). With `greedy`, take the
 * most likely action.
 */
export function sampleFromLogProbs(
  lp: Float32Array,
  stride: number,
  actions: number,
  n: number,
  rng: Rng,
  action: Uint8Array,
  logp: Float32Array,
  greedy = false,
): void {
  for (let r = 0; r < n; r++) {
    const o = r * stride;
    let a = 0;
    if (greedy) {
      for (let k = 1; k < actions; k++) if (lp[o + k]! > lp[o + a]!) a = k;
    } else {
      let u = rng.float();
      a = actions - 1;
      for (let k = 0; k < actions; k++) {
        u -= Math.exp(lp[o + k]!);
        if (u < 0) {
          a = k;
          break;
        }
      }
    }
    action[r] = a;
    logp[r] = lp[o + a]!;
  }
}

/**
 * Sample one action per row from the softmax of the logits in `out` (row
 * stride `stride`, first `actions` entries), writing the action and its
 * log-probability. With `greedy`, take the arg-max instead.
 */
export function sampleActions(
  out: Float32Array,
  stride: number,
  actions: number,
  n: number,
  rng: Rng,
  action: Uint8Array,
  logp: Float32Array,
  greedy = false,
): void {
  for (let r = 0; r < n; r++) {
    const o = r * stride;
    let mx = -Infinity, arg = 0;
    for (let k = 0; k < actions; k++) {
      if (out[o + k]! > mx) {
        mx = out[o + k]!;
        arg = k;
      }
    }
    let se = 0;
    for (let k = 0; k < actions; k++) se += Math.exp(out[o + k]! - mx);
    let a = arg;
    if (!greedy) {
      let u = rng.float() * se;
      a = actions - 1;
      for (let k = 0; k < actions; k++) {
        u -= Math.exp(out[o + k]! - mx);
        if (u < 0) {
          a = k;
          break;
        }
      }
    }
    action[r] = a;
    logp[r] = out[o + a]! - mx - Math.log(se);
  }
}
