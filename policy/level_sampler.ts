/**
 * The level sampler of `train`: the environment-design baselines at the
 * granularity they were published at, deciding per batch of episodes what
 * the policy plays (Jiang et al. 2021, robust PLR; Parker-Holder et al.
 * 2022, ACCEL; Tobin et al. 2017, domain randomisation), as JaxUED and
 * minimax implement them.
 *
 * A **batch** is one episode on each of `batch` levels, played in parallel
 * (`Trainer` with `episodes: "once"`). Before each batch the sampler
 * decides what it is:
 *
 * - `dr`: `batch` fresh levels, each from its own uniform point of the
 *   declared `box` (a fresh level per episode); trained on.
 * - `plr` (robust PLR, PLR⊥): *replay* when the buffer is at least
 *   `min_fill` full and a uniform draw is below `replay_prob`: `batch`
 *   levels drawn from the buffer (with replacement) by the replay
 *   distribution, trained on; otherwise *new*: `batch` fresh levels from
 *   the box, played without learning (robust PLR trains on replayed levels
 *   only) and inserted.
 * - `accel`: as `plr`, and every replay batch is followed by an *edit*
 *   batch: each replayed level edited by `edits` random edits of
 *   `mapf/mutate.ts` (holes, starts, goals, adding or removing an agent),
 *   each child checked solvable, played without learning and inserted.
 *
 * After every batch its levels are scored by positive value loss (`pvl.ts`,
 * from that batch's episodes) and the buffer re-ranked: a replayed level's
 * score is replaced, a new or edited level enters the buffer (when the
 * buffer is full it replaces the lowest score if its own is higher).
 * **Replay distribution**: `P = (1 - staleness) P_S + staleness P_C` with
 * rank prioritisation `P_S(l) ∝ (1 / rank(l))^(1 / temperature)` (rank 1
 * the highest score, ties in buffer order) and `P_C(l) ∝ t - seen(l)`: `t`
 * counts the episodes the sampler has handed out and `seen(l)` is `t` at
 * the end of the batch that last played `l` (a level drawn twice in one
 * replay batch gets the mean of its episodes' scores). Everything is drawn from a seeded stream per batch.
 *
 * @module
 */
import { boxConfig, boxProblem, type DrBox, sampleBox } from "../mapf/box.ts";
import { generate } from "../mapf/generator.ts";
import type { Instance } from "../mapf/instance.ts";
import { editLevel } from "../mapf/mutate.ts";
import { hashString, Rng } from "../mapf/rng.ts";

/** What a sampler runs. */
export type SamplerKind = "plr" | "accel" | "dr";

/** The sampler kinds. */
export const SAMPLER_KINDS: readonly SamplerKind[] = ["plr", "accel", "dr"];

/**
 * The default box new levels are drawn from: the span of the `easy` and
 * `hard` training presets (8x8 to 16x16 maps, 2 to 8 agents, holes 0.1 to
 * 0.2 clustered up to 0.5, walls up to 0.08, corridors up to 0.5, slip up
 * to 0.1, interaction up to 0.7, horizon 1.5 to 3 times the reference
 * makespan): declared from the presets the fixed baselines train on, never
 * from the benchmark suites or a split (the suites reach 24x24 maps and slip
 * 0.2, which this box does not).
 */
export const SAMPLER_BOX: DrBox = {
  size: [8, 16],
  agents: [2, 8],
  hole_density: [0.1, 0.2],
  hole_clustering: [0, 0.5],
  walls: [0, 0.08],
  corridors: [0, 0.5],
  slip: [0, 0.1],
  interaction: [0, 0.7],
  horizon: [1.5, 3],
};

/**
 * Defaults, as JaxUED's `maze_plr.py` (and minimax's ACCEL configuration):
 * buffer 4000, replay probability 0.8, rank temperature 0.3, staleness
 * coefficient 0.3, replay only once the buffer is half full, 5 edits per
 * ACCEL child.
 */
export const SAMPLER_DEFAULTS = {
  /** Levels per batch (parallel episodes). */
  batch: 64,
  /** Buffer capacity in levels. */
  buffer: 4000,
  /** Probability of a replay batch once the buffer is full enough. */
  replayProb: 0.8,
  /** Rank temperature. */
  temperature: 0.3,
  /** Staleness coefficient. */
  staleness: 0.3,
  /** Share of the buffer filled before the first replay. */
  minFill: 0.5,
  /** ACCEL: edits applied to each child. */
  edits: 5,
  /** ACCEL: most agents an edit makes. */
  maxAgents: 8,
  /** ACCEL: draws per child before the parent is skipped. */
  tries: 20,
} as const;

