/**
 * The `rollout` node kind: play a policy on instances, batched, and keep the
 * trajectories for diagnosis.
 *
 * ```yaml
 * rollouts: { kind: rollout, with: { policy: $policy, envs: $envs } }
 * ```
 *
 * Parameters: `policy` and `envs` (required; see `policy_io.ts`; an LLM
 * policy is `policy: { llm: { base_url, model, api_key_env?, temperature?,
 * ... }, concurrency?: 4 }`, whose replies are cached in the kind's aux
 * directory so a run can be replayed offline with `offline: true`),
 * `episodes` per instance (1), `greedy` (false: actions are sampled, with
 * `seed`), `parallel` environments (256), `seed` (default: the node's seed).
 *
 * Value: `{ trajectories: <blob, mapf trajectory format v1>, envs: <the envs
 * value, passed through>, config?: <its generating config>, summary, suites,
 * episodes: [per-episode metrics] }` (what `diagnose` reads). Report: the
 * summary.
 *
 * @module
 */
import { join } from "node:path";
import * as v from "valibot";
import {
  type LlmEndpoint,
  LlmEndpointSpecSchema,
  resolveLlmEndpoint,
} from "../schemas/llm.ts";
import type { Json, NodeKind } from "@envsmith/engine/kind";
import { llmRollout } from "../policy/llm_policy.ts";
import { obsSize } from "../policy/observation.ts";
import { OnnxPolicy } from "../policy/onnx_policy.ts";
import { onnxRunner, rollout, type RolloutResult } from "../policy/rollout.ts";
import {
  envsConfig,
  policyFingerprint,
  policyObs,
  readInstances,
  readPolicy,
} from "./policy_io.ts";

const int = (min: number, max: number) =>
  v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

/** Parameters shared by `rollout` and `evaluate`. */
export const RolloutParamsSchema = v.strictObject({
  policy: v.unknown(),
  envs: v.unknown(),
  episodes: v.optional(int(1, 10_000)),
  greedy: v.optional(v.boolean()),
  parallel: v.optional(int(1, 65_536)),
  seed: v.optional(int(0, 0xffffffff)),
});

/** Parameters of `rollout` / `evaluate`. */
export type RolloutParams = v.InferOutput<typeof RolloutParamsSchema>;

/**
 * Load the policy into onnxruntime and roll it out on the instances of
 * `params.envs`; shared by `rollout` and `evaluate`.
 */
export async function runRollout(
  p: RolloutParams,
  ctx: Parameters<NodeKind["run"]>[1],
  record: boolean,
): Promise<RolloutResult & { instances: number }> {
  const llm = llmPolicyParams(p.policy, ctx.baseDir);
  if (llm) {
    const instances = await readInstances(p.envs, ctx);
    const res = await llmRollout(instances, {
      endpoint: llm.endpoint,
      cacheDir: join(ctx.auxDir, "llm"),
      episodes: p.episodes ?? 1,
      seed: p.seed ?? ctx.seed,
      concurrency: llm.concurrency,
      prompt: llm.prompt,
      record,
      signal: ctx.signal,
      onProgress: (done, total) => ctx.progress(done, total),
    });
    const invalid = res.info.filter((i) => i.error).length;
    if (invalid > 0) {
      ctx.log(`${invalid} LLM replies were not usable plans (invalid_plan)`);
    }
    return { ...res, instances: instances.length };
  }
  const { bytes, source, obs: known } = await readPolicy(p.policy, ctx);
  const obs = policyObs(bytes, source, known);
  const instances = await readInstances(p.envs, ctx);
  const policy = await OnnxPolicy.load(bytes, {
    source,
    inputSize: obsSize(obs),
  });
  try {
    const res = await rollout(onnxRunner(policy), instances, {
      obs,
      episodes: p.episodes ?? 1,
      greedy: p.greedy ?? false,
      envs: p.parallel ?? 256,
      seed: p.seed ?? ctx.seed,
      record,
      signal: ctx.signal,
      onProgress: (done, total) => ctx.progress(done, total),
    });
    return { ...res, instances: instances.length };
  } finally {
    await policy.release();
  }
}

