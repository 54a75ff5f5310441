/**
 * The `probe` engineer: the policy chooses its own next environment.
 *
 * 1. **Candidates.** The current configuration and `candidates - 1` one-step
 *    mutations of it: its leading-edge component ({@linkcode frontier})
 *    moved one step harder or easier along one curriculum dimension, drawn
 *    without repetition by a seeded shuffle of every (dimension, direction)
 *    pair that changes something (a new draw each stage).
 * 2. **Probe.** A {@linkcode Prober} rolls a policy out on a few fresh
 *    instances of each candidate, with no learning; the node that runs the
 *    engineer supplies it and counts its cost (episodes and agent-steps),
 *    which the redesign report carries as engineer cost, never as training
 *    experience.
 * 3. **Pick** by a declared criterion: `target` (success closest to
 *    `target`), or `learnable` (the largest share of probe instances that
 *    are neither always solved nor never solved over their episodes: the
 *    failures a policy can learn from). Ties go to the current
 *    configuration, then to candidate order.
 *
 * `probe` probes with the current checkpoint (the stage's trained policy);
 * `probe-base` with the stage-0 (untrained) policy. Paired, they are this
 * testbed's analogue of the paper's question whether the current checkpoint
 * is a better engineer than the base model.
 *
 * Departures: the paper's checkpoint proposes a configuration in language;
 * an MLP policy cannot, so here it scores proposals it is shown, and the
 * proposals are local mutations (the same step sizes as every other
 * engineer). `target = 0.3` was chosen on the validation split from 0.3,
 * 0.5 and 0.7 and the `learnable` criterion; `candidates` and the probe
 * sizes were not tuned (docs/engineers.md).
 *
 * @module
 */
import {
  type AnyEnvConfig,
  components,
  configId,
  type EnvConfig,
} from "../schemas/env_config.ts";
import { buildMixture, FRONTIER, frontier, step } from "./config_ops.ts";
import type { Engineer, Proposal, ProposeInput } from "./engineer.ts";
import { hashString, Rng } from "../mapf/rng.ts";
import { canonicalJson, sha256Hex } from "@envsmith/engine/hash";
import {
  DEFAULT_FAMILY,
  type EnvironmentFamily,
  stepConfig,
} from "../families/family.ts";

/** How a candidate's probe went. */
export interface ProbeScore {
  /** Episode success rate over the probe. */
  success: number;
  /** Share of probe instances solved in some but not all of their episodes. */
  learnable: number;
  /** Probe instances. */
  instances: number;
  /** Probe episodes. */
  episodes: number;
  /** Agent-steps the probe took (its cost). */
  agentSteps: number;
}

/**
 * Rolls the probing policy out on instances of each candidate (no
 * learning) and scores them; `seed` fixes the instances and the actions.
 */
export type Prober = (
  candidates: readonly AnyEnvConfig[],
  seed: number,
) => Promise<ProbeScore[]>;

/** Probe criteria. */
export const PROBE_CRITERIA = ["target", "learnable"] as const;
/** A probe criterion. */
export type ProbeCriterion = typeof PROBE_CRITERIA[number];

/** Default probe parameters. */
export const PROBE_DEFAULTS = {
  candidates: 6,
  criterion: "target" as ProbeCriterion,
  target: 0.3,
};

/**
 * The candidates of a stage (exported for tests): the current config first,
 * then up to `k - 1` distinct one-step mutations of its leading edge.
 */
export function probeCandidates(
  current: AnyEnvConfig,
  k: number,
  rng: Rng,
): { config: AnyEnvConfig; label: string }[] {
  const edge = frontier(current);
  const edgeId = configId(edge);
  const moves: { dim: typeof FRONTIER[number]; dir: number }[] = [];
  for (const dim of FRONTIER) {
    for (const dir of [1, -1]) moves.push({ dim, dir });
  }
  // seeded Fisher-Yates
  for (let i = moves.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [moves[i], moves[j]] = [moves[j]!, moves[i]!];
  }
  const out = [{ config: current, label: "current" }];
  const seen = new Set([configId(current)]);
  for (const m of moves) {
    if (out.length >= k) break;
    const edited: EnvConfig = step(edge, m.dim, m.dir);
    if (configId(edited) === edgeId) continue;
    const parts = components(current).map((c) =>
      configId(c.config) === edgeId ? { ...c, config: edited } : c
    );
    const config = buildMixture(parts, { maxComponents: 16 });
    const id = configId(config);
    if (seen.has(id)) continue;
    seen.add(id);
    out.push({
      config,
      label: `${m.dim} ${m.dir > 0 ? "harder" : "easier"}`,
    });
  }
  return out;
}

/**
 * The candidates of a stage on another family (exported for tests): the
 * current configuration first, then up to `k - 1` distinct one-step moves
 * (harder or easier) along the family's stepped dimensions, in a seeded
 * order.
 */
export function familyProbeCandidates(
  family: EnvironmentFamily,
  current: unknown,
  k: number,
  rng: Rng,
): { config: AnyEnvConfig; label: string }[] {
  const dims = family.stepped ?? family.dimensions.map((d) => d.path);
  const moves: { dim: string; dir: number }[] = [];
  for (const dim of dims) for (const dir of [1, -1]) moves.push({ dim, dir });
  for (let i = moves.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [moves[i], moves[j]] = [moves[j]!, moves[i]!];
  }
  const out = [{ config: current as AnyEnvConfig, label: "current" }];
  const seen = new Set([canonicalJson(current as never)]);
  for (const m of moves) {
    if (out.length >= k) break;
    const config = stepConfig(family, current, m.dim, m.dir);
    const id = canonicalJson(config as never);
    if (seen.has(id)) continue;
    seen.add(id);
    out.push({
      config: config as AnyEnvConfig,
      label: `${m.dim} ${m.dir > 0 ? "harder" : "easier"}`,
    });
  }
  return out;
}

