import assert from "node:assert/strict";
import { codeDigest } from "@envsmith/engine/cache";
import { kind as train } from "./train.ts";
import { kind as rollout } from "./rollout.ts";
import { kind as evaluate } from "./evaluate.ts";

Deno.test("the WebAssembly kernels' bytes enter the code digest (hence the keys) of the kinds that run them", () => {
  const sha = /^[0-9a-f]{64}$/;
  const t = codeDigest(train.module);
  assert.match(t.files["policy/kernels/mlp.wasm"] ?? "", sha);
  assert.match(t.files["policy/kernels/obs.wasm"] ?? "", sha);
  for (const k of [rollout, evaluate]) {
    assert.match(
      codeDigest(k.module).files["policy/kernels/obs.wasm"] ?? "",
      sha,
    );
  }
  assert.equal(
    t.files["policy/kernels/mlp.wat"],
    undefined,
    "sources are not code",
  );
});
