/**
 * Boxes of the MAPF-FrozenLake configuration space: an inclusive range per
 * dimension, the points drawn from one (integers uniform over their
 * integers, reals uniform over the interval) and the configuration a point
 * stands for. Domain randomisation draws from a box, per stage (the `dr`
 * engineer's mixture) or per episode (the `dr` level sampler of `train`).
 *
 * `size` sets width and height together (square maps) and the start-goal
 * distance range `{ min: 2, max: round(1.5 size) }`; `horizon` is the factor
 * of the reference makespan; dimensions a box leaves out keep the `easy`
 * preset's value.
 *
 * @module
 */
import {
  type EnvConfig,
  PRESETS,
  safeParseEnvConfig,
} from "../schemas/env_config.ts";
import type { Rng } from "./rng.ts";

/** The dimensions a box may range over. */
export const BOX_DIMS = [
  "size",
  "agents",
  "hole_density",
  "hole_clustering",
  "walls",
  "corridors",
  "slip",
  "interaction",
  "horizon",
] as const;

/** A box dimension. */
export type BoxDim = typeof BOX_DIMS[number];

/** Integer box dimensions (uniform over their integers). */
export const INTEGER_BOX_DIMS: readonly BoxDim[] = ["size", "agents"];

/** A box: an inclusive `[lo, hi]` range per dimension it varies. */
export type DrBox = { readonly [K in BoxDim]?: readonly [number, number] };

/** The component of a box point (exported for tests). */
export function boxConfig(
  point: { readonly [K in BoxDim]?: number },
): EnvConfig {
  const base = PRESETS.easy;
  const size = point.size;
  const out: Record<string, unknown> = { ...base };
  for (const d of BOX_DIMS) {
    const x = point[d];
    if (x === undefined) continue;
    if (d === "size") {
      out.width = x;
      out.height = x;
      out.distance = { min: 2, max: Math.max(2, Math.round(1.5 * x)) };
    } else if (d === "horizon") out.horizon = { factor: x };
    else out[d] = x;
  }
  if (size === undefined) out.distance = base.distance;
  return out as unknown as EnvConfig;
}

// 6 decimals: coarser rounding would bias narrow ranges (3 decimals put
// half-weight atoms at the ends of walls 0..0.05)
function _round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

/**
 * One uniform point of a box: integers uniform over `lo..hi`, reals uniform
 * over `[lo, hi]` (rounded to 6 decimals).
 */
export function sampleBox(
  box: DrBox,
  rng: Rng,
): { [K in BoxDim]?: number } {
  const p: { [K in BoxDim]?: number } = {};
  for (const d of BOX_DIMS) {
    const r = box[d];
    if (r === undefined) continue;
    const [lo, hi] = r;
    p[d] = INTEGER_BOX_DIMS.includes(d)
      ? lo + rng.int(hi - lo + 1)
      : _round(lo + (hi - lo) * rng.float());
  }
  return p;
}

/**
 * What is wrong with a box, in one line naming the dimension, or null.
 * Checks: at least one dimension, every range `[lo, hi]` with `lo <= hi`,
 * integer ends for integer dimensions, and both corners valid configurations
 * (so every draw is: the fields are monotone in each dimension).
 */
export function boxProblem(box: unknown, where = "box"): string | null {
  if (typeof box !== "object" || box === null || Array.isArray(box)) {
    return `${where} must be a mapping of dimension -> [lo, hi] (dimensions: ${
      BOX_DIMS.join(", ")
    })`;
  }
  const entries = Object.entries(box);
  if (entries.length === 0) {
    return `${where} is empty: give at least one dimension -> [lo, hi] (dimensions: ${
      BOX_DIMS.join(", ")
    })`;
  }
  const lo: Record<string, number> = {}, hi: Record<string, number> = {};
  for (const [d, r] of entries) {
    if (!(BOX_DIMS as readonly string[]).includes(d)) {
      return `${where}.${d} is not a box dimension (dimensions: ${
        BOX_DIMS.join(", ")
      })`;
    }
    if (
      !Array.isArray(r) || r.length !== 2 ||
      !r.every((x) => typeof x === "number" && Number.isFinite(x))
    ) {
      return `${where}.${d} must be [lo, hi], two numbers (got ${
        JSON.stringify(r)
      })`;
    }
    const [a, b] = r as [number, number];
    if (a > b) {
      return `${where}.${d} is inverted: [${a}, ${b}] has lo > hi; write [${b}, ${a}]`;
    }
    if (
      INTEGER_BOX_DIMS.includes(d as BoxDim) &&
      (!Number.isInteger(a) || !Number.isInteger(b))
    ) {
      return `${where}.${d} must have integer ends (got [${a}, ${b}])`;
    }
    lo[d] = a;
    hi[d] = b;
  }
  for (const [name, corner] of [["lower", lo], ["upper", hi]] as const) {
    const r = safeParseEnvConfig(boxConfig(corner));
    if (!r.success) {
      const i = r.issues[0]!;
      return `${where}: its ${name} corner is not a valid configuration: ${
        i.path ? `${i.path}: ` : ""
      }${i.message}`;
    }
  }
  // agents must fit the smallest map at the largest agent count
  const minSize = lo.size ?? PRESETS.easy.width;
  const maxAgents = hi.agents ?? PRESETS.easy.agents;
  if (2 * maxAgents > minSize * minSize) {
    return `${where}: ${maxAgents} agents do not fit a ${minSize}x${minSize} map (need ${
      2 * maxAgents
    } cells); lower agents or raise size`;
  }
  return null;
}

/**
 * The default box: the ranges the benchmark suites span (8x8 to 24x24 maps,
 * 2 to 8 agents, holes up to 0.35 with clustering up to 0.6, light walls,
 * corridors 0..1, slip up to 0.2, interaction 0..1, horizon 1.3 to 3 times
 * the reference makespan). Declared from the suites' definitions, never tuned
 * on a split; `experiments/paper.yaml` writes it out.
 */
export const DEFAULT_BOX: DrBox = {
  size: [8, 24],
  agents: [2, 8],
  hole_density: [0, 0.35],
  hole_clustering: [0, 0.6],
  walls: [0, 0.05],
  corridors: [0, 1],
  slip: [0, 0.2],
  interaction: [0, 1],
  horizon: [1.3, 3],
};
