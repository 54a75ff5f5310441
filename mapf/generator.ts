/**
 * The MAPF-FrozenLake instance generator.
 *
 * Instance `i` of a run is a pure function of `(config, seed, i, suite)`:
 * its RNG is {@linkcode Rng} seeded with `(seed word, i, domain tag)`, so a
 * run of `count` instances is a prefix of a longer run, and the same inputs
 * give byte-identical instances on every machine. Training runs use seeds in
 * `0 .. 2^31 - 1`; suite runs set the top bit of the seed word (and tag the
 * domain with the suite name), so suite instances come from RNG streams no
 * training run can produce: disjoint by construction. Each suite has two
 * splits in disjoint seed spaces (the domain tag also names the split):
 * `validation` (the instances suites always had) and `test`.
 *
 * One draw (attempt) of an instance:
 * 1. pick a mixture component (weights), draw a map (map_gen.ts);
 * 2. place agents one by one in the largest free region: each agent draws
 *    8 candidate start-goal pairs with shortest-path distance in
 *    `distance.min..max`, scores each by how many earlier agents' shortest
 *    paths it would collide with if all followed their shortest paths at
 *    once, ranks them by that score and takes the candidate at rank
 *    `round(interaction * (candidates - 1))`: `interaction` 0 keeps paths
 *    apart, 0.5 is about what uniform placement gives, 1 makes them cross;
 * 3. solve it (prioritized planning, then CBS with a small node budget for
 *    up to 4 agents), set the horizon (`ceil(factor * makespan)` or `steps`)
 *    and reject it if the plan does not fit.
 * Rejected draws are counted by reason: `space` (largest free region too
 * small for the agents), `placement` (no start-goal pair in the distance
 * range), `unsolved` (no solver found a plan), `horizon` (plan longer than
 * `horizon.steps`). An instance that is still rejected after `maxAttempts`
 * draws stops the run with a {@linkcode GenerationError} that says why;
 * configurations that cannot work at all (e.g. more agents than free cells)
 * fail before any draw.
 *
 * @module
 */
import {
  type AnyEnvConfig,
  components as configComponents,
  configId,
  type EnvConfig,
  type EnvConfigSpec,
  parseEnvConfig,
} from "../schemas/env_config.ts";
import { bfsDistances, connectedComponents, UNREACHABLE } from "./grid.ts";
import { compileInstance, gridToRows, type Instance } from "./instance.ts";
import { generateMap, partitionLines } from "./map_gen.ts";
import { hashString, Rng } from "./rng.ts";
import { at } from "./solution.ts";
import { solveCBS } from "./solve_cbs.ts";
import { solvePP } from "./solve_pp.ts";

/**
 * The split of a benchmark suite: `validation` and `validation-2` for
 * everything designed or tuned, `test` for reported results. Same generator,
 * disjoint seed spaces. `validation-2` was the first test split (ids
 * `<suite>-test-<index>` then): its results were read while the engineers and
 * statistics were designed, so it became validation when the design was frozen
 * and `test` was drawn afresh from a new seed space.
 */
export type SuiteSplit = "validation" | "validation-2" | "test";

/** The suite splits, validation first. */
export const SUITE_SPLITS: readonly SuiteSplit[] = [
  "validation",
  "validation-2",
  "test",
];

/** The RNG tag and the id prefix of each split of suite `suite`. */
function _splitSpace(
  suite: string,
  split: SuiteSplit,
): { tag: string; idPrefix: string } {
  switch (split) {
    case "validation":
      return { tag: `suite:${suite}`, idPrefix: suite };
    case "validation-2":
      return { tag: `suite:${suite}:test`, idPrefix: `${suite}-val2` };
    case "test":
      return { tag: `suite:${suite}:test2`, idPrefix: `${suite}-test2` };
  }
}

/** Why a draw was rejected. */
export type RejectionReason = "space" | "placement" | "unsolved" | "horizon";

/** Rejected draws per reason. */
export type RejectionCounts = Record<RejectionReason, number>;

