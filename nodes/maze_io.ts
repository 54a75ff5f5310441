/**
 * Shared plumbing of the maze node kinds (`maze.generate`, `maze.train`,
 * `maze.evaluate`): the mazes value (a blob of JSON lines, see
 * `families/maze/maze_json.ts`) and the maze policy value (an envsmith ONNX
 * checkpoint whose `envsmith.env` names the maze family).
 *
 * @module
 */
import * as v from "valibot";
import type { BlobRef, Json, NodeContext } from "@envsmith/engine/kind";
import type { Maze } from "../families/maze/maze.ts";
import { mazeLines, parseMazeLines } from "../families/maze/maze_json.ts";
import {
  type Checkpoint,
  loadCheckpoint,
  saveCheckpoint,
} from "../policy/checkpoint.ts";

/** Media type of ONNX blobs (as `policy_io.ts`'s, which would bring MAPF code into the maze kinds' digests). */
const ONNX_MEDIA = "application/onnx";

/** Media type of maze blobs. */
export const MAZES_MEDIA = "application/x-ndjson; family=maze";

/** A blob reference as a node value carries it. */
export const BlobRefSchema = v.looseObject({
  $blob: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
  size: v.number(),
  media: v.string(),
});

/** The value of `maze.generate`. */
export const MazesValueSchema = v.looseObject({
  mazes: BlobRefSchema,
  count: v.number(),
});

/** The value of `maze.train` (and what `maze.evaluate` reads). */
export const MazePolicyValueSchema = v.looseObject({
  onnx: BlobRefSchema,
  family: v.literal("maze"),
});

/** A maze input that is not what it should be. */
export class MazeInputError extends TypeError {
  /** One line naming the parameter and the fix. */
  constructor(message: string) {
    super(message);
    this.name = "MazeInputError";
  }
}

/** Store mazes; the `maze.generate` value. */
export async function writeMazes(
  mazes: readonly Maze[],
  ctx: Pick<NodeContext, "writeBlob">,
): Promise<{ [k: string]: Json }> {
  const ref = await ctx.writeBlob(
    new TextEncoder().encode(mazeLines(mazes)),
    MAZES_MEDIA,
  );
  return {
    mazes: { $blob: ref.$blob, size: ref.size, media: ref.media },
    count: mazes.length,
    family: "maze",
  };
}

/** The mazes of a `maze.generate` value. */
export async function readMazes(
  value: v.InferOutput<typeof MazesValueSchema>,
  ctx: Pick<NodeContext, "readBlob">,
): Promise<Maze[]> {
  const bytes = await ctx.readBlob(value.mazes as BlobRef);
  return parseMazeLines(new TextDecoder().decode(bytes));
}

/** Store a maze checkpoint; the `maze.train` value. */
export async function writeMazePolicy(
  ck: Checkpoint,
  ctx: Pick<NodeContext, "writeBlob">,
): Promise<{ [k: string]: Json }> {
  const ref = await ctx.writeBlob(saveCheckpoint(ck), ONNX_MEDIA);
  return {
    onnx: { $blob: ref.$blob, size: ref.size, media: ref.media },
    family: "maze",
    hidden: [...ck.net.spec.hidden],
    updates: ck.counters.updates,
    samples: ck.counters.samples,
    episodes: ck.counters.episodes,
  };
}

/** The checkpoint of a maze policy value; refuses another family's network. */
export async function readMazePolicy(
  value: v.InferOutput<typeof MazePolicyValueSchema>,
  ctx: Pick<NodeContext, "readBlob">,
): Promise<Checkpoint> {
  const ck = loadCheckpoint(
    await ctx.readBlob(value.onnx as BlobRef),
    "policy",
  );
  if (ck.env?.family !== "maze") {
    throw new MazeInputError(
      "policy: not a maze policy (give a maze.train value, or leave policy out for a fresh one)",
    );
  }
  return ck;
}
