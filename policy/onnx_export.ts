/**
 * ONNX checkpoints of {@linkcode Mlp} policies, written with `onnx-proto`.
 *
 * ## The policy contract (what every evaluated ONNX file must provide)
 *
 * | name     | kind   | dtype   | shape          | meaning                                      |
 * | -------- | ------ | ------- | -------------- | -------------------------------------------- |
 * | `obs`    | input  | float32 | `[batch, D]`   | one row per agent (layout: `observation.ts`) |
 * | `logits` | output | float32 | `[batch, 5]`   | unnormalised action scores: stay, up, down, left, right |
 * | `value`  | output | float32 | `[batch, 1]`   | optional; state-value estimate in return units |
 *
 * `batch` is dynamic; `D` is fixed by the observation layout. A file from any
 * tool (e.g. `torch.onnx.export(..., input_names=["obs"],
 * output_names=["logits", "value"], dynamic_axes={"obs": {0: "batch"}})`)
 * that satisfies this table can be evaluated. A model with exactly one input
 * may name it differently.
 *
 * Files written here additionally carry metadata (`metadata_props`):
 * - `envsmith.format`: {@linkcode POLICY_FORMAT}
 * - `envsmith.spec`: the {@linkcode MlpSpec} as JSON
 * - any extra entries the caller passes (observation layout, training state)
 *
 * and name their initializers `trunk.<l>.weight` (`[in, out]`),
 * `trunk.<l>.bias`, `policy.weight`, `policy.bias`, `value.weight`,
 * `value.bias`, `value.scale`, `value.shift`. The graph is
 * `Gemm -> Tanh|Relu` per hidden layer, then `Gemm` for the logits and
 * `Gemm -> Mul(scale) -> Add(shift)` for the value, so the value head's
 * normalisation (see `RunningMeanStd`) is part of the model. Opset 17.
 *
 * @module
 */
import onnxProto from "onnx-proto";
import { Mlp, type MlpSpec } from "./mlp.ts";
import { PolicyContractError } from "./errors.ts";

const { onnx } = onnxProto;

/** Value of the `envsmith.format` metadata entry. */
export const POLICY_FORMAT = "envsmith-policy/1";
/** ONNX operator-set version of exported graphs. */
export const OPSET = 17;
/** Name of the observation input. */
export const INPUT_NAME = "obs";
/** Name of the logits output. */
export const LOGITS_NAME = "logits";
/** Name of the value output. */
export const VALUE_NAME = "value";

/** Options of {@linkcode exportOnnx}. */
export interface ExportOptions {
  /** Multiplier applied to the value head (value normaliser std). @default 1 */
  valueScale?: number;
  /** Offset added after scaling (value normaliser mean). @default 0 */
  valueShift?: number;
  /** Extra `metadata_props` entries. @default {} */
  metadata?: Record<string, string>;
  /** `producer_name`. @default "envsmith" */
  producer?: string;
}

/**
 * Serialise a network as an ONNX model (bytes).
 *
 * @example Export and read back
 * ```ts
 * import { Mlp } from "./mlp.ts";
 * import { exportOnnx, importOnnx } from "./onnx_export.ts";
 * import assert from "node:assert/strict";
 * const net = Mlp.init({ inputSize: 4, hidden: [8], actions: 5, activation: "tanh" }, { seed: 1 });
 * const back = importOnnx(exportOnnx(net, { valueScale: 2 }));
 * assert.deepEqual(back.net.params, net.params);
 * assert.equal(back.valueScale, 2);
 * ```
 */
