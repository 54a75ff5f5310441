/**
 * The paper's metrics for `evaluate`: every episode read as a joint plan
 * (mapf/plan_reading.ts), whatever the policy (a language model's one-shot
 * plan, or a stepping policy's rollout), aggregated overall, per suite and
 * per cell of agents x map size (`3ag_3x3`, the benchmark's cells).
 *
 * Fields of each aggregate:
 * - `valid_rate`: episodes with every goal reached, no illegal move and no
 *   conflict;
 * - `optimal_soc_rate` / `optimal_makespan_rate`: valid episodes whose sum of
 *   costs / makespan equals the exact optimum (CBS / CBS ordered on
 *   makespan); an episode whose optimum the search could not certify counts
 *   as not optimal and is counted in `optimum_unknown`;
 * - `agent_success_rate`: agents on their goals at the end, over all agents;
 * - `illegal_rate` / `conflict_rate`: episodes with an illegal move / a
 *   conflict;
 * - `tokens_per_answer`: mean completion tokens of a language model's
 *   answers (one answer per instance), `null` for other policies.
 *
 * @module
 */
import type { Json } from "@envsmith/engine/kind";
import { ReplyCache } from "../llm/cache.ts";
import type { LlmEpisodeInfo } from "../policy/llm_policy.ts";
import { cellOf } from "../mapf/grid_cell.ts";
import { type PlanReading, readPlan } from "../mapf/plan_reading.ts";
import type { Instance } from "../mapf/instance.ts";
import type { Episode } from "../mapf/trajectory.ts";

/** The paper's metrics of a set of episodes. */
export interface PaperMetrics {
  /** Episodes. */
  episodes: number;
  /** Every goal reached, no illegal move, no conflict. */
  valid_rate: number;
  /** Valid and at the least sum of costs. */
  optimal_soc_rate: number;
  /** Valid and at the least makespan. */
  optimal_makespan_rate: number;
  /** Valid episodes whose optimality could not be certified (counted as not optimal). */
  optimum_unknown: number;
  /** Agents on their goals at the end, over all agents. */
  agent_success_rate: number;
  /** Episodes with an illegal move. */
  illegal_rate: number;
  /** Episodes with a conflict. */
  conflict_rate: number;
  /** Mean completion tokens per answer (language-model policies), else null. */
  tokens_per_answer: number | null;
}

/** One episode's reading, with what aggregates need. */
export interface ReadEpisode {
  /** Instance id. */
  readonly instance: string;
  /** Its suite (or null). */
  readonly suite: string | null;
  /** Its cell, e.g. `3ag_3x3`. */
  readonly cell: string;
  /** The reading. */
  readonly reading: PlanReading;
  /** Completion tokens of the answer that produced it (language models). */
  readonly tokens: number | null;
  /** The answer's id (one per instance for a language model). */
  readonly answer: string | null;
}

/**
 * Read every episode as a plan. `episodes` are the decoded trajectories;
 * `answers` (language models) give each episode's answer id and tokens.
 *
 * @throws {RangeError} if an episode names an instance that is not given.
 */
export function readEpisodes(
  instances: readonly Instance[],
  episodes: readonly Episode[],
  answers?: readonly ({ id: string; tokens: number | null } | undefined)[],
): ReadEpisode[] {
  const byId = new Map(instances.map((i) => [i.id, i]));
  const optima = new Map();
  return episodes.map((ep, j) => {
    const inst = byId.get(ep.instance);
    if (!inst) {
      throw new RangeError(
        `episode ${j} names unknown instance ${ep.instance}`,
      );
    }
    const ans = answers?.[j];
    return {
      instance: inst.id,
      suite: inst.suite ?? null,
      cell: cellOf(inst),
      reading: readPlan(inst, ep, { optima }),
      tokens: ans?.tokens ?? null,
      answer: ans?.id ?? null,
    };
  });
}