/** Options of {@linkcode generate}. */
export interface GenerateOptions {
  /** Number of instances. */
  count: number;
  /** Seed: `0 .. 2^31 - 1`. */
  seed: number;
  /** Generate in this suite's seed space (ids become `<suite>-<index>`). */
  suite?: string;
  /**
   * Which split of the suite (with `suite` only): `validation` is the seed
   * space suites always had (ids `<suite>-<index>`), `validation-2` the first
   * test split (ids `<suite>-val2-<index>`), `test` the one results are
   * reported on (ids `<suite>-test2-<index>`); all disjoint.
   * @default {"validation"}
   */
  split?: SuiteSplit;
  /** Index of the first instance. @default 0 */
  startIndex?: number;
  /** Draws per instance before giving up. @default 100 */
  maxAttempts?: number;
  /** Largest agent count CBS is tried on when PP fails. @default 4 */
  cbsMaxAgents?: number;
  /** Abort a long run. */
  signal?: AbortSignal;
  /** Called after each instance. */
  onProgress?: (done: number, total: number) => void;
}

/** Per-component generation statistics. */
export interface ComponentReport {
  /** Index in the mixture (0 for a single config). */
  readonly component: number;
  /** {@linkcode configId} of the component. */
  readonly config_id: string;
  /** Mixture weight. */
  readonly weight: number;
  /** Instances accepted. */
  readonly accepted: number;
  /** Draws made. */
  readonly attempts: number;
  /** Rejected draws per reason. */
  readonly rejected: RejectionCounts;
  /** Rejected draws / draws. */
  readonly rejection_rate: number;
}

/** What a generation run did. */
export interface GenerationReport {
  /** {@linkcode configId} of the whole config. */
  readonly config_id: string;
  /** Seed of the run. */
  readonly seed: number;
  /** Suite, if any. */
  readonly suite?: string;
  /** Split of the suite (suite runs only). */
  readonly split?: SuiteSplit;
  /** Instances accepted. */
  readonly accepted: number;
  /** Draws made. */
  readonly attempts: number;
  /** Rejected draws per reason. */
  readonly rejected: RejectionCounts;
  /** Rejected draws / draws. */
  readonly rejection_rate: number;
  /** Per mixture component. */
  readonly components: readonly ComponentReport[];
  /** How many references each solver provided. */
  readonly solvers: { readonly pp: number; readonly cbs: number };
  /** Mean reference sum-of-costs and makespan, mean measured interaction. */
  readonly mean: {
    readonly soc: number;
    readonly makespan: number;
    readonly interaction: number;
  };
}

/** A generation that cannot succeed; says which component, why, and what to change. */
export class GenerationError extends RangeError {
  /** Statistics up to the failure. */
  readonly report: GenerationReport;
  /** Mixture component that failed. */
  readonly component: number;
  /** Dominant rejection reason (or `space` for a static impossibility). */
  readonly reason: RejectionReason;
  /** Build from a message and the data. */
  constructor(
    message: string,
    report: GenerationReport,
    component: number,
    reason: RejectionReason,
  ) {
    super(message);
    this.name = "GenerationError";
    this.report = report;
    this.component = component;
    this.reason = reason;
  }
}

const CANDIDATES = 8;

function _zero(): RejectionCounts {
  return { space: 0, placement: 0, unsolved: 0, horizon: 0 };
}

/**
 * A reason why component `c` cannot produce any instance, found without
 * drawing (fail fast), or `null`.
 */
export function staticInfeasibility(c: EnvConfig): string | null {
  const cells = c.width * c.height;
  const lines = partitionLines(c);
  // walls are placed in full (when there is room); partition lines add more
  const free = cells - Math.round(c.walls * cells);
  const afterHoles = free - Math.round(c.hole_density * free);
  if (2 * c.agents > free) {
    return `${c.agents} agents need ${
      2 * c.agents
    } distinct start and goal cells, but a ${c.width}x${c.height} grid with walls ${c.walls} has at most ${free} free cells; lower agents or walls, or enlarge the grid`;
  }
  if (lines === 0 && 2 * c.agents > afterHoles) {
    return `${c.agents} agents need ${
      2 * c.agents
    } distinct start and goal cells, but holes (${c.hole_density}) and walls (${c.walls}) leave ${afterHoles} free cells on a ${c.width}x${c.height} grid; lower agents, hole_density or walls`;
  }
  if ("steps" in c.horizon && c.horizon.steps < c.distance.min) {
    return `horizon.steps ${c.horizon.steps} is shorter than distance.min ${c.distance.min}: no agent can arrive in time; raise horizon.steps or lower distance.min`;
  }
  if (
    c.distance.min > c.width + c.height - 2 && c.walls === 0 && lines === 0 &&
    c.hole_density === 0
  ) {
    return `distance.min ${c.distance.min} exceeds the largest distance ${
      c.width + c.height - 2
    } of an open ${c.width}x${c.height} grid; lower distance.min or enlarge the grid`;
  }
  return null;
}

