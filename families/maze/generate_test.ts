import assert from "node:assert/strict";
import * as v from "valibot";
import {
  MAZE_PRESETS,
  type MazeConfig,
  MazeConfigSchema,
  setMazeValue,
} from "./config.ts";
import { generateMazes } from "./generate.ts";
import { checkMaze, goalDistances, shortestPath, wallDensity } from "./maze.ts";

Deno.test("generate: same (config, seed) gives the same mazes; a longer request extends a shorter", () => {
  const c = MAZE_PRESETS.medium!;
  const a = generateMazes(c, 7, 20),
    b = generateMazes(c, 7, 20),
    c5 = generateMazes(c, 7, 5);
  assert.deepEqual(a, b);
  assert.deepEqual(a.slice(0, 5), c5);
  const other = generateMazes(c, 8, 20);
  assert.notDeepEqual(a.map((m) => m.walls), other.map((m) => m.walls));
});

Deno.test("generate: solvable, at the configured density, goal inside the distance band", () => {
  const c: MazeConfig = {
    size: 13,
    walls: { density: 0.3 },
    goal: { min_distance: 8, max_distance: 14 },
    max_steps: 250,
  };
  for (const m of generateMazes(c, 3, 50)) {
    assert.equal(checkMaze(m), undefined);
    assert.equal(m.width, 13);
    assert.equal(Math.round(wallDensity(m) * 169), Math.round(0.3 * 169));
    const d = shortestPath(m);
    assert.ok(d >= 8 && d <= 14, `distance ${d}`);
    assert.equal(m.maxSteps, 250);
  }
});

Deno.test("generate: a band beyond the grid's reach puts the goal at the farthest cells", () => {
  const c: MazeConfig = {
    size: 5,
    walls: { density: 0 },
    goal: { min_distance: 30, max_distance: 40 },
    max_steps: 50,
  };
  for (const m of generateMazes(c, 1, 10)) {
    const d = goalDistances({ ...m, goal: m.start });
    assert.equal(shortestPath(m), Math.max(...d));
  }
});

Deno.test("schema: presets pass, bounds are enforced; set clamps and keeps the band ordered", () => {
  for (const p of Object.values(MAZE_PRESETS)) {
    assert.ok(v.safeParse(MazeConfigSchema, p).success);
  }
  const m = MAZE_PRESETS.medium!;
  assert.ok(!v.safeParse(MazeConfigSchema, { ...m, size: 3 }).success);
  assert.ok(
    !v.safeParse(MazeConfigSchema, { ...m, walls: { density: 0.9 } }).success,
  );
  assert.equal(setMazeValue(m, "size", 99).size, 25);
  assert.equal(setMazeValue(m, "walls.density", 0.33).walls.density, 0.33);
  const hard = setMazeValue(
    { ...m, goal: { min_distance: 1, max_distance: 10 } },
    "goal.min_distance",
    20,
  );
  assert.deepEqual(hard.goal, { min_distance: 20, max_distance: 20 });
  assert.throws(() => setMazeValue(m, "nope", 1), /no dimension "nope"/);
});