/** Options of a {@linkcode LevelSampler}. */
export interface SamplerOptions {
  /** What runs. */
  kind: SamplerKind;
  /** Seed of every draw. */
  seed: number;
  /** Box of new levels. @default {SAMPLER_BOX} */
  box?: DrBox;
  /** Levels per batch. @default {64} */
  batch?: number;
  /** Buffer capacity. @default {4000} */
  buffer?: number;
  /** Replay probability. @default {0.8} */
  replayProb?: number;
  /** Rank temperature. @default {0.3} */
  temperature?: number;
  /** Staleness coefficient. @default {0.3} */
  staleness?: number;
  /** Buffer share before the first replay. @default {0.5} */
  minFill?: number;
  /** ACCEL edits per child. @default {5} */
  edits?: number;
  /** ACCEL: most agents. @default {8} */
  maxAgents?: number;
  /** ACCEL: draws per child. @default {20} */
  tries?: number;
}

/** A level in the buffer. */
export interface BufferLevel {
  /** The instance. */
  instance: Instance;
  /** Its latest positive value loss. */
  score: number;
  /** The episode clock when it was last played. */
  seen: number;
  /** How it entered: `new` (drawn from the box) or `edit` (ACCEL). */
  origin: "new" | "edit";
  /** The id of the level it was edited from (edits). */
  parent: string | null;
}

/** What a sampler carries from one `train` node to the next. */
export interface SamplerState {
  /** The buffer. */
  levels: BufferLevel[];
  /** Episodes handed out so far (the staleness clock). */
  clock: number;
  /** Batches so far (names new levels and seeds each batch). */
  batches: number;
  /** ACCEL: the replay batch whose edits come next (null: none). */
  pending: Instance[] | null;
}

/** The branch a batch took. */
export type Branch = "dr" | "new" | "replay" | "edit";

/** One batch: the levels to play, and whether the policy learns from them. */
export interface Batch {
  /** Which branch. */
  branch: Branch;
  /** One level per parallel episode. */
  levels: Instance[];
  /** For replay batches, the buffer index of each level. */
  indices: number[];
  /** For edit batches, the parent id of each level. */
  parents: string[];
  /** Trained on (dr, replay) or only scored (new, edit). */
  learn: boolean;
}

/** What one batch measured per level (aligned with {@linkcode Batch.levels}). */
export interface BatchScores {
  /** Positive value loss of each level's episode. */
  pvl: ArrayLike<number>;
}

/** Counts of what a sampler did. */
export interface SamplerCounts {
  /** Batches per branch. */
  dr: number;
  new: number;
  replay: number;
  edit: number;
  /** Times the buffer was re-scored and re-ranked (once per scored batch). */
  reranks: number;
  /** Edited levels that failed every draw (ACCEL). */
  skipped: number;
}

/** What is wrong with sampler options, in one line naming the option, or null. */
export function samplerProblem(o: SamplerOptions): string | null {
  if (!SAMPLER_KINDS.includes(o.kind)) {
    return `sampler.name must be one of ${
      SAMPLER_KINDS.join(", ")
    } (got ${o.kind})`;
  }
  const b = o.box === undefined ? null : boxProblem(o.box, "sampler.box");
  if (b !== null) return b;
  const int = (name: string, x: number | undefined, min: number) =>
    x !== undefined && (!Number.isInteger(x) || x < min)
      ? `sampler.${name} must be an integer >= ${min} (got ${x})`
      : null;
  const unit = (name: string, x: number | undefined, open: boolean) =>
    x !== undefined && !(x >= 0 && x <= 1 && (!open || x > 0))
      ? `sampler.${name} must lie in ${open ? "(0, 1]" : "0..1"} (got ${x})`
      : null;
  return int("batch", o.batch, 1) ?? int("buffer", o.buffer, 1) ??
    unit("replay_prob", o.replayProb, true) ??
    unit("staleness", o.staleness, false) ??
    unit("min_fill", o.minFill, false) ??
    int("edits", o.edits, 1) ?? int("max_agents", o.maxAgents, 1) ??
    int("tries", o.tries, 1) ??
    (o.temperature !== undefined && !(o.temperature > 0)
      ? `sampler.temperature must be > 0 (got ${o.temperature})`
      : null);
}