/** The paper's metrics of read episodes. */
export function paperMetrics(read: readonly ReadEpisode[]): PaperMetrics {
  const n = read.length;
  let valid = 0, optSoc = 0, optMk = 0, unknown = 0, agents = 0, onGoal = 0;
  let illegal = 0, conflict = 0;
  const tokens = new Map<string, number>();
  for (const e of read) {
    const r = e.reading;
    if (r.valid) valid++;
    if (r.optimal_soc === true) optSoc++;
    if (r.optimal_makespan === true) optMk++;
    if (r.optimal_soc === null || r.optimal_makespan === null) unknown++;
    agents += r.agents;
    onGoal += r.agents_on_goal;
    if (r.illegal_moves > 0) illegal++;
    if (r.conflicts > 0) conflict++;
    if (e.tokens !== null) tokens.set(e.answer ?? e.instance, e.tokens);
  }
  const rate = (k: number) => (n > 0 ? k / n : 0);
  const t = [...tokens.values()];
  return {
    episodes: n,
    valid_rate: rate(valid),
    optimal_soc_rate: rate(optSoc),
    optimal_makespan_rate: rate(optMk),
    optimum_unknown: unknown,
    agent_success_rate: agents > 0 ? onGoal / agents : 0,
    illegal_rate: rate(illegal),
    conflict_rate: rate(conflict),
    tokens_per_answer: t.length > 0
      ? t.reduce((a, b) => a + b, 0) / t.length
      : null,
  };
}

/** Read episodes grouped by a key, keys sorted, each group's metrics. */
export function metricsBy(
  read: readonly ReadEpisode[],
  key: (e: ReadEpisode) => string,
): Record<string, PaperMetrics> {
  const groups = new Map<string, ReadEpisode[]>();
  for (const e of read) {
    const k = key(e);
    groups.set(k, [...(groups.get(k) ?? []), e]);
  }
  return Object.fromEntries(
    [...groups.keys()].sort(_cellOrder).map((
      k,
    ) => [k, paperMetrics(groups.get(k)!)]),
  );
}

/** Cells by agents, then size; other keys by name. */
function _cellOrder(a: string, b: string): number {
  const pa = /^(\d+)ag_(\d+)x(\d+)$/.exec(a),
    pb = /^(\d+)ag_(\d+)x(\d+)$/.exec(b);
  if (pa && pb) {
    for (let i = 1; i <= 3; i++) {
      const d = Number(pa[i]) - Number(pb[i]);
      if (d !== 0) return d;
    }
    return 0;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Per-instance paper fields (rates over the instance's episodes), by id. */
export function perInstancePaper(
  read: readonly ReadEpisode[],
): Map<string, { [k: string]: Json }> {
  const by = new Map<string, ReadEpisode[]>();
  for (const e of read) by.set(e.instance, [...(by.get(e.instance) ?? []), e]);
  return new Map(
    [...by].map(([id, es]) => {
      const m = paperMetrics(es);
      return [id, {
        cell: es[0]!.cell,
        valid: m.valid_rate,
        optimal_soc: m.optimal_soc_rate,
        optimal_makespan: m.optimal_makespan_rate,
      }];
    }),
  );
}

/**
 * Each episode's answer id and completion tokens (a language model's
 * rollout), read from the reply cache its requests went through.
 */
export async function answersFromCache(
  info: readonly LlmEpisodeInfo[],
  cacheDir: string,
): Promise<({ id: string; tokens: number | null } | undefined)[]> {
  const cache = new ReplyCache(cacheDir);
  const tokens = new Map<string, number | null>();
  for (const i of info) {
    if (!i || tokens.has(i.request)) continue;
    const reply = await cache.get(i.request);
    tokens.set(i.request, reply ? reply.usage.completionTokens : null);
  }
  return info.map((i) =>
    i ? { id: i.request, tokens: tokens.get(i.request) ?? null } : undefined
  );
}
