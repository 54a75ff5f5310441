/**
 * Mazes as text for language-model contexts and failure cases: `#` wall,
 * `.` free, `G` goal, and the agent as `>` `v` `<` `^` by direction.
 *
 * @module
 */
import type { Maze } from "./maze.ts";

/** Agent glyph per direction (east, south, west, north). */
export const AGENT_GLYPHS = ">v<^";

/** The maze as lines of text, with the agent at `pos`/`dir` (its start by default). */
export function renderMaze(
  maze: Maze,
  pos = maze.start,
  dir = maze.dir,
): string {
  const lines = [
    `${maze.name} ${maze.width}x${maze.height}, ${maze.maxSteps} steps`,
  ];
  for (let r = 0; r < maze.height; r++) {
    let line = "";
    for (let c = 0; c < maze.width; c++) {
      const i = r * maze.width + c;
      line += i === pos
        ? AGENT_GLYPHS[dir]
        : i === maze.goal
        ? "G"
        : maze.walls[i]
        ? "#"
        : ".";
    }
    lines.push(line);
  }
  return lines.join("\n");
}
