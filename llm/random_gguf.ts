/**
 * Random-weight GGUF language models with the shapes of real ones, for
 * tests and benchmarks of the local runtime: no model weights can be
 * downloaded here, and a model with random weights exercises llama.cpp for
 * real (tokenizer, chat template, attention, sampling, grammars). **Its
 * replies are noise, never results.**
 *
 * Shapes ({@linkcode GGUF_SHAPES}): `tiny` (2 layers, 128 wide, about 260
 * tokens: ~400 KB, for tests), `smollm2-135m` and `qwen2.5-0.5b` (the exact
 * tensor shapes of those models, for timing). The tokenizer is byte-level
 * BPE (GPT-2 style) without merges: every byte is a token, plus the ChatML
 * control tokens and, for the large shapes, filler tokens up to the real
 * vocabulary size. The chat template is ChatML (`<|im_start|>role ...
 * <|im_end|>`), as Qwen and SmolLM use. Weights are uniform with standard
 * deviation 0.02 from a seeded generator, norms are 1: the same options give
 * the same bytes.
 *
 * Command line:
 *
 * ```sh
 * deno run -A llm/random_gguf.ts --shape tiny --seed 1 tiny.gguf
 * deno run -A llm/random_gguf.ts --shape qwen2.5-0.5b --type q8_0 qwen-shaped.gguf
 * ```
 *
 * @module
 */
import {
  encodeGguf,
  type GgufFile,
  type GgufMetadata,
  type GgufTensor,
  type GgufTensorType,
  writeGgufFile,
} from "./gguf_write.ts";
import { mulberry32Floats } from "../mapf/rng.ts";

/** The dimensions of a model. */
export interface GgufShape {
  /** `general.architecture`: `llama` or `qwen2` (q/k/v biases). */
  readonly architecture: "llama" | "qwen2";
  /** Hidden size. */
  readonly embedding: number;
  /** Transformer blocks. */
  readonly layers: number;
  /** Attention heads. */
  readonly heads: number;
  /** Key/value heads (grouped-query attention). */
  readonly kvHeads: number;
  /** Feed-forward size. */
  readonly feedForward: number;
  /** Vocabulary size (at least the byte and control tokens). */
  readonly vocab: number;
  /** Trained context length written to the metadata. */
  readonly context: number;
  /** Whether the output matrix is the embedding matrix (no `output.weight`). */
  readonly tied: boolean;
}

/** Named shapes: `tiny` for tests, the others copy real models' dimensions. */
export const GGUF_SHAPES: Readonly<Record<string, GgufShape>> = {
  tiny: {
    architecture: "llama",
    embedding: 128,
    layers: 2,
    heads: 2, // head size 64: llama.cpp's CPU attention is 6x slower at 16
    kvHeads: 1,
    feedForward: 128,
    vocab: 0, // bytes + control + extra tokens, whatever they add up to
    context: 32768, // one token per byte: long prompts
    tied: true,
  },
  "smollm2-135m": {
    architecture: "llama",
    embedding: 576,
    layers: 30,
    heads: 9,
    kvHeads: 3,
    feedForward: 1536,
    vocab: 49152,
    context: 8192,
    tied: true,
  },
  "qwen2.5-0.5b": {
    architecture: "qwen2",
    embedding: 896,
    layers: 24,
    heads: 14,
    kvHeads: 2,
    feedForward: 4864,
    vocab: 151936,
    context: 32768,
    tied: true,
  },
};

/** The ChatML template (Qwen2.5 and SmolLM2 use it), as Jinja. */
export const CHATML_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** Options of {@linkcode randomGguf}. */
export interface RandomGgufOptions {
  /**
   * A named shape or explicit dimensions.
   * @default {"tiny"}
   */
  shape?: string | GgufShape;
  /**
   * Seed of the weights.
   * @default {1}
   */
  seed?: number;
  /**
   * Storage type of the matrices (norms are always f32).
   * @default {"f16"}
   */
  type?: GgufTensorType;
  /**
   * Extra normal tokens (plain text, e.g. `"agents"`), so that text the
   * model is asked to write takes fewer tokens than one per byte.
   * @default {[]}
   */
  extraTokens?: readonly string[];
  /**
   * The chat template.
   * @default {CHATML_TEMPLATE}
   */
  chatTemplate?: string;
  /** `general.name`. @default "envsmith-random-<shape>" */
  name?: string;
}

/** GPT-2's byte-to-unicode table: the printable stand-in of each byte. */
function _byteChars(): string[] {
  const keep: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) keep.push(b);
  for (let b = 0xa1; b <= 0xac; b++) keep.push(b);
  for (let b = 0xae; b <= 0xff; b++) keep.push(b);
  const out = new Array<string>(256);
  let n = 0;
  for (let b = 0; b < 256; b++) {
    out[b] = keep.includes(b)
      ? String.fromCharCode(b)
      : String.fromCharCode(256 + n++);
  }
  return out;
}

