import assert from "node:assert/strict";
import { join } from "node:path";
import { clearDigestCache, codeDigest, importSpecifiers } from "./digest.ts";
import { toFileUrl } from "../paths.ts";

Deno.test("importSpecifiers: static imports, re-exports and literal dynamic import(); type-only imports only when asked", () => {
  const src = [
    'import { a } from "./a.ts";',
    'import * as y from "yaml";',
    'import type { T } from "./t.ts";',
    'export { b } from "./b.ts";',
    'export type { U } from "./u.ts";',
    "let lib;",
    'lib ??= import("valibot");',
    "const w = await import( './w.ts' );",
    "const computed = await import(name);",
  ].join("\n");
  assert.deepEqual(importSpecifiers(src), [
    "./a.ts",
    "yaml",
    "./b.ts",
    "valibot",
    "./w.ts",
  ]);
  assert.deepEqual(importSpecifiers(src, { types: true }), [
    "./a.ts",
    "yaml",
    "./t.ts",
    "./b.ts",
    "./u.ts",
    "valibot",
    "./w.ts",
  ]);
});

Deno.test("code digest: a package or file loaded by dynamic import() enters it, and editing such a file moves it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      join(dir, "deno.json"),
      JSON.stringify({
        imports: { "valibot": "npm:valibot@^1.5.0" },
      }),
    );
    await Deno.writeTextFile(
      join(dir, "deno.lock"),
      JSON.stringify({
        specifiers: { "npm:valibot@^1.5.0": "1.5.2" },
      }),
    );
    await Deno.writeTextFile(join(dir, "lazy.ts"), "export const z = 1;\n");
    await Deno.writeTextFile(
      join(dir, "kind.ts"),
      `let m: Promise<unknown> | undefined;\n` +
        `export const load = () => (m ??= import("valibot"));\n` +
        `export const lazy = () => import("./lazy.ts");\n`,
    );
    const url = toFileUrl(join(dir, "kind.ts"));
    clearDigestCache();
    const d1 = codeDigest(url);
    assert.deepEqual(Object.keys(d1.files), ["kind.ts", "lazy.ts"]);
    // the version deno.lock resolved, not the range deno.json asks for
    assert.deepEqual(d1.packages, ["npm:valibot@1.5.2"]);
    await Deno.writeTextFile(join(dir, "lazy.ts"), "export const z = 2;\n");
    clearDigestCache();
    assert.notEqual(codeDigest(url).digest, d1.digest);
  } finally {
    clearDigestCache();
    await Deno.remove(dir, { recursive: true });
  }
});
