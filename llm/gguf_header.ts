/**
 * Checks a GGUF file's header against the file before any loader sees it:
 * the magic, the version (2 or 3, what llama.cpp reads), the tensor and
 * metadata counts against the bytes that could hold them, every key and
 * string length and array count against the bytes left, the tensor table
 * (dimensions, types, aligned offsets) and every tensor's data against
 * the file's size. A file that cannot be a model is refused in
 * milliseconds, in one line; a header that passes can still be a bad model,
 * but not one that makes the loader allocate gigabytes for a 88-byte file.
 *
 * The header is read in 1 MiB windows, never whole; strings are skipped,
 * not decoded (but for the alignment key).
 *
 * @example
 * ```ts
 * import { checkGgufHeader } from "./gguf_header.ts";
 * const dir = Deno.makeTempDirSync();
 * Deno.writeFileSync(`${dir}/x.gguf`, new TextEncoder().encode("GGUF"));
 * try {
 *   checkGgufHeader(`${dir}/x.gguf`);
 *   throw new Error("accepted");
 * } catch (e) {
 *   if (!/truncated/.test((e as Error).message)) throw e;
 * }
 * ```
 *
 * @module
 */
import { LlmConfigError } from "./errors.ts";

/** What a valid header holds. */
export interface GgufHeaderInfo {
  /** Format version (2 or 3). */
  readonly version: number;
  /** Number of tensors. */
  readonly tensors: number;
  /** Number of metadata keys. */
  readonly metadata: number;
  /** Byte offset of the tensor data. */
  readonly dataStart: number;
  /** Alignment of the tensor data. */
  readonly alignment: number;
}

/** Bytes of a block and elements per block, by ggml type id (the types whose layout is fixed and known here). */
const _TYPE_BLOCK: Readonly<Record<number, readonly [number, number]>> = {
  0: [4, 1], // f32
  1: [2, 1], // f16
  2: [18, 32], // q4_0
  3: [20, 32], // q4_1
  6: [22, 32], // q5_0
  7: [24, 32], // q5_1
  8: [34, 32], // q8_0
  9: [36, 32], // q8_1
  10: [84, 256], // q2_k
  11: [110, 256], // q3_k
  12: [144, 256], // q4_k
  13: [176, 256], // q5_k
  14: [210, 256], // q6_k
  15: [292, 256], // q8_k
  24: [1, 1], // i8
  25: [2, 1], // i16
  26: [4, 1], // i32
  27: [8, 1], // i64
  28: [8, 1], // f64
  30: [2, 1], // bf16
};

/** Highest ggml type id accepted (others are not a type llama.cpp knows). */
const _MAX_TYPE = 63;
/** llama.cpp's GGML_MAX_DIMS. */
const _MAX_DIMS = 4;
/** Longest key llama.cpp would have a use for; anything longer is damage. */
const _MAX_KEY = 65_536;
/** Nesting of arrays of arrays. */
const _MAX_DEPTH = 4;

/** Sizes of scalar metadata value types (GGUF type ids). */
const _SCALAR: Readonly<Record<number, number>> = {
  0: 1,
  1: 1,
  2: 2,
  3: 2,
  4: 4,
  5: 4,
  6: 4,
  7: 1,
  10: 8,
  11: 8,
  12: 8,
};

class _Bad extends Error {}

/** Sequential little-endian reads over a file in 1 MiB windows. */
class _Cursor {
  readonly #file: Deno.FsFile;
  readonly size: number;
  #buf = new Uint8Array(1 << 20);
  #view = new DataView(this.#buf.buffer);
  #start = 0; // file offset of #buf[0]
  #len = 0;
  pos = 0;

  constructor(file: Deno.FsFile, size: number) {
    this.#file = file;
    this.size = size;
  }

  /** Makes `n` (≤ 1 MiB) bytes at `pos` available; throws when the file ends first. */
  #need(n: number, what: string): number {
    if (this.pos + n > this.size) {
      throw new _Bad(
        `truncated: ${what} at byte ${this.pos} runs past the end of the file (${this.size} bytes)`,
      );
    }
    if (this.pos < this.#start || this.pos + n > this.#start + this.#len) {
      this.#file.seekSync(this.pos, Deno.SeekMode.Start);
      let got = 0;
      const want = Math.min(this.#buf.length, this.size - this.pos);
      while (got < want) {
        const r = this.#file.readSync(this.#buf.subarray(got, want));
        if (r === null || r === 0) break;
        got += r;
      }
      this.#start = this.pos;
      this.#len = got;
      if (got < n) {
        throw new _Bad(`truncated: ${what} at byte ${this.pos} cannot be read`);
      }
    }
    return this.pos - this.#start;
  }

