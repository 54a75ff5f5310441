import assert from "node:assert/strict";
import { fitGbt, fitModel, fitRidge, predict } from "./learned_model.ts";
import { Rng } from "../mapf/rng.ts";

function data(n: number, seed: number, interaction: boolean) {
  const rng = new Rng(seed);
  const xs: number[][] = [];
  const ys: number[] = [];
  const groups: string[] = [];
  for (let i = 0; i < n; i++) {
    const a = rng.float();
    const b = rng.int(2);
    xs.push([a, b, rng.float()]);
    const y = interaction ? (a > 0.5 === (b === 1) ? 1 : -1) : 2 * a - b;
    ys.push(y + 0.05 * rng.normal());
    groups.push(`g${i % 8}`);
  }
  return { xs, ys, groups };
}

Deno.test("ridge recovers a linear rule; gbt an interaction a linear model cannot", () => {
  const lin = data(200, 1, false);
  const r = fitRidge(lin.xs, lin.ys, 0.01);
  assert.ok(Math.abs(predict(r, [0.8, 0, 0.3]) - 1.6) < 0.05);
  assert.ok(Math.abs(predict(r, [0.2, 1, 0.3]) - -0.6) < 0.05);
  const xor = data(300, 2, true);
  const g = fitGbt(xor.xs, xor.ys, { rounds: 80 });
  assert.ok(predict(g, [0.9, 1, 0.5]) > 0.6);
  assert.ok(predict(g, [0.9, 0, 0.5]) < -0.6);
});

Deno.test("fitModel chooses by held-out error: ridge on a linear target, gbt on an interaction", () => {
  const lin = fitModel(
    ...Object.values(data(200, 3, false)) as [number[][], number[], string[]],
    5,
  );
  assert.match(lin.chosen, /^ridge/);
  const xor = fitModel(
    ...Object.values(data(300, 4, true)) as [number[][], number[], string[]],
    5,
  );
  assert.equal(xor.chosen, "gbt");
  const constant = xor.trials.find((t) => t.name === "constant")!;
  const gbt = xor.trials.find((t) => t.name === "gbt")!;
  assert.ok(gbt.mse < constant.mse / 2, `${gbt.mse} vs ${constant.mse}`);
  // a quarter of the 8 groups held out: 2 groups of ~37 rows
  assert.ok(gbt.n > 50 && gbt.n < 100, String(gbt.n));
});

Deno.test("fitModel is deterministic given the seed and refuses too little data", () => {
  const d = data(120, 5, true);
  const a = fitModel(d.xs, d.ys, d.groups, 9);
  const b = fitModel(d.xs, d.ys, d.groups, 9);
  assert.deepEqual(a, b);
  assert.throws(() => fitModel([[1]], [1], ["a"], 1), /too few transitions/);
});