interface Scratch {
  dist: Uint16Array;
  queue: Int32Array;
}

type Draw =
  | {
    ok: true;
    instance: Omit<Instance, "id" | "config" | "seed" | "index">;
    solver: "pp" | "cbs";
  }
  | { ok: false; reason: RejectionReason };

/** One draw of component `c`. */
function _draw(
  c: EnvConfig,
  rng: Rng,
  component: number,
  cbsMaxAgents: number,
  scratch: Scratch,
): Draw {
  const W = c.width, H = c.height, N = W * H, n = c.agents;
  const map = generateMap(c, rng);
  const grid = map.grid;
  const { labels, sizes } = connectedComponents(grid, W, H);
  let best = -1;
  for (let k = 0; k < sizes.length; k++) {
    if (best < 0 || sizes[k]! > sizes[best]!) best = k;
  }
  if (best < 0 || sizes[best]! < 2 * n) return { ok: false, reason: "space" };
  const region: number[] = [];
  for (let i = 0; i < N; i++) if (labels[i] === best) region.push(i);

  const used = new Uint8Array(N);
  const starts: number[] = [];
  const goals: number[] = [];
  const paths: number[][] = [];
  const { dist, queue } = scratch;
  const { min, max } = c.distance;
  let distanceSum = 0;
  for (let a = 0; a < n; a++) {
    const cands: { s: number; g: number; path: number[]; score: number }[] = [];
    const tries = a === 0 || n === 1 ? 1 : CANDIDATES;
    for (let k = 0; k < Math.max(6, tries * 3) && cands.length < tries; k++) {
      const g = region[rng.int(region.length)]!;
      if (used[g]) continue;
      bfsDistances(grid, W, H, g, dist, queue);
      // starts in range: reservoir-sample one
      let s = -1, seen = 0;
      for (const cell of region) {
        const d = dist[cell]!;
        if (
          d >= min && d <= max && d !== UNREACHABLE && !used[cell] && cell !== g
        ) {
          seen++;
          if (rng.int(seen) === 0) s = cell;
        }
      }
      if (s < 0) continue;
      const path = _path(dist, s, W, H);
      let score = 0;
      for (const q of paths) if (_pathsConflict(path, q)) score++;
      cands.push({ s, g, path, score });
    }
    // rank by conflicts with the agents placed so far; interaction 0 takes the
    // least conflicting candidate, 1 the most, 0.5 the median
    cands.sort((x, y) => x.score - y.score);
    const chosen = cands[Math.round(c.interaction * (cands.length - 1))];
    if (!chosen) return { ok: false, reason: "placement" };
    used[chosen.s] = 1;
    used[chosen.g] = 1;
    starts.push(chosen.s);
    goals.push(chosen.g);
    paths.push(chosen.path);
    distanceSum += chosen.path.length - 1;
  }
  let pairs = 0, conflicting = 0;
  for (let a = 0; a < n; a++) {
    for (let b = a + 1; b < n; b++) {
      pairs++;
      if (_pathsConflict(paths[a]!, paths[b]!)) conflicting++;
    }
  }

  const pos = (
    cell: number,
  ): [number, number] => [Math.floor(cell / W), cell % W];
  const base = {
    width: W,
    height: H,
    cells: gridToRows(grid, W, H),
    starts: starts.map(pos),
    goals: goals.map(pos),
    slip: c.slip,
    horizon: 1,
    collision: c.collision,
    holes: c.holes,
    reference: null,
  };
  const compiled = compileInstance({
    ...base,
    id: "",
    config: "",
    seed: 0,
    index: 0,
  });
  const maxTime = "steps" in c.horizon ? c.horizon.steps : undefined;
  let sol = solvePP(compiled, {
    seed: rng.nextU32(),
    restarts: 2,
    maxExpansions: 20000,
    ...(maxTime !== undefined ? { maxTime } : {}),
  });
  if (!sol && n <= cbsMaxAgents) {
    sol = solveCBS(compiled, { maxNodes: 200, maxExpansions: 20000 });
  }
  if (!sol && maxTime !== undefined) {
    // solvable, but not within the horizon?
    const late = solvePP(compiled, {
      seed: 1,
      restarts: 0,
      maxExpansions: 20000,
    });
    return { ok: false, reason: late ? "horizon" : "unsolved" };
  }
  if (!sol) return { ok: false, reason: "unsolved" };
  const horizon = "steps" in c.horizon
    ? c.horizon.steps
    : Math.max(1, Math.ceil(c.horizon.factor * sol.makespan - 1e-9));
  if (sol.makespan > horizon) return { ok: false, reason: "horizon" };
  return {
    ok: true,
    solver: sol.solver,
    instance: {
      ...base,
      horizon,
      reference: { soc: sol.soc, makespan: sol.makespan, solver: sol.solver },
      stats: {
        holes: map.holes,
        walls: map.walls,
        mean_distance: Math.round((distanceSum / n) * 1000) / 1000,
        interaction: pairs === 0
          ? 0
          : Math.round((conflicting / pairs) * 1000) / 1000,
        component,
      },
    },
  };
}

