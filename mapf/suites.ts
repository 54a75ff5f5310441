/**
 * Named, fixed, seeded evaluation suites.
 *
 * Each suite is a configuration; its instances are generated in the suite
 * seed space (see generator.ts: the seed word has its top bit set and the
 * RNG is tagged with the suite name), so no training run, whatever its seed,
 * can draw a suite instance. Every suite has a `validation` split (the
 * instances it always had: what the engineers, thresholds and trainer
 * settings were designed and tuned on) and a `test` split from a disjoint
 * seed space (what results are reported on). The suites cover what the `easy` start preset
 * lacks and what makes agents interact, so a curriculum has something to
 * find: crowding, corridors and bottlenecks, crossing paths, slip, tight
 * horizons, larger maps, dense holes.
 *
 * `paper-grid` is the paper's benchmark grid (paper_grid.ts): 21 cells of
 * agents x map size drawn cell by cell, its count per cell, ids in the
 * benchmark's form (`3ag_3x3_hr0.1_000`) and exact optima as references.
 *
 * @module
 */
import type { AnyEnvConfig } from "../schemas/env_config.ts";
import { parseEnvConfig } from "../schemas/env_config.ts";
import {
  generate,
  type GenerateOptions,
  type GenerationReport,
  type SuiteSplit,
} from "./generator.ts";
import type { Instance } from "./instance.ts";
import {
  generatePaperGrid,
  gridSummaryConfig,
  PAPER_GRID,
  PAPER_GRID_CELLS,
  PAPER_GRID_PER_CELL,
} from "./paper_grid.ts";

/** A benchmark suite. */
export interface Suite {
  /** Suite name (also the instance id prefix). */
  readonly name: string;
  /** What it tests. */
  readonly description: string;
  /** Its configuration (a grid suite: one that stands for its cells, see paper_grid.ts). */
  readonly config: AnyEnvConfig;
  /** Default number of instances (per cell, for a suite with `cells`). */
  readonly count: number;
  /** A grid suite's cells (names like `3ag_3x3`): drawn cell by cell, `count` each. */
  readonly cells?: readonly string[];
}

function _suite(
  name: string,
  description: string,
  config: unknown,
  count = 100,
): Suite {
  return { name, description, config: parseEnvConfig(config), count };
}

function _grid(): Suite {
  return {
    ..._suite(
      PAPER_GRID,
      "the paper's benchmark grid: 3 agents on 3x3..10x10, 4 on 4x4..10x10, 5 on 5x5..10x10, impassable holes, exact optima",
      gridSummaryConfig(),
      PAPER_GRID_PER_CELL,
    ),
    cells: PAPER_GRID_CELLS.map((c) => c.name),
  };
}

