/**
 * The `replay` engineer: level replay scored by learning potential, in the
 * spirit of Prioritized Level Replay (PLR, Jiang et al. 2021) and ACCEL
 * (Parker-Holder et al. 2022).
 *
 * - **Buffer.** Levels are configuration components. The buffer holds the
 *   components of the current config and, when the context carries history
 *   (`full`), every component trained on in earlier stages.
 * - **Score.** Learning potential of a level with success rate `p` is
 *   `p (1 - p)` (highest at 0.5: neither mastered nor hopeless; the
 *   learnability score of Sampling-for-Learnability). The latest measurement
 *   of a level counts. A level never measured gets the optimistic 0.25.
 * - **Sampling.** Rank prioritisation `P_S(l) ∝ (1 / rank(l))^(1/β)` mixed
 *   with staleness `P_C(l) ∝ stage - last_seen(l)`:
 *   `P = (1 - ρ) P_S + ρ P_C` (PLR's defaults: β = 0.1, ρ = 0.1; here
 *   β = 0.3 because the buffer is small). Up to two levels are drawn
 *   without replacement with a seeded generator; their weights follow `P`.
 * - **Editing (ACCEL).** The best-scored drawn level is edited by one
 *   random curriculum step (harder with probability 0.7) and added as a new
 *   level with weight 0.3.
 *
 * What it reads: `none`, `failures`, `behavior` give it no scores (buffer =
 * current components, all unscored); `stats` scores the current components
 * (`stats.components[].success_rate`); `full` adds the history
 * (`history.entries[].config`, `.components[].success_rate`, `.stage`).
 *
 * @module
 */
import {
  type AnyEnvConfig,
  components,
  configId,
  type EnvConfig,
} from "../schemas/env_config.ts";
import { buildMixture, CURRICULUM_DIMS, step } from "./config_ops.ts";
import type { Engineer, Proposal, ProposeInput } from "./engineer.ts";
import { hashString, Rng } from "../mapf/rng.ts";
import * as v from "valibot";
import { EngineerConfigError, type EngineerKind } from "./engineer_kind.ts";
import { canonicalJson, sha256Hex } from "@envsmith/engine/hash";
import {
  DEFAULT_FAMILY,
  type EnvironmentFamily,
  stepConfig,
} from "../families/family.ts";

/** Replay parameters. */
export const REPLAY_PARAMS = {
  /** Rank temperature β. */
  beta: 0.3,
  /** Staleness mixing ρ. */
  rho: 0.1,
  /** Levels drawn per stage. */
  draws: 2,
  /** Weight of the edited level. */
  editWeight: 0.3,
  /** Probability that an edit is harder. */
  harder: 0.7,
  /** Score of a level never measured. */
  unseen: 0.25,
} as const;

/** A level in the buffer. */
export interface ReplayLevel {
  /** `configId`. */
  id: string;
  /** The component config. */
  config: EnvConfig;
  /** Learning potential, or null when never measured. */
  score: number | null;
  /** Latest success measured. */
  success: number | null;
  /** Stage it was last trained on. */
  lastSeen: number;
}

/** Build the buffer from a context (exported for tests). */
export function replayBuffer(
  input: ProposeInput,
): { levels: ReplayLevel[]; reads: string[]; stage: number } {
  const ctx = input.context.json;
  const reads = new Set<string>();
  const levels = new Map<string, ReplayLevel>();
  const hist = ctx.history?.entries ?? [];
  const stage = ctx.stage ?? hist.length;
  const touch = (config: EnvConfig, success: number | null, seen: number) => {
    const id = configId(config);
    const old = levels.get(id);
    const lvl: ReplayLevel = old ??
      { id, config, score: null, success: null, lastSeen: seen };
    lvl.lastSeen = Math.max(lvl.lastSeen, seen);
    if (success !== null) {
      lvl.success = success;
      lvl.score = success * (1 - success);
    }
    levels.set(id, lvl);
  };
  for (const e of hist) {
    reads.add("history.entries");
    if (e.config === null) continue;
    for (const c of components(e.config)) {
      const id = configId(c.config);
      const st = e.components.find((x) => x.config_id === id);
      touch(c.config, st?.success_rate ?? null, e.stage);
    }
  }
  const stats = ctx.stats?.components;
  for (const c of components(input.config)) {
    const id = configId(c.config);
    const st = stats?.find((x) => x.config_id === id && x.episodes > 0);
    if (stats !== undefined) reads.add("stats.components");
    touch(c.config, st?.success_rate ?? null, stage);
  }
  return { levels: [...levels.values()], reads: [...reads].sort(), stage };
}

