import assert from "node:assert/strict";
import {
  initCheckpoint,
  loadCheckpoint,
  saveCheckpoint,
} from "./checkpoint.ts";
import { Mlp } from "./mlp.ts";
import { exportOnnx } from "./onnx_export.ts";
import { OnnxPolicy } from "./onnx_policy.ts";
import { PolicyContractError } from "./errors.ts";

Deno.test("checkpoint round-trips weights, observation spec, normaliser, optimiser and counters", () => {
  const ck = initCheckpoint({
    hidden: [8, 8],
    activation: "relu",
    obs: { version: 1, radius: 1 },
    seed: 4,
  });
  ck.valueNorm.update(new Float32Array([1, 2, 3, 10]), 4);
  ck.adam = {
    t: 12,
    m: new Float32Array(ck.net.size).fill(0.5),
    v: new Float32Array(ck.net.size).fill(0.25),
  };
  ck.counters = { updates: 3, samples: 999, episodes: 40 };
  const back = loadCheckpoint(saveCheckpoint(ck));
  assert.deepEqual(back.net.params, ck.net.params);
  assert.deepEqual(back.net.spec, ck.net.spec);
  assert.deepEqual(back.obs, { version: 1, radius: 1 });
  assert.equal(back.valueNorm.mean, ck.valueNorm.mean);
  assert.equal(back.valueNorm.var, ck.valueNorm.var);
  assert.equal(back.valueNorm.count, ck.valueNorm.count);
  assert.deepEqual(back.adam, ck.adam);
  assert.deepEqual(back.counters, ck.counters);
  assert.deepEqual(
    saveCheckpoint(back),
    saveCheckpoint(ck),
    "saving is deterministic",
  );
});

Deno.test("a checkpoint is a contract-conforming ONNX policy", async () => {
  const ck = initCheckpoint();
  const p = await OnnxPolicy.load(saveCheckpoint(ck), { inputSize: 162 });
  assert.equal(p.metadata["envsmith.obs"], '{"version":1,"radius":2}');
  await p.release();
});

Deno.test("loading a checkpoint whose layout does not match its network fails clearly", () => {
  const net = Mlp.init({
    inputSize: 10,
    hidden: [4],
    actions: 5,
    activation: "tanh",
  });
  const bytes = exportOnnx(net, {
    metadata: { "envsmith.obs": '{"version":1,"radius":2}' },
  });
  assert.throws(
    () => loadCheckpoint(bytes, "x.onnx"),
    (e: unknown) =>
      e instanceof PolicyContractError &&
      /has 162 values but the network reads 10/.test(e.message),
  );
  const future = exportOnnx(net, {
    metadata: { "envsmith.obs": '{"version":99,"radius":2}' },
  });
  assert.throws(
    () => loadCheckpoint(future, "f.onnx"),
    /version 99 is not supported/,
  );
});
