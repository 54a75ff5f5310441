/**
 * MAPF-FrozenLake instances: the JSON form (one instance per line for the
 * CLI and the `generate` node) and the compiled typed form used for stepping.
 *
 * JSON form ({@linkcode Instance}):
 *
 * ```json
 * {"id":"287b479b14fb-7-0","config":"287b479b14fb","seed":7,"index":0,
 *  "width":4,"height":3,"cells":["..H.","....","#..."],
 *  "starts":[[0,0],[2,3]],"goals":[[2,1],[0,3]],
 *  "slip":0,"horizon":12,"collision":"fail","holes":"lethal",
 *  "reference":{"soc":6,"makespan":4,"solver":"cbs"}}
 * ```
 *
 * `cells` are the rows, top first, one character per cell: `.` frozen (free),
 * `H` hole, `#` wall. Starts are pairwise distinct, and so are goals (one
 * agent's goal may be another's start; generated instances keep all start and
 * goal cells distinct, as the paper's text format needs). Positions are `[row, col]`, 0-based. `reference` is the
 * solver's sum-of-costs and makespan (agents stay on their goals once there,
 * so an agent's cost is its arrival time), or `null` for an imported instance
 * no solver could solve.
 *
 * @module
 */
import type { CollisionMode, HoleMode } from "../schemas/env_config.ts";
import { bfsDistances, CELL_CHARS, FREE, HOLE, WALL } from "./grid.ts";

/** A solver's reference solution cost. */
export interface Reference {
  /** Sum over agents of arrival times. */
  readonly soc: number;
  /** Largest arrival time. */
  readonly makespan: number;
  /** Which solver found it: `pp` (prioritized planning) or `cbs` (optimal sum-of-costs). */
  readonly solver: "pp" | "cbs";
}

/** Measured properties of a generated instance (for per-dimension diagnosis). */
export interface InstanceStats {
  /** Number of hole cells. */
  readonly holes: number;
  /** Number of wall cells. */
  readonly walls: number;
  /** Mean start-goal shortest-path distance. */
  readonly mean_distance: number;
  /**
   * Measured path interaction: the fraction of agent pairs whose individual
   * shortest paths, followed simultaneously, would collide (vertex or edge).
   */
  readonly interaction: number;
  /** Mixture component the instance was drawn from (0 for a single config). */
  readonly component: number;
}

/** One MAPF-FrozenLake instance in JSON form. */
export interface Instance {
  /** Unique id, e.g. `base-12` for a suite or `<config>-<seed>-<index>`. */
  readonly id: string;
  /** {@linkcode configId} of the component it was drawn from (or `imported`). */
  readonly config: string;
  /** Generation seed (with `index`, reproduces the instance). */
  readonly seed: number;
  /** Index within its generation run. */
  readonly index: number;
  /** Columns. */
  readonly width: number;
  /** Rows. */
  readonly height: number;
  /** Rows of cells, top first: `.` free, `H` hole, `#` wall. */
  readonly cells: readonly string[];
  /** Start of each agent, `[row, col]`. */
  readonly starts: readonly (readonly [number, number])[];
  /** Goal of each agent, `[row, col]`. */
  readonly goals: readonly (readonly [number, number])[];
  /** Slip probability. */
  readonly slip: number;
  /** Maximum number of steps. */
  readonly horizon: number;
  /** Collision mode. */
  readonly collision: CollisionMode;
  /** Hole mode. */
  readonly holes: HoleMode;
  /** Reference solution cost, or `null` if none is known. */
  readonly reference: Reference | null;
  /** Measured properties (generated instances). */
  readonly stats?: InstanceStats;
  /** Suite name, for suite instances. */
  readonly suite?: string;
}

/**
 * The compiled typed form of an instance, for stepping, observations and
 * solvers. Cells are indices `row * width + col`.
 */
