/**
 * What the language-model node tests share (not part of the API).
 *
 * @module
 */
import { lmPython } from "./lm_env.ts";

/** The language-model Python, or null when `deno task setup:lm` has not made it (tests then skip). */
export function lmPythonOrNull(): string | null {
  try {
    return lmPython();
  } catch {
    return null;
  }
}

/**
 * A test that runs `fn` with the language-model Python and a fresh
 * temporary folder (removed afterwards); without the environment it is
 * ignored, and its name says why and how to make it.
 */
export function lmTest(
  name: string,
  fn: (python: string, dir: string) => Promise<void>,
  options: Pick<Deno.TestDefinition, "sanitizeResources" | "sanitizeOps"> = {},
): void {
  const python = lmPythonOrNull();
  Deno.test({
    ...options,
    name: python === null
      ? `${name} [ignored: the LM environment is missing; create it with \`deno task setup:lm\`]`
      : name,
    ignore: python === null,
    fn: async () => {
      const dir = await Deno.makeTempDir();
      try {
        await fn(python!, dir);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}
