/**
 * The maze learning benchmark (not a unit test): which observation and
 * policy learn the environment-design literature's maze on CPU. Trains
 * envsmith's PPO on the egocentric 5x5 view (54 values: wall and goal
 * planes, direction one-hot) for a wall-time budget, on
 *
 * - `fixed-easy`: 4000 mazes of the `easy` preset (7x7, wall density 0.1,
 *   goal 1..6 moves away);
 * - `dr`: domain randomisation over the literature's 13x13 grid (a fresh
 *   pool of 4000 `medium` mazes, wall density 0.15, every `--pool-every`
 *   updates);
 * - `easy-then-dr`: half the budget `fixed-easy`, then `dr`;
 *
 * and reports the solve rate (goal reached within the step limit; one
 * episode per maze, sampled actions, 4 passes with different sampling
 * seeds) on 200 held-out `easy` mazes, the 100 `validation` mazes
 * (`medium`) and the named held-out test mazes.
 *
 * Run: `deno run -A bench/maze_learning.ts [--train fixed-easy|dr|easy-then-dr] [--minutes 3] [--hidden 64,64] [--seed 1] [--lr 3e-4] [--envs 64] [--steps 64]`
 * Prints one JSON line and a markdown row.
 *
 * @module
 */
import {
  MAZE_OBS_SIZE,
  mazeTrainingSource,
} from "../families/maze/batch_env.ts";
import { MAZE_PRESETS } from "../families/maze/config.ts";
import { evaluateMazes } from "../families/maze/evaluate.ts";
import { generateMazes } from "../families/maze/generate.ts";
import { type Maze, MAZE_ACTIONS } from "../families/maze/maze.ts";
import { validationMazes } from "../families/maze/family.ts";
import { testMazes } from "../families/maze/test_mazes.ts";
import { MazeRng } from "../families/maze/random.ts";
import { initCheckpoint } from "../policy/checkpoint.ts";
import type { Mlp } from "../policy/mlp.ts";
import { mazeSuite, mlpMazePolicy } from "../nodes/maze_evaluate.ts";
import { Trainer } from "../policy/trainer.ts";
import { arg } from "./_common.ts";

const mode = arg("train", "dr");
const minutes = Number(arg("minutes", "3"));
const seed = Number(arg("seed", "1"));
const hidden = arg("hidden", "64,64").split(",").map(Number);
const lr = Number(arg("lr", "3e-4"));
const envs = Number(arg("envs", "64"));
const steps = Number(arg("steps", "64"));
const poolEvery = Number(arg("pool-every", "50"));
const entropy = Number(arg("entropy", "0.01"));

/** Solve rate over all mazes, and per named maze (its `#k` variants together). */
function solveRates(
  net: Mlp,
  mazes: readonly Maze[],
): { all: number; by: Record<string, number> } {
  let s = 0, n = 0;
  const by: Record<string, [number, number]> = {};
  for (let pass = 0; pass < 4; pass++) {
    const policy = mlpMazePolicy(net, new MazeRng(pass, 77));
    for (const ep of evaluateMazes(mazes, policy)) {
      s += ep.success ? 1 : 0;
      n++;
      const x = by[mazeSuite(ep.instance)] ??= [0, 0];
      x[0] += ep.success ? 1 : 0;
      x[1]++;
    }
  }
  const rates = Object.entries(by).map(([k, [a, b]]) => [k, a / b]);
  return { all: s / n, by: Object.fromEntries(rates) };
}
const solveRate = (net: Mlp, mazes: readonly Maze[]) =>
  solveRates(net, mazes).all;

const ck = initCheckpoint({
  hidden,
  seed,
  inputSize: MAZE_OBS_SIZE,
  actions: MAZE_ACTIONS,
});
const opts = {
  envs,
  steps,
  minibatch: 1024,
  epochs: 4,
  lr,
  seed,
  entropyCoef: entropy,
  gamma: 0.995,
};
const sets = {
  easy: generateMazes(MAZE_PRESETS.easy!, 0xea5e, 200),
  validation: validationMazes(100),
  heldout: testMazes(),
};
const budget = minutes * 60_000, t0 = performance.now();
let updates = 0, samples = 0, pools = 0, lastSuccess = NaN;
const phase = (elapsed: number) =>
  mode === "fixed-easy" || (mode === "easy-then-dr" && elapsed < budget / 2)
    ? "easy"
    : "medium";
while (performance.now() - t0 < budget) {
  const p = phase(performance.now() - t0);
  const pool = generateMazes(MAZE_PRESETS[p]!, seed * 1000 + pools++, 4000);
  const tr = new Trainer(ck, mazeTrainingSource(pool), {
    ...opts,
    seed: seed * 1000 + pools,
  });
  for (
    let i = 0;
    i < poolEvery && performance.now() - t0 < budget &&
    phase(performance.now() - t0) === p;
    i++
  ) {
    const pt = tr.update();
    updates++;
    samples = pt.samples;
    if (!Number.isNaN(pt.success)) lastSuccess = pt.success;
  }
}
const trainSeconds = (performance.now() - t0) / 1000;
const result = {
  bench: "maze_learning",
  train: mode,
  hidden,
  lr,
  seed,
  minutes,
  updates,
  samples,
  samples_per_second: Math.round(samples / trainSeconds),
  train_success: lastSuccess,
  easy: solveRate(ck.net, sets.easy),
  validation: solveRate(ck.net, sets.validation),
  heldout: 0,
  heldout_by_maze: {} as Record<string, number>,
};
const held = solveRates(ck.net, sets.heldout);
result.heldout = held.all;
result.heldout_by_maze = held.by;
console.log(JSON.stringify(result));
console.log(
  `| ${mode} | ${hidden.join("x")} | ${lr} | ${minutes} min | ${updates} | ${
    (samples / 1e6).toFixed(2)
  } M | ${result.easy.toFixed(2)} | ${result.validation.toFixed(2)} | ${
    result.heldout.toFixed(2)
  } |`,
);
