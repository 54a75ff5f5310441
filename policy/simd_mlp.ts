/**
 * The policy network ({@linkcode Mlp}) on the WebAssembly SIMD kernels of
 * `kernels/mlp.wat`: the same function, about ten times faster than the
 * TypeScript reference in `mlp.ts`, which stays the definition its results
 * are tested against.
 *
 * Layout in the kernel memory: every row width except the observation's is
 * padded to a multiple of 4 with zeros (weights, biases, activations,
 * deltas, gradients and Adam moments alike), so the kernels only ever see
 * whole 4-float vectors along a row and need no tail code; the padding stays
 * exactly zero through training (zero inputs, zero weights, zero gradients).
 * Layer `l` stores `W[inRows][outPad]` then `b[outPad]`, where `inRows` is
 * the observation width for the first layer and the previous layer's padded
 * width after it.
 *
 * The first layer reads observation rows as compressed sparse rows (they are
 * about 90 % zeros): a sample buffer keeps its rows in that form (written by
 * the observation encoder, or compressed once from dense rows), and
 * {@linkcode SimdMlp.forwardSparse} reads a minibatch's rows by index
 * straight from it, so rows are neither copied nor compressed again per
 * minibatch; the first layer's weight gradient is scattered from the same
 * rows and the layer's deltas (`spmm_t`), in the order a product of the rows
 * in compressed-column form would sum it.
 *
 * Floating point: plain float32 multiply and add (no fused multiply-add),
 * tanh and exp by fixed polynomials, in an order per output value that does
 * not depend on the batch a row is in or on the machine. Results differ from
 * the TypeScript reference (which rounds float64 sums to float32) by about
 * 1e-6; the same inputs give bit-identical results on every run.
 *
 * @module
 */
import type { KernelArena } from "./kernels/arena.ts";
import { instantiateMlp, type MlpKernels } from "./kernels/modules.ts";
import { mlpLayout, type MlpSpec } from "./mlp.ts";

/** Rows per block of the weight-gradient products (see {@linkcode SimdMlp.backward}). */
const K_BLOCK = 256;

/** Round up to a multiple of 4. */
export function pad4(n: number): number {
  return (n + 3) & ~3;
}

interface _Layer {
  /** Unpadded input and output widths (the {@linkcode Mlp} layout). */
  inSize: number;
  outSize: number;
  /** Rows of the stored weight (inputs) and padded output width. */
  inRows: number;
  outPad: number;
  /** Float offsets of W and b in the padded parameter vector. */
  w: number;
  b: number;
  /** Float offsets of W and b in the unpadded Mlp parameter vector. */
  srcW: number;
  srcB: number;
}

/**
 * A network's parameters, gradients, Adam moments and a workspace for
 * passes of up to `rows` rows, laid out in a {@linkcode KernelArena}.
 *
 * Construct it before the arena is committed (it reserves its buffers),
 * then use it after.
 */
export class SimdMlp {
  /** The network's shape. */
  readonly spec: MlpSpec;
  /** Rows per forward/backward pass (a multiple of 4; larger forwards are chunked). */
  readonly rows: number;
  /** Row stride of head outputs (`actions + 1`, padded to 4). */
  readonly headStride: number;
  /** Number of padded parameters (a multiple of 4). */
  readonly size: number;
  /** Address of the padded parameters. */
  readonly params: number;
  /** Address of the gradients (written, not accumulated, by {@linkcode backward}). */
  readonly grads: number;
  /** Addresses of Adam's first and second moments. */
  readonly adamM: number;
  readonly adamV: number;
  /** Address of the head outputs of the last forward into the workspace (`rows x headStride`). */
  readonly headOut: number;
  /** Address of the loss gradient with respect to the head outputs (same layout); its padding must stay zero. */
  readonly dOut: number;
  readonly #arena: KernelArena;
  readonly #layers: _Layer[];
  readonly #kind: number;
  readonly #hidden: number[];
  readonly #delta: number[];
  readonly #wt: number[];
  readonly #zero: number;
  readonly #rowptr: number;
  readonly #cols: number;
  readonly #vals: number;
  readonly #table: number;
  #k: MlpKernels | undefined;
  /** The sparse rows (rowptr, cols, vals, idx addresses) of the last forward into the workspace, for backward. */
  #pending: [number, number, number, number] | undefined;

