/**
 * Declared input files (`inputs:` of the `exec` kind and of the `exec`
 * engineer): hashed into a node's key at plan, so they must be files whose
 * content can be read to an end. Only regular files, and folders of them,
 * are taken: a device (`/dev/zero`), a FIFO or a socket is refused before it
 * is opened (a FIFO would hang `plan`, a device feed it forever), with one
 * line naming the input. Files are hashed by streaming (memory stays a
 * chunk, whatever their size), and the bytes one node declares are bounded
 * by the `input-bytes` limit (`--limit input-bytes=N`), checked from the
 * files' sizes before any is read. A file already hashed by this process
 * (same device, inode, size, modification and change times) is not read again, so
 * a matrix of nodes sharing one large input hashes it once.
 *
 * @example
 * ```ts
 * import { hashInputs, InputFileError } from "./input_files.ts";
 * import assert from "node:assert/strict";
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/train.py`, "print(1)\n");
 * Deno.symlinkSync("/dev/zero", `${dir}/zero`);
 * assert.deepEqual(Object.keys(hashInputs(dir, ["train.py"], 1024)), ["train.py"]);
 * assert.throws(() => hashInputs(dir, ["zero"], 1024), InputFileError);
 * ```
 *
 * @module
 */
import { createHash } from "node:crypto";
import { join, resolve } from "node:path";
import { UserError } from "./errors.ts";

/**
 * A declared input that cannot be hashed: not a regular file, too large, or missing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hashInputs, InputFileError } from "./input_files.ts";
 * const dir = await Deno.makeTempDir();
 * try {
 *   hashInputs(dir, ["no_such_file.csv"], 1 << 20);
 *   assert.fail("a missing input is refused");
 * } catch (e) {
 *   assert.ok(e instanceof InputFileError);
 *   assert.equal(e.input, "no_such_file.csv");
 * }
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class InputFileError extends UserError {
  /** The input as declared (relative to the experiment file). */
  readonly input: string;
  /** Creates the error. */
  constructor(input: string, message: string) {
    super(message);
    this.name = "InputFileError";
    this.input = input;
  }
}

const _CHUNK = 1 << 20;
/** sha256 of files already read: `dev:ino:size:mtime:ctime` -> digest. */
const _hashed = new Map<string, string>();

function _what(st: Deno.FileInfo): string | null {
  if (st.isFile || st.isDirectory) return null;
  if (st.isFifo) return "a FIFO";
  if (st.isSocket) return "a socket";
  if (st.isCharDevice || st.isBlockDevice) return "a device";
  return "not a regular file";
}

/**
 * sha256 (hex) of every regular file of `inputs` (paths relative to
 * `baseDir`; a folder stands for the files under it), keyed by path
 * relative to `baseDir`, in sorted order. A symlink is followed to what it
 * names, which must be a regular file or a folder.
 *
 * @throws {InputFileError} for an input that does not exist, is (or holds)
 * something other than regular files and folders, or when the files of
 * `inputs` hold more than `maxBytes` together (checked from their sizes
 * before any is read).
 */
export function hashInputs(
  baseDir: string,
  inputs: readonly string[],
  maxBytes: number,
): Record<string, string> {
  const files: { rel: string; path: string; st: Deno.FileInfo }[] = [];
  const seenDirs = new Set<string>();
  let total = 0;
  const walk = (input: string, path: string, rel: string): void => {
    let st: Deno.FileInfo;
    try {
      st = Deno.statSync(path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) {
        throw new InputFileError(
          input,
          rel === input
            ? `input file ${input} does not exist (inputs are relative to ${baseDir}, the experiment file's directory); create it, or correct the path in inputs:`
            : `input ${input}: ${rel} is a dangling symlink; remove it or point it at a file`,
        );
      }
      throw new InputFileError(
        input,
        `input ${input}: cannot read ${rel}: ${(e as Error).message}`,
      );
    }
    const what = _what(st);
    if (what !== null) {
      let target = "";
      try {
        const real = Deno.realPathSync(path);
        if (real !== resolve(path)) target = ` (${real})`;
      } catch { /* not resolvable */ }
      throw new InputFileError(
        input,
        `input ${rel}${target} is ${what}, not a regular file: inputs: are hashed into the key, so they must be regular files or folders of them`,
      );
    }
    if (st.isDirectory) {
      const id = `${st.dev}:${st.ino}`;
      if (seenDirs.has(id)) {
        throw new InputFileError(
          input,
          `input ${input}: ${rel} is a folder already listed (a symlink loop?); inputs: must be a tree of files`,
        );
      }
      seenDirs.add(id);
      const names = [...Deno.readDirSync(path)].map((e) => e.name).sort();
      for (const name of names) walk(input, join(path, name), join(rel, name));
      seenDirs.delete(id);
      return;
    }
    total += st.size;
    if (total > maxBytes) {
      throw new InputFileError(
        input,
        `the inputs of this node hold more than ${maxBytes} bytes (${rel} is ${st.size}); they are hashed at every plan, so the input-bytes limit bounds them: raise it with --limit input-bytes=N (or ENVSMITH_LIMITS=input-bytes=N)`,
      );
    }
    files.push({ rel, path, st });
  };
  for (const input of inputs) walk(input, resolve(baseDir, input), input);
  const out: Record<string, string> = {};
  for (const f of files) out[f.rel] = _hashFile(f.rel, f.path, f.st);
  return out;
}

/** sha256 of a regular file, read in chunks; remembered by inode, size and mtime. */
function _hashFile(rel: string, path: string, st: Deno.FileInfo): string {
  const id =
    `${st.dev}:${st.ino}:${st.size}:${st.mtime?.getTime()}:${st.ctime?.getTime()}`;
  const known = _hashed.get(id);
  if (known !== undefined) return known;
  const file = Deno.openSync(path, { read: true });
  try {
    const now = file.statSync();
    if (!now.isFile || now.ino !== st.ino) {
      throw new InputFileError(
        rel,
        `input ${rel} changed while it was read; plan again`,
      );
    }
    const hash = createHash("sha256");
    const buf = new Uint8Array(_CHUNK);
    let left = st.size;
    while (left > 0) {
      const n = file.readSync(buf.subarray(0, Math.min(_CHUNK, left)));
      if (n === null || n === 0) break;
      hash.update(buf.subarray(0, n));
      left -= n;
    }
    if (left !== 0 || file.readSync(buf.subarray(0, 1)) !== null) {
      throw new InputFileError(
        rel,
        `input ${rel} changed size while it was read; plan again`,
      );
    }
    const digest = hash.digest("hex");
    _hashed.set(id, digest);
    return digest;
  } finally {
    file.close();
  }
}
