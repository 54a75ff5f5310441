/**
 * Batched inference of ONNX policies with onnxruntime-node.
 *
 * One `run` call costs about 13 µs whatever the batch (DESIGN §9), so callers
 * put every agent of every parallel environment into one call. Sessions use
 * one intra-op thread and graph optimisation `all`, which is fastest for small
 * MLPs on these machines.
 *
 * @module
 */
import ort from "onnxruntime-node";
import type onnxProto from "onnx-proto";
import { PolicyContractError } from "./errors.ts";
import {
  checkFiniteInitializers,
  decodeModel,
  INPUT_NAME,
  LOGITS_NAME,
  modelMetadata,
  VALUE_NAME,
} from "./onnx_export.ts";

/** Options of {@linkcode OnnxPolicy.load}. */
export interface OnnxPolicyOptions {
  /** Where the bytes came from, for error messages. @default "<bytes>" */
  source?: string;
  /** Required observation width `D`; checked against the model's input. */
  inputSize?: number;
  /** Required number of actions. @default 5 */
  actions?: number;
  /** onnxruntime intra-op threads. @default 1 */
  threads?: number;
}

/** Outputs of one {@linkcode OnnxPolicy.run}. */
export interface PolicyOutputs {
  /** `[n, actions]` row-major logits. */
  logits: Float32Array;
  /** `[n]` values, when the model has a `value` output. */
  value?: Float32Array;
}

/**
 * An ONNX policy checked against the contract and loaded into onnxruntime.
 *
 * @example
 * ```ts
 * import { Mlp } from "./mlp.ts";
 * import { exportOnnx } from "./onnx_export.ts";
 * import { OnnxPolicy } from "./onnx_policy.ts";
 * import assert from "node:assert/strict";
 * const net = Mlp.init({ inputSize: 4, hidden: [8], actions: 5, activation: "tanh" });
 * const policy = await OnnxPolicy.load(exportOnnx(net));
 * const out = await policy.run(new Float32Array(8), 2);
 * assert.equal(out.logits.length, 10);
 * await policy.release();
 * ```
 */
export class OnnxPolicy {
  /** Observation width `D`. */
  readonly inputSize: number;
  /** Number of actions. */
  readonly actions: number;
  /** Whether the model has a `value` output. */
  readonly hasValue: boolean;
  /** The model's `metadata_props`. */
  readonly metadata: Readonly<Record<string, string>>;
  /** Where it came from. */
  readonly source: string;
  #session: ort.InferenceSession;
  #inputName: string;
  #fetches: string[];

  private constructor(
    session: ort.InferenceSession,
    inputName: string,
    inputSize: number,
    actions: number,
    hasValue: boolean,
    metadata: Record<string, string>,
    source: string,
  ) {
    this.#session = session;
    this.#inputName = inputName;
    this.inputSize = inputSize;
    this.actions = actions;
    this.hasValue = hasValue;
    this.metadata = metadata;
    this.source = source;
    this.#fetches = hasValue ? [LOGITS_NAME, VALUE_NAME] : [LOGITS_NAME];
  }

