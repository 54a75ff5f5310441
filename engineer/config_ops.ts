/**
 * Operations on configurations shared by the engineers: one-step harder or
 * easier along a curriculum dimension, progress between the `easy` and
 * `hard` presets, and building a valid mixture from weighted components.
 *
 * Curriculum dimensions ({@linkcode CurriculumDim}) group config fields the
 * way a curriculum moves them: `size` moves width, height and the distance
 * range together; `horizon` tightens the horizon factor.
 *
 * @module
 */
import {
  type AnyEnvConfig,
  clampEnvConfig,
  components,
  configId,
  type EnvConfig,
  type MixtureComponent,
  PRESETS,
} from "../schemas/env_config.ts";

/** The curriculum dimensions a blind schedule develops, in its order. */
const _FRONTIER = [
  "agents",
  "interaction",
  "hole_density",
  "corridors",
  "size",
  "slip",
  "horizon",
] as const;

/** The dimensions a curriculum moves. */
export const CURRICULUM_DIMS = [..._FRONTIER, "walls", "distance"] as const;

/** A curriculum dimension. */
export type CurriculumDim = typeof CURRICULUM_DIMS[number];

/**
 * The order in which a blind schedule develops dimensions (ties of progress
 * break in this order): what makes agents interact first.
 */
export const FRONTIER: readonly CurriculumDim[] = _FRONTIER;

/** The scalar value of a dimension in a component (horizon: the factor, or steps/16). */
export function dimValue(c: EnvConfig, dim: CurriculumDim): number {
  switch (dim) {
    case "size":
      return Math.max(c.width, c.height);
    case "horizon":
      return "factor" in c.horizon ? c.horizon.factor : c.horizon.steps / 16;
    case "distance":
      return c.distance.max;
    default:
      return c[dim];
  }
}

/**
 * Progress of a dimension from the `easy` preset (0) to the `hard` preset
 * (1); can exceed [0, 1] beyond the presets.
 */
export function progress(c: EnvConfig, dim: CurriculumDim): number {
  const e = dimValue(PRESETS.easy, dim);
  const h = dimValue(PRESETS.hard, dim);
  return (dimValue(c, dim) - e) / (h - e);
}

function _r(x: number, digits = 3): number {
  const k = 10 ** digits;
  return Math.round(x * k) / k;
}

/**
 * One step along a dimension: `+1` harder, `-1` easier (a fraction for a
 * smaller step). The result is clamped to the schema's bounds (and to a
 * curriculum ceiling: 24x24 maps, 16 agents, slip 0.3, holes 0.35, horizon
 * factor 1.2..4).
 */
export function step(c: EnvConfig, dim: CurriculumDim, dir: number): EnvConfig {
  const out = structuredClone(c) as {
    -readonly [K in keyof EnvConfig]: EnvConfig[K];
  };
  switch (dim) {
    case "agents":
      // Two agents a step: a curriculum of a few stages must be able to go
      // from the 2 agents of `easy` to the 8 of `hard` and the crowded suites.
      out.agents = Math.max(
        1,
        Math.min(16, c.agents + (Math.round(dir * 2) || Math.sign(dir))),
      );
      break;
    case "interaction":
      out.interaction = _r(Math.max(0, Math.min(1, c.interaction + 0.2 * dir)));
      break;
    case "hole_density":
      out.hole_density = _r(
        Math.max(0, Math.min(0.35, c.hole_density + 0.05 * dir)),
      );
      if (dir > 0 && c.hole_clustering < 0.5) {
        out.hole_clustering = _r(c.hole_clustering + 0.1);
      }
      break;
    case "corridors":
      out.corridors = _r(Math.max(0, Math.min(1, c.corridors + 0.25 * dir)));
      break;
    case "walls":
      out.walls = _r(Math.max(0, Math.min(0.3, c.walls + 0.05 * dir)));
      break;
    case "slip":
      out.slip = _r(Math.max(0, Math.min(0.3, c.slip + 0.05 * dir)));
      break;
    case "size": {
      const d = Math.round(2 * dir) || 2 * Math.sign(dir);
      out.width = Math.max(4, Math.min(24, c.width + d));
      out.height = Math.max(4, Math.min(24, c.height + d));
      const grown = out.width - c.width;
      out.distance = {
        min: c.distance.min,
        max: Math.max(c.distance.min, c.distance.max + Math.round(1.5 * grown)),
      };
      break;
    }
    case "distance":
      out.distance = {
        min: Math.max(1, c.distance.min + (dir > 0 ? 1 : -1)),
        max: Math.max(2, c.distance.max + Math.round(3 * dir)),
      };
      if (out.distance.min > out.distance.max) {
        out.distance = { min: out.distance.max, max: out.distance.max };
      }
      break;
    case "horizon":
      if ("factor" in c.horizon) {
        const f = dir > 0
          ? c.horizon.factor * 0.8 ** dir
          : c.horizon.factor * 1.25 ** -dir;
        out.horizon = { factor: _r(Math.max(1.2, Math.min(4, f)), 2) };
      } else {
        const s = dir > 0
          ? c.horizon.steps * 0.8 ** dir
          : c.horizon.steps * 1.25 ** -dir;
        out.horizon = { steps: Math.max(4, Math.round(s)) };
      }
      break;
  }
  return clampEnvConfig(out, c).config as EnvConfig;
}

/**
 * Ease every developed dimension except `keep` by one step (toward `easy`):
 * a component that isolates the skill `keep` exercises.
 */
