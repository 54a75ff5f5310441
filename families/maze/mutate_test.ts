import assert from "node:assert/strict";
import { MAZE_PRESETS } from "./config.ts";
import { generateMazes } from "./generate.ts";
import { checkMaze, mazeFromRows } from "./maze.ts";
import { mutateMaze } from "./mutate.ts";
import { MazeRng } from "./random.ts";

Deno.test("mutate: every edit is solvable and changes one cell or the goal", () => {
  const rng = new MazeRng(5);
  let flips = 0, moves = 0;
  for (const m of generateMazes(MAZE_PRESETS.hard!, 2, 40)) {
    let cur = m;
    for (let k = 0; k < 10; k++) {
      const next = mutateMaze(cur, rng);
      assert.ok(next);
      assert.equal(checkMaze(next), undefined);
      let changed = 0;
      for (let i = 0; i < cur.walls.length; i++) {
        if (cur.walls[i] !== next.walls[i]) changed++;
      }
      if (next.goal !== cur.goal) {
        moves++;
        assert.equal(changed, 0);
      } else {
        flips++;
        assert.equal(changed, 1);
      }
      assert.equal(next.start, cur.start);
      cur = next;
    }
  }
  assert.ok(flips > moves && moves > 0, `${flips} flips, ${moves} moves`);
});

Deno.test("mutate: deterministic for the rng's state; never cuts the only path", () => {
  const m = generateMazes(MAZE_PRESETS.medium!, 1, 1)[0]!;
  assert.deepEqual(
    mutateMaze(m, new MazeRng(9)),
    mutateMaze(m, new MazeRng(9)),
  );
  // a one-cell-wide corridor: flipping any corridor cell would cut it
  const line = mazeFromRows("line", ["00000", "11111"], [0, 0], [4, 0], 0, 20);
  const rng = new MazeRng(3);
  for (let k = 0; k < 50; k++) {
    const next = mutateMaze(line, rng);
    if (next) assert.equal(checkMaze(next), undefined);
  }
});
