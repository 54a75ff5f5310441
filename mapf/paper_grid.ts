/**
 * The paper's benchmark grid (LARK-Lab/MAPF-FrozenLake-Benchmark, as its
 * project page reports it): 3 agents on square maps 3x3 .. 10x10, 4 agents on
 * 4x4 .. 10x10, 5 agents on 5x5 .. 10x10 (21 cells), 150 instances a cell,
 * holes impassable (hole mode `blocked`), collisions fail the plan, no slip.
 *
 * envsmith's own copy is drawn from a fresh seed space (the generator's suite
 * space tagged `paper-grid/<cell>`, disjoint from every other suite and from
 * training seeds). Ids take the benchmark's form `3ag_3x3_hr0.1_000`: agents,
 * rows x columns, hole ratio, index within the cell. Every instance carries
 * its exact optima in `reference`: `soc` is the least sum-of-costs (CBS) and
 * `makespan` the least makespan (CBS ordered on makespan); the two may come
 * from different plans, and `solver` is `cbs`. An instance whose optima the
 * searches cannot certify within their node limit is skipped (counted as
 * `inexact`), so the next index takes its place. The horizon is 3 times the
 * optimal makespan, as `import --format prompt` sets it.
 *
 * @module
 */
import type { EnvConfigSpec } from "../schemas/env_config.ts";
import { configId, parseEnvConfig } from "../schemas/env_config.ts";
import { exactOptimum, type Optimum } from "./exact_optimum.ts";
import {
  generate,
  type GenerationReport,
  type RejectionCounts,
  type SuiteSplit,
} from "./generator.ts";
import { cellName } from "./grid_cell.ts";
import { compileInstance, type Instance } from "./instance.ts";

/** Name of the grid suite (the `suite` of its instances). */
export const PAPER_GRID = "paper-grid";

/** Hole ratio of the grid's maps (the `hr` of its ids). */
export const PAPER_GRID_HOLE_RATIO = 0.1;

/** Instances per cell, as the paper's values (multiples of 1/150) suggest. */
export const PAPER_GRID_PER_CELL = 150;

/** Horizon as a factor of the optimal makespan. */
export const PAPER_GRID_HORIZON_FACTOR = 3;

/** One cell of the grid: an agent count on a square map. */
export interface GridCell {
  /** `3ag_3x3`: the cell's name (the prefix of its ids). */
  readonly name: string;
  /** Agents. */
  readonly agents: number;
  /** Rows and columns. */
  readonly size: number;
}

/** The 21 cells, by agent count then size. */
export const PAPER_GRID_CELLS: readonly GridCell[] = [3, 4, 5].flatMap((n) =>
  Array.from({ length: 11 - n }, (_, i) => n + i).map((s) => ({
    name: cellName(n, s, s),
    agents: n,
    size: s,
  }))
);

/** The id of instance `index` of a cell: `3ag_3x3_hr0.1_000`. */
export function gridId(
  cell: GridCell,
  index: number,
  holeRatio = PAPER_GRID_HOLE_RATIO,
): string {
  return `${cell.name}_hr${holeRatio}_${String(index).padStart(3, "0")}`;
}

/** The parts of a benchmark id, or `null` if it does not have the form `3ag_3x3_hr0.1_000`. */
export function parseGridId(
  id: string,
): {
  cell: string;
  agents: number;
  rows: number;
  cols: number;
  holeRatio: number;
  index: number;
} | null {
  const m = /^(\d+)ag_(\d+)x(\d+)_hr(\d+(?:\.\d+)?)_(\d+)$/.exec(id);
  if (!m) return null;
  const agents = Number(m[1]), rows = Number(m[2]), cols = Number(m[3]);
  return {
    cell: cellName(agents, rows, cols),
    agents,
    rows,
    cols,
    holeRatio: Number(m[4]),
    index: Number(m[5]),
  };
}

/** The generator configuration of a cell. */
export function cellConfig(cell: GridCell): EnvConfigSpec {
  return {
    width: cell.size,
    height: cell.size,
    agents: cell.agents,
    hole_density: PAPER_GRID_HOLE_RATIO,
    hole_clustering: 0,
    walls: 0,
    corridors: 0,
    slip: 0,
    holes: "blocked",
    collision: "fail",
    interaction: 0.5,
    distance: { min: 1, max: 2 * (cell.size - 1) },
    horizon: { factor: PAPER_GRID_HORIZON_FACTOR },
  } as EnvConfigSpec;
}

/**
 * One configuration that stands for the whole grid where a suite needs one
 * (a mixture has at most 16 components, the grid has 21 cells): its agent
 * counts on the largest map, weighted by their number of cells. The grid
 * itself is drawn cell by cell from {@linkcode cellConfig}.
 */
export function gridSummaryConfig(): EnvConfigSpec {
  return {
    mixture: [3, 4, 5].map((n) => ({
      weight: 11 - n,
      config: cellConfig({ name: cellName(n, 10, 10), agents: n, size: 10 }),
    })),
  } as EnvConfigSpec;
}

/**
 * An instance with its exact optima as reference (and the horizon 3 times
 * the optimal makespan), or `null` when they cannot be certified.
 */
export function withExactReference(inst: Instance): Instance | null {
  const opt: Optimum | null = exactOptimum(compileInstance(inst));
  if (!opt) return null;
  return {
    ...inst,
    horizon: Math.max(1, PAPER_GRID_HORIZON_FACTOR * opt.makespan),
    reference: { soc: opt.soc, makespan: opt.makespan, solver: "cbs" },
  };
}