export function isolate(c: EnvConfig, keep: CurriculumDim): EnvConfig {
  let out = c;
  for (const d of FRONTIER) {
    if (d === keep) continue;
    if (progress(out, d) > 0.001) out = step(out, d, -1);
  }
  return out;
}

/** The least developed frontier dimension (ties in frontier order). */
export function leastDeveloped(
  c: EnvConfig,
  exclude: readonly CurriculumDim[] = [],
): CurriculumDim {
  let best: CurriculumDim = FRONTIER[0]!;
  let bestP = Infinity;
  for (const d of FRONTIER) {
    if (exclude.includes(d)) continue;
    const p = progress(c, d);
    if (p < bestP - 1e-9) {
      bestP = p;
      best = d;
    }
  }
  return best;
}

/** The most developed frontier dimension (ties in frontier order). */
export function mostDeveloped(c: EnvConfig): CurriculumDim {
  let best: CurriculumDim = FRONTIER[0]!;
  let bestP = -Infinity;
  for (const d of FRONTIER) {
    const p = progress(c, d);
    if (p > bestP + 1e-9) {
      bestP = p;
      best = d;
    }
  }
  return best;
}

/**
 * How far a component is developed: the sum of its progress over the
 * frontier dimensions (each counted from 0 at `easy`).
 */
export function development(c: EnvConfig): number {
  let sum = 0;
  for (const d of FRONTIER) sum += Math.max(0, progress(c, d));
  return sum;
}

/**
 * The curriculum's leading edge: the most developed component of a config
 * (the first on ties), which is where a curriculum hardens from. The
 * heaviest component is usually an old, easy one kept for retention.
 */
export function frontier(config: AnyEnvConfig): EnvConfig {
  let best = components(config)[0]!.config;
  for (const m of components(config)) {
    if (development(m.config) > development(best) + 1e-9) best = m.config;
  }
  return best;
}

/** The component with the largest weight (the first on ties). */
export function heaviest(config: AnyEnvConfig): EnvConfig {
  let best = components(config)[0]!;
  for (const m of components(config)) if (m.weight > best.weight) best = m;
  return best.config;
}

/** Options of {@linkcode buildMixture}. */
export interface BuildMixtureOptions {
  /** Most components kept (highest weights). @default {4} */
  maxComponents?: number;
}

/**
 * A valid configuration from weighted components: equal components merged
 * (weights added), weights normalised to sum 1 (3 decimals), at most
 * `maxComponents` kept, a single component returned plain. The result passes
 * `parseEnvConfig`.
 */
export function buildMixture(
  parts: readonly MixtureComponent[],
  options: BuildMixtureOptions = {},
): AnyEnvConfig {
  const max = options.maxComponents ?? 4;
  const merged: { id: string; weight: number; config: EnvConfig }[] = [];
  for (const p of parts) {
    if (!(p.weight > 0)) continue;
    const id = configId(p.config);
    const same = merged.find((m) => m.id === id);
    if (same) same.weight += p.weight;
    else merged.push({ id, weight: p.weight, config: p.config });
  }
  if (merged.length === 0) {
    throw new RangeError("buildMixture: no component has a positive weight");
  }
  // Keep the heaviest, in their original order.
  const kept = [...merged].sort((a, b) => b.weight - a.weight).slice(0, max);
  const list = merged.filter((m) => kept.includes(m));
  if (list.length === 1) return list[0]!.config;
  const total = list.reduce((s, m) => s + m.weight, 0);
  const mixture = list.map((m) => ({
    weight: Math.max(0.001, _r(m.weight / total)),
    config: m.config,
  }));
  return clampEnvConfig({ mixture }).config;
}

/**
 * How many one-step moves ({@linkcode step}) separate dimension `dim` of
 * `from` from that of `to`: positive when `to` is harder, negative when
 * easier, 0 when equal. Counted by stepping `from` toward `to` while that
 * brings the value closer (at most `limit` steps), so multiplicative steps
 * (horizon) and steps that move two fields (size) count as one each.
 */
export function stepsAlong(
  from: EnvConfig,
  to: EnvConfig,
  dim: CurriculumDim,
  limit = 16,
): number {
  const target = dimValue(to, dim);
  const gap = (c: EnvConfig) => Math.abs(dimValue(c, dim) - target);
  const dir = Math.sign(progress(to, dim) - progress(from, dim));
  if (dir === 0) return 0;
  let cur = from, k = 0;
  while (k < limit && gap(cur) > 1e-9) {
    const next = step(cur, dim, dir);
    if (!(gap(next) < gap(cur) - 1e-9)) {
      // the last step would overshoot: count it when it lands no farther
      // than staying (a 2-agent step toward an odd count: half rounds up)
      if (configId(next) !== configId(cur) && gap(next) <= gap(cur) + 1e-9) {
        k++;
      }
      break;
    }
    cur = next;
    k++;
  }
  return dir * k;
}

/**
 * The signed pace of a curriculum move: the sum over the frontier
 * dimensions of {@linkcode stepsAlong} from the leading edge of `from` to
 * the leading edge of `to` ({@linkcode frontier}). Hardening two steps along
 * one dimension gives 2; easing one step gives -1; keeping the config, 0.
 */
export function curriculumPace(from: AnyEnvConfig, to: AnyEnvConfig): number {
  const a = frontier(from), b = frontier(to);
  let n = 0;
  for (const d of FRONTIER) n += stepsAlong(a, b, d);
  return n;
}