/** Text in byte-level form (each UTF-8 byte as its stand-in character). */
function _byteLevel(text: string, chars: readonly string[]): string {
  return [...new TextEncoder().encode(text)].map((b) => chars[b]).join("");
}

/** The token list, token types and the special token ids. */
function _vocab(
  shape: GgufShape,
  extra: readonly string[],
): { tokens: string[]; types: number[]; eos: number; bos: number } {
  const chars = _byteChars();
  const tokens: string[] = [];
  const types: number[] = [];
  const seen = new Set<string>();
  const add = (t: string, type: number) => {
    if (seen.has(t)) return;
    seen.add(t);
    tokens.push(t);
    types.push(type);
  };
  for (const c of chars) add(c, 1);
  const bos = tokens.length;
  add("<|endoftext|>", 3);
  add("<|im_start|>", 3);
  const eos = tokens.length;
  add("<|im_end|>", 3);
  for (const t of extra) add(_byteLevel(t, chars), 1);
  // Filler up to the real vocabulary size: lower-case letter strings, which
  // a byte-level tokenizer without merges never produces from text.
  const letters = "abcdefghijklmnopqrstuvwxyz";
  for (let len = 2; tokens.length < shape.vocab; len++) {
    const idx = new Array<number>(len).fill(0);
    while (tokens.length < shape.vocab) {
      add(idx.map((i) => letters[i]).join(""), 1);
      let k = len - 1;
      while (k >= 0 && ++idx[k]! === letters.length) idx[k--] = 0;
      if (k < 0) break;
    }
  }
  return { tokens, types, eos, bos };
}

