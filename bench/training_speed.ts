/**
 * Training speed of this tree against another tree of the project (e.g. a
 * worktree of an earlier commit) and against one-thread PyTorch, in one
 * process, contenders alternated round by round (ratios are what count on a
 * shared machine):
 *
 * - `update`: `Trainer.update` (rollout + 4 epochs of 512-row minibatches,
 *   default options) on `easy` and `hard` pools, samples/s, this tree vs
 *   `--base`;
 * - `ppo`: one epoch of `SimdLearner.update` on a 4096-row (or 4 x minibatch)
 *   buffer of real observation rows at minibatch 512 and 2048, this tree vs
 *   `--base` vs PyTorch with one thread (`bench/ppo_torch.py`, through
 *   `--python`, an interpreter with torch).
 *
 * Rates are per CPU second of the measuring process (`process.cpuUsage`
 * here, `time.process_time` in PyTorch's), so that the time slices other
 * processes take on a shared machine count for neither side.
 *
 * Run: `deno run -A bench/training_speed.ts --base DIR [--python PY] [--rounds 5] [--seconds 1.5] [--only update|ppo]`
 *
 * @module
 */
import { join } from "node:path";
import process from "node:process";
import { arg, median } from "./_common.ts";
import * as policyBench from "./_policy.ts";