  /**
   * Validate `bytes` against the policy contract and create a session.
   * Throws {@linkcode PolicyContractError} naming the expected shapes when the
   * file is corrupt or its inputs/outputs do not fit.
   */
  static async load(
    bytes: Uint8Array,
    options: OnnxPolicyOptions = {},
  ): Promise<OnnxPolicy> {
    const { source = "<bytes>", actions = 5, threads = 1 } = options;
    const d = options.inputSize;
    const contract = `one float32 input "${INPUT_NAME}" of shape [batch, ${
      d ?? "D"
    }], a float32 output "${LOGITS_NAME}" of shape [batch, ${actions}] and optionally "${VALUE_NAME}" of shape [batch, 1]`;
    const model = decodeModel(bytes, source, contract);
    checkFiniteInitializers(model, source);
    const graph = model.graph!;
    const initNames = new Set((graph.initializer ?? []).map((t) => t.name));
    const inputs = (graph.input ?? []).filter((i) => !initNames.has(i.name));
    const outputs = graph.output ?? [];
    if (inputs.length !== 1) {
      throw new PolicyContractError(
        source,
        `the model has ${inputs.length} inputs (${
          inputs.map((i) => i.name).join(", ") || "none"
        })`,
        contract,
      );
    }
    const input = inputs[0]!;
    const inShape = _shape(input, source, contract);
    if (inShape.length !== 2) {
      throw new PolicyContractError(
        source,
        `input "${input.name}" has rank ${inShape.length}`,
        contract,
      );
    }
    const dim1 = inShape[1];
    if (typeof dim1 !== "number" && d === undefined) {
      throw new PolicyContractError(
        source,
        `input "${input.name}" has a dynamic second dimension and no observation width was given`,
        contract,
      );
    }
    if (d !== undefined && typeof dim1 === "number" && dim1 !== d) {
      throw new PolicyContractError(
        source,
        `input "${input.name}" has shape [${
          inShape.join(", ")
        }] but the observation layout gives ${d} values per agent`,
        contract,
      );
    }
    const inputSize = typeof dim1 === "number" ? dim1 : d!;
    if (inputSize < 1 || inputSize > bytes.length) {
      throw new PolicyContractError(
        source,
        `input "${input.name}" has ${inputSize} values per row, which a file of ${bytes.length} bytes cannot have weights for`,
        contract,
      );
    }
    const logits = outputs.find((o) => o.name === LOGITS_NAME);
    if (!logits) {
      throw new PolicyContractError(
        source,
        `the model has no output "${LOGITS_NAME}" (outputs: ${
          outputs.map((o) => o.name).join(", ")
        })`,
        contract,
      );
    }
    const lShape = _shape(logits, source, contract);
    if (
      lShape.length !== 2 ||
      (typeof lShape[1] === "number" && lShape[1] !== actions)
    ) {
      throw new PolicyContractError(
        source,
        `output "${LOGITS_NAME}" has shape [${lShape.join(", ")}]`,
        contract,
      );
    }
    const value = outputs.find((o) => o.name === VALUE_NAME);
    if (value) {
      const vShape = _shape(value, source, contract);
      const ok = (vShape.length === 2 &&
        (vShape[1] === 1 || typeof vShape[1] !== "number")) ||
        vShape.length === 1;
      if (!ok) {
        throw new PolicyContractError(
          source,
          `output "${VALUE_NAME}" has shape [${vShape.join(", ")}]`,
          contract,
        );
      }
    }
    let session: ort.InferenceSession;
    try {
      session = await ort.InferenceSession.create(bytes, {
        intraOpNumThreads: threads,
        interOpNumThreads: 1,
        graphOptimizationLevel: "all",
        executionMode: "sequential",
      });
    } catch (e) {
      throw new PolicyContractError(
        source,
        `onnxruntime rejected the model (${
          (e as Error).message.split("\n")[0]
        })`,
        contract,
      );
    }
    return new OnnxPolicy(
      session,
      input.name ?? INPUT_NAME,
      inputSize,
      actions,
      !!value,
      modelMetadata(model),
      source,
    );
  }

  /**
   * Run `n` rows of `obs` (row-major, {@linkcode inputSize} per row) in one
   * call. The returned arrays belong to the caller.
   */
  async run(obs: Float32Array, n: number): Promise<PolicyOutputs> {
    const need = n * this.inputSize;
    if (obs.length < need) {
      throw new RangeError(
        `Observation buffer has ${obs.length} values; ${n} rows need ${need}`,
      );
    }
    const data = obs.length === need ? obs : obs.subarray(0, need);
    const tensor = new ort.Tensor("float32", data, [n, this.inputSize]);
    const res = await this.#session.run(
      { [this.#inputName]: tensor },
      this.#fetches,
    );
    const logits = res[LOGITS_NAME]!.data as Float32Array;
    if (logits.length !== n * this.actions) {
      throw new PolicyContractError(
        this.source,
        `output "${LOGITS_NAME}" returned ${logits.length} values for ${n} rows`,
        `[${n}, ${this.actions}] logits`,
      );
    }
    const out: PolicyOutputs = { logits };
    if (this.hasValue) out.value = res[VALUE_NAME]!.data as Float32Array;
    return out;
  }

  /** Free the native session. */
  async release(): Promise<void> {
    await this.#session.release();
  }
}

type ValueInfo = onnxProto.onnx.IValueInfoProto;

function _shape(
  info: ValueInfo,
  source: string,
  contract: string,
): (number | string)[] {
  const t = info.type?.tensorType;
  if (!t || t.elemType !== 1) {
    throw new PolicyContractError(
      source,
      `"${info.name}" is not a float32 tensor`,
      contract,
    );
  }
  return (t.shape?.dim ?? []).map((dim) => {
    if (
      dim.dimValue !== undefined && dim.dimValue !== null &&
      Number(dim.dimValue) > 0
    ) {
      return Number(dim.dimValue);
    }
    return dim.dimParam || "?";
  });
}