export function exportOnnx(net: Mlp, options: ExportOptions = {}): Uint8Array {
  const {
    valueScale = 1,
    valueShift = 0,
    metadata = {},
    producer = "envsmith",
  } = options;
  const spec = net.spec;
  const A = spec.actions;
  const nodes: InstanceType<typeof onnx.NodeProto>[] = [];
  const inits: InstanceType<typeof onnx.TensorProto>[] = [];
  const act = spec.activation === "relu" ? "Relu" : "Tanh";
  let x = INPUT_NAME;
  const nl = net.layers.length;
  for (let l = 0; l < nl - 1; l++) {
    const L = net.layers[l]!;
    const w = net.params.subarray(L.w, L.w + L.inSize * L.outSize);
    const b = net.params.subarray(L.b, L.b + L.outSize);
    inits.push(_tensor(`trunk.${l}.weight`, [L.inSize, L.outSize], w));
    inits.push(_tensor(`trunk.${l}.bias`, [L.outSize], b));
    nodes.push(
      _node("Gemm", [x, `trunk.${l}.weight`, `trunk.${l}.bias`], [
        `trunk.${l}.gemm`,
      ]),
    );
    nodes.push(_node(act, [`trunk.${l}.gemm`], [`trunk.${l}.out`]));
    x = `trunk.${l}.out`;
  }
  // Split the fused head W[H][A+1] into policy [H][A] and value [H][1].
  const head = net.layers[nl - 1]!;
  const H = head.inSize;
  const wp = new Float32Array(H * A), wv = new Float32Array(H);
  for (let i = 0; i < H; i++) {
    for (let j = 0; j < A; j++) {
      wp[i * A + j] = net.params[head.w + i * (A + 1) + j]!;
    }
    wv[i] = net.params[head.w + i * (A + 1) + A]!;
  }
  const bp = net.params.slice(head.b, head.b + A);
  const bv = net.params.slice(head.b + A, head.b + A + 1);
  inits.push(
    _tensor("policy.weight", [H, A], wp),
    _tensor("policy.bias", [A], bp),
  );
  inits.push(
    _tensor("value.weight", [H, 1], wv),
    _tensor("value.bias", [1], bv),
  );
  inits.push(_tensor("value.scale", [1], new Float32Array([valueScale])));
  inits.push(_tensor("value.shift", [1], new Float32Array([valueShift])));
  nodes.push(_node("Gemm", [x, "policy.weight", "policy.bias"], [LOGITS_NAME]));
  nodes.push(
    _node("Gemm", [x, "value.weight", "value.bias"], ["value.normalized"]),
  );
  nodes.push(
    _node("Mul", ["value.normalized", "value.scale"], ["value.scaled"]),
  );
  nodes.push(_node("Add", ["value.scaled", "value.shift"], [VALUE_NAME]));

  const graph = onnx.GraphProto.create({
    name: "envsmith_policy",
    node: nodes,
    initializer: inits,
    input: [_valueInfo(INPUT_NAME, ["batch", spec.inputSize])],
    output: [
      _valueInfo(LOGITS_NAME, ["batch", A]),
      _valueInfo(VALUE_NAME, ["batch", 1]),
    ],
  });
  const props: Record<string, string> = {
    ...metadata,
    "envsmith.format": POLICY_FORMAT,
    "envsmith.spec": JSON.stringify(spec),
  };
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: producer,
    producerVersion: "1",
    opsetImport: [
      onnx.OperatorSetIdProto.create({ domain: "", version: OPSET }),
    ],
    graph,
    metadataProps: Object.keys(props).sort().map((key) =>
      onnx.StringStringEntryProto.create({ key, value: props[key]! })
    ),
  });
  return onnx.ModelProto.encode(model).finish();
}

/** What {@linkcode importOnnx} recovers from an envsmith checkpoint. */
export interface ImportedPolicy {
  /** The network, with the exact exported parameters. */
  net: Mlp;
  /** Value scale (normaliser std). */
  valueScale: number;
  /** Value shift (normaliser mean). */
  valueShift: number;
  /** All `metadata_props`. */
  metadata: Record<string, string>;
}

/**
 * Read an ONNX checkpoint written by {@linkcode exportOnnx} back into an
 * {@linkcode Mlp} (for further training). Throws {@linkcode PolicyContractError}
 * for corrupt bytes or a model that was not written by envsmith (such models
 * can still be evaluated with `OnnxPolicy`, but not trained further).
 */
