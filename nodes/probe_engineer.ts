/**
 * The engineer kinds `probe` and `probe-base` (the algorithm is
 * `engineer/probe.ts`): registered from `nodes/` because they roll a policy
 * out (`policy/level_scores.ts`), which `engineer/` may not import.
 *
 * ```yaml
 * engineer: { name: probe, policy: $policy, candidates: 6, criterion: target, target: 0.3 }
 * engineer: { name: probe-base, policy: $start, ... }   # the stage-0 policy
 * ```
 *
 * The rollouts (`policy/level_scores.ts`: the checkpoint's TypeScript
 * forward pass, actions sampled, seeded; fresh instances drawn with the
 * generator, the same instance seed for every candidate) never train: they
 * are engineer cost, the redesign report's `engineer_cost` (`episodes`,
 * `agent_steps`), reported beside the training experience, never in it.
 *
 * @module
 */
import * as v from "valibot";
import type { BlobRef } from "@envsmith/engine/kind";
import {
  EngineerConfigError,
  type EngineerEnv,
  type EngineerKind,
} from "../engineer/engineer_kind.ts";
import {
  PROBE_CRITERIA,
  PROBE_DEFAULTS,
  type ProbeCriterion,
  probeEngineer,
  type Prober,
} from "../engineer/probe.ts";
import { generate } from "../mapf/generator.ts";
import type { Checkpoint } from "../policy/checkpoint.ts";
import { scoreLevels } from "../policy/level_scores.ts";
import type { RewardSpec } from "../policy/reward.ts";
import type { ProbeScore } from "../engineer/probe.ts";
import { readCheckpoint } from "./policy_io.ts";
import { RewardParamsSchema } from "./reward_params.ts";
import { DEFAULT_FAMILY, type EnvironmentFamily } from "../families/family.ts";
import { familyLevelProblem, scoreFamilyLevels } from "./family_scores.ts";

function _seed31(x: number): number {
  return (x >>> 0) & 0x7fffffff;
}

/**
 * A {@linkcode Prober}: for each candidate, `instances` fresh instances
 * (generated with the probe seed), each played `episodes` times by `ck`.
 */
export function checkpointProber(
  ck: Checkpoint,
  options: {
    instances: number;
    episodes: number;
    reward?: Partial<RewardSpec>;
  },
): Prober {
  return (candidates, seed) => {
    const out: ProbeScore[] = [];
    for (const config of candidates) {
      // the same instance seed for every candidate: paired draws
      const { instances } = generate(config, {
        count: options.instances,
        seed: _seed31(seed),
      });
      const scores = scoreLevels(ck, instances, {
        episodes: options.episodes,
        seed,
        ...(options.reward === undefined ? {} : { reward: options.reward }),
      });
      let ep = 0, ok = 0, steps = 0, learnable = 0;
      for (const s of scores) {
        ep += s.episodes;
        ok += s.successes;
        steps += s.agentSteps;
        if (s.successes > 0 && s.successes < s.episodes) learnable++;
      }
      out.push({
        success: ep > 0 ? ok / ep : 0,
        learnable: scores.length > 0 ? learnable / scores.length : 0,
        instances: scores.length,
        episodes: ep,
        agentSteps: steps,
      });
    }
    return Promise.resolve(out);
  };
}

/**
 * A {@linkcode Prober} on another family: for each candidate, `instances`
 * fresh instances of the family (the same generator seed for every
 * candidate), each played `episodes` times by `ck` through the family's
 * batched environment and the trainer, with no learning.
 */
