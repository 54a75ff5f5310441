/**
 * GFLOP/s of the policy's GEMM kernels against the measured limit of this
 * core for separate 128-bit multiplies and adds (no fused multiply-add),
 * at the shapes one PPO minibatch step runs (default MLP 162-64-64-(5+1)):
 *
 * - `limit`: a loop of 12 independent `acc += a * b` chains of f32x4
 *   (f32x4.mul then f32x4.add), all in registers: the most this core does
 *   with the instructions the kernels may use;
 * - `gemm` forward (`H1 x W2`, `H2 x Whead`), `gemm` input gradients
 *   (`D x W^T`), `gemm_tn` weight gradients (`H^T x D`), and `spmm` (the
 *   sparse first layer, counting 2 flops per non-zero and output column).
 *
 * With `--base DIR`, the same shapes also run on `DIR/policy/kernels/mlp.wasm`
 * (e.g. a worktree of an earlier commit), alternated with this tree's, and
 * the table shows both and their ratio. Rates are per CPU second of this
 * process (`process.cpuUsage`), not wall time, so time slices taken by
 * other processes on a shared machine do not count. Every cell is the best of 7
 * alternating rounds (`--rounds`): on a shared machine the best round is
 * the one least disturbed by other processes, for every contender alike.
 *
 * Run: `deno run -A bench/kernels.ts [--minibatch 512,2048,4096] [--base DIR] [--rounds 7] [--cpu-ms 250] [--json]`
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
const CPU_MS = Number(arg("cpu-ms", "250"));
const best = (xs: number[]) => Math.max(...xs);

// ---- the limit ---------------------------------------------------------------
// ACC independent chains c = c + c * b (b = 0, so values stay put): each
// iteration is ACC f32x4.mul and ACC f32x4.add, none shared (a common
// multiplicand would let the compiler compute one product for all).
const ACC = 14;
const limitWat = `(module
  (func (export "run") (param $n i32) (param $s f32) (result f32)
    (local $b v128)
    ${Array.from({ length: ACC }, (_, i) => `(local $c${i} v128)`).join(" ")}
    (local.set $b (f32x4.splat (local.get $s)))
    ${
  Array.from(
    { length: ACC },
    (_, i) => `(local.set $c${i} (f32x4.splat (f32.const ${i + 1})))`,
  ).join("\n    ")
}
    (loop $l
      ${
  Array.from(
    { length: ACC },
    (_, i) =>
      `(local.set $c${i} (f32x4.add (local.get $c${i}) (f32x4.mul (local.get $c${i}) (local.get $b))))`,
  ).join("\n      ")
}
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))
    (f32x4.extract_lane 0 (f32x4.add (local.get $c0) (local.get $c${
  ACC - 1
})))))`;
const limitModule = new WebAssembly.Instance(
  new WebAssembly.Module(
    await buildWat("limit", limitWat) as Uint8Array<ArrayBuffer>,
  ),
).exports as { run(n: number, s: number): number };

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

// the limit loop: ACC mul + ACC add f32x4 per iteration, 4 lanes each
const LIMIT_ITERS = 200_000;
const limitFlops = LIMIT_ITERS * 2 * ACC * 4;

// ---- the kernels -------------------------------------------------------------
async function loadKernels(dir: string, memory: WebAssembly.Memory) {
  const bytes = await Deno.readFile(`${dir}/policy/kernels/mlp.wasm`);
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
  for (const [a, n] of [[at.h, maxMb * H], [at.w, H * H], [at.bias, H]]) {
    const v = arena.f32(a!, n!);
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
  const spmmRest = [mb, at.w, H, at.bias, at.out, H, H] as const;
  return [
    {
      name: `gemm forward ${mb}x64 · 64x64`,
      flops: 2 * mb * H * H,
      run: (k) => k.gemm(at.h, H, at.w, H, at.out, H, at.bias, mb, H, H),
    },
    {
      name: `gemm forward ${mb}x64 · 64x8 (head)`,
      flops: 2 * mb * H * HEAD,
      run: (k) =>
        k.gemm(at.h, H, at.w, HEAD, at.out, HEAD, at.bias, mb, H, HEAD),
    },
    {
      name: `gemm input grad ${mb}x64 · (64x64)^T`,
      flops: 2 * mb * H * H,
      run: (k) => k.gemm(at.h, H, at.wt, H, at.out, H, at.zero, mb, H, H),
    },
    {
      name: `gemm input grad ${mb}x8 · (8x64)^T (head)`,
      flops: 2 * mb * HEAD * H,
      run: (k) => k.gemm(at.h, HEAD, at.wt, H, at.out, H, at.zero, mb, HEAD, H),
    },
    {
      name: `gemm_tn weight grad (${mb}x64)^T · ${mb}x64`,
      flops: 2 * mb * H * H,
      run: (k) => gemmTn(k, at.h, H, at.h, H, at.out, H, mb, H),
    },
    {
      name: `gemm_tn weight grad (${mb}x64)^T · ${mb}x8 (head)`,
      flops: 2 * mb * H * HEAD,
      run: (k) => gemmTn(k, at.h, H, at.h, HEAD, at.out, HEAD, mb, HEAD),
    },
    {
      name: `spmm first layer ${mb}x162 (${
        (nnz / mb).toFixed(1)
      } non-zeros/row) · 162x64`,
      flops: 2 * nnz * H,
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

const rows: {
  name: string;
  mine: number;
  base?: number;
  limit: number;
}[] = [];
const limits: number[] = [];
for (const mb of MINIBATCHES) {
  for (const c of cases(mb)) {
    const m: number[] = [], b: number[] = [], l: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      l.push(gflops(() => limitModule.run(LIMIT_ITERS, 0), limitFlops));
      m.push(gflops(() => c.run(mine), c.flops));
      if (base) b.push(gflops(() => c.run(base), c.flops));
    }
    limits.push(...l);
    rows.push({
      name: c.name,
      mine: best(m),
      ...(base ? { base: best(b) } : {}),
      limit: best(l),
    });
  }
}

const load = Deno.loadavg().map((x) => x.toFixed(2)).join(" ");
if (JSON_OUT) console.log(JSON.stringify({ load, rows }));
else {
  console.log(
    `limit of separate f32x4 mul + add on this core: best ${
      best(limits).toFixed(1)
    } GFLOP/s, median ${
      median(limits).toFixed(1)
    } (${limits.length} measurements, ${Math.min(...limits).toFixed(1)}-${
      Math.max(...limits).toFixed(1)
    }); load average ${load}; % of limit: against the best limit measured in the same rounds\n`,
  );
  console.log(
    `| kernel, shape | GFLOP/s | % of limit |${
      base ? " base GFLOP/s | base % | this / base |" : ""
    }`,
  );
  console.log(`|---|---:|---:|${base ? "---:|---:|---:|" : ""}`);
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${r.mine.toFixed(1)} | ${
        (100 * r.mine / r.limit).toFixed(0)
      } % |${
        r.base !== undefined
          ? ` ${r.base.toFixed(1)} | ${
            (100 * r.base / r.limit).toFixed(0)
          } % | ${(r.mine / r.base).toFixed(2)}x |`
          : ""
      }`,
    );
  }
}
