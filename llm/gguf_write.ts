/**
 * A GGUF writer: enough of the format (version 3) to write a language model
 * that llama.cpp loads. A file is a header (magic `GGUF`, version, tensor
 * and metadata counts), typed key/value metadata, the tensor infos (name,
 * dimensions, type, offset), padding to the alignment, then the tensor data,
 * each tensor aligned. Little-endian throughout.
 *
 * Used to build random-weight models for tests and benchmarks
 * (`random_gguf.ts`); there is no other GGUF writer on the npm registry
 * (`@huggingface/gguf` only reads).
 *
 * @example
 * ```ts
 * import { encodeGguf } from "./gguf_write.ts";
 * import assert from "node:assert/strict";
 * const bytes = encodeGguf({
 *   metadata: [{ key: "general.architecture", type: "string", value: "llama" }],
 *   tensors: [{ name: "w", dims: [4], type: "f32", data: new Float32Array(4) }],
 * });
 * assert.equal(new TextDecoder().decode(bytes.subarray(0, 4)), "GGUF");
 * ```
 *
 * @module
 */

/** The value types of GGUF metadata. */
export type GgufScalarType =
  | "u8"
  | "i8"
  | "u16"
  | "i16"
  | "u32"
  | "i32"
  | "f32"
  | "bool"
  | "string"
  | "u64"
  | "i64"
  | "f64";

const _TYPE_ID: Record<GgufScalarType | "array", number> = {
  u8: 0,
  i8: 1,
  u16: 2,
  i16: 3,
  u32: 4,
  i32: 5,
  f32: 6,
  bool: 7,
  string: 8,
  array: 9,
  u64: 10,
  i64: 11,
  f64: 12,
};

/** One metadata entry. */
export type GgufMetadata =
  | {
    readonly key: string;
    readonly type: Exclude<GgufScalarType, "string" | "bool">;
    readonly value: number;
  }
  | { readonly key: string; readonly type: "string"; readonly value: string }
  | { readonly key: string; readonly type: "bool"; readonly value: boolean }
  | {
    readonly key: string;
    readonly type: "array";
    readonly itemType: GgufScalarType;
    readonly value: readonly (number | string | boolean)[];
  };

/** Tensor element types this writer encodes (ggml type ids 0, 1, 8). */
export type GgufTensorType = "f32" | "f16" | "q8_0";

const _TENSOR_TYPE_ID: Record<GgufTensorType, number> = {
  f32: 0,
  f16: 1,
  q8_0: 8,
};

/** One tensor. `dims` are in ggml order: the fastest-varying dimension first. */
export interface GgufTensor {
  /** Tensor name, e.g. `blk.0.attn_q.weight`. */
  readonly name: string;
  /** Dimensions, fastest-varying first (ggml's `ne`). */
  readonly dims: readonly number[];
  /** Element type on disk. `q8_0` needs `dims[0]` to be a multiple of 32. */
  readonly type: GgufTensorType;
  /** The values (row-major over `dims` reversed), or a function producing them when written. */
  readonly data: Float32Array | (() => Float32Array);
}

/** A model file to write. */
export interface GgufFile {
  /** Metadata entries, written in this order. */
  readonly metadata: readonly GgufMetadata[];
  /** Tensors, written in this order. */
  readonly tensors: readonly GgufTensor[];
  /**
   * Alignment of the data section and of each tensor.
   * @default {32}
   */
  readonly alignment?: number;
}

/** Raised for a tensor or metadata entry that cannot be encoded. */
export class GgufWriteError extends RangeError {
  /** Build the error. */
  constructor(message: string) {
    super(message);
    this.name = "GgufWriteError";
  }
}

/** Bytes of a tensor of `count` elements of `type`. */
export function tensorBytes(type: GgufTensorType, count: number): number {
  if (type === "f32") return count * 4;
  if (type === "f16") return count * 2;
  return (count / 32) * 34;
}

