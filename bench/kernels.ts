/**
 * GFLOP/s of the policy's GEMM kernels against the measured limits of this
 * core for 128-bit multiply-adds, at the shapes one PPO minibatch step runs
 * (default MLP 162-64-64-(5+1)), for the plain kernels (`mlp.wasm`: separate
 * multiply and add, bit-identical on every CPU) and their fused derivative
 * (`mlp_fma.wasm`: relaxed-SIMD `f32x4.relaxed_madd`), alternated in the
 * same rounds:
 *
 * - `mul+add limit`: a loop of independent `c = c + c * b` chains of f32x4
 *   (f32x4.mul then f32x4.add), all in registers, whose result reads every
 *   chain: the most this core does with the instructions the plain kernels
 *   use (`--mul-add-chains`, default 13);
 * - `FMA limit`: the same loop with `c = relaxed_madd(c, b, c)` chains
 *   (`--fma-chains`, default 12), counting 2 flops per lane per madd;
 *   either option takes a list such as `8,10,12,14`: every count is timed
 *   and the best is the limit (on the AMD EPYC of bench/RESULTS.md, 13
 *   mul+add chains and 11-14 FMA chains were best, 2026-12-06);
 * - `gemm` forward (`H1 x W2`, `H2 x Whead`), `gemm` input gradients
 *   (`D x W^T`), `gemm_tn` weight gradients (`H^T x D`), and `spmm` (the
 *   sparse first layer, counting 2 flops per non-zero and output column).
 *
 * Before timing, every case runs once on both builds and the largest
 * difference of their outputs, relative to the largest output, is printed
 * (fused rounding: about 1e-7 to 1e-6 is expected, not 0).
 *
 * With `--base DIR`, the same shapes also run on `DIR/policy/kernels/mlp.wasm`
 * (e.g. a worktree of an earlier commit), alternated with this tree's, and
 * the table shows both and their ratio. Rates are per CPU second of this
 * process (`process.cpuUsage`), not wall time, so time slices taken by
 * other processes on a shared machine do not count. Every cell is the best of 7
 * alternating rounds (`--rounds`): on a shared machine the best round is
 * the one least disturbed by other processes, for every contender alike.
 *
 * Run: `deno run -A bench/kernels.ts [--minibatch 512,2048,4096] [--base DIR] [--rounds 7] [--cpu-ms 250] [--mul-add-chains 13] [--fma-chains 12] [--json]`
 *
 * @module
 */
import process from "node:process";
import { buildWat } from "../policy/kernels/build.ts";
import { KernelArena } from "../policy/kernels/arena.ts";
import type { MlpKernels } from "../policy/kernels/modules.ts";
import { arg, median } from "./_common.ts";

const MINIBATCHES = arg("minibatch", "512,2048,4096").split(",").map(Number);
const BASE = arg("base", "");
const JSON_OUT = Deno.args.includes("--json");
const ROUNDS = Number(arg("rounds", "7"));
const FMA_CHAINS = arg("fma-chains", "12").split(",").map(Number);
const MUL_ADD_CHAINS = arg("mul-add-chains", "13").split(",").map(Number);
const CPU_MS = Number(arg("cpu-ms", "250"));
const best = (xs: number[]) => Math.max(...xs);