/** Options of {@linkcode generatePaperGrid}. */
export interface PaperGridOptions {
  /** Instances per cell. @default 150 */
  perCell?: number;
  /** Seed in the grid's seed space. @default 0 */
  seed?: number;
  /** Split (disjoint seed spaces). @default {"validation"} */
  split?: SuiteSplit;
  /** Generator draws per instance before giving up. @default 100 */
  maxAttempts?: number;
  /** Only these cells (names). @default all 21 */
  cells?: readonly string[];
  /** Abort a long run. */
  signal?: AbortSignal;
  /** Called after each instance. */
  onProgress?: (done: number, total: number) => void;
}

/** What generating one cell took. */
export interface GridCellReport {
  /** Cell name. */
  readonly cell: string;
  /** Instances kept. */
  readonly accepted: number;
  /** Generator draws (including its own rejections). */
  readonly attempts: number;
  /** Instances skipped because their optima could not be certified. */
  readonly inexact: number;
  /** Instances whose optimal makespan needs a wait or detour beyond the farthest agent's distance. */
  readonly makespan_above_bound: number;
}

/**
 * Generate the grid: `perCell` instances of each cell, in cell order, each
 * with its exact optima. `report` is the generator's report over the grid
 * (one component per cell; instances whose optima could not be certified
 * count as `unsolved` rejections), `cells` says per cell how many were
 * skipped as inexact and how many need more than the farthest agent's
 * distance.
 *
 * @throws {RangeError} for an unknown cell name.
 * @throws {GenerationError} when a cell cannot produce instances.
 */
export function generatePaperGrid(
  options: PaperGridOptions = {},
): {
  instances: Instance[];
  report: GenerationReport;
  cells: GridCellReport[];
} {
  const perCell = options.perCell ?? PAPER_GRID_PER_CELL;
  const split = options.split ?? "validation";
  const seed = options.seed ?? 0;
  const names = PAPER_GRID_CELLS.map((c) => c.name);
  for (const n of options.cells ?? []) {
    if (!names.includes(n)) {
      throw new RangeError(
        `unknown grid cell "${n}"; cells are ${names.join(", ")}`,
      );
    }
  }
  const cells = options.cells
    ? PAPER_GRID_CELLS.filter((c) => options.cells!.includes(c.name))
    : PAPER_GRID_CELLS;
  const total = perCell * cells.length;
  const instances: Instance[] = [];
  const reports: GridCellReport[] = [];
  const components: GenerationReport["components"][number][] = [];
  const solvers = { pp: 0, cbs: 0 };
  for (const cell of cells) {
    const ci = PAPER_GRID_CELLS.indexOf(cell);
    const config = parseEnvConfig(cellConfig(cell));
    const id = configId(config);
    let attempts = 0, inexact = 0, above = 0, next = 0;
    const rejected: RejectionCounts = {
      space: 0,
      placement: 0,
      unsolved: 0,
      horizon: 0,
    };
    const kept: Instance[] = [];
    while (kept.length < perCell) {
      const want = perCell - kept.length;
      const r = generate(config, {
        count: want,
        seed,
        suite: `${PAPER_GRID}/${cell.name}`,
        split,
        startIndex: next,
        ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      next += want;
      attempts += r.report.attempts;
      for (const k of Object.keys(rejected) as (keyof RejectionCounts)[]) {
        rejected[k] += r.report.rejected[k];
      }
      solvers.pp += r.report.solvers.pp;
      solvers.cbs += r.report.solvers.cbs;
      for (const inst of r.instances) {
        const exact = withExactReference(inst);
        if (!exact) {
          inexact++;
          rejected.unsolved++;
          continue;
        }
        const c = compileInstance(exact);
        let bound = 0;
        for (let a = 0; a < c.agents; a++) {
          bound = Math.max(bound, c.dist[a * c.cellCount + c.starts[a]!]!);
        }
        if (exact.reference!.makespan > bound) above++;
        kept.push({
          ...exact,
          id: gridId(cell, kept.length),
          config: id,
          suite: PAPER_GRID,
          stats: { ...exact.stats!, component: ci },
        });
        options.onProgress?.(instances.length + kept.length, total);
      }
    }
    instances.push(...kept);
    reports.push({
      cell: cell.name,
      accepted: kept.length,
      attempts,
      inexact,
      makespan_above_bound: above,
    });
    components.push({
      component: ci,
      config_id: id,
      weight: 1,
      accepted: kept.length,
      attempts,
      rejected,
      rejection_rate: _rate(attempts - kept.length, attempts),
    });
  }
  const rejected: RejectionCounts = {
    space: 0,
    placement: 0,
    unsolved: 0,
    horizon: 0,
  };
  for (const c of components) {
    for (const k of Object.keys(rejected) as (keyof RejectionCounts)[]) {
      rejected[k] += c.rejected[k];
    }
  }
  const attempts = components.reduce((s, c) => s + c.attempts, 0);
  const m = Math.max(1, instances.length);
  const mean = (f: (i: Instance) => number) =>
    Math.round((instances.reduce((s, i) => s + f(i), 0) / m) * 1000) / 1000;
  const report: GenerationReport = {
    config_id: configId(parseEnvConfig(gridSummaryConfig())),
    seed,
    suite: PAPER_GRID,
    split,
    accepted: instances.length,
    attempts,
    rejected,
    rejection_rate: _rate(attempts - instances.length, attempts),
    components,
    solvers,
    mean: {
      soc: mean((i) => i.reference!.soc),
      makespan: mean((i) => i.reference!.makespan),
      interaction: mean((i) => i.stats?.interaction ?? 0),
    },
  };
  return { instances, report, cells: reports };
}

function _rate(rejected: number, attempts: number): number {
  return attempts === 0 ? 0 : Math.round((rejected / attempts) * 10000) / 10000;
}
