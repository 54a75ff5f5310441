/**
 * The PPO loss on a minibatch and its gradient with respect to the network's
 * head outputs (logits and value), plus GAE, group-relative (GRPO) advantages
 * and a running mean/std for value normalisation.
 *
 * The loss of one minibatch of `n` rows is the mean over rows of
 *
 * ```
 * -min(ratio * A, clip(ratio, 1 - clip, 1 + clip) * A)      (clipped surrogate)
 * + valueCoef * 0.5 * (v - R)^2                              (value, normalised units)
 * - entropyCoef * H(pi)                                      (entropy bonus)
 * ```
 *
 * with `ratio = exp(logp(a) - logpOld(a))`. When `clipValue` is set the value
 * term is `0.5 * max((v - R)^2, (vOld + clip(v - vOld, -clip, clip) - R)^2)`.
 * With `valueCoef = 0` (GRPO) the value output receives no gradient.
 *
 * @module
 */

/** Coefficients of {@linkcode ppoLoss}. */
export interface PpoLossOptions {
  /** Surrogate clip range epsilon. @default 0.2 */
  clip?: number;
  /** Weight of the value loss. @default 0.5 */
  valueCoef?: number;
  /** Weight of the entropy bonus. @default 0.01 */
  entropyCoef?: number;
  /** Clip the value update around the old value. @default false */
  clipValue?: boolean;
}

/** One minibatch's inputs to {@linkcode ppoLoss}, each `n` long. */
export interface PpoMinibatch {
  /** Action taken. */
  readonly actions: Uint8Array;
  /** Log-probability of the action under the behaviour policy. */
  readonly logpOld: Float32Array;
  /** Advantage estimates (already normalised if desired). */
  readonly advantages: Float32Array;
  /** Value targets, in the value head's (normalised) units. */
  readonly returns: Float32Array;
  /** Value head outputs of the behaviour policy (normalised units). */
  readonly valuesOld: Float32Array;
}

/** Scalars describing one minibatch. */
export interface PpoLossStats {
  /** Total loss. */
  loss: number;
  /** Clipped-surrogate part (sign as minimised). */
  policyLoss: number;
  /** Value part, before its coefficient. */
  valueLoss: number;
  /** Mean policy entropy (nats). */
  entropy: number;
  /** Mean of `(ratio - 1) - log(ratio)`, an estimator of KL(old || new). */
  approxKl: number;
  /** Fraction of rows whose surrogate was clipped. */
  clipFrac: number;
}

/**
 * Compute the PPO loss of `n` rows whose head outputs are in `out` (row stride
 * `actions + 1`: logits then value) and write its gradient with respect to
 * `out` into `dOut`. Allocates nothing.
 */
export function ppoLoss(
  out: Float32Array,
  dOut: Float32Array,
  actions: number,
  batch: PpoMinibatch,
  n: number,
  options: PpoLossOptions = {},
): PpoLossStats {
  const { clip = 0.2, valueCoef = 0.5, entropyCoef = 0.01, clipValue = false } =
    options;
  const stride = actions + 1;
  const inv = 1 / n;
  let pl = 0, vl = 0, ent = 0, kl = 0, clipped = 0;
  for (let r = 0; r < n; r++) {
    const o = r * stride;
    // log-softmax
    let mx = -Infinity;
    for (let k = 0; k < actions; k++) if (out[o + k]! > mx) mx = out[o + k]!;
    let se = 0;
    for (let k = 0; k < actions; k++) se += Math.exp(out[o + k]! - mx);
    const lse = mx + Math.log(se);
    let h = 0;
    for (let k = 0; k < actions; k++) {
      const lp = out[o + k]! - lse;
      h -= Math.exp(lp) * lp;
    }
    const a = batch.actions[r]!;
    const lpa = out[o + a]! - lse;
    const logRatio = lpa - batch.logpOld[r]!;
    const ratio = Math.exp(logRatio);
    const adv = batch.advantages[r]!;
    const s1 = ratio * adv;
    const s2 = Math.min(Math.max(ratio, 1 - clip), 1 + clip) * adv;
    const isClipped = s2 < s1;
    pl -= isClipped ? s2 : s1;
    if (isClipped) clipped++;
    kl += ratio - 1 - logRatio;
    ent += h;
    // d(policy loss)/d(logp_a): -ratio * adv when the unclipped branch is active.
    const gpi = isClipped ? 0 : -ratio * adv;
    for (let k = 0; k < actions; k++) {
      const lp = out[o + k]! - lse;
      const p = Math.exp(lp);
      // dH/dz_k = -p_k (log p_k + H)
      const dEnt = -p * (lp + h);
      dOut[o + k] = inv * (gpi * ((k === a ? 1 : 0) - p) - entropyCoef * dEnt);
    }
    // value
    const v = out[o + actions]!, ret = batch.returns[r]!;
    let dv = v - ret;
    let lv = 0.5 * dv * dv;
    if (clipValue) {
      const vo = batch.valuesOld[r]!;
      const vc = vo + Math.min(Math.max(v - vo, -clip), clip);
      const lc = 0.5 * (vc - ret) ** 2;
      if (lc > lv) {
        lv = lc;
        // gradient flows through vc only while v - vo is inside the clip range
        dv = Math.abs(v - vo) < clip ? vc - ret : 0;
      }
    }
    vl += lv;
    dOut[o + actions] = inv * valueCoef * dv;
  }
  pl *= inv;
  vl *= inv;
  ent *= inv;
  return {
    loss: pl + valueCoef * vl - entropyCoef * ent,
    policyLoss: pl,
    valueLoss: vl,
    entropy: ent,
    approxKl: kl * inv,
    clipFrac: clipped * inv,
  };
}