const BASE = arg("base", "");
const PYTHON = arg("python", "");
const ROUNDS = Number(arg("rounds", "5"));
const SECONDS = Number(arg("seconds", "1.5"));
const ONLY = arg("only", "");
if (!BASE) {
  console.error(
    "usage: deno run -A bench/training_speed.ts --base DIR [--python PY] (DIR: a tree of the project to compare against, e.g. `git worktree add ../envsmith-base COMMIT`)",
  );
  Deno.exit(2);
}
/** CPU time of this process (ms): rates per CPU second do not count time slices other processes take on a shared machine. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
const fmt = (x: number) => Math.round(x).toLocaleString("en-US");

// deno-lint-ignore no-explicit-any
type Any = any;
async function tree(dir: string) {
  return {
    mapf: await import(`${dir}/mapf/mod.ts`) as Any,
    policy: await import(`${dir}/policy/mod.ts`) as Any,
  };
}
const here = await tree(new URL("..", import.meta.url).pathname);
const base = await tree(BASE);
const sides = [["this", here], ["base", base]] as const;
const out: string[] = [];
const loads: string[] = [];
const loadNow = () => Deno.loadavg()[0]!.toFixed(2);

if (!ONLY || ONLY === "update") {
  out.push(
    "Trainer.update, default options (64 envs x 32 steps, 4 epochs of 512), samples per CPU second:\n",
    "| preset | this tree | base | this / base | ms/update this | ms/update base | load |",
    "|---|---:|---:|---:|---:|---:|---:|",
  );
  for (const preset of ["easy", "hard"] as const) {
    const r: Record<string, number[]> = { this: [], base: [] };
    const ms: Record<string, number[]> = { this: [], base: [] };
    const ratios: number[] = [];
    const ld: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const rate: Record<string, number> = {};
      for (const [name, t] of round % 2 ? [...sides].reverse() : sides) {
        const pool = t.mapf.InstancePool.from(
          t.mapf.generate({ preset }, { count: 256, seed: 3 }).instances,
        );
        // trees since the trainer seam take a training source, older ones the pool
        const source = t.policy.mapfTrainingSource?.(pool) ?? pool;
        const tr = new t.policy.Trainer(
          t.policy.initCheckpoint({ seed: 1 }),
          source,
          { seed: 5 },
        );
        tr.update();
        let samples = 0, updates = 0;
        const t0 = cpuMs();
        while (cpuMs() - t0 < SECONDS * 1000 * 2) {
          samples += tr.update().stats.samples;
          updates++;
        }
        const sec = (cpuMs() - t0) / 1000;
        rate[name] = samples / sec;
        r[name]!.push(samples / sec);
        ms[name]!.push(1000 * sec / updates);
      }
      ratios.push(rate.this! / rate.base!);
      ld.push(loadNow());
    }
    loads.push(...ld);
    out.push(
      `| ${preset} | ${fmt(median(r.this!))} | ${fmt(median(r.base!))} | ${
        median(ratios).toFixed(2)
      }x (${ratios.map((x) => x.toFixed(2)).join(", ")}) | ${
        median(ms.this!).toFixed(0)
      } | ${median(ms.base!).toFixed(0)} | ${ld.join(" ")} |`,
    );
  }
}

if (!ONLY || ONLY === "ppo") {
  const D = policyBench.OBS_SIZE;
  out.push(
    "",
    "PPO update (one epoch of SimdLearner.update: gather, forward, loss, backward, clipping, Adam), samples per CPU second:\n",
    "| minibatch | this tree | base | this / base | PyTorch 1 thread | this / PyTorch | load |",
    "|---:|---:|---:|---:|---:|---:|---:|",
  );
  for (const MB of [512, 2048]) {
    const N = Math.max(4096, 4 * MB);
    const rows = policyBench.observationRows(N);
    const rowsFile = join(await Deno.makeTempDir(), "rows.f32");
    await Deno.writeFile(
      rowsFile,
      new Uint8Array(rows.buffer, rows.byteOffset, MB * D * 4),
    );
    const learners: Record<string, { l: Any; buf: Any }> = {};
    for (const [name, t] of sides) {
      const l = new t.policy.SimdLearner(
        t.policy.Mlp.init(policyBench.DEFAULT_MLP, { seed: 1 }),
        { capacity: N, actRows: 64 },
        { minibatch: MB, epochs: 1 },
      );
      const buf = l.createBuffer(N);
      policyBench.fillRandomSamples(buf, rows, N, new t.mapf.Rng(3));
      learners[name] = { l, buf };
    }
    const r: Record<string, number[]> = { this: [], base: [], torch: [] };
    const ratios: number[] = [], torchRatios: number[] = [];
    const ld: string[] = [];
    let torchNote = "";
    for (let round = 0; round < ROUNDS; round++) {
      const rate: Record<string, number> = {};
      for (const [name, t] of round % 2 ? [...sides].reverse() : sides) {
        const { l, buf } = learners[name]!;
        const rng = new t.mapf.Rng(round);
        for (let i = 0; i < 2; i++) l.update(buf, rng);
        let n = 0;
        const t0 = cpuMs();
        while (cpuMs() - t0 < SECONDS * 1000) {
          l.update(buf, rng);
          n += N;
        }
        rate[name] = n / ((cpuMs() - t0) / 1000);
        r[name]!.push(rate[name]!);
      }
      ratios.push(rate.this! / rate.base!);
      if (PYTHON) {
        const t = await policyBench.torchSamplesPerSecond({
          python: PYTHON,
          rowsFile,
          dim: D,
          minibatch: MB,
          seconds: SECONDS,
          cpuTime: true,
        });
        if (typeof t === "number") {
          r.torch!.push(t);
          torchRatios.push(rate.this! / t);
        } else torchNote = t;
      } else torchNote = "no --python";
      ld.push(loadNow());
    }
    loads.push(...ld);
    out.push(
      `| ${MB} | ${fmt(median(r.this!))} | ${fmt(median(r.base!))} | ${
        median(ratios).toFixed(2)
      }x | ${
        r.torch!.length ? fmt(median(r.torch!)) : `skipped: ${torchNote}`
      } | ${
        torchRatios.length
          ? `${median(torchRatios).toFixed(2)}x (${
            torchRatios.map((x) => x.toFixed(2)).join(", ")
          })`
          : "-"
      } | ${ld.join(" ")} |`,
    );
  }
}

console.log(
  `${ROUNDS} alternating rounds, ${SECONDS} s per cell; one-minute load average after each round in the last column\n`,
);
console.log(out.join("\n"));