class _Bytes {
  #chunks: Uint8Array[] = [];
  #buf = new Uint8Array(1 << 16);
  #view = new DataView(this.#buf.buffer);
  #pos = 0;
  length = 0;
  #room(n: number) {
    if (this.#pos + n <= this.#buf.length) return;
    this.#flush();
    if (n > this.#buf.length) {
      this.#buf = new Uint8Array(n);
      this.#view = new DataView(this.#buf.buffer);
    }
  }
  #flush() {
    if (this.#pos > 0) this.#chunks.push(this.#buf.slice(0, this.#pos));
    this.#pos = 0;
  }
  u8(x: number) {
    this.#room(1);
    this.#view.setUint8(this.#pos, x);
    this.#pos += 1;
    this.length += 1;
  }
  u32(x: number) {
    this.#room(4);
    this.#view.setUint32(this.#pos, x, true);
    this.#pos += 4;
    this.length += 4;
  }
  u64(x: number) {
    this.#room(8);
    this.#view.setBigUint64(this.#pos, BigInt(x), true);
    this.#pos += 8;
    this.length += 8;
  }
  scalar(type: GgufScalarType, x: number | string | boolean) {
    if (type === "string") return this.str(String(x));
    if (type === "bool") return this.u8(x ? 1 : 0);
    const n = Number(x);
    const size = { u8: 1, i8: 1, u16: 2, i16: 2, u32: 4, i32: 4, f32: 4 }[
      type as "u8"
    ] ?? 8;
    this.#room(size);
    const v = this.#view, p = this.#pos;
    switch (type) {
      case "u8":
        v.setUint8(p, n);
        break;
      case "i8":
        v.setInt8(p, n);
        break;
      case "u16":
        v.setUint16(p, n, true);
        break;
      case "i16":
        v.setInt16(p, n, true);
        break;
      case "u32":
        v.setUint32(p, n, true);
        break;
      case "i32":
        v.setInt32(p, n, true);
        break;
      case "f32":
        v.setFloat32(p, n, true);
        break;
      case "u64":
        v.setBigUint64(p, BigInt(n), true);
        break;
      case "i64":
        v.setBigInt64(p, BigInt(n), true);
        break;
      case "f64":
        v.setFloat64(p, n, true);
        break;
    }
    this.#pos += size;
    this.length += size;
  }
  str(s: string) {
    const b = new TextEncoder().encode(s);
    this.u64(b.length);
    this.raw(b);
  }
  raw(b: Uint8Array) {
    this.#flush();
    this.#chunks.push(b);
    this.length += b.length;
  }
  pad(alignment: number) {
    const n = (alignment - (this.length % alignment)) % alignment;
    if (n > 0) this.raw(new Uint8Array(n));
  }
  take(): Uint8Array[] {
    this.#flush();
    const out = this.#chunks;
    this.#chunks = [];
    return out;
  }
}

function _checkTensor(t: GgufTensor): number {
  if (t.dims.length === 0 || t.dims.length > 4) {
    throw new GgufWriteError(
      `tensor ${t.name}: ${t.dims.length} dimensions (GGUF allows 1 to 4)`,
    );
  }
  let count = 1;
  for (const d of t.dims) {
    if (!Number.isInteger(d) || d < 1) {
      throw new GgufWriteError(`tensor ${t.name}: bad dimension ${d}`);
    }
    count *= d;
  }
  if (t.type === "q8_0" && t.dims[0]! % 32 !== 0) {
    throw new GgufWriteError(
      `tensor ${t.name}: q8_0 needs the first dimension (${
        t.dims[0]
      }) to be a multiple of 32; use f16`,
    );
  }
  return count;
}

/** The header, metadata and tensor infos, padded to the alignment. */
function _header(file: GgufFile): Uint8Array[] {
  const alignment = file.alignment ?? 32;
  const b = new _Bytes();
  b.raw(new TextEncoder().encode("GGUF"));
  b.u32(3);
  b.u64(file.tensors.length);
  const meta = [...file.metadata];
  if (
    file.alignment !== undefined &&
    !meta.some((m) => m.key === "general.alignment")
  ) {
    meta.push({ key: "general.alignment", type: "u32", value: alignment });
  }
  b.u64(meta.length);
  for (const m of meta) {
    b.str(m.key);
    b.u32(_TYPE_ID[m.type]);
    if (m.type === "array") {
      b.u32(_TYPE_ID[m.itemType]);
      b.u64(m.value.length);
      for (const x of m.value) b.scalar(m.itemType, x);
    } else b.scalar(m.type, m.value);
  }
  let offset = 0;
  for (const t of file.tensors) {
    const count = _checkTensor(t);
    b.str(t.name);
    b.u32(t.dims.length);
    for (const d of t.dims) b.u64(d);
    b.u32(_TENSOR_TYPE_ID[t.type]);
    b.u64(offset);
    offset += tensorBytes(t.type, count);
    offset += (alignment - (offset % alignment)) % alignment;
  }
  b.pad(alignment);
  return b.take();
}

