/**
 * The `plr` engineer: robust prioritized level replay, PLR⊥ (Jiang et al.
 * 2021, "Replay-Guided Adversarial Environment Design").
 *
 * **Granularity.** A level is one instance. The engineer keeps a buffer of
 * levels with scores between stages (the redesign node stores it as a level
 * set); a stage's environment set is the `count` instances the next
 * `generate` node draws from the buffer by the replay distribution, so it
 * mixes levels replayed from many earlier stages and levels that were new
 * (drawn and scored) in the stage before.
 *
 * **Each redesign (after stage k):**
 * 1. *Scores from training.* Every level trained on in stage k gets the
 *    positive value loss (PVL: mean over its agent-steps of `max(A_t, 0)`,
 *    GAE advantages) the trainer measured on it, and `seen = k`. After stage
 *    0, whose instances were drawn from the source with no buffer yet, those
 *    instances enter the buffer (origin `start`).
 * 2. *New levels.* `round(n (1 - p) / p)` new levels (`n` training instances
 *    in the stage, `p = replay_prob`) are drawn from the source and rolled
 *    out once with the current checkpoint, with no learning, to score them;
 *    they enter the buffer. Robust PLR trains on replayed levels only: these
 *    levels are trained on only if they are later drawn for replay, never in
 *    the stage that discovered them. Their rollouts are engineer cost, counted
 *    and reported, not training experience.
 * 3. *Eviction.* Over `buffer` levels, the lowest scores leave (ties: the
 *    stalest, then by id).
 * 4. *Replay distribution.* `P = (1 - ρ) P_S + ρ P_C` with rank
 *    prioritisation `P_S(l) ∝ (1 / rank(l))^(1/β)` (rank 1 = highest
 *    score; ties by buffer order) and staleness `P_C(l) ∝ c - seen(l)`,
 *    `c = k + 1` (uniform when every level was seen at stage k).
 *
 * **Departures from the source, and why.** PLR⊥ decides replay or new per
 * episode and updates a level's score after every episode; here decisions
 * are per stage (the engineer's granularity): the replay probability `p`
 * sets how many new levels are scored per trained instance, scores and
 * staleness are counted in stages, and the first stage trains on source
 * levels (there is nothing to replay yet). `β = 0.3` was chosen on the validation split from 0.1, 0.3, 1
 * and 3; `ρ`, `p` and the buffer size were not tuned (docs/engineers.md).
 *
 * @module
 */
import type { Instance } from "../mapf/instance.ts";
import type { AnyEnvConfig } from "../schemas/env_config.ts";
import type {
  Engineer,
  EngineerEvent,
  Proposal,
  ProposeInput,
} from "./engineer.ts";
import type { Level, LevelOrigin, MeasuredLevel } from "./levels.ts";

/** PLR defaults. */
export const PLR_DEFAULTS = {
  /** Buffer capacity (levels). */
  buffer: 1024,
  /** Replay probability p. */
  replayProb: 0.5,
  /** Rank temperature β (chosen on the validation split; docs/engineers.md). */
  beta: 0.3,
  /** Staleness mixing ρ. */
  rho: 0.3,
} as const;

/** A training instance and what training measured on it. */
export interface TrainedLevel {
  /** The instance. */
  instance: Instance;
  /** What training measured (`agentSteps` are the acting agent-steps). */
  measured: MeasuredLevel;
}

/**
 * What an instance-level engineer is given besides the context: the buffer,
 * this stage's training instances with their scores, and rollouts without
 * learning (supplied by the node, which counts their cost).
 */
