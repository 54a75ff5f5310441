import assert from "node:assert/strict";
import {
  checkMaze,
  goalDistances,
  mazeFromRows,
  optimalActions,
  shortestPath,
  UNREACHABLE,
  wallDensity,
} from "./maze.ts";

const corridor = mazeFromRows(
  "c",
  ["00000", "11110", "00000"],
  [0, 0],
  [0, 2],
  0,
  50,
);

Deno.test("shortestPath: BFS around the wall", () => {
  // (0,0) east to (4,0), down two, west to (0,2): 4 + 2 + 4 moves
  assert.equal(shortestPath(corridor), 10);
  const d = goalDistances(corridor);
  assert.equal(d[corridor.goal], 0);
  assert.equal(d[5], UNREACHABLE); // a wall
});

Deno.test("optimalActions counts turns and the final forward step into the goal", () => {
  // 4 forward, right, 2 forward, right, 3 forward to (1,2), then the step into the goal = 4+1+2+1+4
  assert.equal(optimalActions(corridor), 12);
  const facing = mazeFromRows("f", ["00"], [0, 0], [1, 0], 0, 5);
  assert.equal(optimalActions(facing), 1);
  const behind = mazeFromRows("b", ["00"], [0, 0], [1, 0], 2, 5);
  assert.equal(optimalActions(behind), 3); // two turns, one step
});

Deno.test("checkMaze names what is wrong", () => {
  assert.equal(checkMaze(corridor), undefined);
  const cut = mazeFromRows("cut", ["010", "010"], [0, 0], [2, 0], 0, 9);
  assert.match(checkMaze(cut)!, /cannot be reached/);
  assert.match(checkMaze({ ...corridor, goal: 5 })!, /goal is on a wall/);
  assert.match(
    checkMaze({ ...corridor, start: corridor.goal })!,
    /start is the goal/,
  );
  assert.match(checkMaze({ ...corridor, dir: 4 })!, /direction 4/);
  assert.match(
    checkMaze({ ...corridor, walls: [0, 0, 0] })!,
    /15 cells/,
  );
  assert.equal(wallDensity(corridor), 4 / 15);
});
