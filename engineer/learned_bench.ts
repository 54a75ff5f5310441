/**
 * The cheap engineer benchmark: on held-out hindsight states (one state,
 * every candidate change tried for one stage), the regret of an engineer's
 * choice against the best change in hindsight. An engineer whose proposal
 * is not a single candidate step (`rules` moves several dimensions at
 * once, `random` one to three) is projected onto the candidate along the
 * dimension it moved most (progress from `easy` to `hard`), in that
 * direction; the share of projected choices is reported.
 *
 * @module
 */
import type { Engineer } from "./engineer.ts";
import type { ContextType } from "./context.ts";
import { type EnvironmentFamily, progress } from "../families/family.ts";
import { type Change, changeLabel, steppedDims } from "./learned_features.ts";
import {
  type HindsightState,
  matchChange,
  stateContext,
} from "./learned_data.ts";
import { parseEnvConfig } from "../schemas/env_config.ts";

/** One engineer to benchmark. */
export interface BenchEntry {
  /** Its row label. */
  readonly label: string;
  /** The context type it sees. */
  readonly context: ContextType;
  /** The engineer. */
  readonly engineer: Engineer;
}

/** One engineer's benchmark row. */
export interface BenchRow {
  /** Its label. */
  readonly label: string;
  /** States scored. */
  readonly n: number;
  /** Mean regret (best progress in hindsight minus the chosen one's). */
  readonly regret: number;
  /** Standard deviation of the regret. */
  readonly regret_sd: number;
  /** Half-width of a normal 95% interval of the mean regret. */
  readonly regret_ci: number;
  /** Share of states where it chose a best change. */
  readonly best: number;
  /** Share of choices projected onto a candidate. */
  readonly projected: number;
  /** States skipped: its choice was not among the tried candidates. */
  readonly untried: number;
  /** The changes it chose, by label, with counts. */
  readonly choices: Record<string, number>;
}

/**
 * The candidate change nearest to the step from `from` to `to`: the exact
 * candidate when it is one, else one step along the dimension that moved
 * most, in its direction; keep when nothing moved.
 */
export function projectChange(
  family: EnvironmentFamily,
  from: unknown,
  to: unknown,
): { change: Change; projected: boolean } {
  const exact = matchChange(family, from, to);
  if (exact !== null) return { change: exact, projected: false };
  const a = parseEnvConfig(from);
  const b = parseEnvConfig(to);
  const la = family.leading?.(a) ?? a;
  const lb = family.leading?.(b) ?? b;
  let best: Change = { dim: null, dir: 0 };
  let size = 1e-9;
  for (const d of steppedDims(family)) {
    const delta = progress(family, lb, d) - progress(family, la, d);
    if (Math.abs(delta) > size) {
      size = Math.abs(delta);
      best = { dim: d, dir: delta > 0 ? 1 : -1 };
    }
  }
  return { change: best, projected: true };
}

/** Spearman's rank correlation of two equally long lists (average ranks for ties); null below 3 pairs. */
export function spearman(
  a: readonly number[],
  b: readonly number[],
): number | null {
  if (a.length !== b.length || a.length < 3) return null;
  const rank = (xs: readonly number[]) => {
    const idx = xs.map((x, i) => ({ x, i })).sort((p, q) => p.x - q.x);
    const r = new Array<number>(xs.length);
    for (let i = 0; i < idx.length;) {
      let j = i;
      while (j + 1 < idx.length && idx[j + 1]!.x === idx[i]!.x) j++;
      for (let k = i; k <= j; k++) r[idx[k]!.i] = (i + j) / 2 + 1;
      i = j + 1;
    }
    return r;
  };
  const ra = rank(a);
  const rb = rank(b);
  const m = (ra.length + 1) / 2;
  let num = 0;
  let da = 0;
  let db = 0;
  for (let i = 0; i < ra.length; i++) {
    num += (ra[i]! - m) * (rb[i]! - m);
    da += (ra[i]! - m) ** 2;
    db += (rb[i]! - m) ** 2;
  }
  return da === 0 || db === 0 ? null : num / Math.sqrt(da * db);
}

/** The benchmark rows of `entries` on `states` (in the entries' order). */
export async function benchEngineers(
  family: EnvironmentFamily,
  states: readonly HindsightState[],
  entries: readonly BenchEntry[],
  seed: number,
): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const e of entries) {
    const regrets: number[] = [];
    let best = 0;
    let projected = 0;
    let untried = 0;
    const choices: Record<string, number> = {};
    for (const s of states) {
      const top = Math.max(...s.outcomes.map((o) => o.progress));
      const p = await e.engineer.propose({
        context: stateContext(e.context, s),
        config: s.config,
        seed,
      });
      const c = projectChange(family, s.config, p.config);
      const label = changeLabel(c.change);
      choices[label] = (choices[label] ?? 0) + 1;
      const o = s.outcomes.find((x) => x.label === label);
      if (o === undefined) {
        untried++;
        continue;
      }
      if (c.projected) projected++;
      regrets.push(top - o.progress);
      if (o.progress >= top - 1e-12) best++;
    }
    const n = regrets.length;
    const mean = n === 0 ? NaN : regrets.reduce((x, y) => x + y, 0) / n;
    const sd = n < 2
      ? 0
      : Math.sqrt(regrets.reduce((x, y) => x + (y - mean) ** 2, 0) / (n - 1));
    rows.push({
      label: e.label,
      n,
      regret: mean,
      regret_sd: sd,
      regret_ci: n < 2 ? NaN : 1.96 * sd / Math.sqrt(n),
      best: n === 0 ? NaN : best / n,
      projected: n === 0 ? NaN : projected / n,
      untried,
      choices,
    });
  }
  return rows;
}
