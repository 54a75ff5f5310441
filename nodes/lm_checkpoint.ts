/**
 * Language-model checkpoints as node inputs and values: the plan-time check
 * of a Hugging Face directory, its content hash (what enters a key), and a
 * checkpoint stored in the cache (one blob per file) written back to a
 * directory for the trainer.
 *
 * The value of `lm.init` and `train.lm`:
 *
 * ```
 * { checkpoint: { model_type, sha256, files: { "config.json": <blob>, ... } },
 *   gguf: <blob, the GGUF export>, curve: [...], ... }
 * ```
 *
 * @module
 */
import { createHash } from "node:crypto";
import { join, resolve } from "node:path";
import { readFileSync, statSync } from "node:fs";
import { type BlobRef, type Json, UserError } from "@envsmith/engine";
import type { NodeContext } from "@envsmith/engine/kind";
import { field, isBlobRef } from "./_values.ts";

/** The architectures the trainer and its GGUF export handle. */
export const LM_ARCHITECTURES = ["llama", "qwen2", "qwen3"] as const;

/** Media type of a stored GGUF export. */
export const GGUF_MEDIA = "application/x-gguf";

/** A checkpoint as a node value holds it. */
export interface StoredCheckpoint {
  /** `config.json`'s `model_type`. */
  readonly model_type: string;
  /** {@linkcode checkpointDigest} of the directory. */
  readonly sha256: string;
  /** File name -> its blob. */
  readonly files: Readonly<Record<string, BlobRef>>;
}

