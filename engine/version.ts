/**
 * Versions recorded in entries and manifests.
 *
 * @module
 */
import config from "./deno.json" with { type: "json" };

/** `{deno, v8, typescript, envsmith}` versions of this process (`envsmith`: the engine package's version). */
export const VERSIONS: Readonly<Record<string, string>> = {
  deno: Deno.version.deno,
  v8: Deno.version.v8,
  typescript: Deno.version.typescript,
  envsmith: config.version,
};