/**
 * Generalised advantage estimation over a time-major buffer of `steps x slots`
 * (a slot is one agent of one parallel environment).
 *
 * At step `t`, slot `s` (index `t * slots + s`) is used only if `valid` is 1
 * (the agent acted). `done` marks the last valid step of an agent's episode
 * (no bootstrap after it). Invalid steps are skipped: the recursion links each
 * valid step to the slot's next valid step. `bootstrap[s]` is the value of the
 * state after the last step for slots whose episode is still running.
 * Writes `advantages` and `returns = advantages + values` (zero where invalid).
 */
export function gae(
  rewards: Float32Array,
  values: Float32Array,
  done: Uint8Array,
  valid: Uint8Array,
  bootstrap: Float32Array,
  steps: number,
  slots: number,
  gamma: number,
  lambda: number,
  advantages: Float32Array,
  returns: Float32Array,
): void {
  for (let s = 0; s < slots; s++) {
    let nextV = bootstrap[s]!, nextA = 0;
    for (let t = steps - 1; t >= 0; t--) {
      const i = t * slots + s;
      if (!valid[i]) {
        advantages[i] = 0;
        returns[i] = 0;
        continue;
      }
      const v = values[i]!;
      let a: number;
      if (done[i]) a = rewards[i]! - v;
      else a = rewards[i]! + gamma * nextV - v + gamma * lambda * nextA;
      advantages[i] = a;
      returns[i] = a + v;
      nextV = v;
      nextA = a;
    }
  }
}

/**
 * Group-relative advantages (GRPO): `returns` holds `groups x size` episode
 * returns (each group is the same instance and agent replayed `size` times);
 * writes `(R - mean(group)) / (std(group) + eps)` into `out`. A group whose
 * returns are all equal gets zero advantages (it carries no signal).
 */
export function groupAdvantages(
  returns: Float32Array,
  groups: number,
  size: number,
  out: Float32Array,
  eps = 1e-6,
): void {
  for (let g = 0; g < groups; g++) {
    let m = 0;
    for (let i = 0; i < size; i++) m += returns[g * size + i]!;
    m /= size;
    let v = 0;
    for (let i = 0; i < size; i++) v += (returns[g * size + i]! - m) ** 2;
    const sd = Math.sqrt(v / size);
    for (let i = 0; i < size; i++) {
      out[g * size + i] = sd < 1e-8
        ? 0
        : (returns[g * size + i]! - m) / (sd + eps);
    }
  }
}

/** Normalise `x[0..n)` in place to zero mean and unit standard deviation. */
export function normalize(x: Float32Array, n: number, eps = 1e-8): void {
  if (n < 2) return;
  let m = 0;
  for (let i = 0; i < n; i++) m += x[i]!;
  m /= n;
  let v = 0;
  for (let i = 0; i < n; i++) v += (x[i]! - m) ** 2;
  const sd = Math.sqrt(v / n);
  for (let i = 0; i < n; i++) x[i] = (x[i]! - m) / (sd + eps);
}

/**
 * Running mean and variance (parallel Welford merge of batches), used to
 * normalise value targets so the value head works in unit scale whatever the
 * reward scale.
 */
export class RunningMeanStd {
  /** Mean so far. */
  mean: number;
  /** Variance so far. */
  var: number;
  /** Effective number of observations. */
  count: number;

  /** Start from a prior (defaults: mean 0, variance 1, count 1e-4). */
  constructor(mean = 0, variance = 1, count = 1e-4) {
    this.mean = mean;
    this.var = variance;
    this.count = count;
  }

  /** Standard deviation (floored at 1e-4). */
  get std(): number {
    return Math.max(Math.sqrt(this.var), 1e-4);
  }

  /** Merge `n` values of `x` selected by `mask` (all if omitted). */
  update(x: Float32Array, n: number, mask?: Uint8Array): void {
    let c = 0, m = 0;
    for (let i = 0; i < n; i++) {
      if (mask && !mask[i]) continue;
      c++;
      m += x[i]!;
    }
    if (c === 0) return;
    m /= c;
    let v = 0;
    for (let i = 0; i < n; i++) {
      if (mask && !mask[i]) continue;
      v += (x[i]! - m) ** 2;
    }
    v /= c;
    const tot = this.count + c, d = m - this.mean;
    this.mean += d * c / tot;
    this.var = (this.var * this.count + v * c + d * d * this.count * c / tot) /
      tot;
    this.count = tot;
  }
}
