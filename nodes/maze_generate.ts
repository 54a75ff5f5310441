/**
 * The `maze.generate` node kind: mazes of the maze family, generated from a
 * configuration or taken from a suite.
 *
 * ```yaml
 * envs:  { kind: maze.generate, with: { config: { preset: medium }, count: 512, seed: $seed, stream: $stage } }
 * bench: { kind: maze.generate, with: { suite: heldout } }
 * ```
 *
 * Parameters: `config` (a maze configuration, see
 * `families/maze/config.ts`, or `{ preset: easy | medium | hard }`),
 * or the level set of a `plr-stage`/`accel-stage` redesign on family maze
 * (its buffer: `count` mazes drawn by the replay probabilities),
 * `count` (default 256), `seed` (default the node's seed), `stream` (mixed
 * into the seed, e.g. the stage), or instead `suite` (`heldout`: the named
 * test mazes; `validation`: `count` generated validation mazes). Value:
 * `{ mazes: <blob of JSON lines>, count, family: "maze" }`.
 *
 * @module
 */
import * as v from "valibot";
import type { NodeKind } from "@envsmith/engine/kind";
import {
  MAZE_PRESETS,
  type MazeConfig,
  MazeConfigSchema,
} from "../families/maze/config.ts";
import { mazeFamily, validationMazes } from "../families/maze/family.ts";
import type { Maze } from "../families/maze/maze.ts";
import { drawFamilyLevels, readFamilyLevelSet } from "./family_level_set.ts";
import { generateMazes } from "../families/maze/generate.ts";
import { testMazes } from "../families/maze/test_mazes.ts";
import { MazeInputError, writeMazes } from "./maze_io.ts";

const u32 = v.pipe(
  v.number(),
  v.integer(),
  v.minValue(0),
  v.maxValue(0xffffffff),
);

/** Parameters of `maze.generate`. */
export const MazeGenerateParamsSchema = v.strictObject({
  config: v.optional(
    v.union([
      v.strictObject({ preset: v.picklist(Object.keys(MAZE_PRESETS)) }),
      MazeConfigSchema,
      // the level set of a plr-stage or accel-stage redesign on family maze
      v.looseObject({
        level_set: v.looseObject({ family: v.literal("maze") }),
      }),
    ]),
  ),
  suite: v.optional(v.picklist(["heldout", "validation"])),
  count: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100_000)),
  ),
  seed: v.optional(u32),
  stream: v.optional(u32),
});

/** The `maze.generate` kind. */
export const kind: NodeKind<v.InferOutput<typeof MazeGenerateParamsSchema>> = {
  name: "maze.generate",
  description:
    "Mazes of the maze family from a configuration, or a suite (heldout, validation)",
  params: MazeGenerateParamsSchema,
  paramDocs: {
    config:
      "a maze configuration (size, walls.density, goal.min_distance/max_distance, max_steps) or { preset: easy | medium | hard }",
    suite:
      "heldout (the named test mazes of the literature) or validation, instead of config",
    count: "mazes to generate (default 256; validation: default 100)",
    seed: "generator seed (default: the node's seed)",
    stream: "mixed into the seed (e.g. $stage), so stages draw different mazes",
  },
  module: import.meta.url,
  async run(p, ctx) {
    if ((p.config === undefined) === (p.suite === undefined)) {
      throw new MazeInputError(
        "maze.generate: give either config or suite (heldout, validation)",
      );
    }
    let mazes;
    if (p.config !== undefined && "level_set" in p.config) {
      // a plr/accel buffer: `count` mazes drawn by their replay probabilities
      const set = await readFamilyLevelSet(
        mazeFamily,
        p.config,
        ctx.readBlob,
      );
      const seed =
        ((p.seed ?? ctx.seed) ^ Math.imul(p.stream ?? 0, 0x9e3779b1)) >>> 0;
      mazes = drawFamilyLevels(
        set.levels,
        set.replay,
        p.count ?? 256,
        seed,
      ) as Maze[];
      ctx.log(
        `${mazes.length} mazes replayed from a buffer of ${set.levels.length} levels`,
      );
      return {
        value: await writeMazes(mazes, ctx),
        report: { count: mazes.length, buffer: set.levels.length },
      };
    }
    if (p.suite === "heldout") mazes = testMazes();
    else if (p.suite === "validation") mazes = validationMazes(p.count ?? 100);
    else {
      const c = "preset" in p.config!
        ? MAZE_PRESETS[p.config.preset]!
        : p.config as MazeConfig;
      const seed =
        ((p.seed ?? ctx.seed) ^ Math.imul(p.stream ?? 0, 0x9e3779b1)) >>> 0;
      mazes = generateMazes(c, seed, p.count ?? 256);
    }
    ctx.log(`${mazes.length} mazes`);
    return {
      value: await writeMazes(mazes, ctx),
      report: { count: mazes.length },
    };
  },
};