/**
 * The index of the candidate the criterion picks (exported for tests): the
 * first best, so the current configuration (index 0) wins ties.
 */
export function probePick(
  scores: readonly ProbeScore[],
  criterion: ProbeCriterion,
  target: number,
): number {
  const key = (s: ProbeScore): [number, number] =>
    criterion === "target"
      ? [-Math.abs(s.success - target), 0]
      : [s.learnable, -Math.abs(s.success - target)];
  let best = 0;
  for (let i = 1; i < scores.length; i++) {
    const a = key(scores[i]!), b = key(scores[best]!);
    if (
      a[0] > b[0] + 1e-12 ||
      (Math.abs(a[0] - b[0]) <= 1e-12 && a[1] > b[1] + 1e-12)
    ) {
      best = i;
    }
  }
  return best;
}

/** What is wrong with probe parameters, in one line naming the parameter, or null. */
export function probeProblem(
  candidates: number,
  target: number,
): string | null {
  if (!Number.isInteger(candidates) || candidates < 1) {
    return `candidates must be at least 1 (got ${candidates}): the current configuration is always one`;
  }
  if (candidates > 16) {
    return `candidates must be at most 16 (got ${candidates}): each is probed with rollouts`;
  }
  if (!(target >= 0 && target <= 1)) {
    return `target must lie in 0..1 (got ${target})`;
  }
  return null;
}

/** Options of {@linkcode probeEngineer}. */
export interface ProbeOptions {
  /** Scores candidates with the probing policy (supplied by the node). */
  prober: Prober;
  /** Name shown in reports (`probe` or `probe-base`). @default {"probe"} */
  name?: string;
  /** Candidates, the current configuration included. @default {6} */
  candidates?: number;
  /** Pick criterion. @default {"target"} */
  criterion?: ProbeCriterion;
  /** Target success of `target` (tie-break of `learnable`). @default {0.3} */
  target?: number;
  /**
   * The family whose space candidates are drawn in (one-step moves along
   * its stepped dimensions). @default MAPF-FrozenLake's leading-edge moves
   */
  family?: EnvironmentFamily;
}

/**
 * The `probe` engineer (and `probe-base`, the same with the stage-0 policy).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { probeEngineer } from "./probe.ts";
 * const e = probeEngineer({ prober: () => Promise.resolve([]) });
 * assert.equal(e.name, "probe");
 * ```
 */
export function probeEngineer(options: ProbeOptions): Engineer {
  const k = options.candidates ?? PROBE_DEFAULTS.candidates;
  const criterion = options.criterion ?? PROBE_DEFAULTS.criterion;
  const target = options.target ?? PROBE_DEFAULTS.target;
  const problem = probeProblem(k, target);
  if (problem !== null) throw new RangeError(problem);
  const name = options.name ?? "probe";
  return {
    name,
    async propose(input: ProposeInput): Promise<Proposal> {
      const stage = input.context.json.stage ?? 0;
      const rng = new Rng(input.seed, hashString("probe-engineer"), stage);
      const other = options.family !== undefined &&
        options.family.name !== DEFAULT_FAMILY;
      const cands = other
        ? familyProbeCandidates(options.family!, input.config, k, rng)
        : probeCandidates(input.config, k, rng);
      const idOf = (c: AnyEnvConfig) =>
        other ? sha256Hex(canonicalJson(c as never)).slice(0, 12) : configId(c);
      const scores = await options.prober(
        cands.map((c) => c.config),
        (input.seed ^ Math.imul(stage + 1, 0x9e3779b1)) >>> 0,
      );
      if (scores.length !== cands.length) {
        throw new RangeError(
          `the prober scored ${scores.length} of ${cands.length} candidates`,
        );
      }
      const pick = probePick(scores, criterion, target);
      const fmt = (s: ProbeScore) =>
        `success ${s.success.toFixed(3)}, learnable ${s.learnable.toFixed(3)}`;
      const events = cands.map((c, i) => ({
        type: "choice" as const,
        detail: `candidate ${i} (${c.label}, ${idOf(c.config)}): ${
          fmt(scores[i]!)
        } over ${scores[i]!.instances} instances, ${
          scores[i]!.agentSteps
        } agent-steps${i === pick ? " <- picked" : ""}`,
      }));
      const cost = scores.reduce((a, s) => a + s.agentSteps, 0);
      return {
        config: cands[pick]!.config,
        rationale: `${name} engineer: probed ${cands.length} candidates with ${
          name === "probe-base"
            ? "the stage-0 policy"
            : "the current checkpoint"
        } (${cost} agent-steps, no learning); picked ${cands[pick]!.label} by ${
          criterion === "target"
            ? `success closest to ${target}`
            : "the largest learnable share"
        } (${fmt(scores[pick]!)}).`,
        events,
        reads: [],
        cost: {
          episodes: scores.reduce((a, s) => a + s.episodes, 0),
          agentSteps: cost,
        },
      };
    },
  };
}