export interface LevelIo {
  /** The buffer after the previous redesign (null before the first). */
  buffer: readonly Level[] | null;
  /** This stage's training instances (duplicates allowed) and their scores. */
  trained: readonly TrainedLevel[];
  /** The configuration new levels come from. */
  source: AnyEnvConfig;
  /** Draw `count` new levels from the source with `seed` and score them. */
  fresh(
    count: number,
    seed: number,
  ): Promise<{ instance: Instance; measured: MeasuredLevel }[]>;
  /** Score instances with the current checkpoint (no learning). */
  score(instances: readonly Instance[], seed: number): Promise<MeasuredLevel[]>;
  /**
   * The id of an instance (another family's `instanceId`).
   * @default the instance's `id`
   */
  idOf?(instance: Instance): string;
}

/**
 * PLR's replay distribution over a buffer (exported for tests):
 * `(1 - rho) P_S + rho P_C` with `P_S ∝ (1/rank)^(1/beta)` (rank 1 = the
 * highest score; equal scores ranked in buffer order) and
 * `P_C ∝ now - seen` (uniform when all are 0).
 */
export function plrReplayProbabilities(
  scores: readonly number[],
  seen: readonly number[],
  now: number,
  beta: number,
  rho: number,
): number[] {
  const n = scores.length;
  if (n === 0) return [];
  const order = scores.map((_, i) => i).sort((a, b) =>
    scores[b]! - scores[a]! || a - b
  );
  const ps = new Array<number>(n).fill(0);
  order.forEach((i, r) => (ps[i] = (1 / (r + 1)) ** (1 / beta)));
  const sumS = ps.reduce((a, b) => a + b, 0);
  const stale = seen.map((s) => Math.max(0, now - s));
  const sumC = stale.reduce((a, b) => a + b, 0);
  return ps.map((p, i) =>
    (1 - rho) * (p / sumS) + rho * (sumC === 0 ? 1 / n : stale[i]! / sumC)
  );
}

/** The score of a measurement: its positive value loss. */
export function levelScore(m: MeasuredLevel): number {
  return m.pvl;
}

/** What is wrong with PLR parameters, in one line naming the parameter, or null. */
export function plrProblem(
  buffer: number,
  replayProb: number,
  beta: number,
  rho: number,
): string | null {
  if (!Number.isInteger(buffer) || buffer < 1) {
    return `buffer must be a positive number of levels (got ${buffer}): an empty buffer has nothing to replay`;
  }
  if (!(replayProb > 0 && replayProb <= 1)) {
    return `replay_prob must lie in (0, 1] (got ${replayProb})`;
  }
  if (!(beta > 0)) return `beta (rank temperature) must be > 0 (got ${beta})`;
  if (!(rho >= 0 && rho <= 1)) {
    return `rho (staleness mixing) must lie in 0..1 (got ${rho})`;
  }
  return null;
}

/** Options of {@linkcode plrEngineer}. */
export interface PlrOptions {
  /** The buffer, the stage's training scores and rollouts (from the node). */
  io: LevelIo;
  /** Buffer capacity. @default {1024} */
  buffer?: number;
  /** Replay probability p. @default {0.5} */
  replayProb?: number;
  /** Rank temperature β. @default {0.3} */
  beta?: number;
  /** Staleness mixing ρ. @default {0.3} */
  rho?: number;
  /**
   * ACCEL's step (set by `accel`): edits high-regret replayed levels and
   * returns the edited levels, scored, and its events.
   */
  evolve?: (
    replayed: readonly Level[],
    stage: number,
    seed: number,
  ) => Promise<
    {
      levels: Level[];
      events: EngineerEvent[];
      agentSteps: number;
      episodes: number;
    }
  >;
  /** Name in reports. @default {"plr-stage"} */
  name?: string;
}

/** Merge duplicate training instances: PVL weighted by agent-steps. */
function _mergeTrained(
  trained: readonly TrainedLevel[],
  idOf: (instance: Instance) => string,
): Map<string, TrainedLevel> {
  const out = new Map<string, TrainedLevel>();
  for (const t of trained) {
    const id = idOf(t.instance);
    const o = out.get(id);
    if (o === undefined) {
      out.set(id, {
        instance: t.instance,
        measured: { ...t.measured },
      });
      continue;
    }
    const a = o.measured, b = t.measured;
    const steps = a.agentSteps + b.agentSteps;
    a.pvl = steps > 0
      ? (a.pvl * a.agentSteps + b.pvl * b.agentSteps) / steps
      : 0;
    a.agentSteps = steps;
    a.episodes += b.episodes;
    a.successes += b.successes;
  }
  return out;
}