/** Replay sampling probabilities of a buffer (rank priority mixed with staleness). */
export function replayProbabilities(
  levels: readonly ReplayLevel[],
  stage: number,
): number[] {
  const { beta, rho, unseen } = REPLAY_PARAMS;
  const score = levels.map((l) => l.score ?? unseen);
  const order = levels.map((_, i) => i).sort((a, b) =>
    score[b]! - score[a]! || levels[a]!.id.localeCompare(levels[b]!.id)
  );
  const ps = new Array<number>(levels.length).fill(0);
  order.forEach((i, r) => (ps[i] = (1 / (r + 1)) ** (1 / beta)));
  const sumS = ps.reduce((a, b) => a + b, 0);
  const stale = levels.map((l) => stage - l.lastSeen);
  const sumC = stale.reduce((a, b) => a + b, 0);
  return levels.map((_, i) =>
    (1 - rho) * (ps[i]! / sumS) +
    rho * (sumC === 0 ? 1 / levels.length : stale[i]! / sumC)
  );
}

/**
 * The replay engineer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { replayEngineer } from "./replay.ts";
 * assert.equal(replayEngineer().name, "replay");
 * ```
 */
export function replayEngineer(): Engineer {
  return {
    name: "replay",
    propose(input: ProposeInput): Promise<Proposal> {
      const { levels, reads, stage } = replayBuffer(input);
      const p = replayProbabilities(levels, stage);
      // One stream per stage: with the same seed every stage would draw the
      // same edit.
      const rng = new Rng(input.seed, hashString("replay-engineer"), stage);
      const pool = levels.map((l, i) => ({ l, p: p[i]! }));
      const drawn: { l: ReplayLevel; p: number }[] = [];
      while (drawn.length < REPLAY_PARAMS.draws && pool.length > 0) {
        const total = pool.reduce((a, b) => a + b.p, 0);
        let u = rng.float() * total;
        let k = 0;
        for (; k < pool.length - 1; k++) {
          u -= pool[k]!.p;
          if (u < 0) break;
        }
        drawn.push(pool.splice(k, 1)[0]!);
      }
      const best = [...drawn].sort((a, b) =>
        (b.l.score ?? REPLAY_PARAMS.unseen) -
        (a.l.score ?? REPLAY_PARAMS.unseen)
      )[0]!;
      // ACCEL-style edit: a random dimension, harder with probability
      // `harder`; an edit that changes nothing (a dimension at its bound)
      // tries the other direction, then the other dimensions in turn.
      const first = rng.int(CURRICULUM_DIMS.length);
      const firstDir = rng.float() < REPLAY_PARAMS.harder ? 1 : -1;
      let dim = CURRICULUM_DIMS[first]!, dir = firstDir;
      let edited = step(best.l.config, dim, dir);
      search: for (let i = 0; i < CURRICULUM_DIMS.length; i++) {
        for (const d of [firstDir, -firstDir]) {
          dim = CURRICULUM_DIMS[(first + i) % CURRICULUM_DIMS.length]!;
          dir = d;
          edited = step(best.l.config, dim, dir);
          if (configId(edited) !== best.l.id) break search;
        }
      }
      const sumP = drawn.reduce((a, b) => a + b.p, 0);
      const parts = [
        ...drawn.map((d) => ({
          weight: (1 - REPLAY_PARAMS.editWeight) * d.p / sumP,
          config: d.l.config,
        })),
        { weight: REPLAY_PARAMS.editWeight, config: edited },
      ];
      const config = buildMixture(parts, { maxComponents: 4 });
      const fmt = (l: ReplayLevel) =>
        `${l.id} (score ${
          l.score === null ? "unseen" : l.score.toFixed(3)
        }, last stage ${l.lastSeen})`;
      return Promise.resolve({
        config,
        rationale:
          `replay engineer: buffer of ${levels.length} levels; replayed ${
            drawn.map((d) => fmt(d.l)).join(", ")
          }; ` +
          `edited ${best.l.id} with ${dim} ${
            dir > 0 ? "harder" : "easier"
          } (weight ${REPLAY_PARAMS.editWeight}).`,
        events: [],
        reads,
      });
    },
  };
}

/**
 * The replay engineer on another family (one with `mix`): levels are the
 * components of the current configuration (a family's context carries no
 * per-component history, so the buffer is the current mixture), each
 * scored by the learning potential of the findings' overall
 * `success_rate` (unscored under context `none`); up to two are drawn by
 * the same rank and staleness mixture, and the best-scored one is edited by
 * one step along a random stepped dimension (harder with probability 0.7,
 * the other direction or dimension when a step changes nothing) and added
 * with weight 0.3.
 *
 * @throws {EngineerConfigError} when the family has no `mix`.
 */