  /** Reserve the buffers of `spec` with a workspace of `rows` rows in `arena`. */
  constructor(spec: MlpSpec, arena: KernelArena, rows: number) {
    const { layers } = mlpLayout(spec);
    if (!Number.isInteger(rows) || rows < 1) {
      throw new RangeError(`rows must be a positive integer (got ${rows})`);
    }
    this.spec = { ...spec, hidden: [...spec.hidden] };
    this.rows = pad4(rows);
    this.#arena = arena;
    this.#kind = spec.activation === "relu" ? 2 : 1;
    let off = 0;
    this.#layers = layers.map((l, i) => {
      const inRows = i === 0 ? l.inSize : pad4(l.inSize);
      const outPad = pad4(l.outSize);
      const layer: _Layer = {
        inSize: l.inSize,
        outSize: l.outSize,
        inRows,
        outPad,
        w: off,
        b: off + inRows * outPad,
        srcW: l.w,
        srcB: l.b,
      };
      off += inRows * outPad + outPad;
      return layer;
    });
    this.size = off;
    const head = this.#layers[this.#layers.length - 1]!;
    this.headStride = head.outPad;
    const R = this.rows, D = spec.inputSize;
    const f = (n: number) => arena.reserve(4 * n);
    this.params = f(off);
    this.grads = f(off);
    this.adamM = f(off);
    this.adamV = f(off);
    this.#hidden = this.#layers.slice(0, -1).map((l) => f(R * l.outPad));
    this.#delta = this.#layers.map((l) => f(R * l.outPad));
    this.headOut = f(R * head.outPad);
    this.dOut = this.#delta[this.#delta.length - 1]!;
    this.#wt = this.#layers.map((l, i) => i === 0 ? 0 : f(l.inRows * l.outPad));
    this.#zero = f(Math.max(...this.#layers.map((l) => l.outPad)));
    this.#rowptr = f(R + 1);
    // csr stores whole vectors: 3 values of slack
    this.#cols = f(R * D + 4);
    this.#vals = f(R * D + 4);
    this.#table = arena.reserve(256);
  }

  /** The kernels (instantiated over the arena's memory on first use). */
  get kernels(): MlpKernels {
    if (!this.#k) {
      this.#k = instantiateMlp(this.#arena.memory);
      this.#k.csr_table(this.#table);
    }
    return this.#k;
  }

  /**
   * Pack an unpadded vector in the {@linkcode Mlp} layout (parameters, or
   * Adam moments) into the padded layout at `at` (default: the parameters).
   */
  pack(src: Float32Array, at: number = this.params): void {
    const dst = this.#arena.f32(at, this.size);
    for (const l of this.#layers) {
      for (let i = 0; i < l.inSize; i++) {
        const s = l.srcW + i * l.outSize, d = l.w + i * l.outPad;
        for (let j = 0; j < l.outSize; j++) dst[d + j] = src[s + j]!;
      }
      for (let j = 0; j < l.outSize; j++) dst[l.b + j] = src[l.srcB + j]!;
    }
  }

  /** Unpack the padded vector at `at` (default: the parameters) into `dst` in the {@linkcode Mlp} layout. */
  unpack(dst: Float32Array, at: number = this.params): void {
    const src = this.#arena.f32(at, this.size);
    for (const l of this.#layers) {
      for (let i = 0; i < l.inSize; i++) {
        const d = l.srcW + i * l.outSize, s = l.w + i * l.outPad;
        for (let j = 0; j < l.outSize; j++) dst[d + j] = src[s + j]!;
      }
      for (let j = 0; j < l.outSize; j++) dst[l.srcB + j] = src[l.b + j]!;
    }
  }

  /**
   * Forward pass of `n` dense observation rows into head outputs at `out`
   * (row stride {@linkcode headStride}; default the workspace's
   * {@linkcode headOut}). Row `r` is `x + (idx ? idx[r] : r) * ldx` floats
   * (`idx`: address of int32 row indices, or 0). The rows are compressed
   * into the workspace first. Passes of more than {@linkcode rows} rows are
   * chunked; {@linkcode backward} needs `n <= rows`.
   */
  forward(
    x: number,
    ldx: number,
    idx: number,
    n: number,
    out: number = this.headOut,
  ): void {
    const k = this.kernels, D = this.spec.inputSize;
    this.#pending = undefined;
    for (let c = 0; c < n; c += this.rows) {
      const m = Math.min(this.rows, n - c);
      this.#arena.i32(this.#rowptr, 1)[0] = 0;
      k.csr(
        idx ? x : x + 4 * c * ldx,
        ldx,
        idx ? idx + 4 * c : 0,
        m,
        D,
        this.#rowptr,
        this.#cols,
        this.#vals,
        this.#table,
      );
      this.#forward(
        this.#rowptr,
        this.#cols,
        this.#vals,
        0,
        m,
        out + 4 * c * this.headStride,
      );
    }
  }

  /**
   * Forward pass of `n` rows of a compressed sparse row matrix (addresses of
   * its int32 row pointers, int32 columns and float32 values, as the
   * `csr` kernel writes them) into head outputs at `out` (default the
   * workspace's {@linkcode headOut}). Row `r` is sparse row `idx[r]` (`idx`:
   * address of int32 row indices, or 0 for row `r`). The same function as
   * {@linkcode forward} of the dense rows, bit for bit. Passes of more than
   * {@linkcode rows} rows are chunked; {@linkcode backward} needs
   * `n <= rows`.
   */
  forwardSparse(
    rowptr: number,
    cols: number,
    vals: number,
    idx: number,
    n: number,
    out: number = this.headOut,
  ): void {
    for (let c = 0; c < n; c += this.rows) {
      const m = Math.min(this.rows, n - c);
      this.#forward(
        idx ? rowptr : rowptr + 4 * c,
        cols,
        vals,
        idx ? idx + 4 * c : 0,
        m,
        out + 4 * c * this.headStride,
      );
    }
  }

  #forward(
    rowptr: number,
    cols: number,
    vals: number,
    idx: number,
    n: number,
    out: number,
  ): void {
    const k = this.kernels, L = this.#layers.length;
    this.#pending = n <= this.rows && out === this.headOut
      ? [rowptr, cols, vals, idx]
      : undefined;
    const p = this.params;
    for (let l = 0; l < L; l++) {
      const ly = this.#layers[l]!;
      const dst = l < L - 1 ? this.#hidden[l]! : out;
      if (l === 0) {
        k.spmm(
          rowptr,
          cols,
          vals,
          idx,
          n,
          p + 4 * ly.w,
          ly.outPad,
          p + 4 * ly.b,
          dst,
          ly.outPad,
          ly.outPad,
        );
      } else {
        k.gemm(
          this.#hidden[l - 1]!,
          ly.inRows,
          p + 4 * ly.w,
          ly.outPad,
          dst,
          ly.outPad,
          p + 4 * ly.b,
          n,
          ly.inRows,
          ly.outPad,
        );
      }
      if (l < L - 1) k.activate(dst, n * ly.outPad, this.#kind);
    }
  }

  /**
   * Backward pass of the last {@linkcode forward} (`n` rows into the
   * workspace) given the loss gradient in {@linkcode dOut}: writes the
   * gradient of every parameter to {@linkcode grads}.
   */
  backward(n: number): void {
    const src = this.#pending;
    if (!src) {
      throw new Error(
        "SimdMlp.backward needs a forward of at most `rows` rows into the workspace first",
      );
    }
    const k = this.kernels, L = this.#layers.length, D = this.spec.inputSize;
    const p = this.params, g = this.grads;
    for (let l = L - 1; l >= 0; l--) {
      const ly = this.#layers[l]!, d = this.#delta[l]!;
      k.col_sum(d, ly.outPad, n, ly.outPad, g + 4 * ly.b);
      if (l > 0) {
        const h = this.#hidden[l - 1]!;
        // dW = H^T D over blocks of K_BLOCK rows, so that the rows of H
        // and D a block reads stay in cache while every output block
        // passes over them; each block continues the sums in dW, so the
        // float operations are those of one pass
        const gw = g + 4 * ly.w;
        for (let r0 = 0; r0 < n; r0 += K_BLOCK) {
          k.gemm_tn(
            h + 4 * r0 * ly.inRows,
            ly.inRows,
            d + 4 * r0 * ly.outPad,
            ly.outPad,
            gw,
            ly.outPad,
            r0 === 0 ? this.#zero : gw,
            r0 === 0 ? 0 : ly.outPad,
            ly.inRows,
            Math.min(K_BLOCK, n - r0),
            ly.outPad,
          );
        }
        const wt = this.#wt[l]!;
        k.transpose(
          p + 4 * ly.w,
          ly.outPad,
          ly.inRows,
          ly.outPad,
          wt,
          ly.inRows,
        );
        k.gemm(
          d,
          ly.outPad,
          wt,
          ly.inRows,
          this.#delta[l - 1]!,
          ly.inRows,
          this.#zero,
          n,
          ly.outPad,
          ly.inRows,
        );
        k.activate_grad(this.#delta[l - 1]!, h, n * ly.inRows, this.#kind);
      } else {
        k.spmm_t(
          src[0],
          src[1],
          src[2],
          src[3],
          n,
          d,
          ly.outPad,
          g + 4 * ly.w,
          ly.outPad,
          D,
          ly.outPad,
        );
      }
    }
  }

  /** Squared L2 norm of the gradients (float64 sums). */
  gradSumSq(): number {
    return this.kernels.sumsq(this.grads, this.size);
  }

  /**
   * One Adam step on the parameters with the gradients scaled by `gscale`
   * (gradient clipping), at step `t` (1-based, for the bias correction).
   */
  adamStep(
    t: number,
    lr: number,
    gscale: number,
    beta1 = 0.9,
    beta2 = 0.999,
    eps = 1e-5,
  ): void {
    const c1 = 1 - Math.pow(beta1, t), c2 = 1 - Math.pow(beta2, t);
    this.kernels.adam(
      this.params,
      this.grads,
      this.adamM,
      this.adamV,
      this.size,
      gscale,
      beta1,
      beta2,
      lr / c1,
      1 / Math.sqrt(c2),
      eps,
    );
  }

  /** A view of `n` rows of head outputs at `at` (default {@linkcode headOut}). */
  headView(n: number, at: number = this.headOut): Float32Array<ArrayBuffer> {
    return this.#arena.f32(at, n * this.headStride);
  }
}