/**
 * The `plr` engineer (and, with `evolve`, `accel`).
 *
 * @example
 * Not run: `io`, `context` and `config` come from a run (nodes/plr_engineer.ts); plr_test.ts runs it with a stand-in.
 * ```ts ignore
 * const e = plrEngineer({ io });
 * const { levels } = await e.propose({ context, config, seed: 1 });
 * ```
 */
export function plrEngineer(options: PlrOptions): Engineer {
  const cap = options.buffer ?? PLR_DEFAULTS.buffer;
  const p = options.replayProb ?? PLR_DEFAULTS.replayProb;
  const beta = options.beta ?? PLR_DEFAULTS.beta;
  const rho = options.rho ?? PLR_DEFAULTS.rho;
  const problem = plrProblem(cap, p, beta, rho);
  if (problem !== null) throw new RangeError(problem);
  const name = options.name ?? "plr-stage";
  const io = options.io;
  const idOf = io.idOf ?? ((i: Instance) => i.id);
  return {
    name,
    async propose(input: ProposeInput): Promise<Proposal> {
      const stage = input.context.json.stage ?? 0;
      const events: EngineerEvent[] = [];
      const buf = new Map<string, Level>();
      for (const l of io.buffer ?? []) buf.set(l.id, { ...l });
      // 1. scores from training
      const replayed = _rescoreTrained(buf, io.trained, idOf, stage, events);
      // 2. new levels, scored with no learning
      const nNew = Math.round(io.trained.length * (1 - p) / p);
      let episodes = 0, agentSteps = 0;
      if (nNew > 0) {
        const seed = (input.seed ^ Math.imul(stage + 1, 0x85ebca6b)) >>> 0;
        const cost = await _addFresh(buf, io, nNew, seed, stage, events);
        episodes += cost.episodes;
        agentSteps += cost.agentSteps;
      }
      // ACCEL: edit high-regret replayed levels
      if (options.evolve !== undefined) {
        const ev = await options.evolve(
          replayed,
          stage,
          (input.seed ^ Math.imul(stage + 1, 0xc2b2ae35)) >>> 0,
        );
        for (const l of ev.levels) if (!buf.has(l.id)) buf.set(l.id, l);
        events.push(...ev.events);
        episodes += ev.episodes;
        agentSteps += ev.agentSteps;
      }
      // 3. eviction of the lowest scores
      const levels = _evict([...buf.values()], cap, events);
      // 4. replay distribution
      const replay = plrReplayProbabilities(
        levels.map((l) => l.score),
        levels.map((l) => l.seen),
        stage + 1,
        beta,
        rho,
      );
      events.push(_replayEvent(levels, replay, beta, rho));
      return {
        config: io.source,
        rationale: `${name} engineer: buffer of ${levels.length} levels; ${
          nNew > 0 ? `${nNew} new levels scored; ` : ""
        }${
          agentSteps > 0
            ? `engineer rollouts ${agentSteps} agent-steps, no learning; `
            : ""
        }the next stage replays levels by PVL rank (beta ${beta}) and staleness (rho ${rho}).`,
        events,
        reads: [],
        cost: { episodes, agentSteps },
        levels: { levels, replay, source: io.source },
      };
    },
  };
}

/**
 * Step 1: the stage's training instances rescored by their training PVL
 * (entering the buffer as start levels when new); returns them, in order.
 */