  u32(what: string): number {
    const o = this.#need(4, what);
    this.pos += 4;
    return this.#view.getUint32(o, true);
  }

  u64(what: string): bigint {
    const o = this.#need(8, what);
    this.pos += 8;
    return this.#view.getBigUint64(o, true);
  }

  /** A length or count that must fit in the rest of the file at `each` bytes apiece. */
  count(what: string, each: number): number {
    const at = this.pos;
    const n = this.u64(what);
    const room = BigInt(Math.max(0, this.size - this.pos));
    if (n * BigInt(each) > room) {
      throw new _Bad(
        `${what} at byte ${at} is ${n}, more than the ${room} bytes left in the file can hold`,
      );
    }
    return Number(n);
  }

  skip(n: number, what: string): void {
    if (this.pos + n > this.size) {
      throw new _Bad(
        `truncated: ${what} at byte ${this.pos} runs past the end of the file`,
      );
    }
    this.pos += n;
  }

  /** A string's bytes (only for short ones we need: keys compared by name). */
  text(n: number, what: string): string {
    if (n > this.#buf.length) {
      this.skip(n, what);
      return "";
    }
    const o = this.#need(n, what);
    this.pos += n;
    return new TextDecoder().decode(this.#buf.subarray(o, o + n));
  }
}

/**
 * Checks the header of the GGUF file at `path` against the file.
 *
 * @throws {LlmConfigError} naming the file and what is wrong, in one line.
 */
export function checkGgufHeader(path: string): GgufHeaderInfo {
  let file: Deno.FsFile;
  let size: number;
  try {
    const st = Deno.statSync(path);
    if (!st.isFile) {
      throw new LlmConfigError(
        `The GGUF model path ${path} is not a file.`,
        "gguf",
      );
    }
    size = st.size;
    file = Deno.openSync(path, { read: true });
  } catch (e) {
    if (e instanceof LlmConfigError) throw e;
    if (e instanceof Deno.errors.NotFound) {
      throw new LlmConfigError(
        `The GGUF model file ${path} does not exist; give the path of a .gguf file (e.g. --gguf FILE or ENVSMITH_LLM_GGUF=FILE).`,
        "gguf",
      );
    }
    throw e;
  }
  try {
    return _check(new _Cursor(file, size));
  } catch (e) {
    if (e instanceof _Bad && e.message.startsWith("it does not start")) {
      throw new LlmConfigError(
        `${path} is not a GGUF model file (it does not start with "GGUF"); give a .gguf file as llama.cpp writes it.`,
        "gguf",
      );
    }
    if (e instanceof _Bad) {
      throw new LlmConfigError(
        `${path} is not a loadable GGUF model: ${e.message}; give a complete .gguf file as llama.cpp writes it.`,
        "gguf",
      );
    }
    throw e;
  } finally {
    file.close();
  }
}

function _check(c: _Cursor): GgufHeaderInfo {
  if (c.size < 4 || c.text(4, "the magic") !== "GGUF") {
    throw new _Bad(`it does not start with "GGUF"`);
  }
  const version = c.u32("the version");
  if (version !== 2 && version !== 3) {
    throw new _Bad(
      `version ${version} (llama.cpp reads versions 2 and 3)`,
    );
  }
  // A tensor info takes at least 8 (name length) + 4 + 4 + 8 bytes;
  // a key-value pair at least 8 + 1 + 4 + 1.
  const tensors = c.count("the tensor count", 24);
  const metadata = c.count("the metadata count", 14);
  let alignment = 32;
  for (let i = 0; i < metadata; i++) {
    const klen = c.count(`the length of key ${i}`, 1);
    if (klen === 0 || klen > _MAX_KEY) {
      throw new _Bad(`key ${i} has length ${klen}`);
    }
    const key = klen <= 256
      ? c.text(klen, `key ${i}`)
      : (c.skip(klen, `key ${i}`), "");
    const type = c.u32(`the type of ${key || `key ${i}`}`);
    if (key === "general.alignment" && type === 4) {
      alignment = c.u32("general.alignment");
      if (alignment === 0 || (alignment & (alignment - 1)) !== 0) {
        throw new _Bad(`general.alignment is ${alignment}, not a power of two`);
      }
      continue;
    }
    _value(c, type, key || `key ${i}`, 0);
  }
  const infos: { name: string; bytes: bigint | null; offset: bigint }[] = [];
  for (let i = 0; i < tensors; i++) {
    const nlen = c.count(`the name length of tensor ${i}`, 1);
    if (nlen > _MAX_KEY) {
      throw new _Bad(`tensor ${i} has a name of ${nlen} bytes`);
    }
    const name = nlen <= 256
      ? c.text(nlen, `tensor ${i}`)
      : (c.skip(nlen, `tensor ${i}`), "");
    const label = `tensor ${name ? JSON.stringify(name.slice(0, 60)) : i}`;
    const dims = c.u32(`the dimension count of ${label}`);
    if (dims > _MAX_DIMS) {
      throw new _Bad(`${label} has ${dims} dimensions (at most ${_MAX_DIMS})`);
    }
    let elements = 1n;
    for (let d = 0; d < dims; d++) {
      const n = c.u64(`dimension ${d} of ${label}`);
      if (n > 2n ** 62n) {
        throw new _Bad(`dimension ${d} of ${label} is ${n}`);
      }
      elements *= n;
      if (elements > 2n ** 62n) {
        throw new _Bad(`${label} has more than 2^62 elements`);
      }
    }
    const type = c.u32(`the type of ${label}`);
    if (type > _MAX_TYPE) throw new _Bad(`${label} has unknown type ${type}`);
    const offset = c.u64(`the offset of ${label}`);
    const block = _TYPE_BLOCK[type];
    let bytes: bigint | null = null;
    if (block) {
      const [blockBytes, per] = block;
      if (elements % BigInt(per) !== 0n) {
        throw new _Bad(
          `${label} has ${elements} elements, not a multiple of its type's block of ${per}`,
        );
      }
      bytes = (elements / BigInt(per)) * BigInt(blockBytes);
    }
    if (offset % BigInt(alignment) !== 0n) {
      throw new _Bad(
        `${label} has offset ${offset}, not a multiple of the alignment ${alignment}`,
      );
    }
    infos.push({ name: label, bytes, offset });
  }
  const dataStart = Math.ceil(c.pos / alignment) * alignment;
  const dataBytes = BigInt(Math.max(0, c.size - dataStart));
  if (tensors > 0 && dataStart > c.size) {
    throw new _Bad(
      `the tensor data would start at byte ${dataStart}, past the end of the file (${c.size} bytes)`,
    );
  }
  for (const t of infos) {
    const end = t.offset + (t.bytes ?? 0n);
    if (end > dataBytes) {
      throw new _Bad(
        `${t.name} needs bytes ${t.offset}..${end} of the tensor data, but the file holds ${dataBytes} (truncated?)`,
      );
    }
  }
  return { version, tensors, metadata, dataStart, alignment };
}

/** Skips one metadata value of GGUF type `type`, checking every length against the file. */
function _value(c: _Cursor, type: number, key: string, depth: number): void {
  const scalar = _SCALAR[type];
  if (scalar !== undefined) {
    c.skip(scalar, `the value of ${key}`);
    return;
  }
  if (type === 8) {
    c.skip(c.count(`the string length of ${key}`, 1), `the value of ${key}`);
    return;
  }
  if (type === 9) {
    if (depth >= _MAX_DEPTH) {
      throw new _Bad(`${key} nests arrays more than ${_MAX_DEPTH} deep`);
    }
    const elem = c.u32(`the element type of ${key}`);
    const each = _SCALAR[elem] ?? (elem === 8 ? 8 : elem === 9 ? 12 : 0);
    if (each === 0) {
      throw new _Bad(`${key} is an array of unknown type ${elem}`);
    }
    const n = c.count(`the array length of ${key}`, each);
    if (_SCALAR[elem] !== undefined) {
      c.skip(n * _SCALAR[elem]!, `the values of ${key}`);
      return;
    }
    for (let i = 0; i < n; i++) _value(c, elem, key, depth + 1);
    return;
  }
  throw new _Bad(`${key} has unknown value type ${type}`);
}
