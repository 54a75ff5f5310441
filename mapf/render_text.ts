/**
 * The text prompt format of the paper's public benchmark
 * (LARK-Lab/MAPF-FrozenLake-Benchmark), its parser, and a plan format.
 *
 * ```
 * You are a multi-agent path planning expert. There is a 3x3 frozen lake map with 3 agents:
 * a s g
 * G S F
 * A F F
 * Legend:
 * S/s/A/B/C: Start positions for agents 0/1/2/3/4
 * G/g/a/b/c: Goal positions for agents 0/1/2/3/4
 * F: Frozen surface (passable)
 * H: Hole (impassable)
 * Agent 0 needs to go from (1, 1) to (1, 0).
 * Agent 1 needs to go from (0, 1) to (0, 2).
 * Agent 2 needs to go from (2, 0) to (0, 0).
 * ```
 *
 * `RxC` is rows x columns; positions are `(row, col)`, 0-based; cells are
 * separated by single spaces. After the agent lines comes an instruction
 * block of ours (rules and the answer format {@linkcode parsePlanText}
 * reads); pass `instructions: false` for the bare benchmark prompt, or your
 * own text.
 *
 * ## Beyond 5 agents (our extension)
 * Agents 5..23 take the letters `D E I J K L M N O P Q R T U V W X Y Z` (the
 * alphabet without `A B C`, already used, and `F G H S`, which mean
 * something else): uppercase for the start, lowercase for the goal. Agents
 * from 24 on use the tokens `S24` / `G24` (start / goal of agent 24). The
 * legend lists the extra letters. Walls (our addition) are `#`, listed in the
 * legend only when the map has one.
 *
 * @module
 */
import {
  compileInstance,
  type Instance,
  validateInstance,
} from "./instance.ts";
import { solve } from "./solve.ts";
import { ACTION_LETTERS } from "./grid.ts";

const EXTRA = "DEIJKLMNOPQRTUVWXYZ";
const FIRST_STARTS = ["S", "s", "A", "B", "C"];
const FIRST_GOALS = ["G", "g", "a", "b", "c"];

/** The start token of agent `a`. */
export function startToken(a: number): string {
  if (a < 5) return FIRST_STARTS[a]!;
  if (a < 5 + EXTRA.length) return EXTRA[a - 5]!;
  return `S${a}`;
}

/** The goal token of agent `a`. */
export function goalToken(a: number): string {
  if (a < 5) return FIRST_GOALS[a]!;
  if (a < 5 + EXTRA.length) return EXTRA[a - 5]!.toLowerCase();
  return `G${a}`;
}

/** Decode a map token: `{ kind: "start" | "goal", agent }`, a cell kind, or `null`. */
export function decodeToken(
  tok: string,
): { kind: "start" | "goal"; agent: number } | {
  kind: "free" | "hole" | "wall";
} | null {
  if (tok === "F") return { kind: "free" };
  if (tok === "H") return { kind: "hole" };
  if (tok === "#") return { kind: "wall" };
  let i = FIRST_STARTS.indexOf(tok);
  if (i >= 0) return { kind: "start", agent: i };
  i = FIRST_GOALS.indexOf(tok);
  if (i >= 0) return { kind: "goal", agent: i };
  if (tok.length === 1) {
    i = EXTRA.indexOf(tok);
    if (i >= 0) return { kind: "start", agent: 5 + i };
    i = EXTRA.toLowerCase().indexOf(tok);
    if (i >= 0) return { kind: "goal", agent: 5 + i };
  }
  const m = /^([SG])(\d+)$/.exec(tok);
  if (m && Number(m[2]) >= 5 + EXTRA.length) {
    return { kind: m[1] === "S" ? "start" : "goal", agent: Number(m[2]) };
  }
  return null;
}

/** Options of {@linkcode renderPrompt}. */
export interface RenderPromptOptions {
  /**
   * Text after the agent lines: `false` for none (the bare benchmark
   * prompt), a string of your own, or `undefined` for
   * {@linkcode defaultInstructions}.
   */
  instructions?: string | false;
}