/** IEEE half-precision bits of a float (round to nearest even). */
export function f16Bits(x: number): number {
  const f = new Float32Array([x]);
  const u = new Uint32Array(f.buffer)[0]!;
  const sign = (u >>> 16) & 0x8000;
  const exp = (u >>> 23) & 0xff;
  let mant = u & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rem > mid || (rem === mid && (half & 1))) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (half & 1))) half++; // may carry into the exponent
  return sign | half;
}

/** The bytes of one tensor's data in its type. */
export function encodeTensorData(
  type: GgufTensorType,
  values: Float32Array,
): Uint8Array {
  if (type === "f32") {
    return new Uint8Array(
      values.buffer.slice(
        values.byteOffset,
        values.byteOffset + values.byteLength,
      ),
    );
  }
  if (type === "f16") {
    const out = new Uint16Array(values.length);
    for (let i = 0; i < values.length; i++) out[i] = f16Bits(values[i]!);
    return new Uint8Array(out.buffer);
  }
  const blocks = values.length / 32;
  const out = new Uint8Array(blocks * 34);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    let amax = 0;
    for (let i = 0; i < 32; i++) {
      amax = Math.max(amax, Math.abs(values[b * 32 + i]!));
    }
    const d = amax / 127;
    const id = d === 0 ? 0 : 1 / d;
    view.setUint16(b * 34, f16Bits(d), true);
    for (let i = 0; i < 32; i++) {
      view.setInt8(b * 34 + 2 + i, Math.round(values[b * 32 + i]! * id));
    }
  }
  return out;
}

function _data(t: GgufTensor): Float32Array {
  const d = typeof t.data === "function" ? t.data() : t.data;
  const count = t.dims.reduce((a, b) => a * b, 1);
  if (d.length !== count) {
    throw new GgufWriteError(
      `tensor ${t.name}: ${d.length} values for dimensions ${
        t.dims.join("x")
      } (${count})`,
    );
  }
  return d;
}

/** Encode a whole file in memory (small models). */
export function encodeGguf(file: GgufFile): Uint8Array {
  const alignment = file.alignment ?? 32;
  const parts = _header(file);
  let length = parts.reduce((a, p) => a + p.length, 0);
  for (const t of file.tensors) {
    const bytes = encodeTensorData(t.type, _data(t));
    parts.push(bytes);
    length += bytes.length;
    const pad = (alignment - (length % alignment)) % alignment;
    if (pad > 0) {
      parts.push(new Uint8Array(pad));
      length += pad;
    }
  }
  const out = new Uint8Array(length);
  let p = 0;
  for (const part of parts) {
    out.set(part, p);
    p += part.length;
  }
  return out;
}

/**
 * Write a file tensor by tensor (each tensor's `data` is produced only when
 * it is written, so large models never sit in memory whole). Written to a
 * temporary file and renamed into place.
 */
export async function writeGgufFile(
  path: string,
  file: GgufFile,
  onTensor?: (done: number, total: number) => void,
): Promise<number> {
  const alignment = file.alignment ?? 32;
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  const f = await Deno.open(tmp, { write: true, create: true, truncate: true });
  let length = 0;
  const write = async (b: Uint8Array) => {
    let off = 0;
    while (off < b.length) off += await f.write(b.subarray(off));
    length += b.length;
  };
  try {
    for (const part of _header(file)) await write(part);
    let done = 0;
    for (const t of file.tensors) {
      await write(encodeTensorData(t.type, _data(t)));
      const pad = (alignment - (length % alignment)) % alignment;
      if (pad > 0) await write(new Uint8Array(pad));
      onTensor?.(++done, file.tensors.length);
    }
  } catch (e) {
    f.close();
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
  f.close();
  await Deno.rename(tmp, path);
  return length;
}