function _read(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * Checks that `dir` is a checkpoint the trainer can start from: a
 * directory with `config.json` of a supported `model_type`, safetensors
 * weights, `tokenizer.json` and a chat template. Returns the model type.
 *
 * @throws {UserError} one line naming the file and the fix.
 */
export function checkCheckpointDir(dir: string, at: string): string {
  let st;
  try {
    st = statSync(dir);
  } catch {
    throw new UserError(
      `${at}: ${dir} does not exist; give a Hugging Face checkpoint directory (config.json, *.safetensors, tokenizer.json), an lm.init or a train.lm node`,
    );
  }
  if (!st.isDirectory()) {
    throw new UserError(
      `${at}: ${dir} is not a directory; give a Hugging Face checkpoint directory (config.json, *.safetensors, tokenizer.json), an lm.init or a train.lm node`,
    );
  }
  const cfgText = _read(join(dir, "config.json"));
  if (cfgText === undefined) {
    throw new UserError(
      `${at}: ${dir}/config.json is missing, so ${dir} is not a checkpoint; give the directory save_pretrained wrote`,
    );
  }
  let modelType: unknown;
  try {
    modelType = field(JSON.parse(cfgText), "model_type");
  } catch {
    throw new UserError(`${at}: ${dir}/config.json is not JSON`);
  }
  if (
    typeof modelType !== "string" ||
    !(LM_ARCHITECTURES as readonly string[]).includes(modelType)
  ) {
    throw new UserError(
      `${at}: ${dir}/config.json has model_type ${
        JSON.stringify(modelType ?? null)
      }, which the trainer and its GGUF export do not support; use a ${
        LM_ARCHITECTURES.join(", ")
      } checkpoint`,
    );
  }
  const names = [...Deno.readDirSync(dir)].map((e) => e.name);
  if (!names.some((n) => n.endsWith(".safetensors"))) {
    throw new UserError(
      `${at}: ${dir} has no *.safetensors weights; save the checkpoint with save_pretrained(..., safe_serialization=True)`,
    );
  }
  if (!names.includes("tokenizer.json")) {
    throw new UserError(
      `${at}: ${dir}/tokenizer.json is missing; save the tokenizer beside the weights (tokenizer.save_pretrained)`,
    );
  }
  const tcfg = _read(join(dir, "tokenizer_config.json"));
  let template: unknown;
  try {
    template = tcfg === undefined
      ? undefined
      : field(JSON.parse(tcfg), "chat_template");
  } catch {
    template = undefined;
  }
  if (!template && !names.includes("chat_template.jinja")) {
    throw new UserError(
      `${at}: ${dir}/tokenizer_config.json has no chat_template (and there is no chat_template.jinja); the LM policy is prompted as a chat, so add a template (e.g. ChatML)`,
    );
  }
  return modelType;
}

const _digests = new Map<string, string>();

/**
 * sha256 over the sorted (name, sha256 of content) of the regular files
 * directly in `dir` (hidden files and the trainer's `curve.json` left
 * out): the checkpoint's content, whatever its path. Memoised per path,
 * sizes and modification times for the life of the process.
 */
export function checkpointDigest(dir: string): string {
  const abs = resolve(dir);
  const entries = [...Deno.readDirSync(abs)]
    .filter((e) =>
      e.isFile && !e.name.startsWith(".") && e.name !== "curve.json"
    )
    .map((e) => e.name).sort();
  const stats = entries.map((n) => {
    const s = statSync(join(abs, n));
    return `${n}:${s.size}:${s.mtimeMs}`;
  });
  const memo = `${abs}\0${stats.join("\0")}`;
  const hit = _digests.get(memo);
  if (hit) return hit;
  const h = createHash("sha256");
  for (const n of entries) {
    const fh = createHash("sha256").update(readFileSync(join(abs, n)))
      .digest("hex");
    h.update(`${n}\0${fh}\n`);
  }
  const digest = h.digest("hex");
  _digests.set(memo, digest);
  return digest;
}

/** Stores every file of a checkpoint directory as a blob. */
export async function storeCheckpoint(
  dir: string,
  modelType: string,
  ctx: Pick<NodeContext, "writeBlob">,
): Promise<StoredCheckpoint> {
  const files: Record<string, BlobRef> = {};
  const names = [...Deno.readDirSync(dir)]
    .filter((e) =>
      e.isFile && !e.name.startsWith(".") && e.name !== "curve.json"
    )
    .map((e) => e.name).sort();
  for (const n of names) {
    const ref = await ctx.writeBlob(
      await Deno.readFile(join(dir, n)),
      n.endsWith(".json") ? "application/json" : "application/octet-stream",
    );
    files[n] = { $blob: ref.$blob, size: ref.size, media: ref.media };
  }
  return { model_type: modelType, sha256: checkpointDigest(dir), files };
}

/** The stored checkpoint of an `lm.init` / `train.lm` value, or undefined. */
export function storedCheckpoint(x: unknown): StoredCheckpoint | undefined {
  const c = field(x, "checkpoint");
  const files = field(c, "files");
  if (
    typeof field(c, "model_type") !== "string" ||
    typeof field(c, "sha256") !== "string" ||
    typeof files !== "object" || files === null ||
    !Object.values(files).every(isBlobRef)
  ) return undefined;
  return c as StoredCheckpoint;
}

/**
 * The base checkpoint of a node as a directory: a path (relative to the
 * experiment's folder) as it is, a stored checkpoint written into `into`.
 */
export async function checkpointDir(
  base: unknown,
  into: string,
  ctx: Pick<NodeContext, "readBlob" | "baseDir">,
): Promise<string> {
  if (typeof base === "string") return resolve(ctx.baseDir, base);
  const stored = storedCheckpoint(base);
  if (stored === undefined) {
    throw new TypeError(
      "base: expected a checkpoint directory path or the value of an lm.init or train.lm node",
    );
  }
  await Deno.mkdir(into, { recursive: true });
  for (const [n, ref] of Object.entries(stored.files)) {
    await Deno.writeFile(join(into, n), await ctx.readBlob(ref));
  }
  return into;
}

/**
 * What a literal `base` parameter puts in the key: a directory's content
 * hash and model type (checked first: a directory that is not a usable
 * checkpoint is refused at plan), nothing for a reference (the producing
 * node's key is in the key already).
 */
export function baseFingerprint(
  base: unknown,
  baseDir: string,
): Json {
  if (typeof base !== "string" || base.startsWith("$")) return null;
  const dir = resolve(baseDir, base);
  const modelType = checkCheckpointDir(dir, "base");
  return { model_type: modelType, sha256: checkpointDigest(dir) };
}
