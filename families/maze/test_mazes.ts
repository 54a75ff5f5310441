/**
 * The named held-out test mazes of the environment-design literature
 * (Dennis et al. 2020; Jiang et al. 2021; Parker-Holder et al. 2022), as
 * laid out in `minimax`'s maze suite (Jiang et al. 2023): walls as rows of
 * `0`/`1`, positions as `[col, row]`. Evaluation episodes last
 * `2 * (height + 2) * (width + 2)` steps, as there.
 *
 * Where the reference draws the start direction at random
 * (SixteenRooms2, Labyrinth2, StandardMaze2/3, the corridors) it is fixed
 * here at `0` (east), so the suite is deterministic; where it draws the goal
 * among several cells (SmallCorridor, LargeCorridor) each cell is one
 * instance (`SmallCorridor#k`). PerfectMaze, drawn by the reference on every
 * reset, is four seeded depth-first mazes (`PerfectMaze#k`). The randomised
 * FourRooms and SimpleCrossing are not included.
 *
 * @module
 */
import { type Maze, mazeFromRows } from "./maze.ts";
import { MazeRng } from "./random.ts";

/** Evaluation step limit of a `w` x `h` test maze. */
export function testSteps(w: number, h: number): number {
  return 2 * (h + 2) * (w + 2);
}

type Pos = readonly [number, number];
interface Layout {
  readonly rows: readonly string[];
  readonly agent: Pos;
  readonly goals: readonly Pos[];
  readonly dir: number;
}

const LAYOUTS: Readonly<Record<string, Layout>> = {
  SixteenRooms: {
    rows: [
      "0001001001000",
      "0000000001000",
      "0001001000000",
      "1011101101110",
      "0001000000000",
      "0000001001000",
      "1101011011101",
      "0001000001000",
      "0001001000000",
      "0111101101011",
      "0001001001000",
      "0000001000000",
      "0001000001000",
    ],
    agent: [1, 1],
    goals: [[11, 11]],
    dir: 0,
  },
  SixteenRooms2: {
    rows: [
      "0001000001000",
      "0000001001000",
      "0001001001000",
      "1111011011101",
      "0001001000000",
      "0000001001000",
      "1011111011111",
      "0001001001000",
      "0001000000000",
      "1101101101111",
      "0001001001000",
      "0000001000000",
      "0001001001000",
    ],
    agent: [1, 1],
    goals: [[11, 11]],
    dir: 0,
  },
  Labyrinth: {
    rows: [
      "0000000000000",
      "0111111111110",
      "0100000000010",
      "0101111111010",
      "0101000001010",
      "0101011101010",
      "0101010101010",
      "0101010101010",
      "0100010001010",
      "0111111111010",
      "0000010000010",
      "1111010111110",
      "0000010000000",
    ],
    agent: [0, 12],
    goals: [[6, 6]],
    dir: 0,
  },
  LabyrinthFlipped: {
    rows: [
      "0000000000000",
      "0111111111110",
      "0100000000010",
      "0101111111010",
      "0101000001010",
      "0101011101010",
      "0101010101010",
      "0101010101010",
      "0101000100010",
      "0101111111110",
      "0100000100000",
      "0111110101111",
      "0000000100000",
    ],
    agent: [12, 12],
    goals: [[6, 6]],
    dir: 2,
  },
  Labyrinth2: {
    rows: [
      "0100000000000",
      "0101111111110",
      "0101000000010",
      "0101011111010",
      "0101010001010",
      "0001010101010",
      "1111010101010",
      "0001011101010",
      "0101000001010",
      "0101111111010",
      "0100000000010",
      "0111111111110",
      "0000000000000",
    ],
    agent: [0, 0],
    goals: [[6, 6]],
    dir: 0,
  },
  StandardMaze: {
    rows: [
      "0000010000100",
      "0111011110110",
      "0100000000000",
      "0111111110111",
      "0000000010000",
      "1111110111110",
      "0000100100000",
      "0110001101111",
      "0010100100010",
      "1010110111010",
      "1010010001000",
      "1011011101110",
      "0001000101000",
    ],
    agent: [6, 0],
    goals: [[6, 12]],
    dir: 0,
  },
  StandardMaze2: {
    rows: [
      "0001010000100",
      "0101011110001",
      "0100000000100",
      "0111111110111",
      "0001001010100",
      "1101011010100",
      "0101000010110",
      "0101101110010",
      "0100100111010",
      "0110110101010",
      "0100010101010",
      "0101010101010",
      "0001000100000",
    ],
    agent: [0, 6],
    goals: [[12, 4]],
    dir: 0,
  },
  StandardMaze3: {
    rows: [
      "0000101000000",
      "0111101011110",
      "0100001010000",
      "0001111010101",
      "1101000010100",
      "0001011010110",
      "0101010010010",
      "0101010111011",
      "0100010101000",
      "0111010101110",
      "0100010100010",
      "0101110101010",
      "0100010001000",
    ],
    agent: [3, 0],
    goals: [[12, 6]],
    dir: 0,
  },
  SmallCorridor: {
    rows: [
      "0000000000000",
      "0101010101010",
      "0101010101010",
      "0101010101010",
      "0101010101010",
      "0101010101010",
      "0111111111110",
      "0101010101010",
      "0101010101010",
      "0101010101010",
      "0101010101010",
      "0101010101010",
      "0000000000000",
    ],
    agent: [0, 6],
    goals: [[2, 5], [4, 5], [6, 5], [8, 5], [10, 5], [2, 7], [4, 7], [6, 7], [
      8,
      7,
    ], [10, 7]],
    dir: 0,
  },
  LargeCorridor: {
    rows: [
      "0000000000000000000",
      ...Array.from({ length: 8 }, () => "0101010101010101010"),
      "0111111111111111110",
      ...Array.from({ length: 8 }, () => "0101010101010101010"),
      "0000000000000000000",
    ],
    agent: [0, 9],
    goals: [
      [2, 8],
      [4, 8],
      [6, 8],
      [8, 8],
      [10, 8],
      [12, 8],
      [14, 8],
      [16, 8],
      [2, 10],
      [4, 10],
      [6, 10],
      [8, 10],
      [10, 10],
      [12, 10],
      [14, 10],
      [16, 10],
    ],
    dir: 0,
  },
};