function _stream(seed: number, index: number): number {
  let h = (seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/** The file description of a random-weight model (tensors generated when written). */
export function randomGguf(options: RandomGgufOptions = {}): GgufFile {
  const base = typeof options.shape === "object"
    ? options.shape
    : GGUF_SHAPES[options.shape ?? "tiny"];
  if (base === undefined) {
    throw new RangeError(
      `unknown GGUF shape "${options.shape}"; known: ${
        Object.keys(GGUF_SHAPES).join(", ")
      }`,
    );
  }
  const seed = options.seed ?? 1;
  const type = options.type ?? "f16";
  const { tokens, types, eos, bos } = _vocab(base, options.extraTokens ?? []);
  const shape: GgufShape = { ...base, vocab: tokens.length };
  const shapeName = typeof options.shape === "string"
    ? options.shape
    : "custom";
  const metadata = _metadata(shape, {
    name: options.name ?? `envsmith-random-${shapeName}`,
    type,
    tokens,
    types,
    eos,
    bos,
    chatTemplate: options.chatTemplate ?? CHATML_TEMPLATE,
  });
  return { metadata, tensors: _tensors(shape, type, seed) };
}

/** The metadata of a model of `shape`: architecture, sizes, tokenizer, template. */
function _metadata(
  shape: GgufShape,
  t: {
    name: string;
    type: GgufTensorType;
    tokens: string[];
    types: number[];
    eos: number;
    bos: number;
    chatTemplate: string;
  },
): GgufMetadata[] {
  const { tokens, types, eos, bos, type } = t;
  const headDim = shape.embedding / shape.heads;
  const arch = shape.architecture;
  return [
    { key: "general.architecture", type: "string", value: arch },
    {
      key: "general.name",
      type: "string",
      value: t.name,
    },
    {
      key: "general.file_type",
      type: "u32",
      value: type === "f32" ? 0 : type === "f16" ? 1 : 7,
    },
    { key: `${arch}.vocab_size`, type: "u32", value: shape.vocab },
    { key: `${arch}.context_length`, type: "u32", value: shape.context },
    { key: `${arch}.embedding_length`, type: "u32", value: shape.embedding },
    { key: `${arch}.block_count`, type: "u32", value: shape.layers },
    {
      key: `${arch}.feed_forward_length`,
      type: "u32",
      value: shape.feedForward,
    },
    { key: `${arch}.rope.dimension_count`, type: "u32", value: headDim },
    { key: `${arch}.rope.freq_base`, type: "f32", value: 10000 },
    { key: `${arch}.attention.head_count`, type: "u32", value: shape.heads },
    {
      key: `${arch}.attention.head_count_kv`,
      type: "u32",
      value: shape.kvHeads,
    },
    {
      key: `${arch}.attention.layer_norm_rms_epsilon`,
      type: "f32",
      value: 1e-6,
    },
    { key: "tokenizer.ggml.model", type: "string", value: "gpt2" },
    { key: "tokenizer.ggml.pre", type: "string", value: "default" },
    {
      key: "tokenizer.ggml.tokens",
      type: "array",
      itemType: "string",
      value: tokens,
    },
    {
      key: "tokenizer.ggml.token_type",
      type: "array",
      itemType: "i32",
      value: types,
    },
    {
      key: "tokenizer.ggml.merges",
      type: "array",
      itemType: "string",
      value: [],
    },
    { key: "tokenizer.ggml.bos_token_id", type: "u32", value: bos },
    { key: "tokenizer.ggml.eos_token_id", type: "u32", value: eos },
    { key: "tokenizer.ggml.padding_token_id", type: "u32", value: bos },
    { key: "tokenizer.ggml.add_bos_token", type: "bool", value: false },
    {
      key: "tokenizer.chat_template",
      type: "string",
      value: t.chatTemplate,
    },
  ];
}

/** The tensors of a model of `shape`, each filled from its own seeded stream when written. */
function _tensors(
  shape: GgufShape,
  type: GgufTensorType,
  seed: number,
): GgufTensor[] {
  const headDim = shape.embedding / shape.heads;
  const kv = headDim * shape.kvHeads;
  const arch = shape.architecture;
  const tensors: GgufTensor[] = [];
  const std = 0.02, half = std * Math.sqrt(3);
  const random = (dims: number[], t: GgufTensorType) => {
    const index = tensors.length;
    return {
      dims,
      type: t,
      data: () => {
        const n = dims.reduce((a, b) => a * b, 1);
        const out = new Float32Array(n);
        const r = mulberry32Floats(_stream(seed, index));
        for (let i = 0; i < n; i++) out[i] = (r() * 2 - 1) * half;
        return out;
      },
    };
  };
  const ones = (n: number) => ({
    dims: [n],
    type: "f32" as const,
    data: () => new Float32Array(n).fill(1),
  });
  const E = shape.embedding;
  tensors.push({
    name: "token_embd.weight",
    ...random([E, shape.vocab], type),
  });
  for (let l = 0; l < shape.layers; l++) {
    const p = `blk.${l}`;
    tensors.push({ name: `${p}.attn_norm.weight`, ...ones(E) });
    tensors.push({ name: `${p}.attn_q.weight`, ...random([E, E], type) });
    tensors.push({ name: `${p}.attn_k.weight`, ...random([E, kv], type) });
    tensors.push({ name: `${p}.attn_v.weight`, ...random([E, kv], type) });
    if (arch === "qwen2") {
      tensors.push({ name: `${p}.attn_q.bias`, ...random([E], "f32") });
      tensors.push({ name: `${p}.attn_k.bias`, ...random([kv], "f32") });
      tensors.push({ name: `${p}.attn_v.bias`, ...random([kv], "f32") });
    }
    tensors.push({
      name: `${p}.attn_output.weight`,
      ...random([E, E], type),
    });
    tensors.push({ name: `${p}.ffn_norm.weight`, ...ones(E) });
    tensors.push({
      name: `${p}.ffn_gate.weight`,
      ...random([E, shape.feedForward], type),
    });
    tensors.push({
      name: `${p}.ffn_up.weight`,
      ...random([E, shape.feedForward], type),
    });
    tensors.push({
      name: `${p}.ffn_down.weight`,
      ...random([shape.feedForward, E], type),
    });
  }
  tensors.push({ name: "output_norm.weight", ...ones(E) });
  if (!shape.tied) {
    tensors.push({
      name: "output.weight",
      ...random([E, shape.vocab], type),
    });
  }
  return tensors;
}

/** A random-weight model as bytes (small shapes). */
export function randomGgufBytes(options: RandomGgufOptions = {}): Uint8Array {
  return encodeGguf(randomGguf(options));
}

/**
 * Write a random-weight model to `path` (tensor by tensor: large shapes
 * never sit in memory whole). Returns the file size in bytes.
 */
export function writeRandomGguf(
  path: string,
  options: RandomGgufOptions = {},
  onTensor?: (done: number, total: number) => void,
): Promise<number> {
  return writeGgufFile(path, randomGguf(options), onTensor);
}

if (import.meta.main) {
  const args = [...Deno.args];
  const flag = (name: string) => {
    const i = args.indexOf(name);
    if (i < 0) return undefined;
    const v = args[i + 1];
    args.splice(i, 2);
    return v;
  };
  const shape = flag("--shape") ?? "tiny";
  const seed = Number(flag("--seed") ?? "1");
  const type = (flag("--type") ?? "f16") as GgufTensorType;
  const out = args[0];
  if (
    out === undefined || !(shape in GGUF_SHAPES) || !Number.isInteger(seed) ||
    !["f32", "f16", "q8_0"].includes(type)
  ) {
    console.error(
      `usage: deno run -A llm/random_gguf.ts [--shape ${
        Object.keys(GGUF_SHAPES).join("|")
      }] [--seed N] [--type f32|f16|q8_0] OUT.gguf`,
    );
    Deno.exit(2);
  }
  const t0 = performance.now();
  const bytes = await writeRandomGguf(out, { shape, seed, type }, (d, n) => {
    if (d === n || d % 20 === 0) console.error(`tensor ${d}/${n}`);
  });
  console.error(
    `wrote ${out}: ${
      (bytes / 1e6).toFixed(1)
    } MB, random weights (shape ${shape}, seed ${seed}, ${type}) in ${
      ((performance.now() - t0) / 1000).toFixed(1)
    } s. Its replies are noise, never results.`,
  );
}
