;; WebAssembly SIMD kernel of the policy observation (layout: policy/observation.ts,
;; whose TypeScript encoder is the reference this must match byte for byte).
;;
;; Built into obs.wasm by `deno task build:wasm` (see mlp.wat for the
;; conventions: imported memory laid out by the TypeScript side, byte
;; addresses).
;;
;; Static window channels come from one plane per instance, padded by the
;; window radius r on every side (so a window never needs a bounds check),
;; one byte per cell with a bit per channel: 1 hole, 2 wall, 4 "a goal lies
;; here", 8 outside the grid (a few hundred bytes per instance, so the pool's
;; planes stay in cache while observation rows stream out). The agent channel
;; comes from a float occupancy plane of the current environment (agent
;; counts), filled when the encoder reaches an environment and cleared when it
;; leaves it. At radius 2 (the default) the 25 window cells' bits are
;; gathered into two vectors with shuffles and each channel is converted four
;; cells per instruction, seven vectors per channel block (the seventh spills
;; three floats into the next block, which is written after it; the last
;; spills into the scalar features, written last); other radii go cell by
;; cell. Bits become floats with the signed conversion (one instruction on
;; x64; the unsigned one is emulated).
(module
  (import "env" "memory" (memory 1))

  ;; Context block (int32 fields at byte offsets):
  ;;   0 m: agent slots per environment     4 r: window radius
  ;;   8 D: values per observation row     12 instance records (64 bytes each)
  ;;  16 per-env instance (int32)          20 per-env time step (int32)
  ;;  24 per-env agent count (int32)       28 per-slot cell (int32)
  ;;  32 cell row and column (int32 per cell, pool grid layout: row | col << 16)
  ;;  36 goals (int32, pool layout)
  ;;  40 per agent and cell (uint32, pool distance layout): BFS distance to
  ;;     the goal in the low 16 bits, the move-feature byte above
  ;;  44 per-agent "another agent has my goal" (uint8, pool agent layout)
  ;;  48 occupancy plane (float32, the largest padded grid)
  ;;  52 (unused)
  ;;  56 move-feature vectors (256 x 4 float32: the four features of a byte,
  ;;     2 bits per move up, down, left, right, holding feature + 1)
  ;; Instance record (int32 fields; slip as float32):
  ;;   0 W  4 H  8 Wp = W + 2r  12 address of the plane (uint8 bits)
  ;;  16 (unused)  20 cell offset  24 agent offset  28 distance offset
  ;;  32 horizon  36 (unused)  40 (unused)  44 slip
  ;;  48 cells  52 block (float32)  56 blocked holes (float32)

  ;; Add `delta` to the occupancy count of every agent of environment e.
  (func $occupy (param $ctx i32) (param $e i32) (param $rec i32) (param $delta f32)
    (local $b i32) (local $na i32) (local $m i32) (local $q i32) (local $r i32)
    (local $at i32) (local $rc i32)
    (local.set $m (i32.load offset=0 (local.get $ctx)))
    (local.set $r (i32.load offset=4 (local.get $ctx)))
    (local.set $na (i32.load (i32.add (i32.load offset=24 (local.get $ctx)) (i32.shl (local.get $e) (i32.const 2)))))
    (block $d (loop $l
      (br_if $d (i32.ge_s (local.get $b) (local.get $na)))
      (local.set $q (i32.load (i32.add (i32.load offset=28 (local.get $ctx))
        (i32.shl (i32.add (i32.mul (local.get $e) (local.get $m)) (local.get $b)) (i32.const 2)))))
      (local.set $rc (i32.load (i32.add (i32.load offset=32 (local.get $ctx))
        (i32.shl (i32.add (i32.load offset=20 (local.get $rec)) (local.get $q)) (i32.const 2)))))
      (local.set $at (i32.add (i32.load offset=48 (local.get $ctx))
        (i32.shl
          (i32.add
            (i32.mul (i32.add (i32.and (local.get $rc) (i32.const 0xffff)) (local.get $r)) (i32.load offset=8 (local.get $rec)))
            (i32.add (i32.shr_u (local.get $rc) (i32.const 16)) (local.get $r)))
          (i32.const 2))))
      (f32.store (local.get $at) (f32.add (f32.load (local.get $at)) (local.get $delta)))
      (local.set $b (i32.add (local.get $b) (i32.const 1)))
      (br $l))))

  ;; ---------------------------------------------------------------------
  ;; Observations of agent slots slots[0 .. n) (slot = env * m + agent,
  ;; grouped by environment) into rows out + i * D floats.
  ;; ---------------------------------------------------------------------
  (func $encode (export "encode") (param $ctx i32) (param $slots i32) (param $n i32) (param $out i32)
    (local $i i32) (local $m i32) (local $r i32) (local $S i32) (local $SS4 i32) (local $D4 i32)
    (local $slot i32) (local $e i32) (local $a i32) (local $cur i32) (local $rec i32)
    (local $W i32) (local $H i32) (local $Wp i32) (local $planes i32) (local $bits v128) (local $b i32) (local $onei v128)
    (local $aOff i32) (local $dOff i32) (local $t i32)
    (local $p i32) (local $pr i32) (local $pc i32) (local $goal i32) (local $gr i32) (local $gc i32)
    (local $o i32) (local $corner i32) (local $sc i32) (local $occ i32) (local $wr i32) (local $wc i32)
    (local $dm i32) (local $dHere i32) (local $cellInfo i32) (local $fv f32) (local $L i32) (local $horizon i32) (local $q v128)
    (local $k i32) (local $zero v128) (local $one v128) (local $base i32) (local $rcs i32)
    (local $src i32) (local $srcO i32) (local $dst i32)
    (local $r01 v128) (local $r23 v128) (local $lo v128) (local $hi v128) (local $w v128)
    (local $c0 v128) (local $c1 v128) (local $c2 v128) (local $c3 v128) (local $c4 v128) (local $c5 v128) (local $c6 v128)
    (local.set $m (i32.load offset=0 (local.get $ctx)))
    (local.set $r (i32.load offset=4 (local.get $ctx)))
    (local.set $S (i32.add (i32.shl (local.get $r) (i32.const 1)) (i32.const 1)))
    (local.set $SS4 (i32.shl (i32.mul (local.get $S) (local.get $S)) (i32.const 2)))
    (local.set $D4 (i32.shl (i32.load offset=8 (local.get $ctx)) (i32.const 2)))
    (local.set $occ (i32.load offset=48 (local.get $ctx)))
    (local.set $one (f32x4.splat (f32.const 1)))
    (local.set $onei (i32x4.splat (i32.const 1)))
    (local.set $cur (i32.const -1))
    ;; no environment yet: every slot is outside [base, base + m)
    (local.set $base (i32.sub (i32.const 0) (local.get $m)))
    (block $done (loop $rows
      (br_if $done (i32.ge_s (local.get $i) (local.get $n)))
      (local.set $slot (i32.load (i32.add (local.get $slots) (i32.shl (local.get $i) (i32.const 2)))))
      ;; same environment as the previous slot (slots are grouped): no division
      (local.set $a (i32.sub (local.get $slot) (local.get $base)))
      (if (i32.ge_u (local.get $a) (local.get $m))
        (then
          (local.set $e (i32.div_u (local.get $slot) (local.get $m)))
          (local.set $base (i32.mul (local.get $e) (local.get $m)))
          (local.set $a (i32.sub (local.get $slot) (local.get $base)))
          (if (i32.ge_s (local.get $cur) (i32.const 0))
            (then (call $occupy (local.get $ctx) (local.get $cur) (local.get $rec) (f32.const -1))))
          (local.set $cur (local.get $e))
          (local.set $rec (i32.add (i32.load offset=12 (local.get $ctx))
            (i32.mul (i32.load (i32.add (i32.load offset=16 (local.get $ctx)) (i32.shl (local.get $e) (i32.const 2))))
                     (i32.const 64))))
          (local.set $W (i32.load offset=0 (local.get $rec)))
          (local.set $H (i32.load offset=4 (local.get $rec)))
          (local.set $Wp (i32.load offset=8 (local.get $rec)))
          (local.set $planes (i32.load offset=12 (local.get $rec)))
          (local.set $aOff (i32.load offset=24 (local.get $rec)))
          (local.set $rcs (i32.add (i32.load offset=32 (local.get $ctx)) (i32.shl (i32.load offset=20 (local.get $rec)) (i32.const 2))))
          (local.set $dOff (i32.load offset=28 (local.get $rec)))
          (local.set $horizon (i32.load offset=32 (local.get $rec)))
          (local.set $L (select (local.get $W) (local.get $H) (i32.gt_s (local.get $W) (local.get $H))))
          (local.set $t (i32.load (i32.add (i32.load offset=20 (local.get $ctx)) (i32.shl (local.get $e) (i32.const 2)))))
          (call $occupy (local.get $ctx) (local.get $e) (local.get $rec) (f32.const 1))))
      (local.set $p (i32.load (i32.add (i32.load offset=28 (local.get $ctx)) (i32.shl (local.get $slot) (i32.const 2)))))
      (local.set $goal (i32.load (i32.add (i32.load offset=36 (local.get $ctx))
        (i32.shl (i32.add (local.get $aOff) (local.get $a)) (i32.const 2)))))
      (local.set $k (i32.load (i32.add (local.get $rcs) (i32.shl (local.get $p) (i32.const 2)))))
      (local.set $pr (i32.and (local.get $k) (i32.const 0xffff)))
      (local.set $pc (i32.shr_u (local.get $k) (i32.const 16)))
      (local.set $k (i32.load (i32.add (local.get $rcs) (i32.shl (local.get $goal) (i32.const 2)))))
      (local.set $gr (i32.and (local.get $k) (i32.const 0xffff)))
      (local.set $gc (i32.shr_u (local.get $k) (i32.const 16)))
      (local.set $o (i32.add (local.get $out) (i32.mul (local.get $i) (local.get $D4))))
      ;; the window's top-left cell in padded coordinates is (pr, pc)
      (local.set $corner (i32.add (i32.mul (local.get $pr) (local.get $Wp)) (local.get $pc)))
      (if (i32.eq (local.get $S) (i32.const 5))
        (then
          ;; radius 2 (the default), unrolled: a window row of each channel
          ;; is one vector and one float at constant offsets (channels are
          ;; 100 bytes apart)
          (local.set $src (i32.add (local.get $planes) (local.get $corner)))
          ;; the 25 cells' bits in window order: lo = cells 0-15, hi = 16-24
          (local.set $r01 (i8x16.shuffle 0 1 2 3 4 16 17 18 19 20 0 0 0 0 0 0
            (v128.load64_zero (local.get $src))
            (v128.load64_zero (i32.add (local.get $src) (local.get $Wp)))))
          (local.set $r23 (i8x16.shuffle 0 1 2 3 4 16 17 18 19 20 0 0 0 0 0 0
            (v128.load64_zero (i32.add (local.get $src) (i32.shl (local.get $Wp) (i32.const 1))))
            (v128.load64_zero (i32.add (local.get $src) (i32.mul (local.get $Wp) (i32.const 3))))))
          (local.set $lo (i8x16.shuffle 0 1 2 3 4 5 6 7 8 9 16 17 18 19 20 21 (local.get $r01) (local.get $r23)))
          (local.set $hi (i8x16.shuffle 6 7 8 9 16 17 18 19 20 0 0 0 0 0 0 0
            (local.get $r23)
            (v128.load64_zero (i32.add (local.get $src) (i32.shl (local.get $Wp) (i32.const 2))))))
          (local.set $w (i16x8.extend_low_i8x16_u (local.get $lo)))
          (local.set $c0 (i32x4.extend_low_i16x8_u (local.get $w)))
          (local.set $c1 (i32x4.extend_high_i16x8_u (local.get $w)))
          (local.set $w (i16x8.extend_high_i8x16_u (local.get $lo)))
          (local.set $c2 (i32x4.extend_low_i16x8_u (local.get $w)))
          (local.set $c3 (i32x4.extend_high_i16x8_u (local.get $w)))
          (local.set $w (i16x8.extend_low_i8x16_u (local.get $hi)))
          (local.set $c4 (i32x4.extend_low_i16x8_u (local.get $w)))
          (local.set $c5 (i32x4.extend_high_i16x8_u (local.get $w)))
          (local.set $c6 (i32x4.extend_low_i16x8_u (i16x8.extend_high_i8x16_u (local.get $hi))))
          ;; channels in ascending order; each block's seventh vector spills
          ;; 3 floats into the next block, written after it
          (v128.store offset=0 (local.get $o) (f32x4.convert_i32x4_s (v128.and (local.get $c0) (local.get $onei))))
          (v128.store offset=16 (local.get $o) (f32x4.convert_i32x4_s (v128.and (local.get $c1) (local.get $onei))))
          (v128.store offset=32 (local.get $o) (f32x4.convert_i32x4_s (v128.and (local.get $c2) (local.get $onei))))
          (v128.store offset=48 (local.get $o) (f32x4.convert_i32x4_s (v128.and (local.get $c3) (local.get $onei))))
          (v128.store offset=64 (local.get $o) (f32x4.convert_i32x4_s (v128.and (local.get $c4) (local.get $onei))))
          (v128.store offset=80 (local.get $o) (f32x4.convert_i32x4_s (v128.and (local.get $c5) (local.get $onei))))
          (v128.store offset=96 (local.get $o) (f32x4.convert_i32x4_s (v128.and (local.get $c6) (local.get $onei))))
          (v128.store offset=0 (i32.add (local.get $o) (i32.const 100)) (f32x4.convert_i32x4_s (v128.and (i32x4.shr_u (local.get $c0) (i32.const 1)) (local.get $onei))))
          (v128.store offset=16 (i32.add (local.get $o) (i32.const 100)) (f32x4.convert_i32x4_s (v128.and (i32x4.shr_u (local.get $c1) (i32.const 1)) (local.get $onei))))
          (v128.store offset=32 (i32.add (local.get $o) (i32.const 100)) (f32x4.convert_i32x4_s (v128.and (i32x4.shr_u (local.get $c2) (i32.const 1)) (local.get $onei))))
          (v128.store offset=48 (i32.add (local.get $o) (i32.const 100)) (f32x4.convert_i32x4_s (v128.and (i32x4.shr_u (local.get $c3) (i32.const 1)) (local.get $onei))))
          (v128.store offset=64 (i32.add (local.get $o) (i32.const 100)) (f32x4.convert_i32x4_s (v128.and (i32x4.shr_u (local.get $c4) (i32.const 1)) (local.get $onei))))
          (v128.store offset=80 (i32.add (local.get $o) (i32.const 100)) (f32x4.convert_i32x4_s (v128.and (i32x4.shr_u (local.get $c5) (i32.const 1)) (local.get $onei))))
          (v128.store offset=96 (i32.add (local.get $o) (i32.const 100)) (f32x4.convert_i32x4_s (v128.and (i32x4.shr_u (local.get $c6) (i32.const 1)) (local.get $onei))))
          ;; agents: five exact rows from the occupancy plane
          (local.set $srcO (i32.add (local.get $occ) (i32.shl (local.get $corner) (i32.const 2))))
          (local.set $dst (local.get $o))
          (local.set $k (i32.const 0))
          (block $wd (loop $wl
            (br_if $wd (i32.ge_u (local.get $k) (i32.const 5)))
            (v128.store offset=200 (local.get $dst) (f32x4.pmin (v128.load (local.get $srcO)) (local.get $one)))
            (local.set $fv (f32.load offset=16 (local.get $srcO)))
            (f32.store offset=216 (local.get $dst) (select (f32.const 1) (local.get $fv) (f32.gt (local.get $fv) (f32.const 1))))
            (local.set $srcO (i32.add (local.get $srcO) (i32.shl (local.get $Wp) (i32.const 2))))
            (local.set $dst (i32.add (local.get $dst) (i32.const 20)))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $wl)))
          (v128.store offset=300 (local.get $o) (local.get $zero))
          (v128.store offset=316 (local.get $o) (local.get $zero))
          (v128.store offset=332 (local.get $o) (local.get $zero))
          (v128.store offset=348 (local.get $o) (local.get $zero))
          (v128.store offset=364 (local.get $o) (local.get $zero))
          (v128.store offset=380 (local.get $o) (local.get $zero))
          (v128.store offset=396 (local.get $o) (local.get $zero))
          (v128.store offset=0 (i32.add (local.get $o) (i32.const 400)) (f32x4.convert_i32x4_s (v128.and (i32x4.shr_u (local.get $c0) (i32.const 2)) (local.get $onei))))
          (v128.store offset=16 (i32.add (local.get $o) (i32.const 400)) (f32x4.convert_i32x4_s (v128.and (i32x4.shr_u (local.get $c1) (i32.const 2)) (local.get $onei))))
          (v128.store offset=32 (i32.add (local.get $o) (i32.const 400)) (f32x4.convert_i32x4_s (v128.and (i32x4.shr_u (local.get $c2) (i32.const 2)) (local.get $onei))))
          (v128.store offset=48 (i32.add (local.get $o) (i32.const 400)) (f32x4.convert_i32x4_s (v128.and (i32x4.shr_u (local.get $c3) (i32.const 2)) (local.get $onei))))
          (v128.store offset=64 (i32.add (local.get $o) (i32.const 400)) (f32x4.convert_i32x4_s (v128.and (i32x4.shr_u (local.get $c4) (i32.const 2)) (local.get $onei))))
          (v128.store offset=80 (i32.add (local.get $o) (i32.const 400)) (f32x4.convert_i32x4_s (v128.and (i32x4.shr_u (local.get $c5) (i32.const 2)) (local.get $onei))))
          (v128.store offset=96 (i32.add (local.get $o) (i32.const 400)) (f32x4.convert_i32x4_s (v128.and (i32x4.shr_u (local.get $c6) (i32.const 2)) (local.get $onei))))
          (v128.store offset=0 (i32.add (local.get $o) (i32.const 500)) (f32x4.convert_i32x4_s (i32x4.shr_u (local.get $c0) (i32.const 3))))
          (v128.store offset=16 (i32.add (local.get $o) (i32.const 500)) (f32x4.convert_i32x4_s (i32x4.shr_u (local.get $c1) (i32.const 3))))
          (v128.store offset=32 (i32.add (local.get $o) (i32.const 500)) (f32x4.convert_i32x4_s (i32x4.shr_u (local.get $c2) (i32.const 3))))
          (v128.store offset=48 (i32.add (local.get $o) (i32.const 500)) (f32x4.convert_i32x4_s (i32x4.shr_u (local.get $c3) (i32.const 3))))
          (v128.store offset=64 (i32.add (local.get $o) (i32.const 500)) (f32x4.convert_i32x4_s (i32x4.shr_u (local.get $c4) (i32.const 3))))
          (v128.store offset=80 (i32.add (local.get $o) (i32.const 500)) (f32x4.convert_i32x4_s (i32x4.shr_u (local.get $c5) (i32.const 3))))
          (v128.store offset=96 (i32.add (local.get $o) (i32.const 500)) (f32x4.convert_i32x4_s (i32x4.shr_u (local.get $c6) (i32.const 3)))))
        (else
          ;; any radius: cell by cell
          (local.set $k (i32.const 0))
          (block $gd (loop $gl
            (br_if $gd (i32.ge_u (local.get $k) (local.get $S)))
            (local.set $src (i32.add (local.get $planes)
              (i32.add (local.get $corner) (i32.mul (local.get $k) (local.get $Wp)))))
            (local.set $srcO (i32.add (local.get $occ)
              (i32.shl (i32.add (local.get $corner) (i32.mul (local.get $k) (local.get $Wp))) (i32.const 2))))
            (local.set $dst (i32.add (local.get $o) (i32.shl (i32.mul (local.get $k) (local.get $S)) (i32.const 2))))
            (local.set $wc (i32.const 0))
            (block $cd (loop $cl
              (br_if $cd (i32.ge_u (local.get $wc) (local.get $S)))
              (local.set $b (i32.load8_u (local.get $src)))
              (f32.store (local.get $dst) (f32.convert_i32_s (i32.and (local.get $b) (i32.const 1))))
              (f32.store (i32.add (local.get $dst) (local.get $SS4))
                (f32.convert_i32_s (i32.and (i32.shr_u (local.get $b) (i32.const 1)) (i32.const 1))))
              (f32.store (i32.add (local.get $dst) (i32.shl (local.get $SS4) (i32.const 1)))
                (select (f32.const 1) (f32.load (local.get $srcO)) (f32.gt (f32.load (local.get $srcO)) (f32.const 1))))
              (f32.store (i32.add (local.get $dst) (i32.mul (local.get $SS4) (i32.const 3))) (f32.const 0))
              (f32.store (i32.add (local.get $dst) (i32.shl (local.get $SS4) (i32.const 2)))
                (f32.convert_i32_s (i32.and (i32.shr_u (local.get $b) (i32.const 2)) (i32.const 1))))
              (f32.store (i32.add (local.get $dst) (i32.mul (local.get $SS4) (i32.const 5)))
                (f32.convert_i32_s (i32.shr_u (local.get $b) (i32.const 3))))
              (local.set $src (i32.add (local.get $src) (i32.const 1)))
              (local.set $srcO (i32.add (local.get $srcO) (i32.const 4)))
              (local.set $dst (i32.add (local.get $dst) (i32.const 4)))
              (local.set $wc (i32.add (local.get $wc) (i32.const 1)))
              (br $cl)))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $gl)))))
      ;; the agent's own cell: others there, not itself
      (f32.store
        (i32.add (i32.add (local.get $o) (i32.shl (local.get $SS4) (i32.const 1)))
                 (i32.shl (i32.add (i32.mul (local.get $r) (local.get $S)) (local.get $r)) (i32.const 2)))
        (select (f32.const 1) (f32.const 0)
          (f32.gt
            (f32.load (i32.add (local.get $occ)
              (i32.shl
                (i32.add (local.get $corner) (i32.add (i32.mul (local.get $r) (local.get $Wp)) (local.get $r)))
                (i32.const 2))))
            (f32.const 1))))
      ;; its goal, if in the window: own-goal 1, other-goal only if shared
      (local.set $wr (i32.add (i32.sub (local.get $gr) (local.get $pr)) (local.get $r)))
      (local.set $wc (i32.add (i32.sub (local.get $gc) (local.get $pc)) (local.get $r)))
      (if (i32.and (i32.lt_u (local.get $wr) (local.get $S)) (i32.lt_u (local.get $wc) (local.get $S)))
        (then
          (local.set $k (i32.shl (i32.add (i32.mul (local.get $wr) (local.get $S)) (local.get $wc)) (i32.const 2)))
          (f32.store (i32.add (i32.add (local.get $o) (i32.mul (local.get $SS4) (i32.const 3))) (local.get $k)) (f32.const 1))
          (f32.store (i32.add (i32.add (local.get $o) (i32.shl (local.get $SS4) (i32.const 2))) (local.get $k))
            (f32.convert_i32_s (i32.load8_u (i32.add (i32.load offset=44 (local.get $ctx))
              (i32.add (local.get $aOff) (local.get $a))))))))
      ;; scalar features. The four quotients in one float32 division: for
      ;; integer operands below 2^24 it is exactly the float64 quotient
      ;; rounded to float32 (what the reference stores), since rounding
      ;; twice through float64 (53 >= 2 * 24 + 2 bits) is innocuous for
      ;; division.
      (local.set $sc (i32.add (local.get $o) (i32.mul (local.get $SS4) (i32.const 6))))
      (local.set $dm (i32.add (local.get $dOff) (i32.add (i32.mul (local.get $a) (i32.load offset=48 (local.get $rec))) (local.get $p))))
      ;; one table entry per (agent, cell): the distance to the goal, and the move features above it
      (local.set $cellInfo (i32.load (i32.add (i32.load offset=40 (local.get $ctx)) (i32.shl (local.get $dm) (i32.const 2)))))
      (local.set $dHere (i32.and (local.get $cellInfo) (i32.const 0xffff)))
      (local.set $q (f32x4.div
        (f32x4.convert_i32x4_s
          (i32x4.replace_lane 3
            (i32x4.replace_lane 2
              (i32x4.replace_lane 1
                (i32x4.splat (i32.sub (local.get $gc) (local.get $pc)))
                (i32.sub (local.get $gr) (local.get $pr)))
              (local.get $dHere))
            (i32.sub (local.get $horizon) (local.get $t))))
        (f32x4.convert_i32x4_s
          (i32x4.replace_lane 3
            (i32x4.replace_lane 2
              (i32x4.splat (local.get $L))
              (i32.add (local.get $W) (local.get $H)))
            (local.get $horizon)))))
      (v128.store (local.get $sc) (local.get $q))
      (f32.store offset=8 (local.get $sc)
        (if (result f32) (i32.eq (local.get $dHere) (i32.const 0xffff))
          (then (f32.const 1))
          (else (select (f32.const 1) (f32x4.extract_lane 2 (local.get $q))
            (f32.gt (f32x4.extract_lane 2 (local.get $q)) (f32.const 1))))))
      ;; moves (overwrites the vector's fourth lane), then the time left
      (v128.store offset=12 (local.get $sc)
        (v128.load (i32.add (i32.load offset=56 (local.get $ctx))
          (i32.shl (i32.shr_u (local.get $cellInfo) (i32.const 16)) (i32.const 4)))))
      (f32.store offset=28 (local.get $sc) (f32x4.extract_lane 3 (local.get $q)))
      (f32.store offset=32 (local.get $sc) (f32.load offset=44 (local.get $rec)))
      (f32.store offset=36 (local.get $sc) (f32.load offset=52 (local.get $rec)))
      (f32.store offset=40 (local.get $sc) (f32.load offset=56 (local.get $rec)))
      (f32.store offset=44 (local.get $sc) (select (f32.const 1) (f32.const 0) (i32.eq (local.get $p) (local.get $goal))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $rows)))
    (if (i32.ge_s (local.get $cur) (i32.const 0))
      (then (call $occupy (local.get $ctx) (local.get $cur) (local.get $rec) (f32.const -1)))))
)