export function familyReplayEngineer(family: EnvironmentFamily): Engineer {
  if (family.mix === undefined) {
    throw new EngineerConfigError(
      `engineer replay on family ${family.name}: ${
        familyReplayProblem(family)
      }`,
    );
  }
  const mix = family.mix;
  const dims = family.stepped ?? family.dimensions.map((d) => d.path);
  const idOf = (c: unknown) =>
    sha256Hex(canonicalJson(c as never)).slice(0, 12);
  return {
    name: "replay",
    propose(input: ProposeInput): Promise<Proposal> {
      const ctx = input.context.json;
      const stage = ctx.stage ?? 0;
      const success = (ctx.stats as { success_rate?: unknown } | undefined)
        ?.success_rate;
      const scored = typeof success === "number";
      const levels: ReplayLevel[] = (family.components?.(input.config) ??
        [{ weight: 1, config: input.config }]).map((c) => ({
          id: idOf(c.config),
          config: c.config as EnvConfig,
          score: scored ? success * (1 - success) : null,
          success: scored ? success : null,
          lastSeen: stage,
        }));
      const p = replayProbabilities(levels, stage);
      const rng = new Rng(input.seed, hashString("replay-engineer"), stage);
      const pool = levels.map((l, i) => ({ l, p: p[i]! }));
      const drawn: { l: ReplayLevel; p: number }[] = [];
      while (drawn.length < REPLAY_PARAMS.draws && pool.length > 0) {
        const total = pool.reduce((a, b) => a + b.p, 0);
        let u = rng.float() * total;
        let k = 0;
        for (; k < pool.length - 1; k++) {
          u -= pool[k]!.p;
          if (u < 0) break;
        }
        drawn.push(pool.splice(k, 1)[0]!);
      }
      const best = drawn[0]!.l;
      const first = rng.int(dims.length);
      const firstDir = rng.float() < REPLAY_PARAMS.harder ? 1 : -1;
      let dim = dims[first]!, dir = firstDir;
      let edited: unknown = best.config;
      search: for (let i = 0; i < dims.length; i++) {
        for (const d of [firstDir, -firstDir]) {
          dim = dims[(first + i) % dims.length]!;
          dir = d;
          edited = stepConfig(family, best.config, dim, dir);
          if (idOf(edited) !== best.id) break search;
        }
      }
      const sumP = drawn.reduce((a, b) => a + b.p, 0);
      const config = mix([
        ...drawn.map((d) => ({
          weight: (1 - REPLAY_PARAMS.editWeight) * d.p / sumP,
          config: d.l.config as unknown,
        })),
        { weight: REPLAY_PARAMS.editWeight, config: edited },
      ]);
      return Promise.resolve({
        config: config as AnyEnvConfig,
        rationale: `replay engineer: buffer of ${levels.length} levels (${
          scored ? `success ${success.toFixed(3)}` : "unscored"
        }); replayed ${
          drawn.map((d) => d.l.id).join(", ")
        }; edited ${best.id} with ${dim} ${
          dir > 0 ? "harder" : "easier"
        } (weight ${REPLAY_PARAMS.editWeight}).`,
        events: [],
        reads: scored ? ["stats.success_rate"] : [],
      });
    },
  };
}

/** What a family lacks for `replay`, in one line, or `null`. */
export function familyReplayProblem(family: EnvironmentFamily): string | null {
  if (family.name === DEFAULT_FAMILY || family.mix !== undefined) return null;
  return `family ${family.name} has no mix (weighted mixtures of configurations), and replay proposes a mixture of replayed and edited configurations; give the family a mix, or use plr-stage (level replay over its instances)`;
}

/** The `replay` engineer kind (no parameters: {@linkcode REPLAY_PARAMS} are fixed). */
export const engineer: EngineerKind<Record<string, never>> = {
  name: "replay",
  description:
    "level replay by learning potential p(1-p) (PLR/ACCEL): replays two drawn levels and adds an edit of the best-scored one",
  params: v.strictObject({}),
  module: import.meta.url,
  families: "any",
  checkFamily: (_params, family) => familyReplayProblem(family),
  create: (_params, env) =>
    env.family !== undefined && env.family.name !== DEFAULT_FAMILY
      ? familyReplayEngineer(env.family)
      : replayEngineer(),
};
