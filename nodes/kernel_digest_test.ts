import assert from "node:assert/strict";
import { codeDigest } from "../engine/digest.ts";
import { kind as train } from "./train.ts";

Deno.test("the WebAssembly kernel's bytes enter the code digest (hence the keys) of train nodes", () => {
  const d = codeDigest(train.module);
  assert.match(d.files["policy/kernels/mlp.wasm"] ?? "", /^[0-9a-f]{64}$/);
  assert.equal(
    d.files["policy/kernels/mlp.wat"],
    undefined,
    "sources are not code",
  );
});