/** Deterministic shortest path (moves tried up, down, left, right). */
function _path(dist: Uint16Array, s: number, W: number, H: number): number[] {
  const path = [s];
  let u = s;
  while (dist[u] !== 0) {
    const du = dist[u]!;
    const r = Math.floor(u / W), col = u % W;
    if (r > 0 && dist[u - W] === du - 1) u -= W;
    else if (r < H - 1 && dist[u + W] === du - 1) u += W;
    else if (col > 0 && dist[u - 1] === du - 1) u -= 1;
    else u += 1;
    path.push(u);
  }
  return path;
}

/** Whether two paths, followed at once (staying at their ends), collide. */
function _pathsConflict(p: readonly number[], q: readonly number[]): boolean {
  const T = Math.max(p.length, q.length);
  for (let t = 0; t < T; t++) {
    const a = at(p, t), b = at(q, t);
    if (a === b) return true;
    if (t > 0 && a === at(q, t - 1) && b === at(p, t - 1)) return true;
  }
  return false;
}

const HINTS: Record<RejectionReason, (c: EnvConfig) => string> = {
  space: (c) =>
    `the largest connected free region is too small for ${
      2 * c.agents
    } start and goal cells; lower agents, hole_density, walls or corridors`,
  placement: (c) =>
    `no start-goal pair with shortest-path distance ${c.distance.min}..${c.distance.max} was found (an open ${c.width}x${c.height} grid has distances up to ${
      c.width + c.height - 2
    }); widen the distance range or change the grid size`,
  unsolved: () =>
    "no solver found a collision-free plan (crowded, or blocked bottlenecks); lower agents, hole_density, walls or corridors",
  horizon: (c) =>
    `plans need more than horizon.steps = ${
      "steps" in c.horizon ? c.horizon.steps : "?"
    } steps; raise horizon.steps, lower distance, or use { factor }`,
};

/**
 * Checks a draw's `count` (0 to 1,000,000) and `seed` (0 to 2^31 - 1).
 *
 * @throws {RangeError} naming the one out of range.
 */
export function checkCountAndSeed(count: number, seed: number): void {
  if (!Number.isInteger(count) || count < 0 || count > 1_000_000) {
    throw new RangeError(
      `count must be an integer in 0..1000000 (got ${count})`,
    );
  }
  if (!Number.isInteger(seed) || seed < 0 || seed > 0x7fffffff) {
    throw new RangeError(
      `seed must be an integer in 0..2147483647 (got ${seed})`,
    );
  }
}

/**
 * Generate `options.count` instances of a configuration.
 *
 * @throws {EnvConfigError} if `config` is invalid.
 * @throws {GenerationError} if a component cannot produce instances.
 * @throws {RangeError} for a bad count or seed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { generate } from "./generator.ts";
 * const { instances, report } = generate({ preset: "easy" }, { count: 3, seed: 1 });
 * assert.equal(instances.length, 3);
 * assert.equal(report.accepted, 3);
 * ```
 */