// ---- the limits --------------------------------------------------------------
// `chains` independent chains c = c + c * b (b = 0, so values stay put), one
// per f32x4 register: each iteration is `chains` f32x4.mul and f32x4.add
// ("mul+add") or `chains` f32x4.relaxed_madd ("fma"), none shared (a common
// multiplicand would let the compiler compute one product for all). The
// result sums every chain: a chain whose value is never read is dead code
// to the compiler, which then drops it from the loop (until 2026-12-06 this
// loop returned only the first and last chain, and the limit it reported
// counted twelve chains that were not run).
type LimitKind = "mul+add" | "fma";
interface Limit {
  kind: LimitKind;
  chains: number;
  run(n: number, s: number): number;
}
async function limitModule(kind: LimitKind, chains: number): Promise<Limit> {
  const ids = Array.from({ length: chains }, (_, i) => i);
  const step = (i: number) =>
    kind === "fma"
      ? `(f32x4.relaxed_madd (local.get $c${i}) (local.get $b) (local.get $c${i}))`
      : `(f32x4.add (local.get $c${i}) (f32x4.mul (local.get $c${i}) (local.get $b)))`;
  const sum = ids.slice(1).reduce(
    (e, i) => `(f32x4.add ${e} (local.get $c${i}))`,
    "(local.get $c0)",
  );
  const wat = `(module
  (func (export "run") (param $n i32) (param $s f32) (result f32)
    (local $b v128) ${ids.map((i) => `(local $c${i} v128)`).join(" ")}
    (local.set $b (f32x4.splat (local.get $s)))
    ${
    ids.map((i) => `(local.set $c${i} (f32x4.splat (f32.const ${i + 1})))`)
      .join("\n    ")
  }
    (loop $l
      ${ids.map((i) => `(local.set $c${i} ${step(i)})`).join("\n      ")}
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))
    (f32x4.extract_lane 0 ${sum})))`;
  const { run } = new WebAssembly.Instance(
    new WebAssembly.Module(
      await buildWat(`limit_${chains}`, wat, kind === "fma") as Uint8Array<
        ArrayBuffer
      >,
    ),
  ).exports as { run(n: number, s: number): number };
  // run it long enough for the optimising tier to take over
  for (let i = 0; i < 20; i++) run(100_000, 0);
  return { kind, chains, run };
}
const limitModules = [
  ...await Promise.all(MUL_ADD_CHAINS.map((c) => limitModule("mul+add", c))),
  ...await Promise.all(FMA_CHAINS.map((c) => limitModule("fma", c))),
];
await new Promise((r) => setTimeout(r, 200));

/** CPU time of this process (ms): unlike wall time, it does not count the time other processes hold the core. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** GFLOP/s of `fn` (which does `flops` each call) per CPU second, over `--cpu-ms` (250) ms of CPU time. */
function gflops(fn: () => void, flops: number): number {
  for (let i = 0; i < 3; i++) fn();
  let calls = 0;
  const t0 = cpuMs();
  let t = t0;
  while (t - t0 < CPU_MS) {
    for (let i = 0; i < 8; i++) fn();
    calls += 8;
    t = cpuMs();
  }
  return (calls * flops) / ((t - t0) / 1000) / 1e9;
}

// a limit loop's flops: per iteration and chain one mul and one add, or one
// madd counted as 2, on 4 lanes
const LIMIT_ITERS = 200_000;
const limitFlops = (l: Limit) => LIMIT_ITERS * l.chains * 4 * 2;

// ---- the kernels -------------------------------------------------------------
async function loadKernels(
  dir: string,
  memory: WebAssembly.Memory,
  file = "mlp.wasm",
) {
  const bytes = await Deno.readFile(`${dir}/policy/kernels/${file}`);
  return new WebAssembly.Instance(new WebAssembly.Module(bytes), {
    env: { memory },
  }).exports as unknown as MlpKernels;
}

const D = 162, H = 64, HEAD = 8;
const maxMb = Math.max(...MINIBATCHES);
const arena = new KernelArena();
const f = (n: number) => arena.reserve(4 * n);
const at = {
  x: f(maxMb * D),
  h: f(maxMb * H),
  out: f(maxMb * H),
  w: f(H * H),
  wt: f(H * H),
  w1: f(D * H),
  bias: f(H),
  zero: f(H),
  rowptr: f(maxMb + 1),
  cols: f(maxMb * D + 4),
  vals: f(maxMb * D + 4),
  table: arena.reserve(256),
};
arena.commit();
{
  let s = 12345;
  const rnd = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const random: [number, number][] = [
    [at.h, maxMb * H],
    [at.w, H * H],
    [at.wt, H * H],
    [at.w1, D * H],
    [at.bias, H],
  ];
  for (const [a, n] of random) {
    const v = arena.f32(a, n);
    for (let i = 0; i < v.length; i++) v[i] = rnd() - 0.5;
  }
  // observation-like rows: ~10 % ones in the window, 12 dense scalars
  const x = arena.f32(at.x, maxMb * D);
  for (let i = 0; i < x.length; i++) {
    x[i] = i % D >= D - 12 ? rnd() - 0.5 : (rnd() < 0.1 ? 1 : 0);
  }
}
const mine = await loadKernels(
  new URL("..", import.meta.url).pathname,
  arena.memory,
);
const fma = await loadKernels(
  new URL("..", import.meta.url).pathname,
  arena.memory,
  "mlp_fma.wasm",
);
const base = BASE ? await loadKernels(BASE, arena.memory) : undefined;
mine.csr_table(at.table);