/**
 * The replay distribution over a buffer (exported for tests):
 * `(1 - staleness) P_S + staleness P_C`, `P_S ∝ (1 / rank)^(1 / temperature)`
 * (rank 1 the highest score, equal scores in buffer order), `P_C ∝ clock -
 * seen` (uniform when every level was just seen).
 */
export function replayDistribution(
  scores: ArrayLike<number>,
  seen: ArrayLike<number>,
  clock: number,
  temperature: number,
  staleness: number,
): Float64Array {
  const n = scores.length;
  const p = new Float64Array(n);
  if (n === 0) return p;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) =>
    scores[b]! - scores[a]! || a - b
  );
  let sumS = 0;
  const ps = new Float64Array(n);
  order.forEach((i, r) => {
    ps[i] = (1 / (r + 1)) ** (1 / temperature);
    sumS += ps[i]!;
  });
  let sumC = 0;
  for (let i = 0; i < n; i++) sumC += Math.max(0, clock - seen[i]!);
  for (let i = 0; i < n; i++) {
    const c = sumC > 0 ? Math.max(0, clock - seen[i]!) / sumC : 1 / n;
    p[i] = (1 - staleness) * (ps[i]! / sumS) + staleness * c;
  }
  return p;
}

function _draw(p: Float64Array, rng: Rng): number {
  let u = rng.float();
  for (let i = 0; i < p.length; i++) {
    u -= p[i]!;
    if (u < 0) return i;
  }
  return p.length - 1;
}

/**
 * A level sampler: {@linkcode next} says what the next batch plays,
 * {@linkcode observe} takes its scores. Deterministic for its options and
 * state.
 *
 * @example
 * Not run: the episodes are played by a trainer (sampler_training.ts); level_sampler_test.ts runs the sampler.
 * ```ts ignore
 * const s = new LevelSampler({ kind: "plr", seed: 1, buffer: 256 });
 * const b = s.next();
 * // ...play b.levels one episode each, learning iff b.learn...
 * s.observe(b, { pvl });
 * ```
 */
export class LevelSampler {
  /** Options in force (defaults filled in). */
  readonly options: Readonly<Required<SamplerOptions>>;
  /** What it did so far (this sampler object only). */
  readonly counts: SamplerCounts = {
    dr: 0,
    new: 0,
    replay: 0,
    edit: 0,
    reranks: 0,
    skipped: 0,
  };
  #levels: BufferLevel[];
  #clock: number;
  #batches: number;
  #pendingEdit: Instance[] | null = null;

  /** A sampler with `state` carried from an earlier one (or empty). */
  constructor(options: SamplerOptions, state: SamplerState | null = null) {
    const problem = samplerProblem(options);
    if (problem !== null) throw new RangeError(problem);
    const d = SAMPLER_DEFAULTS;
    this.options = {
      kind: options.kind,
      seed: options.seed,
      box: options.box ?? SAMPLER_BOX,
      batch: options.batch ?? d.batch,
      buffer: options.buffer ?? d.buffer,
      replayProb: options.replayProb ?? d.replayProb,
      temperature: options.temperature ?? d.temperature,
      staleness: options.staleness ?? d.staleness,
      minFill: options.minFill ?? d.minFill,
      edits: options.edits ?? d.edits,
      maxAgents: options.maxAgents ?? d.maxAgents,
      tries: options.tries ?? d.tries,
    };
    this.#levels = state?.levels.map((l) => ({ ...l })) ?? [];
    this.#clock = state?.clock ?? 0;
    this.#batches = state?.batches ?? 0;
    this.#pendingEdit = state?.pending?.slice() ?? null;
  }

  /** Batches observed so far, including those of the state it started from. */
  get batches(): number {
    return this.#batches;
  }

  /** Levels in the buffer. */
  get size(): number {
    return this.#levels.length;
  }

  /** The state to carry on (the buffer, the clock, the batch count). */
  state(): SamplerState {
    return {
      levels: this.#levels.map((l) => ({ ...l })),
      clock: this.#clock,
      batches: this.#batches,
      pending: this.#pendingEdit?.slice() ?? null,
    };
  }

  /** The current replay distribution over the buffer. */
  replayProbabilities(): Float64Array {
    const o = this.options;
    return replayDistribution(
      this.#levels.map((l) => l.score),
      this.#levels.map((l) => l.seen),
      this.#clock,
      o.temperature,
      o.staleness,
    );
  }

