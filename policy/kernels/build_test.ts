import assert from "node:assert/strict";
import { buildAll, KERNEL_NAMES } from "./build.ts";

Deno.test("the committed .wasm kernels are exactly what their WAT sources build to", async () => {
  const built = await buildAll();
  assert.deepEqual([...built.keys()], [...KERNEL_NAMES]);
  for (const [name, bytes] of built) {
    const committed = await Deno.readFile(
      new URL(`./${name}.wasm`, import.meta.url),
    );
    assert.ok(
      committed.length === bytes.length &&
        committed.every((b, i) => b === bytes[i]),
      `${name}.wasm is stale: run ./envsmith build:wasm and commit it`,
    );
  }
});
