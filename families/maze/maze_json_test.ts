import assert from "node:assert/strict";
import { MAZE_PRESETS } from "./config.ts";
import { generateMazes } from "./generate.ts";
import { MazeFormatError, mazeLines, parseMazeLines } from "./maze_json.ts";
import { testMazes } from "./test_mazes.ts";

Deno.test("maze JSON lines round-trip generated and named mazes", () => {
  const ms = [
    ...generateMazes(MAZE_PRESETS.hard!, 4, 5),
    ...testMazes().slice(0, 3),
  ];
  assert.deepEqual(parseMazeLines(mazeLines(ms)), ms);
  assert.match(mazeLines(ms.slice(5, 6)), /"rows":\["\.\.\.#\.\.#\.\.#\.\.\."/);
});

Deno.test("maze JSON lines: a bad line is one error naming the line and the fix", () => {
  const good = mazeLines(generateMazes(MAZE_PRESETS.easy!, 1, 1));
  assert.throws(
    () => parseMazeLines(good + "{nope\n"),
    (e: Error) =>
      e instanceof MazeFormatError && e.message === "maze line 2: not JSON",
  );
  const cut = JSON.stringify({
    rows: [".#.", ".#."],
    start: [0, 0],
    goal: [2, 0],
  });
  assert.throws(() => parseMazeLines(cut), /maze line 1: .*cannot be reached/);
  assert.throws(
    () =>
      parseMazeLines(
        JSON.stringify({ rows: ["..."], start: [0], goal: [2, 0] }),
      ),
    /needs "start": \[col, row\]/,
  );
});
