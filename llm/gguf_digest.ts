/**
 * The sha256 of a GGUF model file: what enters node keys and reply-cache
 * hashes in place of its path. Kept apart from `local.ts` so that node kinds
 * can fingerprint a model file without importing the local runtime (and
 * node-llama-cpp) into their code digests.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { resolve } from "node:path";
import { LlmConfigError } from "./errors.ts";
import { checkGgufHeader } from "./gguf_header.ts";

const _digests = new Map<string, string>();

/**
 * sha256 (hex) of a model file, memoised per path, size and modification
 * time for the life of the process (node keys are computed synchronously
 * while planning, so this reads synchronously: about 2 s per GB).
 *
 * @throws {LlmConfigError} when the file does not exist or is not a GGUF file.
 */
export function ggufDigestSync(path: string): string {
  const abs = resolve(path);
  let st: Deno.FileInfo;
  try {
    st = Deno.statSync(abs);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new LlmConfigError(
        `The GGUF model file ${path} does not exist; give the path of a .gguf file (e.g. --gguf FILE or ENVSMITH_LLM_GGUF=FILE).`,
        "gguf",
      );
    }
    throw e;
  }
  if (!st.isFile) {
    throw new LlmConfigError(
      `The GGUF model path ${path} is not a file.`,
      "gguf",
    );
  }
  const memo = `${abs}\0${st.size}\0${st.mtime?.getTime() ?? 0}`;
  let digest = _digests.get(memo);
  if (digest === undefined) {
    // The header first: a file that cannot be a model is refused in
    // milliseconds, before it is hashed or reaches the loader.
    checkGgufHeader(path);
    digest = _hashFile(abs, path);
    _digests.set(memo, digest);
  }
  return digest;
}

/** {@linkcode ggufDigestSync}, as a promise. */
export function ggufDigest(path: string): Promise<string> {
  try {
    return Promise.resolve(ggufDigestSync(path));
  } catch (e) {
    return Promise.reject(e);
  }
}

function _hashFile(abs: string, shown: string): string {
  const f = Deno.openSync(abs, { read: true });
  const h = createHash("sha256");
  try {
    const buf = new Uint8Array(1 << 22);
    let first = true;
    for (;;) {
      const n = f.readSync(buf);
      if (n === null) break;
      if (first) {
        first = false;
        if (n < 4 || new TextDecoder().decode(buf.subarray(0, 4)) !== "GGUF") {
          throw new LlmConfigError(
            `${shown} is not a GGUF model file (it does not start with "GGUF"); give a .gguf file as llama.cpp writes it.`,
            "gguf",
          );
        }
      }
      h.update(buf.subarray(0, n));
    }
    if (first) {
      throw new LlmConfigError(`${shown} is empty, not a GGUF file.`, "gguf");
    }
  } finally {
    f.close();
  }
  return h.digest("hex");
}