export function generate(
  config: AnyEnvConfig | EnvConfigSpec,
  options: GenerateOptions,
): { instances: Instance[]; report: GenerationReport } {
  const resolved = parseEnvConfig(config);
  const { count, seed } = options;
  checkCountAndSeed(count, seed);
  const suite = options.suite;
  const split = options.split ?? "validation";
  if (!SUITE_SPLITS.includes(split)) {
    throw new RangeError(
      `split must be one of ${SUITE_SPLITS.join(", ")} (got ${split})`,
    );
  }
  if (suite === undefined && options.split !== undefined) {
    throw new RangeError("split applies to suite runs only (give suite)");
  }
  const seedWord = suite === undefined ? seed : (seed | 0x80000000) >>> 0;
  const space = suite === undefined ? undefined : _splitSpace(suite, split);
  const tag = hashString(space?.tag ?? "train");
  const idPrefix = space?.idPrefix ?? "undefined";
  const maxAttempts = options.maxAttempts ?? 100;
  const cbsMaxAgents = options.cbsMaxAgents ?? 4;
  const startIndex = options.startIndex ?? 0;
  const topId = configId(resolved);
  const comps = configComponents(resolved);
  const weights = comps.map((m) => m.weight);
  const ids = comps.map((m) => configId(m.config));
  const per = comps.map(() => ({
    accepted: 0,
    attempts: 0,
    rejected: _zero(),
  }));
  const solvers = { pp: 0, cbs: 0 };
  const maxCells = Math.max(
    ...comps.map((m) => m.config.width * m.config.height),
  );
  const scratch: Scratch = {
    dist: new Uint16Array(maxCells),
    queue: new Int32Array(maxCells),
  };
  const instances: Instance[] = [];
  let socSum = 0, makespanSum = 0, interactionSum = 0;

  const report = (): GenerationReport => {
    const rejected = _zero();
    let attempts = 0, accepted = 0;
    for (const p of per) {
      attempts += p.attempts;
      accepted += p.accepted;
      for (const k of Object.keys(rejected) as RejectionReason[]) {
        rejected[k] += p.rejected[k];
      }
    }
    const m = Math.max(1, instances.length);
    return {
      config_id: topId,
      seed,
      ...(suite !== undefined ? { suite, split } : {}),
      accepted,
      attempts,
      rejected,
      rejection_rate: attempts === 0
        ? 0
        : Math.round(((attempts - accepted) / attempts) * 10000) / 10000,
      components: per.map((p, i) => ({
        component: i,
        config_id: ids[i]!,
        weight: weights[i]!,
        accepted: p.accepted,
        attempts: p.attempts,
        rejected: { ...p.rejected },
        rejection_rate: p.attempts === 0
          ? 0
          : Math.round(((p.attempts - p.accepted) / p.attempts) * 10000) /
            10000,
      })),
      solvers: { ...solvers },
      mean: {
        soc: Math.round((socSum / m) * 1000) / 1000,
        makespan: Math.round((makespanSum / m) * 1000) / 1000,
        interaction: Math.round((interactionSum / m) * 1000) / 1000,
      },
    };
  };

  // fail fast on components that cannot work at all
  comps.forEach((m, i) => {
    const why = staticInfeasibility(m.config);
    if (why) {
      throw new GenerationError(
        `Cannot generate instances of ${
          comps.length > 1 ? `mixture component ${i} ` : ""
        }config ${ids[i]}: ${why}`,
        report(),
        i,
        "space",
      );
    }
  });

  for (let k = 0; k < count; k++) {
    options.signal?.throwIfAborted();
    const index = startIndex + k;
    const rng = new Rng(seedWord, index, tag);
    const ci = comps.length === 1 ? 0 : rng.weighted(weights);
    const comp = comps[ci]!.config;
    const p = per[ci]!;
    let done = false;
    const local = _zero();
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      p.attempts++;
      const d = _draw(comp, rng, ci, cbsMaxAgents, scratch);
      if (!d.ok) {
        p.rejected[d.reason]++;
        local[d.reason]++;
        continue;
      }
      p.accepted++;
      solvers[d.solver]++;
      const inst: Instance = {
        id: suite !== undefined
          ? `${idPrefix}-${index}`
          : `${topId}-${seed}-${index}`,
        config: ids[ci]!,
        seed,
        index,
        ...(suite !== undefined ? { suite } : {}),
        ...d.instance,
      };
      instances.push(inst);
      socSum += inst.reference!.soc;
      makespanSum += inst.reference!.makespan;
      interactionSum += inst.stats!.interaction;
      done = true;
      break;
    }
    if (!done) {
      let reason: RejectionReason = "unsolved";
      for (const r of Object.keys(local) as RejectionReason[]) {
        if (local[r] > local[reason]) reason = r;
      }
      const parts = (Object.keys(local) as RejectionReason[]).filter((r) =>
        local[r] > 0
      ).map((r) => `${local[r]} ${r}`);
      throw new GenerationError(
        `Cannot generate instance ${index} of ${
          comps.length > 1 ? `mixture component ${ci} ` : ""
        }config ${ids[ci]}: all ${maxAttempts} draws were rejected (${
          parts.join(", ")
        }): ${
          HINTS[reason](comp)
        }. Accepted so far: ${p.accepted} of ${p.attempts} draws for this component.`,
        report(),
        ci,
        reason,
      );
    }
    options.onProgress?.(k + 1, count);
  }
  return { instances, report: report() };
}
