import assert from "node:assert/strict";
import onnxProto from "onnx-proto";
import { Mlp, MlpWorkspace } from "./mlp.ts";
import { exportOnnx, importOnnx, POLICY_FORMAT } from "./onnx_export.ts";
import { OnnxPolicy } from "./onnx_policy.ts";
import { PolicyContractError } from "./errors.ts";
import { Rng } from "../mapf/mod.ts";
import { fiveActionSpec } from "./_test_mlp.ts";

const { onnx } = onnxProto;

function randomObs(seed: number, n: number, d: number): Float32Array {
  const rng = new Rng(seed);
  return new Float32Array(n * d).map(
    () => (rng.float() < 0.4 ? 0 : rng.normal()),
  );
}

for (const activation of ["tanh", "relu"] as const) {
  Deno.test(`onnx forward agrees with the TS forward within 1e-5 (${activation})`, async () => {
    const spec = fiveActionSpec(40, [32, 24], activation);
    const net = Mlp.init(spec, { seed: 7, policyGain: 1 });
    const scale = 2.5, shift = -0.75;
    const policy = await OnnxPolicy.load(
      exportOnnx(net, { valueScale: scale, valueShift: shift }),
    );
    try {
      assert.equal(policy.inputSize, 40);
      assert.equal(policy.hasValue, true);
      assert.equal(policy.metadata["envsmith.format"], POLICY_FORMAT);
      for (const n of [1, 37, 300]) {
        const obs = randomObs(n, n, 40);
        const ws = new MlpWorkspace(spec, n);
        net.forward(obs, n, ws);
        const { logits, value } = await policy.run(obs, n);
        let maxDiff = 0;
        for (let r = 0; r < n; r++) {
          for (let k = 0; k < 5; k++) {
            maxDiff = Math.max(
              maxDiff,
              Math.abs(logits[r * 5 + k]! - ws.out[r * 6 + k]!),
            );
          }
          maxDiff = Math.max(
            maxDiff,
            Math.abs(value![r]! - (ws.out[r * 6 + 5]! * scale + shift)),
          );
        }
        assert.ok(maxDiff < 1e-5, `batch ${n}: max |ts - onnx| = ${maxDiff}`);
      }
    } finally {
      await policy.release();
    }
  });
}

Deno.test("onnx export/import round-trips parameters, value normaliser and metadata", () => {
  const spec = fiveActionSpec(9, [6], "relu");
  const net = Mlp.init(spec, { seed: 3 });
  const bytes = exportOnnx(net, {
    valueScale: 3,
    valueShift: 1.5,
    metadata: { "envsmith.obs": '{"v":1}' },
  });
  const back = importOnnx(bytes);
  assert.deepEqual(back.net.spec, spec);
  assert.deepEqual(back.net.params, net.params);
  assert.equal(back.valueScale, 3);
  assert.equal(back.valueShift, 1.5);
  assert.equal(back.metadata["envsmith.obs"], '{"v":1}');
  // byte-identical for identical inputs (deterministic checkpoints)
  assert.deepEqual(
    exportOnnx(net, {
      valueScale: 3,
      valueShift: 1.5,
      metadata: { "envsmith.obs": '{"v":1}' },
    }),
    bytes,
  );
});

/**
 * An independently built model with the same contract but another structure:
 * MatMul + Add + Relu + MatMul, input named "x", logits only (as a user's
 * PyTorch export might look), and opset 18.
 */
function handWrittenModel(
  w1: Float32Array,
  b1: Float32Array,
  w2: Float32Array,
  d: number,
  h: number,
) {
  const tensor = (name: string, dims: number[], data: Float32Array) =>
    onnx.TensorProto.create({
      name,
      dims,
      dataType: 1,
      floatData: Array.from(data),
    });
  const info = (name: string, dims: (number | string)[]) =>
    onnx.ValueInfoProto.create({
      name,
      type: {
        tensorType: {
          elemType: 1,
          shape: {
            dim: dims.map((
              x,
            ) => (typeof x === "number" ? { dimValue: x } : { dimParam: x })),
          },
        },
      },
    });
  const graph = onnx.GraphProto.create({
    name: "torch_jit",
    node: [
      onnx.NodeProto.create({
        opType: "MatMul",
        input: ["x", "W1"],
        output: ["z1"],
      }),
      onnx.NodeProto.create({
        opType: "Add",
        input: ["z1", "B1"],
        output: ["a1"],
      }),
      onnx.NodeProto.create({ opType: "Relu", input: ["a1"], output: ["h1"] }),
      onnx.NodeProto.create({
        opType: "MatMul",
        input: ["h1", "W2"],
        output: ["logits"],
      }),
    ],
    initializer: [
      tensor("W1", [d, h], w1),
      tensor("B1", [h], b1),
      tensor("W2", [h, 5], w2),
    ],
    input: [info("x", ["N", d])],
    output: [info("logits", ["N", 5])],
  });
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: "pytorch",
    opsetImport: [{ domain: "", version: 18 }],
    graph,
  });
  return onnx.ModelProto.encode(model).finish();
}

