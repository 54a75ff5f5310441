/**
 * Versions recorded in entries and manifests.
 *
 * @module
 */

function _envsmithVersion(): string {
  try {
    const cfg = JSON.parse(
      Deno.readTextFileSync(new URL("../deno.json", import.meta.url)),
    ) as { version?: string };
    return cfg.version ?? "unknown";
  } catch {
    return "unknown";
  }
}

/** `{deno, v8, typescript, envsmith}` versions of this process. */
export const VERSIONS: Readonly<Record<string, string>> = {
  deno: Deno.version.deno,
  v8: Deno.version.v8,
  typescript: Deno.version.typescript,
  envsmith: _envsmithVersion(),
};
