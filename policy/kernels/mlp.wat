;; WebAssembly SIMD kernels of the policy MLP, its PPO loss and Adam.
;;
;; Built into mlp.wasm by `deno task build:wasm` (policy/kernels/build.ts,
;; npm wabt); the committed mlp.wasm must be exactly what that produces.
;;
;; Conventions:
;; - The module imports its memory ("env" "memory"); the TypeScript side
;;   (policy/kernels/arena.ts) lays every buffer out once and never grows it.
;; - Every pointer is a byte address; every size and stride counts float32
;;   values (or int32 indices) unless its name ends in 4 (bytes).
;; - Matrices are row-major. Row widths of everything but the observation
;;   rows are padded to a multiple of 4 by the caller, with zeros in the
;;   padding (weights, biases and activations alike), so the kernels only
;;   see whole f32x4 vectors along a row. Inner dimensions and row counts
;;   may be anything (no tail handling is needed along a row; row and
;;   inner-loop tails are plain loops).
;; - Arithmetic is plain IEEE float32 (f32x4.mul then f32x4.add, never the
;;   relaxed fused multiply-add, whose rounding depends on the CPU), in a
;;   fixed order per output element that does not depend on which rows are
;;   processed together: the same inputs give bit-identical outputs on any
;;   machine, and a row's outputs do not depend on the batch it is in.
;; - mlp_fma.wasm is the fused derivative of this source, built from it by
;;   build.ts: every f32x4.mul whose result an f32x4.add takes becomes one
;;   f32x4.relaxed_madd (fuse_madd.ts). Its rounding differs from mlp.wasm's
;;   and depends on the CPU (fused where it has FMA); mlp.wasm is unchanged.
(module
  (import "env" "memory" (memory 1))

  ;; ---------------------------------------------------------------------
  ;; Dense matrix product with a bias row:
  ;;   C[i, 0..n) = bias[0..n) + sum_p A[i, p] * B[p, 0..n)   (p ascending)
  ;; for i < m; n % 4 == 0; lda, ldb, ldc in floats. Register blocks of
  ;; 4 rows x 8 columns (p four steps at a time, so that loop and pointer
  ;; updates do not crowd the multiplies and adds), then 4 x 4, then single
  ;; rows.
  ;; ---------------------------------------------------------------------
  (func $gemm (export "gemm")
    (param $a i32) (param $lda i32) (param $b i32) (param $ldb i32)
    (param $c i32) (param $ldc i32) (param $bias i32)
    (param $m i32) (param $k i32) (param $n i32)
    (local $a4 i32) (local $b4 i32) (local $c4 i32)
    (local $i i32) (local $j i32) (local $p i32)
    (local $pa0 i32) (local $pa1 i32) (local $pa2 i32) (local $pa3 i32)
    (local $pb i32) (local $pc i32)
    (local $pb0 i32) (local $pb1 i32) (local $pb2 i32) (local $pb3 i32)
    (local $x v128) (local $b0 v128) (local $b1 v128)
    (local $c00 v128) (local $c01 v128) (local $c10 v128) (local $c11 v128)
    (local $c20 v128) (local $c21 v128) (local $c30 v128) (local $c31 v128)
    (local.set $a4 (i32.shl (local.get $lda) (i32.const 2)))
    (local.set $b4 (i32.shl (local.get $ldb) (i32.const 2)))
    (local.set $c4 (i32.shl (local.get $ldc) (i32.const 2)))
    ;; blocks of 4 rows
    (local.set $i (i32.const 0))
    (block $rows_done
      (loop $rows
        (br_if $rows_done
          (i32.gt_s (i32.add (local.get $i) (i32.const 4)) (local.get $m)))
        ;; 8-column blocks
        (local.set $j (i32.const 0))
        (block $cols_done
          (loop $cols
            (br_if $cols_done
              (i32.gt_s (i32.add (local.get $j) (i32.const 8)) (local.get $n)))
            (local.set $b0 (v128.load (i32.add (local.get $bias) (i32.shl (local.get $j) (i32.const 2)))))
            (local.set $b1 (v128.load offset=16 (i32.add (local.get $bias) (i32.shl (local.get $j) (i32.const 2)))))
            (local.set $c00 (local.get $b0)) (local.set $c01 (local.get $b1))
            (local.set $c10 (local.get $b0)) (local.set $c11 (local.get $b1))
            (local.set $c20 (local.get $b0)) (local.set $c21 (local.get $b1))
            (local.set $c30 (local.get $b0)) (local.set $c31 (local.get $b1))
            (local.set $pa0 (i32.add (local.get $a) (i32.mul (local.get $i) (local.get $a4))))
            (local.set $pa1 (i32.add (local.get $pa0) (local.get $a4)))
            (local.set $pa2 (i32.add (local.get $pa1) (local.get $a4)))
            (local.set $pa3 (i32.add (local.get $pa2) (local.get $a4)))
            (local.set $pb0 (i32.add (local.get $b) (i32.shl (local.get $j) (i32.const 2))))
            (local.set $p (local.get $k))
            ;; four steps of p at a time: A's next values are at fixed
            ;; offsets, B's rows one stride apart
            (block $k4_done
              (loop $kl4
                (br_if $k4_done (i32.lt_s (local.get $p) (i32.const 4)))
                (local.set $pb1 (i32.add (local.get $pb0) (local.get $b4)))
                (local.set $pb2 (i32.add (local.get $pb1) (local.get $b4)))
                (local.set $pb3 (i32.add (local.get $pb2) (local.get $b4)))
                (local.set $b0 (v128.load (local.get $pb0)))
                (local.set $b1 (v128.load offset=16 (local.get $pb0)))
                (local.set $x (v128.load32_splat offset=0 (local.get $pa0)))
                (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=0 (local.get $pa1)))
                (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c11 (f32x4.add (local.get $c11) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=0 (local.get $pa2)))
                (local.set $c20 (f32x4.add (local.get $c20) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c21 (f32x4.add (local.get $c21) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=0 (local.get $pa3)))
                (local.set $c30 (f32x4.add (local.get $c30) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c31 (f32x4.add (local.get $c31) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $b0 (v128.load (local.get $pb1)))
                (local.set $b1 (v128.load offset=16 (local.get $pb1)))
                (local.set $x (v128.load32_splat offset=4 (local.get $pa0)))
                (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=4 (local.get $pa1)))
                (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c11 (f32x4.add (local.get $c11) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=4 (local.get $pa2)))
                (local.set $c20 (f32x4.add (local.get $c20) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c21 (f32x4.add (local.get $c21) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=4 (local.get $pa3)))
                (local.set $c30 (f32x4.add (local.get $c30) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c31 (f32x4.add (local.get $c31) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $b0 (v128.load (local.get $pb2)))
                (local.set $b1 (v128.load offset=16 (local.get $pb2)))
                (local.set $x (v128.load32_splat offset=8 (local.get $pa0)))
                (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=8 (local.get $pa1)))
                (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c11 (f32x4.add (local.get $c11) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=8 (local.get $pa2)))
                (local.set $c20 (f32x4.add (local.get $c20) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c21 (f32x4.add (local.get $c21) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=8 (local.get $pa3)))
                (local.set $c30 (f32x4.add (local.get $c30) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c31 (f32x4.add (local.get $c31) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $b0 (v128.load (local.get $pb3)))
                (local.set $b1 (v128.load offset=16 (local.get $pb3)))
                (local.set $x (v128.load32_splat offset=12 (local.get $pa0)))
                (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=12 (local.get $pa1)))
                (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c11 (f32x4.add (local.get $c11) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=12 (local.get $pa2)))
                (local.set $c20 (f32x4.add (local.get $c20) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c21 (f32x4.add (local.get $c21) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=12 (local.get $pa3)))
                (local.set $c30 (f32x4.add (local.get $c30) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c31 (f32x4.add (local.get $c31) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $pa0 (i32.add (local.get $pa0) (i32.const 16)))
                (local.set $pa1 (i32.add (local.get $pa1) (i32.const 16)))
                (local.set $pa2 (i32.add (local.get $pa2) (i32.const 16)))
                (local.set $pa3 (i32.add (local.get $pa3) (i32.const 16)))
                (local.set $pb0 (i32.add (local.get $pb3) (local.get $b4)))
                (local.set $p (i32.sub (local.get $p) (i32.const 4)))
                (br $kl4)))
            (local.set $pb (local.get $pb0))
            (block $k_done
              (loop $kl
                (br_if $k_done (i32.eqz (local.get $p)))
                (local.set $b0 (v128.load (local.get $pb)))
                (local.set $b1 (v128.load offset=16 (local.get $pb)))
                (local.set $x (v128.load32_splat (local.get $pa0)))
                (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat (local.get $pa1)))
                (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c11 (f32x4.add (local.get $c11) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat (local.get $pa2)))
                (local.set $c20 (f32x4.add (local.get $c20) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c21 (f32x4.add (local.get $c21) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat (local.get $pa3)))
                (local.set $c30 (f32x4.add (local.get $c30) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c31 (f32x4.add (local.get $c31) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $pa0 (i32.add (local.get $pa0) (i32.const 4)))
                (local.set $pa1 (i32.add (local.get $pa1) (i32.const 4)))
                (local.set $pa2 (i32.add (local.get $pa2) (i32.const 4)))
                (local.set $pa3 (i32.add (local.get $pa3) (i32.const 4)))
                (local.set $pb (i32.add (local.get $pb) (local.get $b4)))
                (local.set $p (i32.sub (local.get $p) (i32.const 1)))
                (br $kl)))
            (local.set $pc
              (i32.add (i32.add (local.get $c) (i32.mul (local.get $i) (local.get $c4)))
                       (i32.shl (local.get $j) (i32.const 2))))
            (v128.store (local.get $pc) (local.get $c00))
            (v128.store offset=16 (local.get $pc) (local.get $c01))
            (local.set $pc (i32.add (local.get $pc) (local.get $c4)))
            (v128.store (local.get $pc) (local.get $c10))
            (v128.store offset=16 (local.get $pc) (local.get $c11))
            (local.set $pc (i32.add (local.get $pc) (local.get $c4)))
            (v128.store (local.get $pc) (local.get $c20))
            (v128.store offset=16 (local.get $pc) (local.get $c21))
            (local.set $pc (i32.add (local.get $pc) (local.get $c4)))
            (v128.store (local.get $pc) (local.get $c30))
            (v128.store offset=16 (local.get $pc) (local.get $c31))
            (local.set $j (i32.add (local.get $j) (i32.const 8)))
            (br $cols)))
        ;; a last 4-column block
        (if (i32.lt_s (local.get $j) (local.get $n))
          (then
            (local.set $b0 (v128.load (i32.add (local.get $bias) (i32.shl (local.get $j) (i32.const 2)))))
            (local.set $c00 (local.get $b0))
            (local.set $c10 (local.get $b0))
            (local.set $c20 (local.get $b0))
            (local.set $c30 (local.get $b0))
            (local.set $pa0 (i32.add (local.get $a) (i32.mul (local.get $i) (local.get $a4))))
            (local.set $pa1 (i32.add (local.get $pa0) (local.get $a4)))
            (local.set $pa2 (i32.add (local.get $pa1) (local.get $a4)))
            (local.set $pa3 (i32.add (local.get $pa2) (local.get $a4)))
            (local.set $pb (i32.add (local.get $b) (i32.shl (local.get $j) (i32.const 2))))
            (local.set $p (local.get $k))
            (block $k4_done
              (loop $k4
                (br_if $k4_done (i32.eqz (local.get $p)))
                (local.set $b0 (v128.load (local.get $pb)))
                (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (v128.load32_splat (local.get $pa0)) (local.get $b0))))
                (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (v128.load32_splat (local.get $pa1)) (local.get $b0))))
                (local.set $c20 (f32x4.add (local.get $c20) (f32x4.mul (v128.load32_splat (local.get $pa2)) (local.get $b0))))
                (local.set $c30 (f32x4.add (local.get $c30) (f32x4.mul (v128.load32_splat (local.get $pa3)) (local.get $b0))))
                (local.set $pa0 (i32.add (local.get $pa0) (i32.const 4)))
                (local.set $pa1 (i32.add (local.get $pa1) (i32.const 4)))
                (local.set $pa2 (i32.add (local.get $pa2) (i32.const 4)))
                (local.set $pa3 (i32.add (local.get $pa3) (i32.const 4)))
                (local.set $pb (i32.add (local.get $pb) (local.get $b4)))
                (local.set $p (i32.sub (local.get $p) (i32.const 1)))
                (br $k4)))
            (local.set $pc
              (i32.add (i32.add (local.get $c) (i32.mul (local.get $i) (local.get $c4)))
                       (i32.shl (local.get $j) (i32.const 2))))
            (v128.store (local.get $pc) (local.get $c00))
            (local.set $pc (i32.add (local.get $pc) (local.get $c4)))
            (v128.store (local.get $pc) (local.get $c10))
            (local.set $pc (i32.add (local.get $pc) (local.get $c4)))
            (v128.store (local.get $pc) (local.get $c20))
            (local.set $pc (i32.add (local.get $pc) (local.get $c4)))
            (v128.store (local.get $pc) (local.get $c30))))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $rows)))
    ;; remaining rows, one at a time
    (block $tail_done
      (loop $tail
        (br_if $tail_done (i32.ge_s (local.get $i) (local.get $m)))
        (local.set $j (i32.const 0))
        (block $tc_done
          (loop $tc
            (br_if $tc_done (i32.ge_s (local.get $j) (local.get $n)))
            (local.set $c00 (v128.load (i32.add (local.get $bias) (i32.shl (local.get $j) (i32.const 2)))))
            (local.set $pa0 (i32.add (local.get $a) (i32.mul (local.get $i) (local.get $a4))))
            (local.set $pb (i32.add (local.get $b) (i32.shl (local.get $j) (i32.const 2))))
            (local.set $p (local.get $k))
            (block $tk_done
              (loop $tk
                (br_if $tk_done (i32.eqz (local.get $p)))
                (local.set $c00
                  (f32x4.add (local.get $c00)
                    (f32x4.mul (v128.load32_splat (local.get $pa0)) (v128.load (local.get $pb)))))
                (local.set $pa0 (i32.add (local.get $pa0) (i32.const 4)))
                (local.set $pb (i32.add (local.get $pb) (local.get $b4)))
                (local.set $p (i32.sub (local.get $p) (i32.const 1)))
                (br $tk)))
            (v128.store
              (i32.add (i32.add (local.get $c) (i32.mul (local.get $i) (local.get $c4)))
                       (i32.shl (local.get $j) (i32.const 2)))
              (local.get $c00))
            (local.set $j (i32.add (local.get $j) (i32.const 4)))
            (br $tc)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $tail))))

  ;; ---------------------------------------------------------------------
  ;; The same with A transposed (A is k x m, lda floats per row):
  ;;   C[i, 0..n) = bias[i * ldbias + 0..n) + sum_p A[p, i] * B[p, 0..n)
  ;; (p ascending), i.e. C = A^T B, the weight gradient X^T D without
  ;; transposing X. ldbias = 0 adds one bias row to every row; bias = c
  ;; with ldbias = ldc continues sums already in C, so a long k can be
  ;; split into blocks that stay in cache with exactly the float
  ;; operations of one pass.
  ;; Blocks of 4 rows x 8 columns (p four steps at a time, A's values
  ;; broadcast by loads), then 4 x 4, then single rows.
  ;; ---------------------------------------------------------------------
  (func $gemm_tn (export "gemm_tn")
    (param $a i32) (param $lda i32) (param $b i32) (param $ldb i32)
    (param $c i32) (param $ldc i32) (param $bias i32) (param $ldbias i32)
    (param $m i32) (param $k i32) (param $n i32)
    (local $a4 i32) (local $b4 i32) (local $c4 i32) (local $bb4 i32) (local $pbias i32)
    (local $i i32) (local $j i32) (local $p i32)
    (local $pa i32) (local $pb i32) (local $pc i32)
    (local $pa1 i32) (local $pa2 i32) (local $pa3 i32)
    (local $pb0 i32) (local $pb1 i32) (local $pb2 i32) (local $pb3 i32)
    (local $va v128) (local $x v128) (local $b0 v128) (local $b1 v128)
    (local $c00 v128) (local $c01 v128) (local $c10 v128) (local $c11 v128)
    (local $c20 v128) (local $c21 v128) (local $c30 v128) (local $c31 v128)
    (local.set $a4 (i32.shl (local.get $lda) (i32.const 2)))
    (local.set $b4 (i32.shl (local.get $ldb) (i32.const 2)))
    (local.set $c4 (i32.shl (local.get $ldc) (i32.const 2)))
    (local.set $bb4 (i32.shl (local.get $ldbias) (i32.const 2)))
    (block $rows_done
      (loop $rows
        (br_if $rows_done
          (i32.gt_s (i32.add (local.get $i) (i32.const 4)) (local.get $m)))
        (local.set $j (i32.const 0))
        (block $cols_done
          (loop $cols
            (br_if $cols_done
              (i32.gt_s (i32.add (local.get $j) (i32.const 8)) (local.get $n)))
            (local.set $pbias (i32.add (i32.add (local.get $bias) (i32.mul (local.get $i) (local.get $bb4)))
                                       (i32.shl (local.get $j) (i32.const 2))))
            (local.set $c00 (v128.load (local.get $pbias))) (local.set $c01 (v128.load offset=16 (local.get $pbias)))
            (local.set $pbias (i32.add (local.get $pbias) (local.get $bb4)))
            (local.set $c10 (v128.load (local.get $pbias))) (local.set $c11 (v128.load offset=16 (local.get $pbias)))
            (local.set $pbias (i32.add (local.get $pbias) (local.get $bb4)))
            (local.set $c20 (v128.load (local.get $pbias))) (local.set $c21 (v128.load offset=16 (local.get $pbias)))
            (local.set $pbias (i32.add (local.get $pbias) (local.get $bb4)))
            (local.set $c30 (v128.load (local.get $pbias))) (local.set $c31 (v128.load offset=16 (local.get $pbias)))
            (local.set $pa (i32.add (local.get $a) (i32.shl (local.get $i) (i32.const 2))))
            (local.set $pb0 (i32.add (local.get $b) (i32.shl (local.get $j) (i32.const 2))))
            (local.set $p (local.get $k))
            ;; four steps of p at a time; A's four values of a step are
            ;; broadcast by loads (not shuffles, which share the arithmetic
            ;; pipes)
            (block $k4_done
              (loop $kl4
                (br_if $k4_done (i32.lt_s (local.get $p) (i32.const 4)))
                (local.set $pb1 (i32.add (local.get $pb0) (local.get $b4)))
                (local.set $pb2 (i32.add (local.get $pb1) (local.get $b4)))
                (local.set $pb3 (i32.add (local.get $pb2) (local.get $b4)))
                (local.set $pa1 (i32.add (local.get $pa) (local.get $a4)))
                (local.set $pa2 (i32.add (local.get $pa1) (local.get $a4)))
                (local.set $pa3 (i32.add (local.get $pa2) (local.get $a4)))
                (local.set $b0 (v128.load (local.get $pb0)))
                (local.set $b1 (v128.load offset=16 (local.get $pb0)))
                (local.set $x (v128.load32_splat offset=0 (local.get $pa)))
                (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=4 (local.get $pa)))
                (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c11 (f32x4.add (local.get $c11) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=8 (local.get $pa)))
                (local.set $c20 (f32x4.add (local.get $c20) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c21 (f32x4.add (local.get $c21) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=12 (local.get $pa)))
                (local.set $c30 (f32x4.add (local.get $c30) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c31 (f32x4.add (local.get $c31) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $b0 (v128.load (local.get $pb1)))
                (local.set $b1 (v128.load offset=16 (local.get $pb1)))
                (local.set $x (v128.load32_splat offset=0 (local.get $pa1)))
                (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=4 (local.get $pa1)))
                (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c11 (f32x4.add (local.get $c11) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=8 (local.get $pa1)))
                (local.set $c20 (f32x4.add (local.get $c20) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c21 (f32x4.add (local.get $c21) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=12 (local.get $pa1)))
                (local.set $c30 (f32x4.add (local.get $c30) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c31 (f32x4.add (local.get $c31) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $b0 (v128.load (local.get $pb2)))
                (local.set $b1 (v128.load offset=16 (local.get $pb2)))
                (local.set $x (v128.load32_splat offset=0 (local.get $pa2)))
                (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=4 (local.get $pa2)))
                (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c11 (f32x4.add (local.get $c11) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=8 (local.get $pa2)))
                (local.set $c20 (f32x4.add (local.get $c20) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c21 (f32x4.add (local.get $c21) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=12 (local.get $pa2)))
                (local.set $c30 (f32x4.add (local.get $c30) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c31 (f32x4.add (local.get $c31) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $b0 (v128.load (local.get $pb3)))
                (local.set $b1 (v128.load offset=16 (local.get $pb3)))
                (local.set $x (v128.load32_splat offset=0 (local.get $pa3)))
                (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=4 (local.get $pa3)))
                (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c11 (f32x4.add (local.get $c11) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=8 (local.get $pa3)))
                (local.set $c20 (f32x4.add (local.get $c20) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c21 (f32x4.add (local.get $c21) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (v128.load32_splat offset=12 (local.get $pa3)))
                (local.set $c30 (f32x4.add (local.get $c30) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c31 (f32x4.add (local.get $c31) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $pa (i32.add (local.get $pa3) (local.get $a4)))
                (local.set $pb0 (i32.add (local.get $pb3) (local.get $b4)))
                (local.set $p (i32.sub (local.get $p) (i32.const 4)))
                (br $kl4)))
            (local.set $pb (local.get $pb0))
            (block $k_done
              (loop $kl
                (br_if $k_done (i32.eqz (local.get $p)))
                (local.set $b0 (v128.load (local.get $pb)))
                (local.set $b1 (v128.load offset=16 (local.get $pb)))
                (local.set $va (v128.load (local.get $pa)))
                (local.set $x (i8x16.shuffle 0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 (local.get $va) (local.get $va)))
                (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (i8x16.shuffle 4 5 6 7 4 5 6 7 4 5 6 7 4 5 6 7 (local.get $va) (local.get $va)))
                (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c11 (f32x4.add (local.get $c11) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (i8x16.shuffle 8 9 10 11 8 9 10 11 8 9 10 11 8 9 10 11 (local.get $va) (local.get $va)))
                (local.set $c20 (f32x4.add (local.get $c20) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c21 (f32x4.add (local.get $c21) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $x (i8x16.shuffle 12 13 14 15 12 13 14 15 12 13 14 15 12 13 14 15 (local.get $va) (local.get $va)))
                (local.set $c30 (f32x4.add (local.get $c30) (f32x4.mul (local.get $x) (local.get $b0))))
                (local.set $c31 (f32x4.add (local.get $c31) (f32x4.mul (local.get $x) (local.get $b1))))
                (local.set $pa (i32.add (local.get $pa) (local.get $a4)))
                (local.set $pb (i32.add (local.get $pb) (local.get $b4)))
                (local.set $p (i32.sub (local.get $p) (i32.const 1)))
                (br $kl)))
            (local.set $pc
              (i32.add (i32.add (local.get $c) (i32.mul (local.get $i) (local.get $c4)))
                       (i32.shl (local.get $j) (i32.const 2))))
            (v128.store (local.get $pc) (local.get $c00))
            (v128.store offset=16 (local.get $pc) (local.get $c01))
            (local.set $pc (i32.add (local.get $pc) (local.get $c4)))
            (v128.store (local.get $pc) (local.get $c10))
            (v128.store offset=16 (local.get $pc) (local.get $c11))
            (local.set $pc (i32.add (local.get $pc) (local.get $c4)))
            (v128.store (local.get $pc) (local.get $c20))
            (v128.store offset=16 (local.get $pc) (local.get $c21))
            (local.set $pc (i32.add (local.get $pc) (local.get $c4)))
            (v128.store (local.get $pc) (local.get $c30))
            (v128.store offset=16 (local.get $pc) (local.get $c31))
            (local.set $j (i32.add (local.get $j) (i32.const 8)))
            (br $cols)))
        (if (i32.lt_s (local.get $j) (local.get $n))
          (then
            (local.set $pbias (i32.add (i32.add (local.get $bias) (i32.mul (local.get $i) (local.get $bb4)))
                                       (i32.shl (local.get $j) (i32.const 2))))
            (local.set $c00 (v128.load (local.get $pbias)))
            (local.set $pbias (i32.add (local.get $pbias) (local.get $bb4)))
            (local.set $c10 (v128.load (local.get $pbias)))
            (local.set $pbias (i32.add (local.get $pbias) (local.get $bb4)))
            (local.set $c20 (v128.load (local.get $pbias)))
            (local.set $pbias (i32.add (local.get $pbias) (local.get $bb4)))
            (local.set $c30 (v128.load (local.get $pbias)))
            (local.set $pa (i32.add (local.get $a) (i32.shl (local.get $i) (i32.const 2))))
            (local.set $pb (i32.add (local.get $b) (i32.shl (local.get $j) (i32.const 2))))
            (local.set $p (local.get $k))
            (block $k4_done
              (loop $k4
                (br_if $k4_done (i32.eqz (local.get $p)))
                (local.set $b0 (v128.load (local.get $pb)))
                (local.set $va (v128.load (local.get $pa)))
                (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (i8x16.shuffle 0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 (local.get $va) (local.get $va)) (local.get $b0))))
                (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (i8x16.shuffle 4 5 6 7 4 5 6 7 4 5 6 7 4 5 6 7 (local.get $va) (local.get $va)) (local.get $b0))))
                (local.set $c20 (f32x4.add (local.get $c20) (f32x4.mul (i8x16.shuffle 8 9 10 11 8 9 10 11 8 9 10 11 8 9 10 11 (local.get $va) (local.get $va)) (local.get $b0))))
                (local.set $c30 (f32x4.add (local.get $c30) (f32x4.mul (i8x16.shuffle 12 13 14 15 12 13 14 15 12 13 14 15 12 13 14 15 (local.get $va) (local.get $va)) (local.get $b0))))
                (local.set $pa (i32.add (local.get $pa) (local.get $a4)))
                (local.set $pb (i32.add (local.get $pb) (local.get $b4)))
                (local.set $p (i32.sub (local.get $p) (i32.const 1)))
                (br $k4)))
            (local.set $pc
              (i32.add (i32.add (local.get $c) (i32.mul (local.get $i) (local.get $c4)))
                       (i32.shl (local.get $j) (i32.const 2))))
            (v128.store (local.get $pc) (local.get $c00))
            (local.set $pc (i32.add (local.get $pc) (local.get $c4)))
            (v128.store (local.get $pc) (local.get $c10))
            (local.set $pc (i32.add (local.get $pc) (local.get $c4)))
            (v128.store (local.get $pc) (local.get $c20))
            (local.set $pc (i32.add (local.get $pc) (local.get $c4)))
            (v128.store (local.get $pc) (local.get $c30))))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $rows)))
    (block $tail_done
      (loop $tail
        (br_if $tail_done (i32.ge_s (local.get $i) (local.get $m)))
        (local.set $j (i32.const 0))
        (block $tc_done
          (loop $tc
            (br_if $tc_done (i32.ge_s (local.get $j) (local.get $n)))
            (local.set $c00 (v128.load (i32.add (i32.add (local.get $bias) (i32.mul (local.get $i) (local.get $bb4)))
                                                (i32.shl (local.get $j) (i32.const 2)))))
            (local.set $pa (i32.add (local.get $a) (i32.shl (local.get $i) (i32.const 2))))
            (local.set $pb (i32.add (local.get $b) (i32.shl (local.get $j) (i32.const 2))))
            (local.set $p (local.get $k))
            (block $tk_done
              (loop $tk
                (br_if $tk_done (i32.eqz (local.get $p)))
                (local.set $c00
                  (f32x4.add (local.get $c00)
                    (f32x4.mul (v128.load32_splat (local.get $pa)) (v128.load (local.get $pb)))))
                (local.set $pa (i32.add (local.get $pa) (local.get $a4)))
                (local.set $pb (i32.add (local.get $pb) (local.get $b4)))
                (local.set $p (i32.sub (local.get $p) (i32.const 1)))
                (br $tk)))
            (v128.store
              (i32.add (i32.add (local.get $c) (i32.mul (local.get $i) (local.get $c4)))
                       (i32.shl (local.get $j) (i32.const 2)))
              (local.get $c00))
            (local.set $j (i32.add (local.get $j) (i32.const 4)))
            (br $tc)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $tail))))

  ;; ---------------------------------------------------------------------
  ;; The left-pack table of csr at `at` (256 bytes): for each 4-bit mask of
  ;; non-zero lanes, the i8x16.swizzle pattern that moves those lanes, in
  ;; order, to the front (the rest of the pattern is 0xff: zero bytes).
  ;; ---------------------------------------------------------------------
  (func $csr_table (export "csr_table") (param $at i32)
    (local $m i32) (local $lane i32) (local $j i32) (local $b i32) (local $row i32)
    (memory.fill (local.get $at) (i32.const 0xff) (i32.const 256))
    (block $md (loop $ml
      (br_if $md (i32.ge_u (local.get $m) (i32.const 16)))
      (local.set $row (i32.add (local.get $at) (i32.shl (local.get $m) (i32.const 4))))
      (local.set $j (i32.const 0))
      (local.set $lane (i32.const 0))
      (block $ld (loop $ll
        (br_if $ld (i32.ge_u (local.get $lane) (i32.const 4)))
        (if (i32.and (local.get $m) (i32.shl (i32.const 1) (local.get $lane)))
          (then
            (local.set $b (i32.const 0))
            (block $bd (loop $bl
              (br_if $bd (i32.ge_u (local.get $b) (i32.const 4)))
              (i32.store8
                (i32.add (local.get $row) (i32.add (i32.shl (local.get $j) (i32.const 2)) (local.get $b)))
                (i32.add (i32.shl (local.get $lane) (i32.const 2)) (local.get $b)))
              (local.set $b (i32.add (local.get $b) (i32.const 1)))
              (br $bl)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))))
        (local.set $lane (i32.add (local.get $lane) (i32.const 1)))
        (br $ll)))
      (local.set $m (i32.add (local.get $m) (i32.const 1)))
      (br $ml))))

  ;; ---------------------------------------------------------------------
  ;; Compressed sparse rows of n observation rows of k values:
  ;;   row r is X[idx[r]] (idx = 0: X[r]), ldx floats apart;
  ;;   its non-zero values, in ascending column order, are
  ;;   vals[rowptr[r] .. rowptr[r + 1]) at columns cols[...] (int32).
  ;; rowptr[0] is read, not written: the rows are appended after that many
  ;; non-zeros (0 for a fresh matrix; a sample buffer's rows are appended
  ;; step by step). Returns the number of non-zeros up to the last row.
  ;; rowptr has n + 1 entries; cols and vals need 3 values of slack past the
  ;; last non-zero (whole vectors are stored). Branch-free: each 4 values are left-packed with the
  ;; csr_table pattern of their non-zero mask.
  ;; ---------------------------------------------------------------------
  (func $csr (export "csr")
    (param $x i32) (param $ldx i32) (param $idx i32) (param $n i32) (param $k i32)
    (param $rowptr i32) (param $cols i32) (param $vals i32) (param $table i32)
    (result i32)
    (local $r i32) (local $src i32) (local $p i32) (local $nnz i32)
    (local $mask i32) (local $v v128) (local $sh v128) (local $k4 i32) (local $f f32)
    (local $iota v128) (local $zero v128)
    (local.set $iota (v128.const i32x4 0 1 2 3))
    (local.set $zero (f32x4.splat (f32.const 0)))
    (local.set $k4 (i32.and (local.get $k) (i32.const -4)))
    (local.set $nnz (i32.load (local.get $rowptr)))
    (block $rows_done
      (loop $rows
        (br_if $rows_done (i32.ge_s (local.get $r) (local.get $n)))
        (local.set $src
          (i32.add (local.get $x)
            (i32.shl
              (i32.mul
                (if (result i32) (local.get $idx)
                  (then (i32.load (i32.add (local.get $idx) (i32.shl (local.get $r) (i32.const 2)))))
                  (else (local.get $r)))
                (local.get $ldx))
              (i32.const 2))))
        (local.set $p (i32.const 0))
        (block $vec_done
          (loop $vec
            (br_if $vec_done (i32.ge_s (local.get $p) (local.get $k4)))
            (local.set $v (v128.load (i32.add (local.get $src) (i32.shl (local.get $p) (i32.const 2)))))
            (local.set $mask (i32x4.bitmask (f32x4.ne (local.get $v) (local.get $zero))))
            (local.set $sh (v128.load (i32.add (local.get $table) (i32.shl (local.get $mask) (i32.const 4)))))
            (v128.store (i32.add (local.get $vals) (i32.shl (local.get $nnz) (i32.const 2)))
              (i8x16.swizzle (local.get $v) (local.get $sh)))
            (v128.store (i32.add (local.get $cols) (i32.shl (local.get $nnz) (i32.const 2)))
              (i8x16.swizzle (i32x4.add (i32x4.splat (local.get $p)) (local.get $iota)) (local.get $sh)))
            (local.set $nnz (i32.add (local.get $nnz) (i32.popcnt (local.get $mask))))
            (local.set $p (i32.add (local.get $p) (i32.const 4)))
            (br $vec)))
        (block $sc_done
          (loop $sc
            (br_if $sc_done (i32.ge_s (local.get $p) (local.get $k)))
            (local.set $f (f32.load (i32.add (local.get $src) (i32.shl (local.get $p) (i32.const 2)))))
            (if (f32.ne (local.get $f) (f32.const 0))
              (then
                (i32.store (i32.add (local.get $cols) (i32.shl (local.get $nnz) (i32.const 2))) (local.get $p))
                (f32.store (i32.add (local.get $vals) (i32.shl (local.get $nnz) (i32.const 2))) (local.get $f))
                (local.set $nnz (i32.add (local.get $nnz) (i32.const 1)))))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (br $sc)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (i32.store (i32.add (local.get $rowptr) (i32.shl (local.get $r) (i32.const 2))) (local.get $nnz))
        (br $rows)))
    (local.get $nnz))

  ;; ---------------------------------------------------------------------
  ;; Sparse times dense with a bias row:
  ;;   C[i, 0..n) = bias[0..n) + sum_e vals[e] * B[cols[e], 0..n)
  ;; over e in ptr[s] .. ptr[s + 1) (ascending), s = idx[i] (idx = 0: s = i),
  ;; for i < m; n % 4 == 0. With CSR of X it is the forward pass of the
  ;; first layer (B = W; idx picks a minibatch's rows of a sample buffer);
  ;; (spmm_t computes the weight gradient dW = X^T D from the same rows.)
  ;; Column blocks of 32, then of 4.
  ;; ---------------------------------------------------------------------
  (func $spmm (export "spmm")
    (param $ptr i32) (param $cols i32) (param $vals i32) (param $idx i32) (param $m i32)
    (param $b i32) (param $ldb i32) (param $bias i32)
    (param $c i32) (param $ldc i32) (param $n i32)
    (local $i i32) (local $j i32) (local $e i32) (local $end i32) (local $e0 i32)
    (local $b4 i32) (local $pb i32) (local $pc i32) (local $x v128) (local $pr i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local $a4 v128) (local $a5 v128) (local $a6 v128) (local $a7 v128)
    (local.set $b4 (i32.shl (local.get $ldb) (i32.const 2)))
    (block $rows_done
      (loop $rows
        (br_if $rows_done (i32.ge_s (local.get $i) (local.get $m)))
        (local.set $pr (i32.add (local.get $ptr) (i32.shl
          (if (result i32) (local.get $idx)
            (then (i32.load (i32.add (local.get $idx) (i32.shl (local.get $i) (i32.const 2)))))
            (else (local.get $i)))
          (i32.const 2))))
        (local.set $e0 (i32.load (local.get $pr)))
        (local.set $end (i32.load offset=4 (local.get $pr)))
        (local.set $pc (i32.add (local.get $c) (i32.shl (i32.mul (local.get $i) (local.get $ldc)) (i32.const 2))))
        (local.set $j (i32.const 0))
        (block $c32_done
          (loop $c32
            (br_if $c32_done (i32.gt_s (i32.add (local.get $j) (i32.const 32)) (local.get $n)))
            (local.set $pb (i32.add (local.get $bias) (i32.shl (local.get $j) (i32.const 2))))
            (local.set $a0 (v128.load offset=0 (local.get $pb)))
            (local.set $a1 (v128.load offset=16 (local.get $pb)))
            (local.set $a2 (v128.load offset=32 (local.get $pb)))
            (local.set $a3 (v128.load offset=48 (local.get $pb)))
            (local.set $a4 (v128.load offset=64 (local.get $pb)))
            (local.set $a5 (v128.load offset=80 (local.get $pb)))
            (local.set $a6 (v128.load offset=96 (local.get $pb)))
            (local.set $a7 (v128.load offset=112 (local.get $pb)))
            (local.set $e (local.get $e0))
            (block $e_done
              (loop $el
                (br_if $e_done (i32.ge_s (local.get $e) (local.get $end)))
                (local.set $x (v128.load32_splat (i32.add (local.get $vals) (i32.shl (local.get $e) (i32.const 2)))))
                (local.set $pb
                  (i32.add
                    (i32.add (local.get $b)
                      (i32.mul (i32.load (i32.add (local.get $cols) (i32.shl (local.get $e) (i32.const 2))))
                               (local.get $b4)))
                    (i32.shl (local.get $j) (i32.const 2))))
                (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul (local.get $x) (v128.load offset=0 (local.get $pb)))))
                (local.set $a1 (f32x4.add (local.get $a1) (f32x4.mul (local.get $x) (v128.load offset=16 (local.get $pb)))))
                (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul (local.get $x) (v128.load offset=32 (local.get $pb)))))
                (local.set $a3 (f32x4.add (local.get $a3) (f32x4.mul (local.get $x) (v128.load offset=48 (local.get $pb)))))
                (local.set $a4 (f32x4.add (local.get $a4) (f32x4.mul (local.get $x) (v128.load offset=64 (local.get $pb)))))
                (local.set $a5 (f32x4.add (local.get $a5) (f32x4.mul (local.get $x) (v128.load offset=80 (local.get $pb)))))
                (local.set $a6 (f32x4.add (local.get $a6) (f32x4.mul (local.get $x) (v128.load offset=96 (local.get $pb)))))
                (local.set $a7 (f32x4.add (local.get $a7) (f32x4.mul (local.get $x) (v128.load offset=112 (local.get $pb)))))
                (local.set $e (i32.add (local.get $e) (i32.const 1)))
                (br $el)))
            (local.set $pb (i32.add (local.get $pc) (i32.shl (local.get $j) (i32.const 2))))
            (v128.store offset=0 (local.get $pb) (local.get $a0))
            (v128.store offset=16 (local.get $pb) (local.get $a1))
            (v128.store offset=32 (local.get $pb) (local.get $a2))
            (v128.store offset=48 (local.get $pb) (local.get $a3))
            (v128.store offset=64 (local.get $pb) (local.get $a4))
            (v128.store offset=80 (local.get $pb) (local.get $a5))
            (v128.store offset=96 (local.get $pb) (local.get $a6))
            (v128.store offset=112 (local.get $pb) (local.get $a7))
            (local.set $j (i32.add (local.get $j) (i32.const 32)))
            (br $c32)))
        (block $c4_done
          (loop $c4
            (br_if $c4_done (i32.ge_s (local.get $j) (local.get $n)))
            (local.set $a0 (v128.load (i32.add (local.get $bias) (i32.shl (local.get $j) (i32.const 2)))))
            (local.set $e (local.get $e0))
            (block $e4_done
              (loop $e4
                (br_if $e4_done (i32.ge_s (local.get $e) (local.get $end)))
                (local.set $a0
                  (f32x4.add (local.get $a0)
                    (f32x4.mul
                      (v128.load32_splat (i32.add (local.get $vals) (i32.shl (local.get $e) (i32.const 2))))
                      (v128.load
                        (i32.add
                          (i32.add (local.get $b)
                            (i32.mul (i32.load (i32.add (local.get $cols) (i32.shl (local.get $e) (i32.const 2))))
                                     (local.get $b4)))
                          (i32.shl (local.get $j) (i32.const 2)))))))
                (local.set $e (i32.add (local.get $e) (i32.const 1)))
                (br $e4)))
            (v128.store (i32.add (local.get $pc) (i32.shl (local.get $j) (i32.const 2))) (local.get $a0))
            (local.set $j (i32.add (local.get $j) (i32.const 4)))
            (br $c4)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows))))

  ;; ---------------------------------------------------------------------
  ;; Weight gradient of a sparse first layer without a transposed copy of
  ;; the rows: with X the m rows of a CSR matrix (row i is CSR row idx[i],
  ;; idx = 0: row i) and D the layer's deltas (m x n, ldd floats per row),
  ;;   C = X^T D,  C[c, 0..n) = sum over rows i ascending of X[i, c] D[i, 0..n)
  ;; for every column c < k (C is k x n, ldc floats per row; columns no row
  ;; uses are 0). Each C row starts at +0 and adds its products in ascending
  ;; row order: the same float operations, in the same order, as spmm over
  ;; the compressed-column form of X with a zero bias (how this gradient
  ;; was computed before), without building the columns. Column blocks
  ;; of 32 (a row's 8 delta vectors stay in registers while its non-zeros
  ;; are scattered into C), then of 4; n % 4 == 0.
  ;; ---------------------------------------------------------------------
  (func $spmm_t (export "spmm_t")
    (param $ptr i32) (param $cols i32) (param $vals i32) (param $idx i32) (param $m i32)
    (param $d i32) (param $ldd i32) (param $c i32) (param $ldc i32) (param $k i32) (param $n i32)
    (local $i i32) (local $j i32) (local $e i32) (local $end i32) (local $pr i32)
    (local $c4 i32) (local $pd i32) (local $pc i32) (local $x v128)
    (local $d0 v128) (local $d1 v128) (local $d2 v128) (local $d3 v128)
    (local $d4 v128) (local $d5 v128) (local $d6 v128) (local $d7 v128)
    (local.set $c4 (i32.shl (local.get $ldc) (i32.const 2)))
    ;; C = 0 (row by row: ldc may exceed n)
    (block $z_done
      (loop $z
        (br_if $z_done (i32.ge_s (local.get $i) (local.get $k)))
        (memory.fill (i32.add (local.get $c) (i32.mul (local.get $i) (local.get $c4)))
          (i32.const 0) (i32.shl (local.get $n) (i32.const 2)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $z)))
    ;; 32-column blocks
    (block $c32_done
      (loop $c32
        (br_if $c32_done (i32.gt_s (i32.add (local.get $j) (i32.const 32)) (local.get $n)))
        (local.set $i (i32.const 0))
        (block $rows_done
          (loop $rows
            (br_if $rows_done (i32.ge_s (local.get $i) (local.get $m)))
            (local.set $pr (i32.add (local.get $ptr) (i32.shl
              (if (result i32) (local.get $idx)
                (then (i32.load (i32.add (local.get $idx) (i32.shl (local.get $i) (i32.const 2)))))
                (else (local.get $i)))
              (i32.const 2))))
            (local.set $e (i32.load (local.get $pr)))
            (local.set $end (i32.load offset=4 (local.get $pr)))
            (local.set $pd (i32.add (local.get $d)
              (i32.shl (i32.add (i32.mul (local.get $i) (local.get $ldd)) (local.get $j)) (i32.const 2))))
            (local.set $d0 (v128.load offset=0 (local.get $pd)))
            (local.set $d1 (v128.load offset=16 (local.get $pd)))
            (local.set $d2 (v128.load offset=32 (local.get $pd)))
            (local.set $d3 (v128.load offset=48 (local.get $pd)))
            (local.set $d4 (v128.load offset=64 (local.get $pd)))
            (local.set $d5 (v128.load offset=80 (local.get $pd)))
            (local.set $d6 (v128.load offset=96 (local.get $pd)))
            (local.set $d7 (v128.load offset=112 (local.get $pd)))
            (block $e_done
              (loop $el
                (br_if $e_done (i32.ge_s (local.get $e) (local.get $end)))
                (local.set $x (v128.load32_splat (i32.add (local.get $vals) (i32.shl (local.get $e) (i32.const 2)))))
                (local.set $pc
                  (i32.add
                    (i32.add (local.get $c)
                      (i32.mul (i32.load (i32.add (local.get $cols) (i32.shl (local.get $e) (i32.const 2))))
                               (local.get $c4)))
                    (i32.shl (local.get $j) (i32.const 2))))
                (v128.store offset=0 (local.get $pc) (f32x4.add (v128.load offset=0 (local.get $pc)) (f32x4.mul (local.get $x) (local.get $d0))))
                (v128.store offset=16 (local.get $pc) (f32x4.add (v128.load offset=16 (local.get $pc)) (f32x4.mul (local.get $x) (local.get $d1))))
                (v128.store offset=32 (local.get $pc) (f32x4.add (v128.load offset=32 (local.get $pc)) (f32x4.mul (local.get $x) (local.get $d2))))
                (v128.store offset=48 (local.get $pc) (f32x4.add (v128.load offset=48 (local.get $pc)) (f32x4.mul (local.get $x) (local.get $d3))))
                (v128.store offset=64 (local.get $pc) (f32x4.add (v128.load offset=64 (local.get $pc)) (f32x4.mul (local.get $x) (local.get $d4))))
                (v128.store offset=80 (local.get $pc) (f32x4.add (v128.load offset=80 (local.get $pc)) (f32x4.mul (local.get $x) (local.get $d5))))
                (v128.store offset=96 (local.get $pc) (f32x4.add (v128.load offset=96 (local.get $pc)) (f32x4.mul (local.get $x) (local.get $d6))))
                (v128.store offset=112 (local.get $pc) (f32x4.add (v128.load offset=112 (local.get $pc)) (f32x4.mul (local.get $x) (local.get $d7))))
                (local.set $e (i32.add (local.get $e) (i32.const 1)))
                (br $el)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $rows)))
        (local.set $j (i32.add (local.get $j) (i32.const 32)))
        (br $c32)))
    ;; 4-column blocks
    (block $c4_done
      (loop $c4l
        (br_if $c4_done (i32.ge_s (local.get $j) (local.get $n)))
        (local.set $i (i32.const 0))
        (block $r4_done
          (loop $r4
            (br_if $r4_done (i32.ge_s (local.get $i) (local.get $m)))
            (local.set $pr (i32.add (local.get $ptr) (i32.shl
              (if (result i32) (local.get $idx)
                (then (i32.load (i32.add (local.get $idx) (i32.shl (local.get $i) (i32.const 2)))))
                (else (local.get $i)))
              (i32.const 2))))
            (local.set $e (i32.load (local.get $pr)))
            (local.set $end (i32.load offset=4 (local.get $pr)))
            (local.set $d0 (v128.load (i32.add (local.get $d)
              (i32.shl (i32.add (i32.mul (local.get $i) (local.get $ldd)) (local.get $j)) (i32.const 2)))))
            (block $e4_done
              (loop $e4
                (br_if $e4_done (i32.ge_s (local.get $e) (local.get $end)))
                (local.set $pc
                  (i32.add
                    (i32.add (local.get $c)
                      (i32.mul (i32.load (i32.add (local.get $cols) (i32.shl (local.get $e) (i32.const 2))))
                               (local.get $c4)))
                    (i32.shl (local.get $j) (i32.const 2))))
                (v128.store (local.get $pc)
                  (f32x4.add (v128.load (local.get $pc))
                    (f32x4.mul
                      (v128.load32_splat (i32.add (local.get $vals) (i32.shl (local.get $e) (i32.const 2))))
                      (local.get $d0))))
                (local.set $e (i32.add (local.get $e) (i32.const 1)))
                (br $e4)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $r4)))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $c4l))))

  ;; ---------------------------------------------------------------------
  ;; dst[c, r] = src[r, c] for r < rows, c < cols (ld in floats).
  ;; ---------------------------------------------------------------------
  (func $transpose (export "transpose")
    (param $src i32) (param $lds i32) (param $rows i32) (param $cols i32)
    (param $dst i32) (param $ldd i32)
    (local $r i32) (local $c i32) (local $ps i32) (local $pd i32) (local $d4 i32)
    (local.set $d4 (i32.shl (local.get $ldd) (i32.const 2)))
    (block $r_done
      (loop $rl
        (br_if $r_done (i32.ge_s (local.get $r) (local.get $rows)))
        (local.set $ps (i32.add (local.get $src) (i32.shl (i32.mul (local.get $r) (local.get $lds)) (i32.const 2))))
        (local.set $pd (i32.add (local.get $dst) (i32.shl (local.get $r) (i32.const 2))))
        (local.set $c (i32.const 0))
        (block $c_done
          (loop $cl
            (br_if $c_done (i32.ge_s (local.get $c) (local.get $cols)))
            (f32.store (local.get $pd) (f32.load (local.get $ps)))
            (local.set $ps (i32.add (local.get $ps) (i32.const 4)))
            (local.set $pd (i32.add (local.get $pd) (local.get $d4)))
            (local.set $c (i32.add (local.get $c) (i32.const 1)))
            (br $cl)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $rl))))

  ;; ---------------------------------------------------------------------
  ;; exp of four floats: 2^k * e^r with k = nearest(x / ln 2) (by adding
  ;; and subtracting 1.5 * 2^23, which also leaves k in the low mantissa
  ;; bits), r = x - k ln 2 (ln 2 in two parts), e^r by exp_poly. x is clamped to
  ;; [-87, 87] so that 2^k stays a normal float.
  ;; ---------------------------------------------------------------------
  (func $exp4 (param $x v128) (result v128)
    (local $t v128) (local $k v128) (local $r v128) (local $p v128)
    (local.set $x (f32x4.pmin (f32x4.pmax (local.get $x) (f32x4.splat (f32.const -87))) (f32x4.splat (f32.const 87))))
    (local.set $t (f32x4.add (f32x4.mul (local.get $x) (f32x4.splat (f32.const 1.44269504088896341)))
                             (f32x4.splat (f32.const 12582912))))
    (local.set $k (f32x4.sub (local.get $t) (f32x4.splat (f32.const 12582912))))
    (local.set $r (f32x4.sub (local.get $x) (f32x4.mul (local.get $k) (f32x4.splat (f32.const 0.693359375)))))
    (local.set $r (f32x4.sub (local.get $r) (f32x4.mul (local.get $k) (f32x4.splat (f32.const -2.12194440e-4)))))
    (local.set $p (call $exp_poly (local.get $r)))
    ;; 2^k: the low bits of t hold k; (k + 127) << 23 is its float
    (f32x4.mul (local.get $p)
      (i32x4.shl (i32x4.add (local.get $t) (i32x4.splat (i32.const 127))) (i32.const 23))))

  ;; e^r for |r| <= ln(2)/2: a degree-6 polynomial (Chebyshev fit,
  ;; 2.6e-9 relative error in exact arithmetic, 1.7e-7 in float32) in
  ;; Estrin's form: (1 + r) + r^2 (c2 + c3 r) + r^4 (c4 + c5 r + c6 r^2).
  (func $exp_poly (param $r v128) (result v128)
    (local $r2 v128)
    (local.set $r2 (f32x4.mul (local.get $r) (local.get $r)))
    (f32x4.add
      (f32x4.add
        (f32x4.add (f32x4.splat (f32.const 1)) (local.get $r))
        (f32x4.mul (local.get $r2)
          (f32x4.add (f32x4.splat (f32.const 0.5)) (f32x4.mul (local.get $r) (f32x4.splat (f32.const 1.6666415477e-01))))))
      (f32x4.mul (f32x4.mul (local.get $r2) (local.get $r2))
        (f32x4.add
          (f32x4.add (f32x4.splat (f32.const 4.1666218275e-02)) (f32x4.mul (local.get $r) (f32x4.splat (f32.const 8.3751288904e-03))))
          (f32x4.mul (local.get $r2) (f32x4.splat (f32.const 1.3948580810e-03)))))))

  ;; ---------------------------------------------------------------------
  ;; Natural log of four positive normal floats: x = 2^e m with
  ;; m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s), s = (m - 1) / (m + 1),
  ;; by its series to s^9 (|s| <= 0.172: truncation below 3e-9).
  ;; ---------------------------------------------------------------------
  (func $log4 (param $x v128) (result v128)
    (local $e v128) (local $m v128) (local $big v128) (local $s v128) (local $s2 v128) (local $p v128)
    (local.set $e (i32x4.sub (i32x4.shr_u (local.get $x) (i32.const 23)) (i32x4.splat (i32.const 127))))
    (local.set $m (v128.or (v128.and (local.get $x) (i32x4.splat (i32.const 0x007fffff)))
                           (i32x4.splat (i32.const 0x3f800000))))
    (local.set $big (f32x4.gt (local.get $m) (f32x4.splat (f32.const 1.41421356237))))
    (local.set $m (v128.bitselect (f32x4.mul (local.get $m) (f32x4.splat (f32.const 0.5))) (local.get $m) (local.get $big)))
    ;; big is all ones (-1) where m was halved: e + 1
    (local.set $e (i32x4.sub (local.get $e) (local.get $big)))
    (local.set $s (f32x4.div (f32x4.sub (local.get $m) (f32x4.splat (f32.const 1)))
                             (f32x4.add (local.get $m) (f32x4.splat (f32.const 1)))))
    (local.set $s2 (f32x4.mul (local.get $s) (local.get $s)))
    (local.set $p (f32x4.add (f32x4.splat (f32.const 0.142857142857)) (f32x4.mul (local.get $s2) (f32x4.splat (f32.const 0.111111111111)))))
    (local.set $p (f32x4.add (f32x4.splat (f32.const 0.2)) (f32x4.mul (local.get $s2) (local.get $p))))
    (local.set $p (f32x4.add (f32x4.splat (f32.const 0.333333333333)) (f32x4.mul (local.get $s2) (local.get $p))))
    (local.set $p (f32x4.add (f32x4.splat (f32.const 1)) (f32x4.mul (local.get $s2) (local.get $p))))
    (f32x4.add
      (f32x4.mul (f32x4.convert_i32x4_s (local.get $e)) (f32x4.splat (f32.const 0.693147180559945)))
      (f32x4.mul (f32x4.add (local.get $s) (local.get $s)) (local.get $p))))

  ;; ---------------------------------------------------------------------
  ;; In-place activation of count floats (count % 4 == 0):
  ;; kind 1 = tanh(z) = 1 - 2 / (exp(2z) + 1) (2z clamped to [-20, 20],
  ;; where tanh is 1 in float32), kind 2 = relu. exp is inlined here.
  ;; ---------------------------------------------------------------------
  (func $activate (export "activate") (param $p i32) (param $count i32) (param $kind i32)
    (local $end i32) (local $x v128) (local $t v128) (local $k v128) (local $r v128) (local $r2 v128) (local $q v128)
    (local $one v128) (local $lo v128) (local $hi v128) (local $log2e v128) (local $magic v128) (local $ln2hi v128) (local $ln2lo v128) (local $c2 v128) (local $c3 v128) (local $c4 v128) (local $c5 v128) (local $c6 v128) (local $two v128) (local $e127 v128)
    (local.set $one (f32x4.splat (f32.const 1)))
    (local.set $lo (f32x4.splat (f32.const -20)))
    (local.set $hi (f32x4.splat (f32.const 20)))
    (local.set $log2e (f32x4.splat (f32.const 1.44269504088896341)))
    (local.set $magic (f32x4.splat (f32.const 12582912)))
    (local.set $ln2hi (f32x4.splat (f32.const 0.693359375)))
    (local.set $ln2lo (f32x4.splat (f32.const -2.12194440e-4)))
    (local.set $c2 (f32x4.splat (f32.const 0.5)))
    (local.set $c3 (f32x4.splat (f32.const 1.6666415477e-01)))
    (local.set $c4 (f32x4.splat (f32.const 4.1666218275e-02)))
    (local.set $c5 (f32x4.splat (f32.const 8.3751288904e-03)))
    (local.set $c6 (f32x4.splat (f32.const 1.3948580810e-03)))
    (local.set $two (f32x4.splat (f32.const 2)))
    (local.set $e127 (i32x4.splat (i32.const 127)))
    (local.set $end (i32.add (local.get $p) (i32.shl (local.get $count) (i32.const 2))))
    (if (i32.eq (local.get $kind) (i32.const 1))
      (then
        (block $done
          (loop $l
            (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
            (local.set $x (v128.load (local.get $p)))
            (local.set $x (f32x4.add (local.get $x) (local.get $x)))
            (local.set $x (f32x4.pmin (f32x4.pmax (local.get $x) (local.get $lo)) (local.get $hi)))
            (local.set $t (f32x4.add (f32x4.mul (local.get $x) (local.get $log2e))
                                     (local.get $magic)))
            (local.set $k (f32x4.sub (local.get $t) (local.get $magic)))
            (local.set $r (f32x4.sub (local.get $x) (f32x4.mul (local.get $k) (local.get $ln2hi))))
            (local.set $r (f32x4.sub (local.get $r) (f32x4.mul (local.get $k) (local.get $ln2lo))))
            (local.set $r2 (f32x4.mul (local.get $r) (local.get $r)))
            (local.set $q
              (f32x4.add
                (f32x4.add
                  (f32x4.add (local.get $one) (local.get $r))
                  (f32x4.mul (local.get $r2)
                    (f32x4.add (local.get $c2) (f32x4.mul (local.get $r) (local.get $c3)))))
                (f32x4.mul (f32x4.mul (local.get $r2) (local.get $r2))
                  (f32x4.add
                    (f32x4.add (local.get $c4) (f32x4.mul (local.get $r) (local.get $c5)))
                    (f32x4.mul (local.get $r2) (local.get $c6))))))
            (local.set $q (f32x4.mul (local.get $q)
              (i32x4.shl (i32x4.add (local.get $t) (local.get $e127)) (i32.const 23))))
            (v128.store (local.get $p)
              (f32x4.sub (local.get $one)
                (f32x4.div (local.get $two) (f32x4.add (local.get $q) (local.get $one)))))
            (local.set $p (i32.add (local.get $p) (i32.const 16)))
            (br $l)))))
    (if (i32.eq (local.get $kind) (i32.const 2))
      (then
        (block $done
          (loop $l
            (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
            (v128.store (local.get $p) (f32x4.pmax (v128.load (local.get $p)) (f32x4.splat (f32.const 0))))
            (local.set $p (i32.add (local.get $p) (i32.const 16)))
            (br $l))))))

  ;; ---------------------------------------------------------------------
  ;; Backward through the activation, in place on count deltas
  ;; (count % 4 == 0), given the activation's outputs y:
  ;; kind 1: d *= 1 - y^2 (tanh); kind 2: d = y > 0 ? d : 0 (relu).
  ;; ---------------------------------------------------------------------
  (func $activate_grad (export "activate_grad") (param $d i32) (param $y i32) (param $count i32) (param $kind i32)
    (local $end i32) (local $v v128)
    (local.set $end (i32.add (local.get $d) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $d) (local.get $end)))
        (local.set $v (v128.load (local.get $y)))
        (v128.store (local.get $d)
          (if (result v128) (i32.eq (local.get $kind) (i32.const 1))
            (then
              (f32x4.mul (v128.load (local.get $d))
                (f32x4.sub (f32x4.splat (f32.const 1)) (f32x4.mul (local.get $v) (local.get $v)))))
            (else
              (v128.and (v128.load (local.get $d))
                (f32x4.gt (local.get $v) (f32x4.splat (f32.const 0)))))))
        (local.set $d (i32.add (local.get $d) (i32.const 16)))
        (local.set $y (i32.add (local.get $y) (i32.const 16)))
        (br $l))))

  ;; ---------------------------------------------------------------------
  ;; out[0..n) = sum over rows r < m of D[r, 0..n) (rows in order); n % 4 == 0.
  ;; ---------------------------------------------------------------------
  (func $col_sum (export "col_sum") (param $d i32) (param $ldd i32) (param $m i32) (param $n i32) (param $out i32)
    (local $j i32) (local $r i32) (local $acc v128) (local $p i32) (local $d4 i32)
    (local.set $d4 (i32.shl (local.get $ldd) (i32.const 2)))
    (block $j_done
      (loop $jl
        (br_if $j_done (i32.ge_s (local.get $j) (local.get $n)))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $p (i32.add (local.get $d) (i32.shl (local.get $j) (i32.const 2))))
        (local.set $r (local.get $m))
        (block $r_done
          (loop $rl
            (br_if $r_done (i32.eqz (local.get $r)))
            (local.set $acc (f32x4.add (local.get $acc) (v128.load (local.get $p))))
            (local.set $p (i32.add (local.get $p) (local.get $d4)))
            (local.set $r (i32.sub (local.get $r) (i32.const 1)))
            (br $rl)))
        (v128.store (i32.add (local.get $out) (i32.shl (local.get $j) (i32.const 2))) (local.get $acc))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $jl))))

  ;; ---------------------------------------------------------------------
  ;; Sum of squares of count floats (count % 4 == 0), each square and the
  ;; sums in float64 (two f64x2 accumulators, added at the end).
  ;; ---------------------------------------------------------------------
  (func $sumsq (export "sumsq") (param $p i32) (param $count i32) (result f64)
    (local $end i32) (local $v v128) (local $lo v128) (local $hi v128) (local $acc0 v128) (local $acc1 v128)
    (local.set $end (i32.add (local.get $p) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $v (v128.load (local.get $p)))
        (local.set $lo (f64x2.promote_low_f32x4 (local.get $v)))
        (local.set $hi (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $v) (local.get $v))))
        (local.set $acc0 (f64x2.add (local.get $acc0) (f64x2.mul (local.get $lo) (local.get $lo))))
        (local.set $acc1 (f64x2.add (local.get $acc1) (f64x2.mul (local.get $hi) (local.get $hi))))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $l)))
    (local.set $acc0 (f64x2.add (local.get $acc0) (local.get $acc1)))
    (f64.add (f64x2.extract_lane 0 (local.get $acc0)) (f64x2.extract_lane 1 (local.get $acc0))))

  ;; ---------------------------------------------------------------------
  ;; Adam on count parameters (count % 4 == 0), gradients scaled by gscale
  ;; (gradient-norm clipping folded in):
  ;;   g = gscale * grad; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
  ;;   param -= step * m / (sqrt(v) * rc2 + eps)
  ;; with step = lr / (1 - b1^t) and rc2 = 1 / sqrt(1 - b2^t).
  ;; ---------------------------------------------------------------------
  (func $adam (export "adam")
    (param $param i32) (param $grad i32) (param $m i32) (param $v i32) (param $count i32)
    (param $gscale f32) (param $b1 f32) (param $b2 f32) (param $step f32) (param $rc2 f32) (param $eps f32)
    (local $end i32) (local $g v128) (local $mi v128) (local $vi v128)
    (local $sg v128) (local $sb1 v128) (local $sb2 v128) (local $cb1 v128) (local $cb2 v128)
    (local $sstep v128) (local $src2 v128) (local $seps v128)
    (local.set $sg (f32x4.splat (local.get $gscale)))
    (local.set $sb1 (f32x4.splat (local.get $b1)))
    (local.set $sb2 (f32x4.splat (local.get $b2)))
    (local.set $cb1 (f32x4.splat (f32.sub (f32.const 1) (local.get $b1))))
    (local.set $cb2 (f32x4.splat (f32.sub (f32.const 1) (local.get $b2))))
    (local.set $sstep (f32x4.splat (local.get $step)))
    (local.set $src2 (f32x4.splat (local.get $rc2)))
    (local.set $seps (f32x4.splat (local.get $eps)))
    (local.set $end (i32.add (local.get $param) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $param) (local.get $end)))
        (local.set $g (f32x4.mul (v128.load (local.get $grad)) (local.get $sg)))
        (local.set $mi (f32x4.add (f32x4.mul (local.get $sb1) (v128.load (local.get $m))) (f32x4.mul (local.get $cb1) (local.get $g))))
        (local.set $vi (f32x4.add (f32x4.mul (local.get $sb2) (v128.load (local.get $v)))
                                  (f32x4.mul (local.get $cb2) (f32x4.mul (local.get $g) (local.get $g)))))
        (v128.store (local.get $m) (local.get $mi))
        (v128.store (local.get $v) (local.get $vi))
        (v128.store (local.get $param)
          (f32x4.sub (v128.load (local.get $param))
            (f32x4.div (f32x4.mul (local.get $sstep) (local.get $mi))
              (f32x4.add (f32x4.mul (f32x4.sqrt (local.get $vi)) (local.get $src2)) (local.get $seps)))))
        (local.set $param (i32.add (local.get $param) (i32.const 16)))
        (local.set $grad (i32.add (local.get $grad) (i32.const 16)))
        (local.set $m (i32.add (local.get $m) (i32.const 16)))
        (local.set $v (i32.add (local.get $v) (i32.const 16)))
        (br $l))))
  ;; ---------------------------------------------------------------------
  ;; PPO minibatch inputs gathered by index (no copy of observations):
  ;; for r < n, i = idx[r]:
  ;;   act[r] = actions[i] (uint8 -> int32), logp[r] = logpOld[i],
  ;;   val[r] = valuesOld[i], ret[r] = (returns[i] - vmean) / vstd,
  ;;   adv[r] = advantages[i], then, if normalize and n >= 2,
  ;;   adv[r] = (adv[r] - mean) / (std + 1e-8) over the minibatch.
  ;; The scalar arithmetic is float64 rounded to float32 once, as in the
  ;; TypeScript learner, so these values match it exactly.
  ;; ---------------------------------------------------------------------
  (func $ppo_gather (export "ppo_gather")
    (param $idx i32) (param $n i32)
    (param $actions i32) (param $logpOld i32) (param $advantages i32) (param $returns i32) (param $valuesOld i32)
    (param $normalize i32) (param $vmean f64) (param $vstd f64)
    (param $act i32) (param $logp i32) (param $adv i32) (param $ret i32) (param $val i32)
    (local $r i32) (local $i i32) (local $o i32) (local $src i32)
    (local $mean f64) (local $var f64) (local $d f64) (local $sd f64)
    (block $done
      (loop $l
        (br_if $done (i32.ge_s (local.get $r) (local.get $n)))
        (local.set $o (i32.shl (local.get $r) (i32.const 2)))
        (local.set $i (i32.load (i32.add (local.get $idx) (local.get $o))))
        (local.set $src (i32.shl (local.get $i) (i32.const 2)))
        (i32.store (i32.add (local.get $act) (local.get $o)) (i32.load8_u (i32.add (local.get $actions) (local.get $i))))
        (f32.store (i32.add (local.get $logp) (local.get $o)) (f32.load (i32.add (local.get $logpOld) (local.get $src))))
        (f32.store (i32.add (local.get $val) (local.get $o)) (f32.load (i32.add (local.get $valuesOld) (local.get $src))))
        (f32.store (i32.add (local.get $adv) (local.get $o)) (f32.load (i32.add (local.get $advantages) (local.get $src))))
        (f32.store (i32.add (local.get $ret) (local.get $o))
          (f32.demote_f64
            (f64.div
              (f64.sub (f64.promote_f32 (f32.load (i32.add (local.get $returns) (local.get $src)))) (local.get $vmean))
              (local.get $vstd))))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $l)))
    (if (i32.and (local.get $normalize) (i32.ge_s (local.get $n) (i32.const 2)))
      (then
        (local.set $r (i32.const 0))
        (block $d1 (loop $l1
          (br_if $d1 (i32.ge_s (local.get $r) (local.get $n)))
          (local.set $mean (f64.add (local.get $mean)
            (f64.promote_f32 (f32.load (i32.add (local.get $adv) (i32.shl (local.get $r) (i32.const 2)))))))
          (local.set $r (i32.add (local.get $r) (i32.const 1)))
          (br $l1)))
        (local.set $mean (f64.div (local.get $mean) (f64.convert_i32_s (local.get $n))))
        (local.set $r (i32.const 0))
        (block $d2 (loop $l2
          (br_if $d2 (i32.ge_s (local.get $r) (local.get $n)))
          (local.set $d (f64.sub
            (f64.promote_f32 (f32.load (i32.add (local.get $adv) (i32.shl (local.get $r) (i32.const 2)))))
            (local.get $mean)))
          (local.set $var (f64.add (local.get $var) (f64.mul (local.get $d) (local.get $d))))
          (local.set $r (i32.add (local.get $r) (i32.const 1)))
          (br $l2)))
        (local.set $sd (f64.add (f64.sqrt (f64.div (local.get $var) (f64.convert_i32_s (local.get $n)))) (f64.const 1e-8)))
        (local.set $r (i32.const 0))
        (block $d3 (loop $l3
          (br_if $d3 (i32.ge_s (local.get $r) (local.get $n)))
          (local.set $o (i32.add (local.get $adv) (i32.shl (local.get $r) (i32.const 2))))
          (f32.store (local.get $o)
            (f32.demote_f64 (f64.div (f64.sub (f64.promote_f32 (f32.load (local.get $o))) (local.get $mean)) (local.get $sd))))
          (local.set $r (i32.add (local.get $r) (i32.const 1)))
          (br $l3))))))

  ;; ---------------------------------------------------------------------
  ;; Copy rows r0 .. r0 + 4 (those below n) of columns 0 .. cols of M
  ;; (ld floats per row) into cb as cols f32x4 vectors, lane = row; lanes
  ;; of rows at or past n are 0.
  ;; ---------------------------------------------------------------------
  (func $gather_cols (param $m i32) (param $ld i32) (param $r0 i32) (param $n i32) (param $cols i32) (param $cb i32)
    (local $j i32) (local $k i32) (local $src i32)
    (memory.fill (local.get $cb) (i32.const 0) (i32.shl (local.get $cols) (i32.const 4)))
    (block $jd (loop $jl
      (br_if $jd (i32.or (i32.ge_s (local.get $j) (i32.const 4))
                         (i32.ge_s (i32.add (local.get $r0) (local.get $j)) (local.get $n))))
      (local.set $src (i32.add (local.get $m)
        (i32.shl (i32.mul (i32.add (local.get $r0) (local.get $j)) (local.get $ld)) (i32.const 2))))
      (local.set $k (i32.const 0))
      (block $kd (loop $kl
        (br_if $kd (i32.ge_s (local.get $k) (local.get $cols)))
        (f32.store
          (i32.add (i32.add (local.get $cb) (i32.shl (local.get $k) (i32.const 4))) (i32.shl (local.get $j) (i32.const 2)))
          (f32.load (i32.add (local.get $src) (i32.shl (local.get $k) (i32.const 2)))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $kl)))
      (local.set $j (i32.add (local.get $j) (i32.const 1)))
      (br $jl))))

  ;; The inverse of gather_cols: cb's lanes back into rows r0 .. (below n).
  (func $scatter_cols (param $m i32) (param $ld i32) (param $r0 i32) (param $n i32) (param $cols i32) (param $cb i32)
    (local $j i32) (local $k i32) (local $dst i32)
    (block $jd (loop $jl
      (br_if $jd (i32.or (i32.ge_s (local.get $j) (i32.const 4))
                         (i32.ge_s (i32.add (local.get $r0) (local.get $j)) (local.get $n))))
      (local.set $dst (i32.add (local.get $m)
        (i32.shl (i32.mul (i32.add (local.get $r0) (local.get $j)) (local.get $ld)) (i32.const 2))))
      (local.set $k (i32.const 0))
      (block $kd (loop $kl
        (br_if $kd (i32.ge_s (local.get $k) (local.get $cols)))
        (f32.store (i32.add (local.get $dst) (i32.shl (local.get $k) (i32.const 2)))
          (f32.load
            (i32.add (i32.add (local.get $cb) (i32.shl (local.get $k) (i32.const 4))) (i32.shl (local.get $j) (i32.const 2)))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $kl)))
      (local.set $j (i32.add (local.get $j) (i32.const 1)))
      (br $jl))))

  ;; ---------------------------------------------------------------------
  ;; Log-sum-exp of A logit columns cb[0..A) (f32x4 each, lane = row):
  ;; mx = max_k l_k, e_k = exp(l_k - mx) into eb[k], se = sum_k e_k (k
  ;; ascending) into eb[A]; returns mx + log(se). Shared by log_softmax and
  ;; ppo_loss so that both give bit-identical log-probabilities.
  ;; ---------------------------------------------------------------------
  (func $lse (param $cb i32) (param $A i32) (param $eb i32) (result v128)
    (local $k i32) (local $mx v128) (local $se v128) (local $e v128)
    (local.set $mx (v128.load (local.get $cb)))
    (local.set $k (i32.const 1))
    (block $d1 (loop $l1
      (br_if $d1 (i32.ge_s (local.get $k) (local.get $A)))
      (local.set $mx (f32x4.pmax (local.get $mx) (v128.load (i32.add (local.get $cb) (i32.shl (local.get $k) (i32.const 4))))))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $l1)))
    (local.set $k (i32.const 0))
    (block $d2 (loop $l2
      (br_if $d2 (i32.ge_s (local.get $k) (local.get $A)))
      (local.set $e (call $exp4
        (f32x4.sub (v128.load (i32.add (local.get $cb) (i32.shl (local.get $k) (i32.const 4)))) (local.get $mx))))
      (v128.store (i32.add (local.get $eb) (i32.shl (local.get $k) (i32.const 4))) (local.get $e))
      (local.set $se (f32x4.add (local.get $se) (local.get $e)))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $l2)))
    (v128.store (i32.add (local.get $eb) (i32.shl (local.get $A) (i32.const 4))) (local.get $se))
    (f32x4.add (local.get $mx) (call $log4 (local.get $se))))

  ;; ---------------------------------------------------------------------
  ;; Log-probabilities of the A actions of n rows of head outputs:
  ;; dst[r, k] = l_k - logsumexp(l) (ldd floats per row). scratch: 3 (A + 1)
  ;; x 16 bytes.
  ;; ---------------------------------------------------------------------
  (func $log_softmax (export "log_softmax")
    (param $out i32) (param $ldo i32) (param $n i32) (param $A i32) (param $dst i32) (param $ldd i32) (param $scratch i32)
    (local $r i32) (local $k i32) (local $lse v128) (local $eb i32) (local $at i32)
    (local.set $eb (i32.add (local.get $scratch) (i32.shl (i32.add (local.get $A) (i32.const 1)) (i32.const 4))))
    (block $done (loop $l
      (br_if $done (i32.ge_s (local.get $r) (local.get $n)))
      (call $gather_cols (local.get $out) (local.get $ldo) (local.get $r) (local.get $n) (local.get $A) (local.get $scratch))
      (local.set $lse (call $lse (local.get $scratch) (local.get $A) (local.get $eb)))
      (local.set $k (i32.const 0))
      (block $kd (loop $kl
        (br_if $kd (i32.ge_s (local.get $k) (local.get $A)))
        (local.set $at (i32.add (local.get $scratch) (i32.shl (local.get $k) (i32.const 4))))
        (v128.store (local.get $at) (f32x4.sub (v128.load (local.get $at)) (local.get $lse)))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $kl)))
      (call $scatter_cols (local.get $dst) (local.get $ldd) (local.get $r) (local.get $n) (local.get $A) (local.get $scratch))
      (local.set $r (i32.add (local.get $r) (i32.const 4)))
      (br $l))))

  ;; Sum of the lanes of v selected by mask, in float64: (l0 + l1) + (l2 + l3).
  (func $sum_lanes (param $v v128) (param $mask v128) (result f64)
    (local $lo v128) (local $hi v128)
    (local.set $v (v128.and (local.get $v) (local.get $mask)))
    (local.set $lo (f64x2.promote_low_f32x4 (local.get $v)))
    (local.set $hi (f64x2.promote_low_f32x4
      (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $v) (local.get $v))))
    (f64.add
      (f64.add (f64x2.extract_lane 0 (local.get $lo)) (f64x2.extract_lane 1 (local.get $lo)))
      (f64.add (f64x2.extract_lane 0 (local.get $hi)) (f64x2.extract_lane 1 (local.get $hi)))))

  ;; ---------------------------------------------------------------------
  ;; The PPO loss of n rows of head outputs (ldo floats per row: A logits
  ;; then the value) and its gradient with respect to them, written to the
  ;; same columns of dout (the padding columns are left alone). Inputs per
  ;; row from ppo_gather (act, logp, adv, ret, val; their buffers hold a
  ;; multiple of 4 rows). Four rows at a time, one per lane:
  ;;   ratio = exp(logp(a) - logpOld), surrogate -min(ratio A, clip(ratio) A),
  ;;   value 0.5 (v - R)^2 (clipped around the old value if clipv),
  ;;   entropy bonus; d/dlogits and d/dv as in policy/ppo_loss.ts.
  ;; Writes the sums over rows (float64) of the surrogate loss, value loss,
  ;; entropy, approximate KL and clipped rows to stats[0..5).
  ;; scratch: 3 (A + 1) x 16 bytes.
  ;; ---------------------------------------------------------------------
  (func $ppo_loss (export "ppo_loss")
    (param $out i32) (param $ldo i32) (param $dout i32) (param $n i32) (param $A i32)
    (param $act i32) (param $logpOld i32) (param $adv i32) (param $ret i32) (param $val i32)
    (param $clip f32) (param $vcoef f32) (param $ecoef f32) (param $clipv i32)
    (param $scratch i32) (param $stats i32)
    (local $r i32) (local $k i32) (local $cb i32) (local $eb i32) (local $db i32) (local $at i32)
    (local $mask v128) (local $lse v128) (local $se v128) (local $a v128) (local $h v128) (local $lpa v128)
    (local $lp v128) (local $p v128) (local $eq v128) (local $lr v128) (local $ratio v128) (local $va v128)
    (local $s1 v128) (local $s2 v128) (local $clipped v128) (local $gpi v128) (local $inv v128) (local $sc v128)
    (local $v v128) (local $rt v128) (local $dv v128) (local $lv v128) (local $vo v128) (local $vc v128) (local $lc v128)
    (local $one v128)
    (local $pl f64) (local $vl f64) (local $ent f64) (local $kl f64) (local $nclip f64)
    (local.set $cb (local.get $scratch))
    (local.set $eb (i32.add (local.get $cb) (i32.shl (i32.add (local.get $A) (i32.const 1)) (i32.const 4))))
    (local.set $db (i32.add (local.get $eb) (i32.shl (i32.add (local.get $A) (i32.const 1)) (i32.const 4))))
    (local.set $one (f32x4.splat (f32.const 1)))
    (local.set $inv (f32x4.splat (f32.div (f32.const 1) (f32.convert_i32_s (local.get $n)))))
    (block $done (loop $l
      (br_if $done (i32.ge_s (local.get $r) (local.get $n)))
      (local.set $mask (i32x4.lt_s
        (i32x4.add (i32x4.splat (local.get $r)) (v128.const i32x4 0 1 2 3))
        (i32x4.splat (local.get $n))))
      (call $gather_cols (local.get $out) (local.get $ldo) (local.get $r) (local.get $n)
        (i32.add (local.get $A) (i32.const 1)) (local.get $cb))
      (local.set $lse (call $lse (local.get $cb) (local.get $A) (local.get $eb)))
      (local.set $se (v128.load (i32.add (local.get $eb) (i32.shl (local.get $A) (i32.const 4)))))
      (local.set $at (i32.shl (local.get $r) (i32.const 2)))
      (local.set $a (v128.load (i32.add (local.get $act) (local.get $at))))
      ;; entropy and log-probability of the taken action; eb[k] becomes p_k
      (local.set $h (v128.const i32x4 0 0 0 0))
      (local.set $lpa (v128.const i32x4 0 0 0 0))
      (local.set $k (i32.const 0))
      (block $kd (loop $kl
        (br_if $kd (i32.ge_s (local.get $k) (local.get $A)))
        (local.set $lp (f32x4.sub (v128.load (i32.add (local.get $cb) (i32.shl (local.get $k) (i32.const 4)))) (local.get $lse)))
        (local.set $p (f32x4.div (v128.load (i32.add (local.get $eb) (i32.shl (local.get $k) (i32.const 4)))) (local.get $se)))
        (v128.store (i32.add (local.get $eb) (i32.shl (local.get $k) (i32.const 4))) (local.get $p))
        (local.set $h (f32x4.sub (local.get $h) (f32x4.mul (local.get $p) (local.get $lp))))
        (local.set $lpa (v128.bitselect (local.get $lp) (local.get $lpa)
          (i32x4.eq (local.get $a) (i32x4.splat (local.get $k)))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $kl)))
      (local.set $lr (f32x4.sub (local.get $lpa) (v128.load (i32.add (local.get $logpOld) (local.get $at)))))
      (local.set $ratio (call $exp4 (local.get $lr)))
      (local.set $va (v128.load (i32.add (local.get $adv) (local.get $at))))
      (local.set $s1 (f32x4.mul (local.get $ratio) (local.get $va)))
      (local.set $s2 (f32x4.mul
        (f32x4.pmin (f32x4.pmax (local.get $ratio) (f32x4.splat (f32.sub (f32.const 1) (local.get $clip))))
                   (f32x4.splat (f32.add (f32.const 1) (local.get $clip))))
        (local.get $va)))
      (local.set $clipped (f32x4.lt (local.get $s2) (local.get $s1)))
      (local.set $pl (f64.sub (local.get $pl)
        (call $sum_lanes (v128.bitselect (local.get $s2) (local.get $s1) (local.get $clipped)) (local.get $mask))))
      (local.set $nclip (f64.add (local.get $nclip) (call $sum_lanes (v128.and (local.get $clipped) (local.get $one)) (local.get $mask))))
      (local.set $kl (f64.add (local.get $kl)
        (call $sum_lanes (f32x4.sub (f32x4.sub (local.get $ratio) (local.get $one)) (local.get $lr)) (local.get $mask))))
      (local.set $ent (f64.add (local.get $ent) (call $sum_lanes (local.get $h) (local.get $mask))))
      ;; d(policy loss)/d(logp_a) = -ratio adv where the unclipped branch is active
      (local.set $gpi (v128.andnot (f32x4.neg (local.get $s1)) (local.get $clipped)))
      (local.set $sc (f32x4.splat (local.get $ecoef)))
      (local.set $k (i32.const 0))
      (block $gd (loop $gl
        (br_if $gd (i32.ge_s (local.get $k) (local.get $A)))
        (local.set $lp (f32x4.sub (v128.load (i32.add (local.get $cb) (i32.shl (local.get $k) (i32.const 4)))) (local.get $lse)))
        (local.set $p (v128.load (i32.add (local.get $eb) (i32.shl (local.get $k) (i32.const 4)))))
        (local.set $eq (v128.and (i32x4.eq (local.get $a) (i32x4.splat (local.get $k))) (local.get $one)))
        ;; inv (gpi (1[k = a] - p) - ecoef dH/dz_k), dH/dz_k = -p (lp + h)
        (v128.store (i32.add (local.get $db) (i32.shl (local.get $k) (i32.const 4)))
          (f32x4.mul (local.get $inv)
            (f32x4.add
              (f32x4.mul (local.get $gpi) (f32x4.sub (local.get $eq) (local.get $p)))
              (f32x4.mul (local.get $sc) (f32x4.mul (local.get $p) (f32x4.add (local.get $lp) (local.get $h)))))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $gl)))
      ;; value
      (local.set $v (v128.load (i32.add (local.get $cb) (i32.shl (local.get $A) (i32.const 4)))))
      (local.set $rt (v128.load (i32.add (local.get $ret) (local.get $at))))
      (local.set $dv (f32x4.sub (local.get $v) (local.get $rt)))
      (local.set $lv (f32x4.mul (f32x4.splat (f32.const 0.5)) (f32x4.mul (local.get $dv) (local.get $dv))))
      (if (local.get $clipv)
        (then
          (local.set $vo (v128.load (i32.add (local.get $val) (local.get $at))))
          (local.set $vc (f32x4.add (local.get $vo)
            (f32x4.pmin (f32x4.pmax (f32x4.sub (local.get $v) (local.get $vo)) (f32x4.splat (f32.neg (local.get $clip))))
                       (f32x4.splat (local.get $clip)))))
          (local.set $lc (f32x4.sub (local.get $vc) (local.get $rt)))
          (local.set $lc (f32x4.mul (f32x4.splat (f32.const 0.5)) (f32x4.mul (local.get $lc) (local.get $lc))))
          (local.set $eq (f32x4.gt (local.get $lc) (local.get $lv)))
          (local.set $lv (v128.bitselect (local.get $lc) (local.get $lv) (local.get $eq)))
          ;; gradient flows through vc only while v - vo is inside the clip range
          (local.set $dv (v128.bitselect
            (v128.and (f32x4.sub (local.get $vc) (local.get $rt))
                      (f32x4.lt (f32x4.abs (f32x4.sub (local.get $v) (local.get $vo))) (f32x4.splat (local.get $clip))))
            (local.get $dv) (local.get $eq)))))
      (local.set $vl (f64.add (local.get $vl) (call $sum_lanes (local.get $lv) (local.get $mask))))
      (v128.store (i32.add (local.get $db) (i32.shl (local.get $A) (i32.const 4)))
        (f32x4.mul (f32x4.mul (local.get $inv) (f32x4.splat (local.get $vcoef))) (local.get $dv)))
      (call $scatter_cols (local.get $dout) (local.get $ldo) (local.get $r) (local.get $n)
        (i32.add (local.get $A) (i32.const 1)) (local.get $db))
      (local.set $r (i32.add (local.get $r) (i32.const 4)))
      (br $l)))
    (f64.store offset=0 (local.get $stats) (local.get $pl))
    (f64.store offset=8 (local.get $stats) (local.get $vl))
    (f64.store offset=16 (local.get $stats) (local.get $ent))
    (f64.store offset=24 (local.get $stats) (local.get $kl))
    (f64.store offset=32 (local.get $stats) (local.get $nclip)))
)