export function familyProber(
  family: EnvironmentFamily,
  ck: Checkpoint,
  options: { instances: number; episodes: number; gamma: number },
): Prober {
  return (candidates, seed) => {
    const out: ProbeScore[] = [];
    for (const config of candidates) {
      const instances = family.generate(
        config,
        _seed31(seed),
        options.instances,
      );
      const played = instances.flatMap((i) =>
        Array.from({ length: options.episodes }, () => i)
      );
      const scores = scoreFamilyLevels(family, ck, played, {
        seed,
        gamma: options.gamma,
      });
      let ep = 0, ok = 0, steps = 0, learnable = 0;
      for (let i = 0; i < instances.length; i++) {
        let e = 0, s = 0;
        for (let r = 0; r < options.episodes; r++) {
          const m = scores[i * options.episodes + r]!;
          e += m.episodes;
          s += m.successes;
          steps += m.agentSteps;
        }
        ep += e;
        ok += s;
        if (s > 0 && s < e) learnable++;
      }
      out.push({
        success: ep > 0 ? ok / ep : 0,
        learnable: instances.length > 0 ? learnable / instances.length : 0,
        instances: instances.length,
        episodes: ep,
        agentSteps: steps,
      });
    }
    return Promise.resolve(out);
  };
}

/** Parameters of `probe` and `probe-base`. */
export interface ProbeParams {
  /** The probing policy (a policy value). */
  policy: unknown;
  /** Candidates, the current config included. */
  candidates?: number | undefined;
  /** Pick criterion. */
  criterion?: ProbeCriterion | undefined;
  /** Target success. */
  target?: number | undefined;
  /** Fresh instances per candidate. */
  probe_instances?: number | undefined;
  /** Episodes per probe instance. */
  probe_episodes?: number | undefined;
  /** The trainer's reward coefficients. */
  reward?: Record<string, number | undefined> | undefined;
}

const _int = (name: string, min: number, max: number, what: string) =>
  v.optional(v.pipe(
    v.number(`${name} must be an integer in ${min}..${max}`),
    v.integer(`${name} must be an integer in ${min}..${max}`),
    v.minValue(min, `${name} must be at least ${min}`),
    v.maxValue(max, `${name} must be at most ${max}`),
    v.description(what),
  ));

/** The parameter schema shared by `probe` and `probe-base`. */
export function probeParamsSchema(policyWhat: string) {
  return v.strictObject({
    policy: v.pipe(
      v.unknown(),
      v.check(
        (x) => x !== undefined && x !== null,
        `policy is required: ${policyWhat}`,
      ),
      v.description(policyWhat),
    ),
    candidates: _int(
      "candidates",
      1,
      16,
      `candidate configurations, the current one included; default ${PROBE_DEFAULTS.candidates}`,
    ),
    criterion: v.optional(v.pipe(
      v.picklist(
        PROBE_CRITERIA,
        `criterion must be one of ${PROBE_CRITERIA.join(", ")}`,
      ),
      v.description(
        "target: success closest to target (default); learnable: the largest share of instances solved sometimes but not always",
      ),
    )),
    target: v.optional(v.pipe(
      v.number("target must be a number in 0..1"),
      v.minValue(0, "target must be at least 0"),
      v.maxValue(1, "target must be at most 1"),
      v.description(
        `target success of criterion target; default ${PROBE_DEFAULTS.target}`,
      ),
    )),
    probe_instances: _int(
      "probe_instances",
      1,
      512,
      "fresh instances rolled out per candidate; default 32",
    ),
    probe_episodes: _int(
      "probe_episodes",
      1,
      16,
      "episodes per probe instance; default 2",
    ),
    reward: v.optional(v.pipe(
      RewardParamsSchema,
      v.description("the trainer's reward coefficients (as in train)"),
    )),
  });
}

/**
 * What keeps a probe engineer from running on `family`, in one line, or
 * `null`: a family without a batched environment to roll out through, or
 * MAPF-FrozenLake's `reward` on another family.
 */
function _checkFamily(name: string) {
  return (params: unknown, family: EnvironmentFamily): string | null => {
    if (family.name === DEFAULT_FAMILY) return null;
    if ((params as { reward?: unknown } | null)?.reward !== undefined) {
      return `reward is MAPF-FrozenLake's, not family ${family.name}'s; leave it out (rewards are the family's)`;
    }
    return familyLevelProblem(name, family, { mutate: false });
  };
}