/** The built-in suites. */
export const SUITES: Readonly<Record<string, Suite>> = Object.fromEntries(
  [
    _suite(
      "base",
      "plain 8x8 maps, 3 agents, light holes: close to the easy preset",
      {
        preset: "easy",
        agents: 3,
        interaction: 0.5,
        horizon: { factor: 2.5 },
        distance: { min: 2, max: 12 },
      },
    ),
    _suite(
      "crowded",
      "8 agents on 8x8: agents must yield and wait for each other",
      {
        preset: "easy",
        agents: 8,
        hole_density: 0.05,
        interaction: 0.7,
        horizon: { factor: 2.5 },
        distance: { min: 2, max: 10 },
      },
    ),
    _suite(
      "holey",
      "dense clustered holes on 10x10: long detours around lethal regions",
      {
        preset: "easy",
        width: 10,
        height: 10,
        agents: 3,
        hole_density: 0.35,
        hole_clustering: 0.6,
        horizon: { factor: 2.5 },
        distance: { min: 3, max: 16 },
      },
    ),
    _suite("slippery", "slip 0.2 next to holes: keep a safety margin", {
      preset: "easy",
      agents: 3,
      hole_density: 0.15,
      slip: 0.2,
      horizon: { factor: 3 },
      distance: { min: 3, max: 12 },
    }),
    _suite("large", "24x24 maps, 6 agents, long paths", {
      preset: "easy",
      width: 24,
      height: 24,
      agents: 6,
      hole_density: 0.15,
      hole_clustering: 0.3,
      horizon: { factor: 2 },
      distance: { min: 8, max: 36 },
      interaction: 0.5,
    }),
    _suite(
      "corridors",
      "rooms joined by 1-cell doors: bottlenecks shared by 6 agents",
      {
        preset: "easy",
        width: 12,
        height: 12,
        agents: 6,
        hole_density: 0.05,
        walls: 0.05,
        corridors: 1,
        interaction: 0.8,
        horizon: { factor: 2.5 },
        distance: { min: 4, max: 20 },
      },
    ),
    _suite(
      "crossing",
      "agents placed so that their shortest paths cross as much as possible (interaction 1)",
      {
        preset: "easy",
        width: 10,
        height: 10,
        agents: 5,
        hole_density: 0.1,
        interaction: 1,
        horizon: { factor: 2 },
        distance: { min: 4, max: 14 },
      },
    ),
    _suite(
      "tight",
      "horizon 1.25x the reference makespan: little room for waiting or detours",
      {
        preset: "easy",
        width: 10,
        height: 10,
        agents: 4,
        hole_density: 0.1,
        interaction: 0.6,
        horizon: { factor: 1.25 },
        distance: { min: 4, max: 14 },
      },
    ),
    _suite(
      "mini",
      "the paper's benchmark shapes: 3x3/4x4/5x5 with 3/4/5 agents, impassable holes",
      {
        mixture: [
          {
            weight: 1,
            config: {
              width: 3,
              height: 3,
              agents: 3,
              hole_density: 0.1,
              holes: "blocked",
              interaction: 0.5,
              distance: { min: 1, max: 4 },
              horizon: { factor: 2 },
            },
          },
          {
            weight: 1,
            config: {
              width: 4,
              height: 4,
              agents: 4,
              hole_density: 0.1,
              holes: "blocked",
              interaction: 0.5,
              distance: { min: 1, max: 6 },
              horizon: { factor: 2 },
            },
          },
          {
            weight: 1,
            config: {
              width: 5,
              height: 5,
              agents: 5,
              hole_density: 0.1,
              holes: "blocked",
              interaction: 0.5,
              distance: { min: 1, max: 8 },
              horizon: { factor: 2 },
            },
          },
        ],
      },
    ),
    _grid(),
  ].map((s) => [s.name, s]),
);

/** Names of the built-in suites, in a fixed order. */
export const SUITE_NAMES: readonly string[] = Object.keys(SUITES);

/** Look up a suite. @throws {RangeError} naming the known suites. */
export function getSuite(name: string): Suite {
  const s = SUITES[name];
  if (!s) {
    throw new RangeError(
      `unknown suite "${name}"; known suites: ${SUITE_NAMES.join(", ")}`,
    );
  }
  return s;
}

/** Options of {@linkcode generateSuite}. */
export interface GenerateSuiteOptions
  extends
    Partial<Pick<GenerateOptions, "signal" | "onProgress" | "maxAttempts">> {
  /** Number of instances. @default the suite's count */
  count?: number;
  /** Seed within the suite seed space. @default 0 */
  seed?: number;
  /** Which split. @default {"validation"} */
  split?: SuiteSplit;
}

/**
 * Generate a suite's instances (fixed for a given seed and count; for a
 * grid suite, `count` is per cell).
 */
export function generateSuite(
  name: string,
  options: GenerateSuiteOptions = {},
): { instances: Instance[]; report: GenerationReport } {
  const s = getSuite(name);
  if (s.cells) {
    return generatePaperGrid({
      perCell: options.count ?? s.count,
      seed: options.seed ?? 0,
      split: options.split ?? "validation",
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
    });
  }
  return generate(s.config, {
    count: options.count ?? s.count,
    seed: options.seed ?? 0,
    suite: s.name,
    split: options.split ?? "validation",
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
  });
}