export function importOnnx(
  bytes: Uint8Array,
  source = "<bytes>",
): ImportedPolicy {
  const model = decodeModel(bytes, source);
  const metadata = modelMetadata(model);
  const expected =
    `an envsmith checkpoint (metadata envsmith.format = ${POLICY_FORMAT})`;
  if (metadata["envsmith.format"] !== POLICY_FORMAT) {
    throw new PolicyContractError(
      source,
      metadata["envsmith.format"]
        ? `format "${metadata["envsmith.format"]}" is not supported`
        : "it has no envsmith.format metadata, so it was not written by envsmith and cannot be trained further (it can still be evaluated)",
      expected,
    );
  }
  let spec: MlpSpec;
  try {
    spec = JSON.parse(metadata["envsmith.spec"] ?? "");
  } catch {
    throw new PolicyContractError(
      source,
      "its envsmith.spec metadata is not valid JSON",
      expected,
    );
  }
  _checkSpec(spec, bytes.length, source, expected);
  const net = new Mlp(spec);
  const inits = new Map<string, Float32Array>();
  for (const t of model.graph?.initializer ?? []) {
    const values = _floats(t, source);
    _checkFinite(values, t.name ?? "", source);
    inits.set(t.name ?? "", values);
  }
  const get = (name: string, len: number) => {
    const t = inits.get(name);
    if (!t || t.length !== len) {
      throw new PolicyContractError(
        source,
        t
          ? `initializer ${name} has ${t.length} values, spec needs ${len}`
          : `initializer ${name} is missing`,
        expected,
      );
    }
    return t;
  };
  const nl = net.layers.length;
  for (let l = 0; l < nl - 1; l++) {
    const L = net.layers[l]!;
    net.params.set(get(`trunk.${l}.weight`, L.inSize * L.outSize), L.w);
    net.params.set(get(`trunk.${l}.bias`, L.outSize), L.b);
  }
  const head = net.layers[nl - 1]!;
  const A = spec.actions, H = head.inSize;
  const wp = get("policy.weight", H * A), wv = get("value.weight", H);
  for (let i = 0; i < H; i++) {
    for (let j = 0; j < A; j++) {
      net.params[head.w + i * (A + 1) + j] = wp[i * A + j]!;
    }
    net.params[head.w + i * (A + 1) + A] = wv[i]!;
  }
  net.params.set(get("policy.bias", A), head.b);
  net.params.set(get("value.bias", 1), head.b + A);
  return {
    net,
    valueScale: get("value.scale", 1)[0]!,
    valueShift: get("value.shift", 1)[0]!,
    metadata,
  };
}

/** Bounds of a network read from a file (those of `policy.init`, and room for observation layouts). */
export const SPEC_BOUNDS = {
  inputSize: 1_000_000,
  hidden: 1024,
  layers: 8,
  actions: 64,
} as const;

/**
 * Checks a network spec read from a file against {@linkcode SPEC_BOUNDS}
 * and against the file's size (every parameter takes 4 bytes of it)
 * before anything is allocated for it.
 */
function _checkSpec(
  spec: unknown,
  fileBytes: number,
  source: string,
  expected: string,
): asserts spec is MlpSpec {
  const s = spec as Partial<MlpSpec> | null;
  const int = (x: unknown, max: number) =>
    typeof x === "number" && Number.isInteger(x) && x >= 1 && x <= max;
  const bad = (what: string) => {
    throw new PolicyContractError(
      source,
      `its envsmith.spec metadata ${what}`,
      expected,
    );
  };
  if (typeof s !== "object" || s === null) return bad("is not an object");
  if (!int(s.inputSize, SPEC_BOUNDS.inputSize)) {
    bad(
      `has input size ${
        JSON.stringify(s.inputSize)
      } (an integer from 1 to ${SPEC_BOUNDS.inputSize})`,
    );
  }
  if (
    !Array.isArray(s.hidden) || s.hidden.length < 1 ||
    s.hidden.length > SPEC_BOUNDS.layers ||
    !s.hidden.every((h) => int(h, SPEC_BOUNDS.hidden))
  ) {
    bad(
      `has hidden sizes ${
        JSON.stringify(s.hidden)?.slice(0, 80)
      } (1 to ${SPEC_BOUNDS.layers} layers of 1 to ${SPEC_BOUNDS.hidden})`,
    );
  }
  if (!int(s.actions, SPEC_BOUNDS.actions)) {
    bad(`has ${JSON.stringify(s.actions)} actions`);
  }
  if (s.activation !== "tanh" && s.activation !== "relu") {
    bad(`has activation ${JSON.stringify(s.activation)} (tanh or relu)`);
  }
  const widths = [s.inputSize!, ...s.hidden!, s.actions! + 1];
  let params = 0;
  for (let i = 0; i + 1 < widths.length; i++) {
    params += widths[i]! * widths[i + 1]! + widths[i + 1]!;
  }
  if (params * 4 > fileBytes) {
    bad(
      `describes ${params} parameters (${
        params * 4
      } bytes), more than the file's ${fileBytes} bytes can hold`,
    );
  }
}