/** Checks across parameters, at plan (through `fingerprint`). */
function _fingerprint(name: string) {
  return (params: unknown) => {
    const p = (params ?? {}) as {
      criterion?: unknown;
      probe_episodes?: unknown;
    };
    const episodes = typeof p.probe_episodes === "number"
      ? p.probe_episodes
      : 2;
    if (p.criterion === "learnable" && episodes < 2) {
      throw new EngineerConfigError(
        `engineer ${name}: probe_episodes must be at least 2 with criterion learnable (an instance played once is never partly solved)`,
      );
    }
    return null;
  };
}

/** A prober that loads the checkpoint on first use. */
export function lazyProber(params: ProbeParams, env: EngineerEnv): Prober {
  let inner: Prober | undefined;
  return async (candidates, seed) => {
    if (inner === undefined) {
      if (env.readBlob === undefined) {
        throw new EngineerConfigError(
          "the probe engineers roll a policy out: run them as a redesign node in an experiment (the redesign command cannot)",
        );
      }
      const readBlob = env.readBlob;
      const ck = await readCheckpoint(params.policy, {
        readBlob: (ref: BlobRef) => readBlob(ref),
        baseDir: env.baseDir,
      });
      const family = env.family;
      if (family !== undefined && family.name !== DEFAULT_FAMILY) {
        const scores = (params.policy as { level_scores?: { gamma?: number } })
          .level_scores;
        inner = familyProber(family, ck, {
          instances: params.probe_instances ?? 32,
          episodes: params.probe_episodes ?? 2,
          gamma: scores?.gamma ?? 0.99,
        });
        return await inner(candidates, seed);
      }
      const reward: Record<string, number> = {};
      for (const [k, x] of Object.entries(params.reward ?? {})) {
        if (x !== undefined) reward[k] = x;
      }
      inner = checkpointProber(ck, {
        instances: params.probe_instances ?? 32,
        episodes: params.probe_episodes ?? 2,
        reward,
      });
    }
    return await inner(candidates, seed);
  };
}

function _create(name: string) {
  return (params: ProbeParams, env: EngineerEnv) =>
    probeEngineer({
      prober: lazyProber(params, env),
      name,
      ...(env.family === undefined ? {} : { family: env.family }),
      ...(params.candidates === undefined
        ? {}
        : { candidates: params.candidates }),
      ...(params.criterion === undefined
        ? {}
        : { criterion: params.criterion }),
      ...(params.target === undefined ? {} : { target: params.target }),
    });
}

/** The `probe` engineer kind: the current checkpoint picks among candidates. */
export const probe: EngineerKind<ProbeParams> = {
  name: "probe",
  description:
    "the current checkpoint picks its next configuration: rolls out on candidates (the current config and mutations), no learning, cost counted",
  params: probeParamsSchema(
    "the probing policy: this stage's checkpoint ($policy)",
  ) as unknown as EngineerKind<ProbeParams>["params"],
  module: import.meta.url,
  families: "any",
  checkFamily: _checkFamily("probe"),
  fingerprint: _fingerprint("probe"),
  create: _create("probe"),
};

/** The `probe-base` engineer kind: the stage-0 policy picks among candidates. */
export const probeBase: EngineerKind<ProbeParams> = {
  name: "probe-base",
  description:
    "probe with the stage-0 (untrained) policy instead of the current checkpoint: the base-model analogue",
  params: probeParamsSchema(
    "the probing policy: the stage-0 policy ($start)",
  ) as unknown as EngineerKind<ProbeParams>["params"],
  module: import.meta.url,
  families: "any",
  checkFamily: _checkFamily("probe-base"),
  fingerprint: _fingerprint("probe-base"),
  create: _create("probe-base"),
};