/** Our rules and answer format, stated for an instance (slip and horizon included). */
export function defaultInstructions(inst: Instance): string {
  const lines = [
    "Rules: all agents move at the same time, one step per time step: U (up, row - 1), D (down, row + 1), L (left, col - 1), R (right, col + 1) or S (stay).",
    inst.holes === "lethal"
      ? "An agent that enters a hole falls in and the episode fails."
      : "Holes cannot be entered.",
    "Two agents must never be in the same cell at the same time, and must never swap cells." +
    (inst.collision === "fail"
      ? " A collision fails the episode."
      : " Colliding moves are cancelled."),
    "A move off the map leaves the agent where it is. An agent that reaches its goal stays there.",
  ];
  if (inst.slip > 0) {
    lines.push(
      `The ice is slippery: each move goes to one of the two perpendicular directions with probability ${inst.slip}.`,
    );
  }
  lines.push(`All agents must be on their goals within ${inst.horizon} steps.`);
  lines.push(
    'Answer with one line per agent listing its moves, for example "Agent 0: R R D S".',
  );
  return lines.join("\n");
}

/**
 * Render an instance as the paper's benchmark prompt.
 *
 * @throws {RangeError} if a start and a goal share a cell (the format has one token per cell).
 */
export function renderPrompt(
  inst: Instance,
  options: RenderPromptOptions = {},
): string {
  const n = inst.starts.length;
  const tokens = inst.cells.map((row) =>
    [...row].map((ch) => (ch === "." ? "F" : ch))
  );
  let walls = false;
  for (const row of inst.cells) if (row.includes("#")) walls = true;
  inst.starts.forEach(([r, c], a) => (tokens[r]![c] = startToken(a)));
  inst.goals.forEach(([r, c], a) => {
    const cur = tokens[r]![c]!;
    if (cur !== "F") {
      throw new RangeError(
        `goal of agent ${a} at (${r}, ${c}) shares its cell with ${cur}; the text format cannot show both`,
      );
    }
    tokens[r]![c] = goalToken(a);
  });
  const out: string[] = [
    `You are a multi-agent path planning expert. There is a ${inst.height}x${inst.width} frozen lake map with ${n} ${
      n === 1 ? "agent" : "agents"
    }:`,
    ...tokens.map((row) => row.join(" ")),
    "Legend:",
    "S/s/A/B/C: Start positions for agents 0/1/2/3/4",
    "G/g/a/b/c: Goal positions for agents 0/1/2/3/4",
  ];
  if (n > 5) {
    const k = Math.min(n, 5 + EXTRA.length);
    const ids = Array.from({ length: k - 5 }, (_, i) => 5 + i);
    out.push(
      `${ids.map(startToken).join("/")}: Start positions for agents ${
        ids.join("/")
      }`,
    );
    out.push(
      `${ids.map(goalToken).join("/")}: Goal positions for agents ${
        ids.join("/")
      }`,
    );
    if (n > 5 + EXTRA.length) {
      out.push(
        `Sk/Gk: Start/goal positions for agent k (k >= ${5 + EXTRA.length})`,
      );
    }
  }
  out.push("F: Frozen surface (passable)");
  out.push("H: Hole (impassable)");
  if (walls) out.push("#: Wall (impassable)");
  for (let a = 0; a < n; a++) {
    const [sr, sc] = inst.starts[a]!;
    const [gr, gc] = inst.goals[a]!;
    out.push(`Agent ${a} needs to go from (${sr}, ${sc}) to (${gr}, ${gc}).`);
  }
  const instructions = options.instructions === undefined
    ? defaultInstructions(inst)
    : options.instructions;
  if (instructions) out.push(instructions);
  return out.join("\n") + "\n";
}

/** A prompt that cannot be parsed; names the line. */
export class PromptParseError extends SyntaxError {
  /** 1-based line number (0 if not line-specific). */
  readonly line: number;
  /** Build from a message and a line number. */
  constructor(message: string, line: number) {
    super(line > 0 ? `line ${line}: ${message}` : message);
    this.name = "PromptParseError";
    this.line = line;
  }
}

