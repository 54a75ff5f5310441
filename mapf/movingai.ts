/**
 * MovingAI benchmark formats (https://movingai.com/benchmarks/formats.html):
 * `.map` grids and `.scen` scenario files, import and export.
 *
 * `.map`: a header (`type octile`, `height H`, `width W`, `map`) and H rows.
 * On import `.`, `G` and `S` are free, `@`, `O` and `T` are walls, `W`
 * (water) is a hole. On export free is `.`, walls `@`, holes `W`.
 *
 * `.scen`: `version 1`, then one line per agent:
 * `bucket  map  width  height  start_x  start_y  goal_x  goal_y  optimal_length`
 * (tab-separated; x is the column, y the row). The first N lines are the N
 * agents. On export the optimal length is the 4-connected shortest-path
 * distance (MovingAI's own files use 8-connected octile lengths; importers
 * ignore the column) and the bucket is `floor(length / 4)`.
 *
 * @module
 */
import {
  compileInstance,
  type Instance,
  validateInstance,
} from "./instance.ts";
import { type InstanceImportOptions, withReference } from "./render_text.ts";

/** A malformed `.map` or `.scen` file; names the file kind and line. */
export class MovingAIError extends SyntaxError {
  /** 1-based line number (0 if not line-specific). */
  readonly line: number;
  /** Build from a message, the file kind and a line number. */
  constructor(message: string, file: "map" | "scen", line: number) {
    super(`${file} file${line > 0 ? ` line ${line}` : ""}: ${message}`);
    this.name = "MovingAIError";
    this.line = line;
  }
}

/** Export an instance's grid as a `.map` file. */
export function exportMap(inst: Instance): string {
  const rows = inst.cells.map((row) =>
    row.replace(/#/g, "@").replace(/H/g, "W")
  );
  return `type octile\nheight ${inst.height}\nwidth ${inst.width}\nmap\n${
    rows.join("\n")
  }\n`;
}

/** Export an instance's agents as a `.scen` file referring to `mapName`. */
export function exportScen(inst: Instance, mapName: string): string {
  const c = compileInstance(inst);
  const lines = ["version 1"];
  for (let a = 0; a < c.agents; a++) {
    const [sr, sc] = inst.starts[a]!;
    const [gr, gc] = inst.goals[a]!;
    const d = c.dist[a * c.cellCount + c.starts[a]!]!;
    lines.push(
      [Math.floor(d / 4), mapName, inst.width, inst.height, sc, sr, gc, gr, d]
        .join("\t"),
    );
  }
  return lines.join("\n") + "\n";
}

/** A parsed `.map` file: size and rows in our cell characters. */
export interface ParsedMap {
  /** Columns. */
  readonly width: number;
  /** Rows. */
  readonly height: number;
  /** Rows of `.`, `H`, `#`. */
  readonly cells: string[];
}

/** Parse a `.map` file (at most 64x64). */
export function parseMap(text: string): ParsedMap {
  const lines = text.split(/\r?\n/);
  let width = -1, height = -1, i = 0;
  for (; i < lines.length; i++) {
    const l = lines[i]!.trim();
    if (l === "map") break;
    const m = /^(type|height|width)\s+(\S+)$/.exec(l);
    if (!m) {
      if (l === "") continue;
      throw new MovingAIError(`unexpected header line "${l}"`, "map", i + 1);
    }
    if (m[1] === "height") height = Number(m[2]);
    if (m[1] === "width") width = Number(m[2]);
  }
  if (i >= lines.length) throw new MovingAIError('no "map" line', "map", 0);
  if (!(width >= 1 && height >= 1)) {
    throw new MovingAIError("missing or bad width/height", "map", 0);
  }
  if (width > 64 || height > 64) {
    throw new MovingAIError(
      `${width}x${height} is larger than the 64x64 instances support`,
      "map",
      0,
    );
  }
  const cells: string[] = [];
  for (let r = 0; r < height; r++) {
    const line = lines[i + 1 + r];
    if (line === undefined) {
      throw new MovingAIError(`row ${r} is missing`, "map", i + 2 + r);
    }
    const row = line.replace(/\r$/, "");
    if (row.length < width) {
      throw new MovingAIError(
        `row ${r} has ${row.length} cells; expected ${width}`,
        "map",
        i + 2 + r,
      );
    }
    let out = "";
    for (let c = 0; c < width; c++) {
      const ch = row[c]!;
      if (ch === "." || ch === "G" || ch === "S") out += ".";
      else if (ch === "@" || ch === "O" || ch === "T") out += "#";
      else if (ch === "W") out += "H";
      else {throw new MovingAIError(
          `unknown terrain "${ch}" at (${r}, ${c})`,
          "map",
          i + 2 + r,
        );}
    }
    cells.push(out);
  }
  return { width, height, cells };
}

/** Options of {@linkcode importMovingAI} (`id` defaults to "movingai"). */
export interface ImportMovingAIOptions extends InstanceImportOptions {
  /** Use the first `agents` scenario lines. @default all */
  agents?: number;
}

/** Build an instance from a `.map` and a `.scen` file. */
export function importMovingAI(
  mapText: string,
  scenText: string,
  options: ImportMovingAIOptions = {},
): Instance {
  const map = parseMap(mapText);
  const lines = scenText.split(/\r?\n/);
  const starts: [number, number][] = [];
  const goals: [number, number][] = [];
  const limit = options.agents ?? 64;
  for (let i = 0; i < lines.length && starts.length < limit; i++) {
    const l = lines[i]!.trim();
    if (l === "" || /^version/i.test(l)) continue;
    const f = l.split(/\t| {2,}/);
    if (f.length < 8) {
      throw new MovingAIError(
        `expected 9 tab-separated fields, got ${f.length}`,
        "scen",
        i + 1,
      );
    }
    const [sx, sy, gx, gy] = [f[4], f[5], f[6], f[7]].map(Number) as [
      number,
      number,
      number,
      number,
    ];
    for (
      const [v, name, max] of [
        [sx, "start_x", map.width],
        [sy, "start_y", map.height],
        [gx, "goal_x", map.width],
        [gy, "goal_y", map.height],
      ] as const
    ) {
      if (!Number.isInteger(v) || v < 0 || v >= max) {
        throw new MovingAIError(
          `${name} ${v} is outside the map`,
          "scen",
          i + 1,
        );
      }
    }
    starts.push([sy, sx]);
    goals.push([gy, gx]);
  }
  if (starts.length === 0) throw new MovingAIError("no agents", "scen", 0);
  const inst: Instance = validateInstance({
    id: options.id ?? "movingai",
    config: "imported",
    seed: 0,
    index: 0,
    width: map.width,
    height: map.height,
    cells: map.cells,
    starts,
    goals,
    slip: options.slip ?? 0,
    horizon: options.horizonSteps ?? 4 * (map.width + map.height),
    collision: options.collision ?? "fail",
    holes: options.holes ?? "blocked",
    reference: null,
  });
  return options.solve === false
    ? inst
    : withReference(inst, options.horizonFactor ?? 3, options.horizonSteps);
}