export interface CompiledInstance {
  /** Columns. */
  readonly width: number;
  /** Rows. */
  readonly height: number;
  /** `width * height`. */
  readonly cellCount: number;
  /** Number of agents. */
  readonly agents: number;
  /** Cell codes ({@linkcode FREE}, {@linkcode HOLE}, {@linkcode WALL}). */
  readonly grid: Uint8Array;
  /** Start cell of each agent. */
  readonly starts: Int32Array;
  /** Goal cell of each agent. */
  readonly goals: Int32Array;
  /** Slip probability. */
  readonly slip: number;
  /** Maximum number of steps. */
  readonly horizon: number;
  /** 0 = `fail`, 1 = `block`. */
  readonly collision: number;
  /** 0 = `lethal`, 1 = `blocked`. */
  readonly holes: number;
  /**
   * Shortest-path distance (moves over free cells) from every cell to each
   * agent's goal: `dist[agent * cellCount + cell]`, `0xffff` if unreachable.
   * Computed once at compile time.
   */
  readonly dist: Uint16Array;
}

/** Collision mode code: a collision ends the episode. */
export const COLLISION_FAIL = 0;
/** Collision mode code: conflicting moves are cancelled. */
export const COLLISION_BLOCK = 1;
/** Hole mode code: entering a hole is a failure. */
export const HOLES_LETHAL = 0;
/** Hole mode code: holes are impassable. */
export const HOLES_BLOCKED = 1;

/** A malformed instance (JSON form); names the field and, for JSON lines, the line. */
export class InstanceError extends TypeError {
  /** Dot path of the offending field. */
  readonly path: string;
  /** 1-based line number when parsing JSON lines. */
  readonly line: number | undefined;
  /** Build from a message, a field path and an optional line number. */
  constructor(message: string, path: string, line?: number) {
    super(
      `${line !== undefined ? `line ${line}: ` : ""}${
        path ? `${path}: ` : ""
      }${message}`,
    );
    this.name = "InstanceError";
    this.path = path;
    this.line = line;
  }
}

function _int(x: unknown, path: string, min: number, max: number): number {
  if (typeof x !== "number" || !Number.isInteger(x) || x < min || x > max) {
    throw new InstanceError(
      `must be an integer in ${min}..${max} (got ${JSON.stringify(x)})`,
      path,
    );
  }
  return x;
}

function _pos(
  x: unknown,
  path: string,
  width: number,
  height: number,
): [number, number] {
  if (!Array.isArray(x) || x.length !== 2) {
    throw new InstanceError(
      `must be [row, col] (got ${JSON.stringify(x)})`,
      path,
    );
  }
  return [
    _int(x[0], `${path}.0`, 0, height - 1),
    _int(x[1], `${path}.1`, 0, width - 1),
  ];
}

/**
 * Check an untrusted value (e.g. parsed JSON) and return it as an
 * {@linkcode Instance}: sizes within 64x64, 1..64 agents, cell characters,
 * positions in range, starts and goals on free cells and pairwise distinct.
 *
 * @throws {InstanceError} naming the offending field.
 */
export function validateInstance(x: unknown): Instance {
  if (typeof x !== "object" || x === null || Array.isArray(x)) {
    throw new InstanceError("an instance must be a JSON object", "");
  }
  const o = x as Record<string, unknown>;
  const width = _int(o.width, "width", 1, 64);
  const height = _int(o.height, "height", 1, 64);
  const cells = _cells(o.cells, width, height);
  const { starts, goals } = _agents(o, cells, width, height);
  const slip = o.slip ?? 0;
  if (typeof slip !== "number" || !(slip >= 0 && slip <= 1)) {
    throw new InstanceError(
      `must be a number in 0..1 (got ${JSON.stringify(o.slip)})`,
      "slip",
    );
  }
  const horizon = _int(o.horizon, "horizon", 1, 65535);
  const collision = o.collision ?? "fail";
  if (collision !== "fail" && collision !== "block") {
    throw new InstanceError(
      `must be "fail" or "block" (got ${JSON.stringify(collision)})`,
      "collision",
    );
  }
  const holes = o.holes ?? "lethal";
  if (holes !== "lethal" && holes !== "blocked") {
    throw new InstanceError(
      `must be "lethal" or "blocked" (got ${JSON.stringify(holes)})`,
      "holes",
    );
  }
  const out: Instance = {
    id: typeof o.id === "string" ? o.id : "",
    config: typeof o.config === "string" ? o.config : "",
    seed: typeof o.seed === "number" ? o.seed : 0,
    index: typeof o.index === "number" ? o.index : 0,
    width,
    height,
    cells,
    starts,
    goals,
    slip,
    horizon,
    collision,
    holes,
    reference: _reference(o.reference),
    ...(o.stats !== undefined ? { stats: o.stats as InstanceStats } : {}),
    ...(typeof o.suite === "string" ? { suite: o.suite } : {}),
  };
  return out;
}

