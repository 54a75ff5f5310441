/**
 * One WebAssembly memory laid out once for the kernels that share it.
 *
 * Buffers are reserved first ({@linkcode KernelArena.reserve} returns their
 * byte address), then {@linkcode KernelArena.commit} creates a memory of
 * exactly that size whose maximum equals its initial size. It can never
 * grow, so typed-array views of it stay valid for the arena's life (growing a
 * WebAssembly memory detaches every view of the old buffer).
 *
 * @example
 * ```ts
 * import { KernelArena } from "./arena.ts";
 * import assert from "node:assert/strict";
 * const arena = new KernelArena();
 * const a = arena.reserve(4 * 10);
 * arena.commit();
 * arena.f32(a, 10).fill(1);
 * assert.equal(arena.f32(a, 10)[9], 1);
 * ```
 *
 * @module
 */

/** Bytes in a WebAssembly page. */
const PAGE = 65536;
/** Largest memory of a 32-bit WebAssembly module (4 GiB). */
const MAX_PAGES = 65536;

/** A bump allocator over one non-growing WebAssembly memory. */
export class KernelArena {
  // Address 0 stays unused: kernels read a 0 pointer as "none".
  #top = 64;
  #memory: WebAssembly.Memory | undefined;

  /** Reserve `bytes` (aligned to 64 bytes, a cache line); returns the address. Only before {@linkcode commit}. */
  reserve(bytes: number): number {
    if (this.#memory) {
      throw new Error(
        "KernelArena.reserve after commit: lay out every buffer first",
      );
    }
    if (!Number.isFinite(bytes) || bytes < 0) {
      throw new RangeError(`Cannot reserve ${bytes} bytes`);
    }
    const at = this.#top;
    this.#top = at + Math.ceil(bytes / 64) * 64;
    return at;
  }

  /** Bytes reserved so far. */
  get size(): number {
    return this.#top;
  }

  /** Create the memory (zero-filled). */
  commit(): void {
    if (this.#memory) return;
    const pages = Math.ceil(this.#top / PAGE);
    if (pages > MAX_PAGES) {
      throw new RangeError(
        `The kernels need ${
          (this.#top / 2 ** 30).toFixed(1)
        } GiB of WebAssembly memory, more than its 4 GiB limit: train with fewer parallel environments, steps or a smaller minibatch`,
      );
    }
    this.#memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  }

  /** The committed memory. */
  get memory(): WebAssembly.Memory {
    if (!this.#memory) throw new Error("KernelArena used before commit");
    return this.#memory;
  }

  /** A float32 view of `length` values at byte address `at`. */
  f32(at: number, length: number): Float32Array<ArrayBuffer> {
    return new Float32Array(this.memory.buffer as ArrayBuffer, at, length);
  }

  /** A float64 view. */
  f64(at: number, length: number): Float64Array<ArrayBuffer> {
    return new Float64Array(this.memory.buffer as ArrayBuffer, at, length);
  }

  /** An int32 view. */
  i32(at: number, length: number): Int32Array<ArrayBuffer> {
    return new Int32Array(this.memory.buffer as ArrayBuffer, at, length);
  }

  /** A uint8 view. */
  u8(at: number, length: number): Uint8Array<ArrayBuffer> {
    return new Uint8Array(this.memory.buffer as ArrayBuffer, at, length);
  }
}
