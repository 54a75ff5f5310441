/**
 * Mazes as JSON lines, the way node values and files carry them:
 * `{"name", "rows": ["#..G", ...], "start": [col, row], "dir", "goal":
 * [col, row], "max_steps"}` with `#` for walls and `.` for free cells.
 *
 * @module
 */
import { checkMaze, type Maze } from "./maze.ts";

/** One maze as a JSON object. */
export function mazeToJson(
  m: Maze,
): {
  name: string;
  rows: string[];
  start: number[];
  dir: number;
  goal: number[];
  max_steps: number;
} {
  const rows: string[] = [];
  for (let r = 0; r < m.height; r++) {
    let s = "";
    for (let c = 0; c < m.width; c++) s += m.walls[r * m.width + c] ? "#" : ".";
    rows.push(s);
  }
  const at = (i: number) => [i % m.width, Math.floor(i / m.width)];
  return {
    name: m.name,
    rows,
    start: at(m.start),
    dir: m.dir,
    goal: at(m.goal),
    max_steps: m.maxSteps,
  };
}

/** A bad maze line: its line number and what is wrong, in one line. */
export class MazeFormatError extends SyntaxError {
  /** 1-based line. */
  readonly line: number;
  /** An error for `line`. */
  constructor(line: number, message: string) {
    super(`maze line ${line}: ${message}`);
    this.name = "MazeFormatError";
    this.line = line;
  }
}

/** Mazes from JSON lines (blank lines skipped); each is checked (valid and solvable). */
export function parseMazeLines(text: string): Maze[] {
  const out: Maze[] = [];
  text.split("\n").forEach((raw, i) => {
    if (!raw.trim()) return;
    let o: {
      name?: unknown;
      rows?: unknown;
      start?: unknown;
      dir?: unknown;
      goal?: unknown;
      max_steps?: unknown;
    };
    try {
      o = JSON.parse(raw);
    } catch {
      throw new MazeFormatError(i + 1, "not JSON");
    }
    const rows = o.rows;
    if (
      !Array.isArray(rows) || rows.length === 0 ||
      !rows.every((r) => typeof r === "string")
    ) {
      throw new MazeFormatError(
        i + 1,
        'needs "rows": a list of strings of # and .',
      );
    }
    const pos = (p: unknown, what: string): [number, number] => {
      if (!Array.isArray(p) || p.length !== 2 || !p.every(Number.isInteger)) {
        throw new MazeFormatError(i + 1, `needs "${what}": [col, row]`);
      }
      return [p[0], p[1]];
    };
    const width = (rows[0] as string).length, height = rows.length;
    const walls: number[] = new Array(width * height).fill(0);
    rows.forEach((r: string, y: number) => {
      if (r.length !== width) {
        throw new MazeFormatError(
          i + 1,
          `row ${y} has ${r.length} cells, not ${width}`,
        );
      }
      for (let x = 0; x < width; x++) {
        walls[y * width + x] = r[x] === "#" ? 1 : 0;
      }
    });
    const [sc, sr] = pos(o.start, "start"), [gc, gr] = pos(o.goal, "goal");
    const m: Maze = {
      name: typeof o.name === "string" ? o.name : `line${i + 1}`,
      width,
      height,
      walls,
      start: sr * width + sc,
      dir: typeof o.dir === "number" ? o.dir : 0,
      goal: gr * width + gc,
      maxSteps: typeof o.max_steps === "number" ? o.max_steps : 250,
    };
    const bad = sc < 0 || sc >= width || sr < 0 || sr >= height || gc < 0 ||
        gc >= width || gr < 0 || gr >= height
      ? "start or goal is off the grid"
      : checkMaze(m);
    if (bad) throw new MazeFormatError(i + 1, bad);
    out.push(m);
  });
  return out;
}

/** Mazes as JSON lines (each line ends with a newline). */
export function mazeLines(mazes: readonly Maze[]): string {
  return mazes.map((m) => JSON.stringify(mazeToJson(m)) + "\n").join("");
}
