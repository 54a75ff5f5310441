/**
 * The `policy.init` node kind: a fresh, untrained policy.
 *
 * ```yaml
 * start: { kind: policy.init, with: { hidden: [64, 64], activation: tanh, obs: { radius: 2 }, seed: $seed } }
 * ```
 *
 * Parameters: `hidden` (default `[64, 64]`), `activation` (`tanh` | `relu`,
 * default `tanh`), `obs.radius` (observation window radius, default 2),
 * `seed` (initialisation seed, default the node's seed). Value: the policy
 * value (see `policy_io.ts`): an ONNX checkpoint blob plus its layout.
 *
 * @module
 */
import * as v from "valibot";
import type { NodeKind } from "@envsmith/engine/kind";
import { initCheckpoint } from "../policy/checkpoint.ts";
import { OBS_VERSION } from "../policy/observation.ts";
import {
  ObsParamSchema,
  policyFingerprint,
  type PolicyValue,
  writePolicy,
} from "./policy_io.ts";

/** Parameters of `policy.init`. */
export const PolicyInitParamsSchema = v.strictObject({
  hidden: v.optional(
    v.pipe(
      v.array(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1024))),
      v.minLength(1),
      v.maxLength(8),
    ),
  ),
  activation: v.optional(v.picklist(["tanh", "relu"])),
  obs: v.optional(ObsParamSchema),
  seed: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(0xffffffff)),
  ),
});

/** Parameters of `policy.init`. */
export type PolicyInitParams = v.InferOutput<typeof PolicyInitParamsSchema>;

/** The `policy.init` kind. */
export const kind: NodeKind<PolicyInitParams, PolicyValue> = {
  name: "policy.init",
  description:
    "A fresh policy network (MLP, shared by all agents) as an ONNX checkpoint",
  params: PolicyInitParamsSchema,
  module: import.meta.url,
  fingerprint: policyFingerprint,
  async run(p, ctx) {
    const ck = initCheckpoint({
      hidden: p.hidden ?? [64, 64],
      activation: p.activation ?? "tanh",
      obs: { version: OBS_VERSION, radius: p.obs?.radius ?? 2 },
      seed: p.seed ?? ctx.seed,
    });
    const value = await writePolicy(ck, ctx);
    ctx.log(`policy ${JSON.stringify(ck.net.spec)}, ${ck.net.size} parameters`);
    return {
      value,
      report: { parameters: ck.net.size, input: ck.net.spec.inputSize },
    };
  },
};
