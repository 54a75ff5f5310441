/**
 * What `lm.init` and `train.lm` store: the checkpoint directory the trainer
 * wrote (one blob per file), its GGUF export (a file output: `$node.gguf`
 * is a path for `policy: { llm: { gguf } }` and the llm engineer), and the
 * training curve.
 *
 * @module
 */
import { join } from "node:path";
import type { Json, NodeContext } from "@envsmith/engine/kind";
import {
  checkCheckpointDir,
  GGUF_MEDIA,
  storeCheckpoint,
} from "./lm_checkpoint.ts";
import { type LmDevice, runTrainer } from "./lm_trainer.ts";

/** The `files` declaration of the LM kinds. */
export const LM_FILES: Readonly<Record<string, string>> = {
  gguf:
    "the checkpoint as a GGUF file (llama.cpp): give it to policy: { llm: { gguf: $node.gguf } } or engineer: { name: llm, llm: { gguf: $node.gguf } }",
};

/**
 * Exports `dir` to GGUF (of `ggufType`, f32 by default) and stores both;
 * returns the value's `checkpoint` and `gguf` fields and the curve file the
 * trainer wrote.
 */
export async function storeLmResult(
  dir: string,
  ctx: Pick<
    NodeContext,
    "log" | "progress" | "signal" | "writeBlob" | "workDir"
  >,
  threads: number,
  device: LmDevice = "cpu",
  ggufType?: "f32" | "f16" | "q8_0",
): Promise<{ checkpoint: Json; gguf: Json; curve: Record<string, Json> }> {
  const modelType = checkCheckpointDir(dir, "trainer output");
  const ggufPath = join(ctx.workDir, "model.gguf");
  await runTrainer(
    [
      "export-gguf",
      dir,
      ggufPath,
      ...(ggufType !== undefined ? ["--type", ggufType] : []),
    ],
    ctx,
    threads,
    device,
  );
  const curve = JSON.parse(
    await Deno.readTextFile(join(dir, "curve.json")),
  ) as Record<string, Json>;
  const checkpoint = await storeCheckpoint(dir, modelType, ctx);
  const g = await ctx.writeBlob(await Deno.readFile(ggufPath), GGUF_MEDIA);
  return {
    checkpoint: checkpoint as unknown as Json,
    gguf: { $blob: g.$blob, size: g.size, media: g.media },
    curve,
  };
}
