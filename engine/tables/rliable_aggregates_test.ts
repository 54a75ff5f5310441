import assert from "node:assert/strict";
import {
  interquartileMean,
  performanceProfile,
  probabilityOfImprovement,
} from "./rliable_aggregates.ts";

Deno.test("IQM: the middle half of known lists, as scipy's trim_mean(x, 0.25)", () => {
  assert.equal(interquartileMean(Float64Array.of(8, 1, 7, 2, 6, 3, 5, 4)), 4.5);
  // 10 scores: floor(2.5) = 2 cut at each end, mean of 3..8
  assert.equal(
    interquartileMean(Float64Array.from({ length: 10 }, (_, i) => 10 - i)),
    5.5,
  );
  // an outlier does not move it: mean of (1, 1, 1, 1) after cutting 0 and 100
  assert.equal(interquartileMean(Float64Array.of(0, 1, 1, 1, 1, 100)), 1);
  // 3 scores: nothing cut
  assert.equal(interquartileMean(Float64Array.of(0, 0, 3)), 1);
});

Deno.test("probability of improvement: pairs counted by hand, ties half, averaged over tasks", () => {
  // task 0: X = {1, 3}, Y = {2, 3}: 3>2 and a tie: 1.5/4; task 1: X = {1, 1}, Y = {0, 0}: 1
  const x = Float64Array.of(1, 3, 1, 1), y = Float64Array.of(2, 3, 0, 0);
  assert.equal(probabilityOfImprovement(x, y, 2), (0.375 + 1) / 2);
  assert.equal(probabilityOfImprovement(y, x, 2), (0.625 + 0) / 2);
  assert.equal(probabilityOfImprovement(x, x, 2), 0.5);
});

Deno.test("performance profile: the share of scores strictly above each τ", () => {
  const p = performanceProfile(Float64Array.of(0, 0.25, 0.5, 0.5, 1), [
    0,
    0.25,
    0.5,
    0.99,
    1,
  ]);
  assert.deepEqual([...p], [0.8, 0.6, 0.2, 0.2, 0]);
});
