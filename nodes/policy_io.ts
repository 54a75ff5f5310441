/**
 * Shared plumbing of the policy node kinds (`policy.init`, `train`,
 * `rollout`, `evaluate`): the policy value format, reading policies and
 * instances from upstream node values, and the key fingerprint.
 *
 * ## The policy value
 * `policy.init` and `train` produce
 * ```json
 * { "onnx": { "$blob": "<sha256>", "size": 123, "media": "application/onnx" },
 *   "obs": { "version": 1, "radius": 2 }, "hidden": [64, 64], "activation": "tanh",
 *   "updates": 40, "samples": 123456, "episodes": 9876 }
 * ```
 * Kinds that read a policy (`policy:` parameter) accept that value, a bare
 * ONNX blob reference, or a path to an ONNX file (`policy: models/x.onnx` or
 * `policy: { file: models/x.onnx }`, relative to the experiment file; its
 * content is hashed into the key). A file without envsmith metadata (e.g.
 * exported from PyTorch) is evaluated with the observation layout whose
 * width matches its input (see `policy/observation.ts`).
 *
 * ## Instances (`envs:` parameter)
 * The value of a `generate` node (`{ instances: <blob of JSON lines> | [...] }`),
 * a blob of JSON lines, or a list of instances.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import * as v from "valibot";
import type { BlobRef, Json, NodeContext } from "@envsmith/engine/kind";
import { field, isBlobRef } from "./_values.ts";
import { type Instance, parseInstanceLines } from "../mapf/instance.ts";
import {
  type Checkpoint,
  loadCheckpoint,
  saveCheckpoint,
} from "../policy/checkpoint.ts";
import { PolicyContractError } from "../policy/errors.ts";
import {
  OBS_VERSION,
  type ObsSpec,
  obsSpecForSize,
} from "../policy/observation.ts";
import { decodeModel, modelMetadata } from "../policy/onnx_export.ts";
import { LlmEndpointSpecSchema, resolveLlmEndpoint } from "../schemas/llm.ts";
import { ggufDigestSync } from "../llm/gguf_digest.ts";

/** Media type of ONNX blobs. */
export const ONNX_MEDIA = "application/onnx";

/** The value of `policy.init` and `train` nodes. */
export interface PolicyValue {
  [key: string]: Json;
  /** The ONNX checkpoint. */
  onnx: BlobRef & { [key: string]: Json };
  /** Observation layout. */
  obs: { version: number; radius: number };
  /** Hidden layer sizes. */
  hidden: number[];
  /** Hidden activation. */
  activation: string;
  /** Training updates so far. */
  updates: number;
  /** Training samples so far. */
  samples: number;
  /** Training episodes so far. */
  episodes: number;
}

/** Schema of the `obs` parameter (`{ radius }`; the version is this build's). */
export const ObsParamSchema = v.strictObject({
  radius: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(8)),
  ),
});

/** Store a checkpoint and build its policy value. */
export async function writePolicy(
  ck: Checkpoint,
  ctx: Pick<NodeContext, "writeBlob">,
): Promise<PolicyValue> {
  const ref = await ctx.writeBlob(saveCheckpoint(ck), ONNX_MEDIA);
  return {
    onnx: { $blob: ref.$blob, size: ref.size, media: ref.media },
    obs: { version: ck.obs.version, radius: ck.obs.radius },
    hidden: [...ck.net.spec.hidden],
    activation: ck.net.spec.activation,
    updates: ck.counters.updates,
    samples: ck.counters.samples,
    episodes: ck.counters.episodes,
  };
}

/** A policy input that cannot be found or read. */
export class PolicyInputError extends TypeError {
  /** Build the error. */
  constructor(message: string) {
    super(message);
    this.name = "PolicyInputError";
  }
}

/**
 * Largest ONNX policy file read (256 MiB): an MLP policy is kilobytes to a
 * few megabytes, so a bigger file is almost surely the wrong one, and
 * reading it whole would take seconds and gigabytes before the ONNX check
 * could say so.
 */
export const MAX_POLICY_BYTES = 256 * 1024 * 1024;

/** Throws a {@linkcode PolicyInputError} when the file at `path` is over {@linkcode MAX_POLICY_BYTES}. */
export function checkPolicySize(path: string, label: string = path): void {
  const size = Deno.statSync(path).size;
  if (size > MAX_POLICY_BYTES) {
    throw new PolicyInputError(
      `${label} is ${
        (size / 1024 / 1024).toFixed(0)
      } MB; ONNX policy files are limited to ${
        MAX_POLICY_BYTES / 1024 / 1024
      } MB (an MLP policy is a few MB at most): is this the right file?`,
    );
  }
}

/** Reads an ONNX policy file after checking its size ({@linkcode MAX_POLICY_BYTES}). */
export async function readPolicyFile(
  path: string,
  label: string = path,
): Promise<Uint8Array> {
  checkPolicySize(path, label);
  return await Deno.readFile(path);
}

/** The file path of a literal policy parameter, if it names a file. */
export function policyFile(x: unknown): string | undefined {
  if (typeof x === "string" && !x.startsWith("$")) return x;
  const f = field(x, "file");
  return typeof f === "string" && !f.startsWith("$") ? f : undefined;
}