/**
 * Schema of an LLM policy: `policy: { llm: <endpoint>, concurrency?: n,
 * prompt?: full | bare }` (`bare`: the public benchmark's prompt without our
 * rules block, as the micro LM policies are trained on).
 */
export const LlmPolicySchema = v.strictObject({
  llm: LlmEndpointSpecSchema,
  concurrency: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(64)),
  ),
  prompt: v.optional(
    v.picklist(["full", "bare"], 'prompt must be "full" or "bare"'),
  ),
});

/**
 * The endpoint of an LLM policy parameter (`{ llm: { base_url, model, ... } }`),
 * or undefined for other policies. Throws a TypeError naming the problem for
 * a malformed endpoint.
 */
export function llmPolicyParams(
  x: unknown,
  baseDir?: string,
): {
  endpoint: LlmEndpoint;
  concurrency: number;
  prompt: "full" | "bare";
} | undefined {
  if (typeof x !== "object" || x === null || !("llm" in x)) return undefined;
  const r = v.safeParse(LlmPolicySchema, x);
  if (!r.success) {
    throw new TypeError(
      `policy.llm: ${
        r.issues.map((i) => `${v.getDotPath(i) ?? ""} ${i.message}`.trim())
          .join("; ")
      }`,
    );
  }
  return {
    endpoint: resolveLlmEndpoint(r.output.llm, undefined, baseDir),
    concurrency: r.output.concurrency ?? 4,
    prompt: r.output.prompt ?? "full",
  };
}

/** Summary fields rounded for JSON values. */
export function roundJson(x: unknown): Json {
  if (typeof x === "number") {
    return Number.isFinite(x) ? Math.round(x * 1e6) / 1e6 : null;
  }
  if (Array.isArray(x)) return x.map(roundJson);
  if (x && typeof x === "object") {
    const o: { [k: string]: Json } = {};
    for (const [k, y] of Object.entries(x)) {
      if (y !== undefined) o[k] = roundJson(y);
    }
    return o;
  }
  return x as Json;
}

/** One line per parameter, for editors (the JSON Schema's descriptions). */
export const ROLLOUT_PARAM_DOCS: Readonly<Record<string, string>> = {
  policy:
    "the policy to roll out: a policy.init or train node, an ONNX file, or an LLM policy",
  envs: "the instances: a generate node",
  episodes: "episodes per instance (default 1)",
  greedy: "take the most likely action instead of sampling",
  parallel: "environments stepped together",
  seed: "seed of the episodes (default: the node's seed)",
};

/** The `rollout` kind. */
export const kind: NodeKind<RolloutParams, Json> = {
  name: "rollout",
  description:
    "Roll a policy out on instances (batched onnxruntime inference) and record trajectories",
  params: RolloutParamsSchema,
  paramDocs: ROLLOUT_PARAM_DOCS,
  module: import.meta.url,
  heavy: true,
  fingerprint: policyFingerprint,
  async run(p, ctx) {
    const res = await runRollout(p, ctx, true);
    const traj = await ctx.writeBlob(
      res.trajectories!,
      "application/x-mapf-trajectories",
    );
    const config = envsConfig(p.envs);
    ctx.log(
      `${res.summary.episodes} episodes on ${res.instances} instances: success ${res.summary.success_rate}`,
    );
    return {
      value: {
        trajectories: { $blob: traj.$blob, size: traj.size, media: traj.media },
        envs: p.envs as Json,
        ...(config === undefined ? {} : { config }),
        summary: roundJson(res.summary),
        suites: roundJson(res.suites),
        episodes: roundJson(res.episodes),
      },
      report: roundJson(res.summary),
    };
  },
};