/** The options an importer of instances from another format takes. */
export interface InstanceImportOptions {
  /** Id of the instance. */
  id?: string;
  /** Slip of the instance. @default 0 */
  slip?: number;
  /** Collision mode. @default "fail" */
  collision?: "fail" | "block";
  /** Hole mode; the benchmarks call holes impassable. @default "blocked" */
  holes?: "lethal" | "blocked";
  /** Horizon as a factor of the reference makespan. @default 3 */
  horizonFactor?: number;
  /** Absolute horizon (overrides `horizonFactor`). */
  horizonSteps?: number;
  /** Compute the reference with the solvers. @default true */
  solve?: boolean;
}

/**
 * Options of {@linkcode parsePrompt}: `id` defaults to "imported"; the
 * prompt does not say the slip; the horizon without a solved reference is
 * `4 * (rows + cols)`.
 */
export type ParsePromptOptions = InstanceImportOptions;

/**
 * Parse a benchmark prompt (ours or the paper's; text before the header such
 * as `Question:` and after the agent lines is ignored) into an instance.
 * The agent lines are checked against the map. The reference is computed
 * with the solvers (`null` if none solves it).
 *
 * @throws {PromptParseError} naming the line that is wrong.
 */
export function parsePrompt(
  text: string,
  options: ParsePromptOptions = {},
): Instance {
  const lines = text.split(/\r?\n/);
  const header =
    /There is a (\d+)\s*x\s*(\d+) frozen lake map with (\d+) agents?:/;
  let h = -1;
  let m: RegExpExecArray | null = null;
  for (let i = 0; i < lines.length; i++) {
    m = header.exec(lines[i]!);
    if (m) {
      h = i;
      break;
    }
  }
  if (!m || h < 0) {
    throw new PromptParseError(
      'no header "There is a RxC frozen lake map with N agents:" found',
      0,
    );
  }
  const rows = Number(m[1]), cols = Number(m[2]), n = Number(m[3]);
  if (rows < 1 || rows > 64 || cols < 1 || cols > 64) {
    throw new PromptParseError(
      `map size ${rows}x${cols} is outside 1..64`,
      h + 1,
    );
  }
  if (n < 1 || n > 64) {
    throw new PromptParseError(`agent count ${n} is outside 1..64`, h + 1);
  }
  const cells: string[] = [];
  const starts: ([number, number] | undefined)[] = new Array(n);
  const goals: ([number, number] | undefined)[] = new Array(n);
  let li = h + 1;
  for (let r = 0; r < rows; r++, li++) {
    while (li < lines.length && lines[li]!.trim() === "") li++;
    if (li >= lines.length) {
      throw new PromptParseError(`map row ${r} is missing`, li + 1);
    }
    const toks = lines[li]!.trim().split(/\s+/);
    if (toks.length !== cols) {
      throw new PromptParseError(
        `map row ${r} has ${toks.length} cells; expected ${cols}`,
        li + 1,
      );
    }
    let row = "";
    toks.forEach((tok, c) => {
      const d = decodeToken(tok);
      if (!d) {
        throw new PromptParseError(
          `unknown map token "${tok}" at (${r}, ${c})`,
          li + 1,
        );
      }
      if (d.kind === "hole") row += "H";
      else if (d.kind === "wall") row += "#";
      else {
        row += ".";
        if (d.kind === "start" || d.kind === "goal") {
          if (d.agent >= n) {
            throw new PromptParseError(
              `token "${tok}" names agent ${d.agent}, but the map has ${n} agents`,
              li + 1,
            );
          }
          const list = d.kind === "start" ? starts : goals;
          if (list[d.agent]) {
            throw new PromptParseError(
              `agent ${d.agent} has two ${d.kind}s`,
              li + 1,
            );
          }
          list[d.agent] = [r, c];
        }
      }
    });
    cells.push(row);
  }
  for (let a = 0; a < n; a++) {
    if (!starts[a]) {
      throw new PromptParseError(`agent ${a} has no start on the map`, 0);
    }
    if (!goals[a]) {
      throw new PromptParseError(`agent ${a} has no goal on the map`, 0);
    }
  }
  const agentLine =
    /Agent (\d+) needs to go from \((\d+),\s*(\d+)\) to \((\d+),\s*(\d+)\)/;
  for (; li < lines.length; li++) {
    const am = agentLine.exec(lines[li]!);
    if (!am) continue;
    const a = Number(am[1]);
    const s = [Number(am[2]), Number(am[3])],
      g = [Number(am[4]), Number(am[5])];
    if (a >= n) {
      throw new PromptParseError(
        `agent ${a} is not on the map (${n} agents)`,
        li + 1,
      );
    }
    if (
      s[0] !== starts[a]![0] || s[1] !== starts[a]![1] ||
      g[0] !== goals[a]![0] || g[1] !== goals[a]![1]
    ) {
      throw new PromptParseError(
        `agent ${a} goes from (${s.join(", ")}) to (${
          g.join(", ")
        }) here, but the map shows (${starts[a]!.join(", ")}) to (${
          goals[a]!.join(", ")
        })`,
        li + 1,
      );
    }
  }
  const base: Instance = validateInstance({
    id: options.id ?? "imported",
    config: "imported",
    seed: 0,
    index: 0,
    width: cols,
    height: rows,
    cells,
    starts: starts as [number, number][],
    goals: goals as [number, number][],
    slip: options.slip ?? 0,
    horizon: options.horizonSteps ?? 4 * (rows + cols),
    collision: options.collision ?? "fail",
    holes: options.holes ?? "blocked",
    reference: null,
  });
  if (options.solve === false) return base;
  return withReference(base, options.horizonFactor ?? 3, options.horizonSteps);
}