/** Names of the hand-encoded test mazes (before goal expansion). */
export const TEST_MAZE_NAMES: readonly string[] = [
  ...Object.keys(LAYOUTS),
  "PerfectMaze",
];

/**
 * A perfect maze (one path between any two cells) on an odd `side`, by a
 * seeded depth-first carve from a random cell of the even lattice; start
 * and goal drawn among the free cells, direction at random.
 */
export function perfectMaze(name: string, side: number, seed: number): Maze {
  const rng = new MazeRng(seed, 0x5eed);
  const walls: number[] = new Array(side * side).fill(1);
  const k = (side + 1) >> 1; // lattice cells per row
  const seen = new Uint8Array(k * k);
  const stack: number[] = [rng.int(k * k)];
  seen[stack[0]!] = 1;
  const cell = (i: number) => 2 * ((i / k) | 0) * side + 2 * (i % k);
  walls[cell(stack[0]!)] = 0;
  while (stack.length) {
    const cur = stack[stack.length - 1]!;
    const r = (cur / k) | 0, c = cur % k;
    const next: number[] = [];
    if (c + 1 < k && !seen[cur + 1]) next.push(cur + 1);
    if (r + 1 < k && !seen[cur + k]) next.push(cur + k);
    if (c > 0 && !seen[cur - 1]) next.push(cur - 1);
    if (r > 0 && !seen[cur - k]) next.push(cur - k);
    if (next.length === 0) {
      stack.pop();
      continue;
    }
    const n = next[rng.int(next.length)]!;
    seen[n] = 1;
    walls[cell(n)] = 0;
    walls[(cell(n) + cell(cur)) >> 1] = 0; // the wall between them
    stack.push(n);
  }
  const free: number[] = [];
  for (let i = 0; i < walls.length; i++) if (!walls[i]) free.push(i);
  const goal = free[rng.int(free.length)]!;
  const rest = free.filter((i) => i !== goal);
  const start = rest[rng.int(rest.length)]!;
  return {
    name,
    width: side,
    height: side,
    walls,
    start,
    dir: rng.int(4),
    goal,
    maxSteps: testSteps(side, side),
  };
}

/**
 * The held-out test mazes: every named layout (corridors once per goal
 * cell) and four seeded 13x13 perfect mazes.
 */
export function testMazes(): Maze[] {
  const out: Maze[] = [];
  for (const [name, l] of Object.entries(LAYOUTS)) {
    const h = l.rows.length, w = l.rows[0]!.length;
    l.goals.forEach((g, k) => {
      const id = l.goals.length > 1 ? `${name}#${k}` : name;
      out.push(mazeFromRows(id, l.rows, l.agent, g, l.dir, testSteps(w, h)));
    });
  }
  for (let k = 0; k < 4; k++) out.push(perfectMaze(`PerfectMaze#${k}`, 13, k));
  return out;
}