  /** Decide and build the next batch. */
  next(): Batch {
    const o = this.options, b = this.#batches;
    const rng = new Rng(o.seed, hashString("level-sampler"), b);
    if (o.kind === "dr") return this.#fresh("dr", rng, true);
    if (this.#pendingEdit !== null) {
      const parents = this.#pendingEdit;
      this.#pendingEdit = null;
      const edit = this.#edit(parents, rng);
      if (edit.levels.length > 0) return edit;
    }
    const filled = this.#levels.length / o.buffer;
    const full = this.#levels.length > 0 && filled >= o.minFill;
    if (full && rng.float() < o.replayProb) {
      const p = this.replayProbabilities();
      const indices: number[] = [];
      for (let i = 0; i < o.batch; i++) indices.push(_draw(p, rng));
      return {
        branch: "replay",
        levels: indices.map((i) => this.#levels[i]!.instance),
        indices,
        parents: [],
        learn: true,
      };
    }
    return this.#fresh("new", rng, false);
  }

  /** Take the scores of a batch `next` returned: re-score and re-rank. */
  observe(batch: Batch, scores: BatchScores): void {
    const n = batch.levels.length;
    if (scores.pvl.length !== n) {
      throw new RangeError(
        `scores cover ${scores.pvl.length} levels but the batch has ${n}`,
      );
    }
    this.#batches++;
    this.counts[batch.branch]++;
    if (batch.branch === "dr") {
      this.#clock += n;
      return;
    }
    this.#clock += n;
    if (batch.branch === "replay") {
      // a level drawn more than once in a batch gets the mean of its episodes
      const sum = new Map<number, [number, number]>();
      for (let i = 0; i < n; i++) {
        const k = batch.indices[i]!, a = sum.get(k) ?? [0, 0];
        sum.set(k, [a[0] + scores.pvl[i]!, a[1] + 1]);
      }
      for (const [k, [total, count]] of sum) {
        const l = this.#levels[k]!;
        l.score = total / count;
        l.seen = this.#clock;
      }
    } else {
      for (let i = 0; i < n; i++) {
        this.#insert({
          instance: batch.levels[i]!,
          score: scores.pvl[i]!,
          seen: this.#clock,
          origin: batch.branch === "edit" ? "edit" : "new",
          parent: batch.branch === "edit" ? batch.parents[i]! : null,
        });
      }
    }
    this.counts.reranks++;
    if (this.options.kind === "accel" && batch.branch === "replay") {
      this.#pendingEdit = batch.levels;
    }
  }

  #insert(l: BufferLevel): void {
    if (this.#levels.some((x) => x.instance.id === l.instance.id)) return;
    if (this.#levels.length < this.options.buffer) {
      this.#levels.push(l);
      return;
    }
    let lo = 0;
    for (let i = 1; i < this.#levels.length; i++) {
      if (this.#levels[i]!.score < this.#levels[lo]!.score) lo = i;
    }
    if (l.score > this.#levels[lo]!.score) this.#levels[lo] = l;
  }

  #fresh(branch: "dr" | "new", rng: Rng, learn: boolean): Batch {
    const o = this.options, levels: Instance[] = [];
    for (let i = 0; i < o.batch; i++) {
      const config = boxConfig(sampleBox(o.box, rng));
      const seed = rng.int(0x7fffffff);
      const [inst] = generate(config, { count: 1, seed }).instances;
      if (inst === undefined) {
        throw new RangeError(
          `sampler.box: no solvable level drawn at ${
            JSON.stringify(config)
          }; narrow the box`,
        );
      }
      levels.push({ ...inst, id: `s${o.seed}-b${this.#batches}-${i}` });
    }
    return { branch, levels, indices: [], parents: [], learn };
  }

  #edit(parents: readonly Instance[], rng: Rng): Batch {
    const o = this.options, levels: Instance[] = [], ids: string[] = [];
    parents.forEach((p, i) => {
      const r = editLevel(p, `s${o.seed}-b${this.#batches}-e${i}`, rng, {
        steps: o.edits,
        maxAgents: o.maxAgents,
        tries: o.tries,
      });
      if (r === null) this.counts.skipped++;
      else {
        levels.push(r.instance);
        ids.push(p.id);
      }
    });
    return { branch: "edit", levels, indices: [], parents: ids, learn: false };
  }
}