/** ONNX bytes of a policy parameter, plus where they came from and the layout, when known. */
export async function readPolicy(
  x: unknown,
  ctx: Pick<NodeContext, "readBlob" | "baseDir">,
): Promise<{ bytes: Uint8Array; source: string; obs: ObsSpec | undefined }> {
  const file = policyFile(x);
  if (file !== undefined) {
    const path = resolve(ctx.baseDir, file);
    let bytes: Uint8Array;
    try {
      bytes = await readPolicyFile(path, `policy file ${file}`);
    } catch (e) {
      if (e instanceof PolicyInputError) throw e;
      throw new PolicyInputError(
        `Cannot read policy file ${file} (${path}): ${(e as Error).message}`,
      );
    }
    return { bytes, source: file, obs: undefined };
  }
  const ref = isBlobRef(x) ? x : field(x, "onnx");
  if (!isBlobRef(ref)) {
    throw new PolicyInputError(
      "policy: expected the value of a policy.init or train node (with an `onnx` blob), an ONNX blob, or a file path (`policy: { file: model.onnx }`)",
    );
  }
  const obs = field(x, "obs") as ObsSpec | undefined;
  return {
    bytes: await ctx.readBlob(ref),
    source: `blob ${ref.$blob.slice(0, 12)}`,
    obs: obs && typeof obs.radius === "number"
      ? { version: obs.version, radius: obs.radius }
      : undefined,
  };
}

/**
 * The observation layout to feed a policy: from the value, else the file's
 * `envsmith.obs` metadata, else the layout whose width matches the model's
 * input. Throws a {@linkcode PolicyContractError} naming the supported widths.
 */
export function policyObs(
  bytes: Uint8Array,
  source: string,
  known: ObsSpec | undefined,
): ObsSpec {
  if (known) return known;
  const model = decodeModel(bytes, source);
  const meta = modelMetadata(model);
  if (meta["envsmith.obs"]) {
    try {
      const o = JSON.parse(meta["envsmith.obs"]) as ObsSpec;
      return { version: o.version, radius: o.radius };
    } catch { /* fall through to the width */ }
  }
  const inits = new Set((model.graph?.initializer ?? []).map((t) => t.name));
  const input = (model.graph?.input ?? []).find((i) => !inits.has(i.name));
  const dim = input?.type?.tensorType?.shape?.dim?.[1]?.dimValue;
  const width = dim === undefined || dim === null ? NaN : Number(dim);
  const spec = obsSpecForSize(width);
  if (!spec) {
    const sizes = [0, 1, 2, 3, 4].map((r) =>
      `${6 * (2 * r + 1) ** 2 + 12} (radius ${r})`
    ).join(", ");
    throw new PolicyContractError(
      source,
      `its input width ${
        Number.isNaN(width) ? "is unknown" : width
      } matches no observation layout of version ${OBS_VERSION}`,
      `one float32 input of shape [batch, D] with D one of ${sizes}, ...`,
    );
  }
  return spec;
}

/** Read a training checkpoint (an envsmith ONNX file) from a policy parameter. */
export async function readCheckpoint(
  x: unknown,
  ctx: Pick<NodeContext, "readBlob" | "baseDir">,
): Promise<Checkpoint> {
  const { bytes, source } = await readPolicy(x, ctx);
  return loadCheckpoint(bytes, source);
}

/** Instances of an `envs` parameter (generate value, blob of JSON lines, or list). */
export async function readInstances(
  x: unknown,
  ctx: Pick<NodeContext, "readBlob">,
  what = "envs",
): Promise<Instance[]> {
  if (Array.isArray(x)) {
    return parseInstanceLines(x.map((i) => JSON.stringify(i)).join("\n"));
  }
  if (isBlobRef(x)) {
    return parseInstanceLines(new TextDecoder().decode(await ctx.readBlob(x)));
  }
  const inner = field(x, "instances");
  if (inner !== undefined) return await readInstances(inner, ctx, what);
  throw new PolicyInputError(
    `${what}: expected the value of a generate node ({ instances: ... }), a blob of JSON lines, or a list of instances`,
  );
}

/** The generating config carried by an `envs` value, if any. */
export function envsConfig(x: unknown): Json | undefined {
  const c = field(x, "config");
  return c === undefined ? undefined : c as Json;
}

/**
 * Key fingerprint of the policy kinds: the observation layout version (so a
 * layout change re-keys every policy node even if the code digest did not
 * change) and the content hash of a policy given as a file.
 */
export function policyFingerprint(
  params: unknown,
  info: { readonly baseDir: string },
): Json {
  const out: { [k: string]: Json } = { obs_version: OBS_VERSION };
  const file = policyFile(field(params, "policy"));
  if (file !== undefined) {
    const path = resolve(info.baseDir, file);
    checkPolicySize(path, `policy file ${file}`);
    out.policy_file = createHash("sha256").update(readFileSync(path)).digest(
      "hex",
    );
  }
  // An LLM policy whose URL or model comes from the environment: those enter
  // the key (never the API key); a GGUF model file enters by its sha256.
  const llm = field(field(params, "policy"), "llm");
  if (
    field(llm, "base_url_env") !== undefined ||
    field(llm, "model_env") !== undefined ||
    field(llm, "gguf_env") !== undefined || field(llm, "gguf") !== undefined
  ) {
    const e = resolveLlmEndpoint(
      v.parse(LlmEndpointSpecSchema, llm),
      undefined,
      info.baseDir,
    );
    out.endpoint = e.gguf !== undefined
      ? { gguf_sha256: ggufDigestSync(e.gguf) }
      : { base_url: e.base_url ?? null, model: e.model ?? null };
  }
  return out;
}
