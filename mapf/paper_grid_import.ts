/**
 * The paper's benchmark file (LARK-Lab/MAPF-FrozenLake-Benchmark: one record
 * per instance, `{ sample_id, text }`, the prompt text) read as the
 * `paper-grid` suite: the same ids, cells, suite name, hole and collision
 * modes and exact optima as envsmith's own copy (paper_grid.ts), so the two
 * give tables of the same shape.
 *
 * Every record is checked before anything is returned: its id has the
 * benchmark's form and names a cell of the grid, no id repeats, its text
 * parses as a benchmark prompt showing the map its id names (agents, rows,
 * columns), and the map has a collision-free plan whose optima the exact
 * searches certify. Then every cell of the grid must have a record. The
 * first problem is one {@linkcode GridImportError} naming the record (its
 * line and id) and the field; nothing is returned half-imported.
 *
 * @module
 */
import { cellOf } from "./grid_cell.ts";
import type { Instance } from "./instance.ts";
import { InstanceError } from "./instance.ts";
import {
  PAPER_GRID,
  PAPER_GRID_CELLS,
  parseGridId,
  withExactReference,
} from "./paper_grid.ts";
import { parsePrompt, PromptParseError } from "./render_text.ts";

/** A benchmark record that cannot join the grid; names the record and the field. */
export class GridImportError extends SyntaxError {
  /** 1-based line of the record (0 for the file as a whole). */
  readonly line: number;
  /** The field at fault (`sample_id`, `text`), or `""` for the file. */
  readonly field: string;
  /** Build from the record's line, its id (if known), the field and what is wrong. */
  constructor(line: number, id: string | null, field: string, message: string) {
    super(
      line > 0
        ? `line ${line}${id !== null ? ` (${id})` : ""}: ${field}: ${message}`
        : message,
    );
    this.name = "GridImportError";
    this.line = line;
    this.field = field;
  }
}

/** One record of a benchmark file. */
export interface GridRecord {
  /** 1-based line in the file. */
  readonly line: number;
  /** `sample_id` (or `id`). */
  readonly id: unknown;
  /** The prompt text. */
  readonly text: unknown;
}

/**
 * The records as `paper-grid` instances, in the file's order.
 *
 * @throws {GridImportError} for the first record that cannot join the grid,
 *   or for cells with no record.
 */
export function importGridRecords(records: readonly GridRecord[]): Instance[] {
  const cells = new Map(PAPER_GRID_CELLS.map((c) => [c.name, c]));
  const seen = new Map<string, number>();
  const out: Instance[] = [];
  for (const r of records) {
    if (typeof r.id !== "string") {
      throw new GridImportError(
        r.line,
        null,
        "sample_id",
        "missing; every record needs its benchmark id, e.g. 3ag_3x3_hr0.1_000",
      );
    }
    const id = r.id;
    const parts = parseGridId(id);
    if (!parts) {
      throw new GridImportError(
        r.line,
        id,
        "sample_id",
        `"${id}" is not a benchmark id like 3ag_3x3_hr0.1_000 (agents, rows x columns, hole ratio, index)`,
      );
    }
    if (!cells.has(parts.cell)) {
      throw new GridImportError(
        r.line,
        id,
        "sample_id",
        `cell ${parts.cell} is not in the grid (3 agents on 3x3..10x10, 4 on 4x4..10x10, 5 on 5x5..10x10)`,
      );
    }
    const before = seen.get(id);
    if (before !== undefined) {
      throw new GridImportError(
        r.line,
        id,
        "sample_id",
        `repeats the id of line ${before}`,
      );
    }
    seen.set(id, r.line);
    if (typeof r.text !== "string") {
      throw new GridImportError(r.line, id, "text", "missing or not a string");
    }
    let inst: Instance;
    try {
      inst = parsePrompt(r.text, {
        id,
        holes: "blocked",
        collision: "fail",
        solve: false,
      });
    } catch (e) {
      if (e instanceof PromptParseError || e instanceof InstanceError) {
        throw new GridImportError(r.line, id, "text", e.message);
      }
      throw e;
    }
    if (cellOf(inst) !== parts.cell) {
      throw new GridImportError(
        r.line,
        id,
        "text",
        `the prompt shows ${inst.starts.length} agents on ${inst.height}x${inst.width} (${
          cellOf(inst)
        }), but the id names ${parts.cell}`,
      );
    }
    const exact = withExactReference(inst);
    if (!exact) {
      throw new GridImportError(
        r.line,
        id,
        "text",
        "no collision-free plan with certified optima exists for this map (agents walled in, or the optimum searches gave up): it is not an instance the grid's generator makes",
      );
    }
    out.push({
      ...exact,
      config: "imported",
      index: parts.index,
      suite: PAPER_GRID,
    });
  }
  const have = new Set(out.map(cellOf));
  const missing = PAPER_GRID_CELLS.filter((c) => !have.has(c.name)).map((c) =>
    c.name
  );
  if (missing.length > 0) {
    throw new GridImportError(
      0,
      null,
      "",
      `cells with no record: ${missing.join(", ")} (the grid has 21 cells; ${
        21 - missing.length
      } have records)`,
    );
  }
  return out;
}
