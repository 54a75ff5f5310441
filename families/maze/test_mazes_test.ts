import assert from "node:assert/strict";
import {
  checkMaze,
  optimalActions,
  shortestPath,
  wallDensity,
} from "./maze.ts";
import { mazeFamily } from "./family.ts";
import { mazeFailureCases, mazeStatistics } from "./diagnosis.ts";
import { renderMaze } from "./render.ts";
import { testMazes } from "./test_mazes.ts";

Deno.test("test mazes: shapes, solvability, path lengths of the named layouts", () => {
  const ms = testMazes();
  assert.equal(ms.length, 8 + 10 + 16 + 4);
  const by = new Map(ms.map((m) => [m.name, m]));
  for (const m of ms) assert.equal(checkMaze(m), undefined, m.name);
  const sr = by.get("SixteenRooms")!;
  assert.deepEqual([sr.width, sr.height, sr.maxSteps], [13, 13, 450]);
  assert.equal(shortestPath(sr), 20);
  assert.equal(shortestPath(by.get("Labyrinth")!), 96);
  assert.equal(shortestPath(by.get("StandardMaze")!), 40);
  assert.equal(optimalActions(by.get("StandardMaze")!), 54);
  const lc = by.get("LargeCorridor#0")!;
  assert.deepEqual([lc.width, lc.height, lc.maxSteps], [19, 19, 882]);
  // the perfect mazes: every free cell is a lattice cell or a carved passage, half the grid or so
  for (let k = 0; k < 4; k++) {
    const d = wallDensity(by.get(`PerfectMaze#${k}`)!);
    assert.ok(d > 0.4 && d < 0.6, `density ${d}`);
  }
  assert.equal(renderMaze(sr).split("\n")[2], ".>.......#...");
});

Deno.test("family: suites by split, ids stable and content-bound, diagnosis numbers", () => {
  assert.equal(mazeFamily.suites.heldout!.split, "test");
  assert.equal(mazeFamily.suites.validation!.instances(10).length, 10);
  const [a] = mazeFamily.suites.validation!.instances(1);
  assert.equal(
    mazeFamily.instanceId(a!),
    mazeFamily.instanceId(mazeFamily.suites.validation!.instances(1)[0]!),
  );
  const walls = a!.walls.slice();
  const c = a!.start === 0 ? 1 : 0;
  walls[c] = walls[c] ? 0 : 1;
  assert.notEqual(
    mazeFamily.instanceId({ ...a!, walls }),
    mazeFamily.instanceId(a!),
  );
  const s = mazeStatistics([
    { instance: "a", success: true, return: 0.9, steps: 20, optimal: 10 },
    {
      instance: "b",
      success: false,
      return: 0,
      steps: 250,
      failure: "timeout",
    },
  ]);
  assert.deepEqual(s, {
    episodes: 2,
    success_rate: 0.5,
    mean_return: 0.45,
    mean_steps: 135,
    steps_over_optimal: 2,
    timeout_share: 0.5,
  });
  const cases = mazeFailureCases([{
    instance: "b",
    success: false,
    return: 0,
    steps: 250,
    failure: "timeout",
    maze: a!,
    final: { pos: a!.start, dir: 1 },
  }], { count: 3, seed: 1 });
  assert.equal(cases.length, 1);
  assert.match(cases[0]!.text, /v/);
});