/** `cells`: `height` rows of `width` characters from ".", "H", "#". */
function _cells(x: unknown, width: number, height: number): string[] {
  if (!Array.isArray(x) || x.length !== height) {
    throw new InstanceError(`must be a list of ${height} row strings`, "cells");
  }
  x.forEach((row, r) => {
    if (
      typeof row !== "string" || row.length !== width || !/^[.H#]*$/.test(row)
    ) {
      throw new InstanceError(
        `must be a string of ${width} characters from ".", "H", "#" (got ${
          JSON.stringify(row)
        })`,
        `cells.${r}`,
      );
    }
  });
  return x as string[];
}

/** `starts` and `goals`: one of each per agent, on free cells, pairwise distinct. */
function _agents(
  o: Record<string, unknown>,
  cells: readonly string[],
  width: number,
  height: number,
): { starts: [number, number][]; goals: [number, number][] } {
  if (!Array.isArray(o.starts) || o.starts.length < 1 || o.starts.length > 64) {
    throw new InstanceError(
      "must be a list of 1..64 [row, col] positions",
      "starts",
    );
  }
  if (!Array.isArray(o.goals) || o.goals.length !== o.starts.length) {
    throw new InstanceError(
      `must be a list of ${o.starts.length} positions, one per agent`,
      "goals",
    );
  }
  const starts = o.starts.map((p, i) => _pos(p, `starts.${i}`, width, height));
  const goals = o.goals.map((p, i) => _pos(p, `goals.${i}`, width, height));
  for (const [name, list] of [["starts", starts], ["goals", goals]] as const) {
    const seen = new Map<string, number>();
    list.forEach(([r, c], i) => {
      if (cells[r]![c] !== ".") {
        throw new InstanceError(
          `[${r}, ${c}] is not a free cell`,
          `${name}.${i}`,
        );
      }
      const k = `${r},${c}`;
      const other = seen.get(k);
      if (other !== undefined) {
        throw new InstanceError(
          `[${r}, ${c}] is also ${name}.${other}; ${name} must be pairwise distinct`,
          `${name}.${i}`,
        );
      }
      seen.set(k, i);
    });
  }
  return { starts, goals };
}

/** `reference`: `{ soc, makespan, solver }` or null/absent. */
function _reference(x: unknown): Reference | null {
  if (x === null || x === undefined) return null;
  const ref = x as Record<string, unknown>;
  if (
    typeof ref !== "object" || (ref.solver !== "pp" && ref.solver !== "cbs")
  ) {
    throw new InstanceError(
      'must be { soc, makespan, solver: "pp" | "cbs" } or null',
      "reference",
    );
  }
  return {
    soc: _int(ref.soc, "reference.soc", 0, 1e9),
    makespan: _int(ref.makespan, "reference.makespan", 0, 1e9),
    solver: ref.solver,
  };
}

/**
 * The JSON line of an instance (no trailing newline), with fields in a fixed
 * order so equal instances give byte-identical lines.
 */
export function instanceToJson(inst: Instance): string {
  const ordered: Record<string, unknown> = {
    id: inst.id,
    config: inst.config,
    seed: inst.seed,
    index: inst.index,
    ...(inst.suite !== undefined ? { suite: inst.suite } : {}),
    width: inst.width,
    height: inst.height,
    cells: inst.cells,
    starts: inst.starts,
    goals: inst.goals,
    slip: inst.slip,
    horizon: inst.horizon,
    collision: inst.collision,
    holes: inst.holes,
    reference: inst.reference
      ? {
        soc: inst.reference.soc,
        makespan: inst.reference.makespan,
        solver: inst.reference.solver,
      }
      : null,
    ...(inst.stats !== undefined
      ? {
        stats: {
          holes: inst.stats.holes,
          walls: inst.stats.walls,
          mean_distance: inst.stats.mean_distance,
          interaction: inst.stats.interaction,
          component: inst.stats.component,
        },
      }
      : {}),
  };
  return JSON.stringify(ordered);
}

/** Instances as JSON lines (each line terminated by `\n`). */
export function instancesToJsonLines(instances: readonly Instance[]): string {
  let s = "";
  for (const inst of instances) s += instanceToJson(inst) + "\n";
  return s;
}

/**
 * Parse JSON lines (blank lines ignored) into validated instances.
 *
 * @throws {InstanceError} with the line number of the first bad line.
 */
export function parseInstanceLines(text: string): Instance[] {
  const out: Instance[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (e) {
      throw new InstanceError(
        `not valid JSON (${(e as Error).message})`,
        "",
        i + 1,
      );
    }
    try {
      out.push(validateInstance(json));
    } catch (e) {
      if (e instanceof InstanceError) {
        throw new InstanceError(e.message, "", i + 1);
      }
      throw e;
    }
  }
  return out;
}

/** Cell code of a JSON cell character. */
export function cellCode(ch: string): number {
  return ch === "H" ? HOLE : ch === "#" ? WALL : FREE;
}

/**
 * Compile an instance into its typed form, computing each agent's BFS
 * distance map once.
 */
export function compileInstance(inst: Instance): CompiledInstance {
  const { width, height } = inst;
  const cellCount = width * height;
  const grid = new Uint8Array(cellCount);
  for (let r = 0; r < height; r++) {
    const row = inst.cells[r]!;
    for (let c = 0; c < width; c++) grid[r * width + c] = cellCode(row[c]!);
  }
  const agents = inst.starts.length;
  const starts = new Int32Array(agents);
  const goals = new Int32Array(agents);
  for (let a = 0; a < agents; a++) {
    starts[a] = inst.starts[a]![0] * width + inst.starts[a]![1];
    goals[a] = inst.goals[a]![0] * width + inst.goals[a]![1];
  }
  const dist = new Uint16Array(agents * cellCount);
  const queue = new Int32Array(cellCount);
  for (let a = 0; a < agents; a++) {
    bfsDistances(
      grid,
      width,
      height,
      goals[a]!,
      dist.subarray(a * cellCount, (a + 1) * cellCount),
      queue,
    );
  }
  return {
    width,
    height,
    cellCount,
    agents,
    grid,
    starts,
    goals,
    slip: inst.slip,
    horizon: inst.horizon,
    collision: inst.collision === "block" ? COLLISION_BLOCK : COLLISION_FAIL,
    holes: inst.holes === "blocked" ? HOLES_BLOCKED : HOLES_LETHAL,
    dist,
  };
}

/** Rows of cell characters from a grid of cell codes. */
export function gridToRows(
  grid: Uint8Array,
  width: number,
  height: number,
): string[] {
  const rows: string[] = [];
  for (let r = 0; r < height; r++) {
    let s = "";
    for (let c = 0; c < width; c++) s += CELL_CHARS[grid[r * width + c]!];
    rows.push(s);
  }
  return rows;
}

/** `[row, col]` of a cell index. */
export function cellPos(cell: number, width: number): [number, number] {
  return [Math.floor(cell / width), cell % width];
}
