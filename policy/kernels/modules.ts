/**
 * The compiled WebAssembly kernels. The `.wasm` files are read through
 * `new URL("./<name>.wasm", import.meta.url)`, which the engine's code
 * digest follows (engine/cache/digest.ts), so their bytes enter the cache keys of
 * every node kind whose code loads them: a rebuilt kernel invalidates the
 * nodes it could change.
 *
 * @module
 */
import { createHash } from "node:crypto";

/** Exports of `mlp.wasm` (see `mlp.wat` for each kernel's contract). */
export interface MlpKernels {
  gemm(
    a: number,
    lda: number,
    b: number,
    ldb: number,
    c: number,
    ldc: number,
    bias: number,
    m: number,
    k: number,
    n: number,
  ): void;
  gemm_tn(
    a: number,
    lda: number,
    b: number,
    ldb: number,
    c: number,
    ldc: number,
    bias: number,
    ldbias: number,
    m: number,
    k: number,
    n: number,
  ): void;
  csr(
    x: number,
    ldx: number,
    idx: number,
    n: number,
    k: number,
    rowptr: number,
    cols: number,
    vals: number,
    table: number,
  ): number;
  csr_table(at: number): void;
  spmm(
    ptr: number,
    cols: number,
    vals: number,
    idx: number,
    m: number,
    b: number,
    ldb: number,
    bias: number,
    c: number,
    ldc: number,
    n: number,
  ): void;
  spmm_t(
    ptr: number,
    cols: number,
    vals: number,
    idx: number,
    m: number,
    d: number,
    ldd: number,
    c: number,
    ldc: number,
    k: number,
    n: number,
  ): void;
  transpose(
    src: number,
    lds: number,
    rows: number,
    cols: number,
    dst: number,
    ldd: number,
  ): void;
  activate(p: number, count: number, kind: number): void;
  activate_grad(d: number, y: number, count: number, kind: number): void;
  col_sum(d: number, ldd: number, m: number, n: number, out: number): void;
  sumsq(p: number, count: number): number;
  adam(
    param: number,
    grad: number,
    m: number,
    v: number,
    count: number,
    gscale: number,
    b1: number,
    b2: number,
    step: number,
    rc2: number,
    eps: number,
  ): void;
  ppo_gather(
    idx: number,
    n: number,
    actions: number,
    logpOld: number,
    advantages: number,
    returns: number,
    valuesOld: number,
    normalize: number,
    vmean: number,
    vstd: number,
    act: number,
    logp: number,
    adv: number,
    ret: number,
    val: number,
  ): void;
  ppo_loss(
    out: number,
    ldo: number,
    dout: number,
    n: number,
    actions: number,
    act: number,
    logpOld: number,
    adv: number,
    ret: number,
    val: number,
    clip: number,
    vcoef: number,
    ecoef: number,
    clipv: number,
    scratch: number,
    stats: number,
  ): void;
  log_softmax(
    out: number,
    ldo: number,
    n: number,
    actions: number,
    dst: number,
    ldd: number,
    scratch: number,
  ): void;
}

/** Exports of `obs.wasm` (see `obs.wat`). */
export interface ObsKernels {
  encode(ctx: number, slots: number, n: number, out: number): void;
}

interface _Loaded {
  module: WebAssembly.Module;
  digest: string;
}

let _mlp: _Loaded | undefined;
let _obs: _Loaded | undefined;

function _load(url: URL): _Loaded {
  let bytes: Uint8Array;
  try {
    bytes = Deno.readFileSync(url);
  } catch (e) {
    throw new Error(
      `Cannot read the WebAssembly kernel ${url.pathname} (${
        (e as Error).message
      }); run \`deno task build:wasm\` in the project, or use kernel "ts"`,
    );
  }
  return {
    module: new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>),
    digest: createHash("sha256").update(bytes).digest("hex"),
  };
}

function _mlpLoaded(): _Loaded {
  return _mlp ??= _load(new URL("./mlp.wasm", import.meta.url));
}

/** Instantiate the MLP kernels over `memory` (compiled once per process). */
export function instantiateMlp(memory: WebAssembly.Memory): MlpKernels {
  const inst = new WebAssembly.Instance(_mlpLoaded().module, {
    env: { memory },
  });
  return inst.exports as unknown as MlpKernels;
}

function _obsLoaded(): _Loaded {
  return _obs ??= _load(new URL("./obs.wasm", import.meta.url));
}

/** Instantiate the observation kernel over `memory`. */
export function instantiateObs(memory: WebAssembly.Memory): ObsKernels {
  const inst = new WebAssembly.Instance(_obsLoaded().module, {
    env: { memory },
  });
  return inst.exports as unknown as ObsKernels;
}

/** sha256 of `obs.wasm`. */
export function obsKernelDigest(): string {
  return _obsLoaded().digest;
}

/**
 * sha256 of `mlp.wasm`: recorded in training reports so a result names the
 * exact kernel that produced it.
 */
export function mlpKernelDigest(): string {
  return _mlpLoaded().digest;
}