/**
 * The weight gradient C = A^T B (A: k x m, m = 64) as the learner computes
 * it: this tree's gemm_tn over blocks of 256 rows of k; an older tree's
 * (without the ldbias argument) in one pass.
 */
function gemmTn(
  kern: MlpKernels,
  a: number,
  lda: number,
  b: number,
  ldb: number,
  c: number,
  ldc: number,
  k: number,
  n: number,
): void {
  if (kern.gemm_tn.length === 10) {
    (kern.gemm_tn as unknown as (...x: number[]) => void)(
      a,
      lda,
      b,
      ldb,
      c,
      ldc,
      at.zero,
      H,
      k,
      n,
    );
    return;
  }
  for (let r0 = 0; r0 < k; r0 += 256) {
    kern.gemm_tn(
      a + 4 * r0 * lda,
      lda,
      b + 4 * r0 * ldb,
      ldb,
      c,
      ldc,
      r0 === 0 ? at.zero : c,
      r0 === 0 ? 0 : ldc,
      H,
      Math.min(256, k - r0),
      n,
    );
  }
}

interface Case {
  name: string;
  flops: number;
  /** How many floats it writes from `at.out` on. */
  out: number;
  run(k: MlpKernels): void;
}
function cases(mb: number): Case[] {
  arena.i32(at.rowptr, 1)[0] = 0;
  const nnz = mine.csr(
    at.x,
    D,
    0,
    mb,
    D,
    at.rowptr,
    at.cols,
    at.vals,
    at.table,
  );
  // the arguments of spmm around this tree's idx
  const csr = [at.rowptr, at.cols, at.vals] as const;
  // (B is the first layer's 162x64 weights: rows of every observation column)
  const spmmRest = [mb, at.w1, H, at.bias, at.out, H, H] as const;
  return [
    {
      name: `gemm forward ${mb}x64 · 64x64`,
      flops: 2 * mb * H * H,
      out: mb * H,
      run: (k) => k.gemm(at.h, H, at.w, H, at.out, H, at.bias, mb, H, H),
    },
    {
      name: `gemm forward ${mb}x64 · 64x8 (head)`,
      flops: 2 * mb * H * HEAD,
      out: mb * HEAD,
      run: (k) =>
        k.gemm(at.h, H, at.w, HEAD, at.out, HEAD, at.bias, mb, H, HEAD),
    },
    {
      name: `gemm input grad ${mb}x64 · (64x64)^T`,
      flops: 2 * mb * H * H,
      out: mb * H,
      run: (k) => k.gemm(at.h, H, at.wt, H, at.out, H, at.zero, mb, H, H),
    },
    {
      name: `gemm input grad ${mb}x8 · (8x64)^T (head)`,
      flops: 2 * mb * HEAD * H,
      out: mb * H,
      run: (k) => k.gemm(at.h, HEAD, at.wt, H, at.out, H, at.zero, mb, HEAD, H),
    },
    {
      name: `gemm_tn weight grad (${mb}x64)^T · ${mb}x64`,
      flops: 2 * mb * H * H,
      out: H * H,
      run: (k) => gemmTn(k, at.h, H, at.h, H, at.out, H, mb, H),
    },
    {
      name: `gemm_tn weight grad (${mb}x64)^T · ${mb}x8 (head)`,
      flops: 2 * mb * H * HEAD,
      out: H * HEAD,
      run: (k) => gemmTn(k, at.h, H, at.h, HEAD, at.out, HEAD, mb, HEAD),
    },
    {
      name: `spmm first layer ${mb}x162 (${
        (nnz / mb).toFixed(1)
      } non-zeros/row) · 162x64`,
      flops: 2 * nnz * H,
      out: mb * H,
      run: (k) => {
        // this tree's spmm takes an idx argument (0: the rows in order)
        // after the values; an older one does not
        if (k.spmm.length === 11) k.spmm(...csr, 0, ...spmmRest);
        else {(k.spmm as unknown as (...a: number[]) => void)(
            ...csr,
            ...spmmRest,
          );}
      },
    },
  ];
}