/** Refuses NaN and infinite weights, naming the first. */
function _checkFinite(values: Float32Array, name: string, source: string) {
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i]!)) {
      throw new PolicyContractError(
        source,
        `initializer ${name} holds ${values[i]} at index ${i}`,
        "finite weights (a diverged or damaged model cannot be evaluated or trained)",
      );
    }
  }
}

/**
 * Refuses a model whose float32 initializers hold NaN or infinite values
 * (a diverged or damaged model), naming the first.
 *
 * @throws {PolicyContractError}
 */
export function checkFiniteInitializers(
  model: InstanceType<typeof onnx.ModelProto>,
  source: string,
): void {
  for (const t of model.graph?.initializer ?? []) {
    if (t.dataType !== onnx.TensorProto.DataType.FLOAT) continue;
    _checkFinite(_floats(t, source), t.name ?? "", source);
  }
}

/**
 * Decode ONNX bytes, turning protobuf failures into a
 * {@linkcode PolicyContractError} whose message ends with `expected`.
 */
export function decodeModel(
  bytes: Uint8Array,
  source = "<bytes>",
  expected = "an ONNX ModelProto (protobuf) file",
): InstanceType<typeof onnx.ModelProto> {
  if (bytes.length === 0) {
    throw new PolicyContractError(source, "the file is empty", expected);
  }
  let model;
  try {
    model = onnx.ModelProto.decode(bytes);
  } catch (e) {
    throw new PolicyContractError(
      source,
      `the bytes are not a valid ONNX protobuf (${
        (e as Error).message
      }); the file is corrupt or truncated`,
      expected,
    );
  }
  if (!model.graph || !model.graph.node || model.graph.node.length === 0) {
    throw new PolicyContractError(
      source,
      "the model has no graph (corrupt or not an ONNX model)",
      expected,
    );
  }
  return model;
}

/** The `metadata_props` of a decoded model as a record. */
export function modelMetadata(
  model: InstanceType<typeof onnx.ModelProto>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of model.metadataProps ?? []) out[p.key ?? ""] = p.value ?? "";
  return out;
}

function _tensor(name: string, dims: number[], data: Float32Array) {
  const raw = new Uint8Array(data.byteLength);
  new Float32Array(raw.buffer).set(data); // host order; all supported hosts are little-endian
  return onnx.TensorProto.create({
    name,
    dims,
    dataType: onnx.TensorProto.DataType.FLOAT,
    rawData: raw,
  });
}

function _node(opType: string, input: string[], output: string[]) {
  return onnx.NodeProto.create({ opType, input, output, name: output[0]! });
}

function _valueInfo(name: string, shape: (number | string)[]) {
  return onnx.ValueInfoProto.create({
    name,
    type: {
      tensorType: {
        elemType: onnx.TensorProto.DataType.FLOAT,
        shape: {
          dim: shape.map((d) =>
            typeof d === "number" ? { dimValue: d } : { dimParam: d }
          ),
        },
      },
    },
  });
}

function _floats(t: onnxProto.onnx.ITensorProto, source: string): Float32Array {
  if (t.dataType !== onnx.TensorProto.DataType.FLOAT) {
    throw new PolicyContractError(
      source,
      `initializer ${t.name} is not float32`,
      "float32 initializers",
    );
  }
  if (t.rawData && t.rawData.length > 0) {
    // Copy: protobufjs may hand out a Node Buffer view into a shared pool.
    const copy = new Uint8Array(t.rawData.length);
    copy.set(t.rawData);
    return new Float32Array(copy.buffer, 0, copy.length >> 2);
  }
  return Float32Array.from(t.floatData ?? []);
}
