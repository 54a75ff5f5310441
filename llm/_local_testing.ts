// For the tests that load local models (node-llama-cpp): their model folder.
import { disposeLocalModels } from "./local.ts";

/**
 * Runs `fn` with a fresh temporary folder (its name starts with `prefix`)
 * for model files; afterwards frees the local models that were loaded and
 * removes the folder, whether `fn` passed or threw.
 */
export async function withModelDir(
  prefix: string,
  fn: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix });
  try {
    await fn(dir);
  } finally {
    await disposeLocalModels();
    await Deno.remove(dir, { recursive: true });
  }
}