function _rescoreTrained(
  buf: Map<string, Level>,
  trainedList: readonly TrainedLevel[],
  idOf: (instance: Instance) => string,
  stage: number,
  events: EngineerEvent[],
): Level[] {
  const trained = _mergeTrained(trainedList, idOf);
  const replayed: Level[] = [];
  let added = 0;
  for (const t of trained.values()) {
    const m = t.measured;
    const id = idOf(t.instance);
    let l = buf.get(id);
    if (l === undefined) {
      const origin: LevelOrigin = "start";
      l = {
        id,
        instance: t.instance,
        score: 0,
        seen: stage,
        origin,
        success: null,
        parent: null,
      };
      buf.set(l.id, l);
      added++;
    }
    if (m.agentSteps > 0) {
      l.score = levelScore(m);
      l.seen = stage;
    }
    if (m.episodes > 0) l.success = m.successes / m.episodes;
    replayed.push(l);
  }
  events.push({
    type: "choice",
    detail:
      `rescored ${trained.size} levels trained on in stage ${stage} by training PVL${
        added > 0 ? ` (${added} entered the buffer as start levels)` : ""
      }`,
  });
  return replayed;
}

/** Step 2: `nNew` levels drawn from the source, scored without learning; returns their cost. */
async function _addFresh(
  buf: Map<string, Level>,
  io: LevelIo,
  nNew: number,
  seed: number,
  stage: number,
  events: EngineerEvent[],
): Promise<{ episodes: number; agentSteps: number }> {
  let episodes = 0, agentSteps = 0;
  const fresh = await io.fresh(nNew, seed);
  let sum = 0;
  for (const f of fresh) {
    episodes += f.measured.episodes;
    agentSteps += f.measured.agentSteps;
    sum += levelScore(f.measured);
    const id = (io.idOf ?? ((i: Instance) => i.id))(f.instance);
    if (buf.has(id)) continue;
    buf.set(id, {
      id,
      instance: f.instance,
      score: levelScore(f.measured),
      seen: stage,
      origin: "new",
      success: f.measured.episodes > 0
        ? f.measured.successes / f.measured.episodes
        : null,
      parent: null,
    });
  }
  events.push({
    type: "choice",
    detail:
      `scored ${fresh.length} new levels from the source with the current checkpoint (mean PVL ${
        (sum / Math.max(1, fresh.length)).toFixed(4)
      }; ${agentSteps} agent-steps, no learning)`,
  });
  return { episodes, agentSteps };
}

/** Step 3: the buffer cut to its capacity, keeping the highest scores (then the freshest, then by id). */
function _evict(
  levels: Level[],
  cap: number,
  events: EngineerEvent[],
): Level[] {
  if (levels.length <= cap) return levels;
  const keep = [...levels].sort((a, b) =>
    b.score - a.score || b.seen - a.seen || a.id.localeCompare(b.id)
  ).slice(0, cap);
  const kept = new Set(keep.map((l) => l.id));
  const evicted = levels.length - cap;
  const cut = keep[keep.length - 1]!.score;
  events.push({
    type: "choice",
    detail:
      `evicted the ${evicted} lowest-scored levels (buffer ${cap}; lowest kept score ${
        cut.toFixed(4)
      })`,
  });
  return levels.filter((l) => kept.has(l.id));
}

/** Step 4's event: the buffer's make-up and its most likely levels. */
function _replayEvent(
  levels: readonly Level[],
  replay: readonly number[],
  beta: number,
  rho: number,
): EngineerEvent {
  const top = levels.map((l, i) => ({ l, q: replay[i]! }))
    .sort((a, b) => b.q - a.q).slice(0, 3);
  const origins = { start: 0, new: 0, edit: 0 };
  for (const l of levels) origins[l.origin]++;
  return {
    type: "choice",
    detail:
      `replay distribution over ${levels.length} levels (${origins.start} start, ${origins.new} new, ${origins.edit} edited; beta ${beta}, rho ${rho}); most likely: ${
        top.map((t) =>
          `${t.l.id} p=${t.q.toFixed(3)} score ${t.l.score.toFixed(4)}`
        ).join(", ")
      }`,
  };
}