/**
 * Compute an instance's reference with the solvers and set its horizon to
 * `ceil(factor * makespan)` (or `steps`); unchanged if no solver solves it.
 */
export function withReference(
  inst: Instance,
  factor = 3,
  steps?: number,
): Instance {
  const sol = solve(compileInstance(inst));
  if (!sol) return inst;
  return {
    ...inst,
    horizon: steps ?? Math.max(1, Math.ceil(factor * sol.makespan - 1e-9)),
    reference: { soc: sol.soc, makespan: sol.makespan, solver: sol.solver },
  };
}

/** A plan text that cannot be parsed (an `invalid_plan` outcome, not a crash). */
export class PlanParseError extends SyntaxError {
  /** Build from a message. */
  constructor(message: string) {
    super(message);
    this.name = "PlanParseError";
  }
}

/**
 * Parse the answer format of {@linkcode defaultInstructions}: one line per
 * agent, `Agent k: U D L R S ...` (letters may be separated by spaces or
 * commas; words `up/down/left/right/stay` are accepted too; other lines are
 * ignored; the last line for an agent wins). Returns `plan[agent][t]` actions.
 *
 * @throws {PlanParseError} if an agent has no line or a move is unknown.
 */
export function parsePlanText(text: string, agents: number): number[][] {
  const plan: (number[] | undefined)[] = new Array(agents);
  const words: Record<string, number> = {
    stay: 0,
    up: 1,
    down: 2,
    left: 3,
    right: 4,
    wait: 0,
  };
  for (const line of text.split(/\r?\n/)) {
    const m = /^\W*Agent\s+(\d+)\s*[:\-]\s*(.*)$/i.exec(line.trim());
    if (!m) continue;
    const a = Number(m[1]);
    if (a >= agents) {
      throw new PlanParseError(
        `plan names agent ${a}, but there are ${agents}`,
      );
    }
    const toks = m[2]!.replace(/[\[\]"'.]/g, " ").split(/[\s,;]+/).filter((t) =>
      t !== ""
    );
    const acts: number[] = [];
    for (const tok of toks) {
      const up = tok.toUpperCase();
      const i = ACTION_LETTERS.indexOf(up);
      if (i >= 0 && tok.length === 1) acts.push(i);
      else if (tok.toLowerCase() in words) acts.push(words[tok.toLowerCase()]!);
      else {throw new PlanParseError(
          `agent ${a}: unknown move "${tok}" (use U, D, L, R, S)`,
        );}
    }
    plan[a] = acts;
  }
  for (let a = 0; a < agents; a++) {
    if (!plan[a]) {
      throw new PlanParseError(`no line "Agent ${a}: ..." in the plan`);
    }
  }
  return plan as number[][];
}