Deno.test("an independently built ONNX model with the same contract evaluates", async () => {
  const d = 12, h = 8, rng = new Rng(21);
  const w1 = new Float32Array(d * h).map(() => rng.normal());
  const b1 = new Float32Array(h).map(() => rng.normal());
  const w2 = new Float32Array(h * 5).map(() => rng.normal());
  const policy = await OnnxPolicy.load(handWrittenModel(w1, b1, w2, d, h), {
    inputSize: d,
  });
  try {
    assert.equal(policy.hasValue, false);
    const n = 6;
    const obs = randomObs(5, n, d);
    const { logits, value } = await policy.run(obs, n);
    assert.equal(value, undefined);
    for (let r = 0; r < n; r++) {
      const hid = new Float64Array(h);
      for (let j = 0; j < h; j++) {
        let s = b1[j]!;
        for (let i = 0; i < d; i++) s += obs[r * d + i]! * w1[i * h + j]!;
        hid[j] = Math.max(0, s);
      }
      for (let k = 0; k < 5; k++) {
        let s = 0;
        for (let j = 0; j < h; j++) s += hid[j]! * w2[j * 5 + k]!;
        assert.ok(
          Math.abs(s - logits[r * 5 + k]!) < 1e-4,
          `row ${r} action ${k}: ${s} vs ${logits[r * 5 + k]}`,
        );
      }
    }
    // Not an envsmith checkpoint: evaluation works, further training is refused clearly.
    assert.throws(
      () => importOnnx(handWrittenModel(w1, b1, w2, d, h)),
      /not written by envsmith/,
    );
  } finally {
    await policy.release();
  }
});

Deno.test("a corrupt or truncated file gives a PolicyContractError naming the expected shapes", async () => {
  const net = Mlp.init({
    inputSize: 10,
    hidden: [4],
    actions: 5,
    activation: "tanh",
  });
  const good = exportOnnx(net);
  const garbage = new Uint8Array(200).map((_, i) => (i * 37 + 11) & 255);
  for (
    const bytes of [
      new Uint8Array(0),
      garbage,
      good.subarray(0, good.length >> 1),
    ]
  ) {
    await assert.rejects(
      () => OnnxPolicy.load(bytes, { source: "bad.onnx", inputSize: 10 }),
      (e: unknown) => {
        assert.ok(e instanceof PolicyContractError);
        assert.match(e.message, /^Cannot use ONNX policy bad\.onnx: /);
        assert.match(e.message, /input "obs" of shape \[batch, 10\]/);
        assert.match(e.message, /"logits" of shape \[batch, 5\]/);
        return true;
      },
    );
  }
});

Deno.test("a model with the wrong contract is rejected with the expected shapes", async () => {
  const wrongWidth = exportOnnx(
    Mlp.init({ inputSize: 10, hidden: [4], actions: 5, activation: "tanh" }),
  );
  await assert.rejects(
    () => OnnxPolicy.load(wrongWidth, { source: "w.onnx", inputSize: 158 }),
    /input "obs" has shape \[batch, 10\] but the observation layout gives 158 values per agent\. Expected one float32 input "obs" of shape \[batch, 158\]/,
  );
  const wrongActions = exportOnnx(
    Mlp.init({ inputSize: 10, hidden: [4], actions: 4, activation: "tanh" }),
  );
  await assert.rejects(
    () => OnnxPolicy.load(wrongActions, { source: "a.onnx" }),
    /output "logits" has shape \[batch, 4\]\. Expected .*\[batch, 5\]/,
  );
});
