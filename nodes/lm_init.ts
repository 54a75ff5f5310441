/**
 * The `lm.init` node kind: the stage-0 language-model policy at micro
 * scale. A byte-level BPE tokenizer trained on the instances' text, a micro
 * Llama, and supervised fine-tuning on the solvers' plans for those
 * instances, in the LLM policy's own messages (`prompt: bare` by default,
 * as the micro models are trained).
 *
 * ```yaml
 * sft_envs: { kind: generate, with: { config: { file: ../lm/configs/micro.yaml }, count: 2000, seed: 1 } }
 * start: { kind: lm.init, with: { data: $sft_envs, sft: { steps: 300 } } }
 * ```
 *
 * Value: `{ checkpoint, gguf, curve: [{step, loss}], examples }`, where
 * `gguf` is a file output (`$start.gguf`). A base model of one's own (a
 * Hugging Face directory) needs no node: give its path as `train.lm`'s
 * `base`.
 *
 * @module
 */
import { join } from "node:path";
import * as v from "valibot";
import type { Json, NodeKind } from "@envsmith/engine/kind";
import { lmRow, readLmInstances } from "./lm_rows.ts";
import { lmReadiness, runTrainer } from "./lm_trainer.ts";
import { lmCodeModules } from "./lm_options.ts";
import { LM_FILES, storeLmResult } from "./lm_result.ts";

const int = (min: number, max: number) =>
  v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));
const num = (min: number, max: number) =>
  v.pipe(v.number(), v.minValue(min), v.maxValue(max));

/** Parameters of `lm.init`. */
export const LmInitParamsSchema = v.strictObject({
  data: v.unknown(),
  model: v.optional(v.strictObject({
    hidden: v.optional(int(8, 4096)),
    layers: v.optional(int(1, 64)),
    heads: v.optional(int(1, 64)),
    ffn: v.optional(int(8, 16384)),
    vocab: v.optional(int(300, 65536)),
  })),
  sft: v.optional(v.strictObject({
    steps: v.optional(int(1, 1_000_000)),
    batch: v.optional(int(1, 4096)),
    lr: v.optional(num(0, 1)),
  })),
  prompt: v.optional(v.picklist(["bare", "full"])),
  gguf: v.optional(v.picklist(["f32", "f16", "q8_0"])),
  device: v.optional(v.picklist(["cpu", "cuda"])),
  threads: v.optional(int(1, 256)),
  seed: v.optional(int(0, 0xffffffff)),
});

/** Parameters of `lm.init`. */
export type LmInitParams = v.InferOutput<typeof LmInitParamsSchema>;

/** The `lm.init` kind. */
export const kind: NodeKind<LmInitParams, Json> = {
  name: "lm.init",
  description:
    "A micro language-model policy: tokenizer, micro Llama, SFT on solver plans (the stage-0 checkpoint of train.lm)",
  params: LmInitParamsSchema,
  paramDocs: {
    data:
      "the instances to fine-tune on (a generate node); solver plans are the targets",
    model: "{hidden: 64, layers: 2, heads: 2, ffn: 192, vocab: 384}",
    sft: "{steps: 300, batch: 32, lr: 0.003}",
    prompt: "bare (default: the benchmark's prompt alone) or full",
    gguf: "the GGUF export's type: f32 (default), f16 or q8_0",
    device: "cpu (default) or cuda (checked at plan; never falls back to cpu)",
    threads: "torch CPU threads (default 1)",
    seed: "seed of initialisation and batches (default: the node's seed)",
  },
  module: import.meta.url,
  files: LM_FILES,
  codeModules: lmCodeModules,
  ready(params) {
    const p = params as { device?: unknown } | null;
    return lmReadiness(p?.device);
  },
  async run(p, ctx) {
    const threads = p.threads ?? 1;
    const instances = await readLmInstances(p.data, ctx, "data");
    const rows = instances.map((i) => lmRow(i, p.prompt ?? "bare", "auto"));
    const rowsFile = join(ctx.workDir, "rows.jsonl");
    await Deno.writeTextFile(
      rowsFile,
      rows.map((r) => JSON.stringify(r)).join("\n") + "\n",
    );
    const solved = rows.filter((r) => r.plan !== null).length;
    ctx.log(`${instances.length} instances, ${solved} with a solver plan`);
    const out = join(ctx.workDir, "checkpoint");
    const device = p.device ?? "cpu";
    const m = p.model ?? {}, s = p.sft ?? {};
    await runTrainer(
      [
        "init",
        "--rows",
        rowsFile,
        "--out",
        out,
        "--seed",
        String(p.seed ?? ctx.seed),
        "--threads",
        String(threads),
        "--device",
        device,
        "--hidden",
        String(m.hidden ?? 64),
        "--layers",
        String(m.layers ?? 2),
        "--heads",
        String(m.heads ?? 2),
        "--ffn",
        String(m.ffn ?? 192),
        "--vocab",
        String(m.vocab ?? 384),
        "--steps",
        String(s.steps ?? 300),
        "--batch",
        String(s.batch ?? 32),
        "--lr",
        String(s.lr ?? 3e-3),
      ],
      ctx,
      threads,
      device,
    );
    const res = await storeLmResult(out, ctx, threads, device, p.gguf);
    const sft = (res.curve.sft ?? []) as { step: number; loss: number }[];
    return {
      value: {
        checkpoint: res.checkpoint,
        gguf: res.gguf,
        examples: solved,
        curve: sft.map((x) => ({ step: x.step, loss: x.loss })),
      },
      report: {
        examples: solved,
        sft_loss_first: sft[0]?.loss ?? null,
        sft_loss_last: sft.at(-1)?.loss ?? null,
      },
    };
  },
};