/** max |fused - plain| over the output, relative to max |plain|. */
function relDiff(c: Case): number {
  c.run(mine);
  const plain = arena.f32(at.out, c.out).slice();
  c.run(fma);
  const fused = arena.f32(at.out, c.out);
  let diff = 0, scale = 0;
  for (let i = 0; i < c.out; i++) {
    diff = Math.max(diff, Math.abs(fused[i]! - plain[i]!));
    scale = Math.max(scale, Math.abs(plain[i]!));
  }
  if (scale === 0) throw new Error(`${c.name}: the output is all zeros`);
  return diff / scale;
}

const rows: {
  name: string;
  plain: number;
  fma: number;
  base?: number;
  limit: number;
  fmaLimit: number;
  diff: number;
}[] = [];
/** Every limit measurement, by kind and chain count. */
const measured = new Map<Limit, number[]>(limitModules.map((l) => [l, []]));
for (const mb of MINIBATCHES) {
  for (const c of cases(mb)) {
    const diff = relDiff(c);
    const m: number[] = [], fm: number[] = [], b: number[] = [];
    const l: number[] = [], fl: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const lim of limitModules) {
        const g = gflops(() => lim.run(LIMIT_ITERS, 0), limitFlops(lim));
        measured.get(lim)!.push(g);
        (lim.kind === "fma" ? fl : l).push(g);
      }
      m.push(gflops(() => c.run(mine), c.flops));
      fm.push(gflops(() => c.run(fma), c.flops));
      if (base) b.push(gflops(() => c.run(base), c.flops));
    }
    rows.push({
      name: c.name,
      plain: best(m),
      fma: best(fm),
      ...(base ? { base: best(b) } : {}),
      limit: best(l),
      fmaLimit: best(fl),
      diff,
    });
  }
}

const load = Deno.loadavg().map((x) => x.toFixed(2)).join(" ");
const spread = (xs: number[]) =>
  `best ${best(xs).toFixed(1)} GFLOP/s, median ${
    median(xs).toFixed(1)
  } (${xs.length} measurements, ${Math.min(...xs).toFixed(1)}-${
    Math.max(...xs).toFixed(1)
  })`;
if (JSON_OUT) {
  console.log(JSON.stringify({
    load,
    limits: [...measured].map(([l, xs]) => ({
      kind: l.kind,
      chains: l.chains,
      gflops: xs,
    })),
    rows,
  }));
} else {
  for (const [l, xs] of measured) {
    console.log(
      `limit of ${
        l.kind === "fma"
          ? "f32x4.relaxed_madd"
          : "separate f32x4.mul + f32x4.add"
      } (${l.chains} chains): ${spread(xs)}`,
    );
  }
  console.log(
    `load average ${load}; every % is against the best limit of its kind measured in the same rounds (over ${
      MUL_ADD_CHAINS.join("/")
    } mul+add chains, ${FMA_CHAINS.join("/")} FMA chains)\n`,
  );
  const pct = (x: number, of: number) => `${(100 * x / of).toFixed(0)} %`;
  console.log(
    `| kernel, shape | plain GFLOP/s | plain % of mul+add limit | plain % of FMA limit | FMA GFLOP/s | FMA % of FMA limit | FMA % of mul+add limit | FMA / plain | max rel. diff |${
      base ? " base GFLOP/s | base % of mul+add limit | plain / base |" : ""
    }`,
  );
  console.log(
    `|---|---:|---:|---:|---:|---:|---:|---:|---:|${
      base ? "---:|---:|---:|" : ""
    }`,
  );
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${r.plain.toFixed(1)} | ${pct(r.plain, r.limit)} | ${
        pct(r.plain, r.fmaLimit)
      } | ${r.fma.toFixed(1)} | ${pct(r.fma, r.fmaLimit)} | ${
        pct(r.fma, r.limit)
      } | ${(r.fma / r.plain).toFixed(2)}x | ${r.diff.toExponential(1)} |${
        r.base !== undefined
          ? ` ${r.base.toFixed(1)} | ${pct(r.base, r.limit)} | ${
            (r.plain / r.base).toFixed(2)
          }x |`
          : ""
      }`,
    );
  }
  const worst = Math.max(...rows.map((r) => r.diff));
  console.log(
    `\nfused vs plain outputs: largest difference ${
      worst.toExponential(1)
    } of the largest output (${worst <= 1e-5 ? "within" : "NOT within"} 1e-5)`,
  );
}
