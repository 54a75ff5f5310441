import { scaledMs } from "../engine/testdata/load.ts";
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

Deno.test("tampered network metadata and non-finite weights are refused at load, in one line, before any allocation", async () => {
  const onnx = (await import("onnx-proto")).default.onnx;
  const ck = initCheckpoint({ hidden: [8], seed: 1 });
  const good = saveCheckpoint(ck);
  const edit = (f: (m: InstanceType<typeof onnx.ModelProto>) => void) => {
    const m = onnx.ModelProto.decode(good);
    f(m);
    return onnx.ModelProto.encode(m).finish();
  };
  const withSpec = (change: Record<string, unknown>) =>
    edit((m) => {
      const p = m.metadataProps.find((p) => p.key === "envsmith.spec")!;
      p.value = JSON.stringify({ ...JSON.parse(p.value!), ...change });
    });
  const cases: [Uint8Array, RegExp][] = [
    [withSpec({ hidden: [100000] }), /hidden sizes \[100000\]/],
    [withSpec({ inputSize: -3 }), /input size -3/],
    [
      withSpec({ hidden: [1024, 1024, 1024] }),
      /more than the file's \d+ bytes can hold/,
    ],
  ];
  for (const [bytes, expected] of cases) {
    const t0 = performance.now();
    assert.throws(
      () => loadCheckpoint(bytes, "tampered.onnx"),
      (e: unknown) =>
        e instanceof PolicyContractError && expected.test(e.message) &&
        e.message.startsWith("Cannot use ONNX policy tampered.onnx"),
    );
    assert.ok(performance.now() - t0 < scaledMs(100));
  }
  // NaN weights: refused by training's loader and by evaluation's.
  const nan = edit((m) => {
    const t = m.graph!.initializer!.find((t) => t.name === "trunk.0.weight")!;
    const f = new Float32Array(
      t.rawData!.slice().buffer,
      0,
      t.rawData!.length >> 2,
    );
    f[3] = NaN;
    t.rawData = new Uint8Array(f.buffer);
  });
  assert.throws(
    () => loadCheckpoint(nan, "nan.onnx"),
    /nan\.onnx: initializer trunk\.0\.weight holds NaN at index 3/,
  );
  await assert.rejects(
    () => OnnxPolicy.load(nan, { source: "nan.onnx" }),
    /nan\.onnx: initializer trunk\.0\.weight holds NaN at index 3/,
  );
});
