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
