/**
 * Configuration trajectories across seeds: per variant, each configuration
 * dimension the engineer changed, stage by stage, with how many seeds took
 * each value; how many seeds chose the same schedule; and the engineer's
 * stated reasons with counts. The report shows this compact view and folds
 * the per-seed tables.
 *
 * @module
 */
import type { Json } from "@envsmith/engine/kind";
import type { ConfigTrajectory } from "./data.ts";

/** One value of a dimension at one stage, and how many seeds had it. */
export interface ValueCount {
  /** The value, as JSON text (`4`, `0.8`, `"block"`). */
  readonly value: string;
  /** Seeds with it. */
  readonly count: number;
}

/** The schedule of one variant over its seeds. */
export interface ScheduleView {
  /** Stage group and redesign name (`curriculum`, `config`). */
  readonly group: string;
  readonly name: string;
  /** The variant's label without the seed axis. */
  readonly label: string;
  /** Seeds (runs) summarised. */
  readonly runs: number;
  /** Column labels: `start`, then `after 0`, `after 1`, ... (what stage 1, 2, ... trains on). */
  readonly columns: readonly string[];
  /** Per changed dimension (first seen first): per column, values with counts, most frequent first. */
  readonly dimensions: readonly {
    readonly path: string;
    readonly cells: readonly (readonly ValueCount[])[];
  }[];
  /** The most frequent complete schedule (configuration ids after each redesign), with its count. */
  readonly commonSchedule: { readonly count: number; readonly ids: string };
  /** Stated reasons (numbers masked so that one rule's firings group), most frequent first. */
  readonly reasons: readonly {
    readonly text: string;
    readonly count: number;
  }[];
}

function _obj(x: unknown): Record<string, unknown> | undefined {
  return typeof x === "object" && x !== null && !Array.isArray(x)
    ? x as Record<string, unknown>
    : undefined;
}

/** The component a dimension is read from: the config itself, or a mixture's heaviest component. */
function _main(config: Json | undefined): Record<string, unknown> | undefined {
  const c = _obj(config);
  const mix = c?.mixture;
  if (!Array.isArray(mix)) return c;
  let best: Record<string, unknown> | undefined, w = -Infinity;
  for (const m of mix) {
    const o = _obj(m);
    const weight = typeof o?.weight === "number" ? o.weight : 0;
    if (weight > w) {
      w = weight;
      best = _obj(o?.config);
    }
  }
  return best;
}

function _at(config: Json | undefined, path: string): Json | undefined {
  let x: unknown = _main(config);
  for (const p of path.split(".")) x = _obj(x)?.[p];
  return x as Json | undefined;
}

function _count(values: readonly string[]): ValueCount[] {
  const m = new Map<string, number>();
  for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
  return [...m].map(([value, count]) => ({ value, count })).sort((a, b) =>
    b.count - a.count || (a.value < b.value ? -1 : 1)
  );
}

/** A rationale with its numbers masked, so that one rule's firings count together. */
export function reasonKey(text: string): string {
  return text.replace(/-?\d+(?:\.\d+)?/g, "#").trim();
}

/**
 * The schedules of the trajectories of one variant (its seeds), in one
 * stage group. `label` names the variant without the seed axis.
 *
 * @example
 * ```ts
 * import { scheduleView } from "./schedules.ts";
 * import assert from "node:assert/strict";
 * const run = (agents: number[]) => ({
 *   group: "c", name: "config", variant: {}, label: "",
 *   rows: agents.map((a, stage) => ({
 *     stage, id: `c.${stage}.config`, status: "ok" as const,
 *     config: { agents: a }, before: stage === 0 ? { agents: 2 } : {},
 *     dimensions: ["agents"], toId: `a${a}`, rationale: `agents to ${a}`,
 *   })),
 * });
 * const v = scheduleView([run([3, 4]), run([3, 4]), run([4, 4])], "full");
 * assert.deepEqual(v.columns, ["start", "after 0", "after 1"]);
 * assert.deepEqual(v.dimensions[0]!.cells[1], [
 *   { value: "3", count: 2 }, { value: "4", count: 1 },
 * ]);
 * assert.deepEqual(v.commonSchedule, { count: 2, ids: "a3 → a4" });
 * assert.deepEqual(v.reasons[0], { text: "agents to #", count: 6 });
 * ```
 */
export function scheduleView(
  trajectories: readonly ConfigTrajectory[],
  label: string,
): ScheduleView {
  const runs = trajectories.filter((t) =>
    t.rows.some((r) => r.status === "ok")
  );
  const stages = Math.max(0, ...runs.map((t) => t.rows.length));
  const dims: string[] = [];
  for (const t of runs) {
    for (const r of t.rows) {
      for (const d of r.dimensions ?? []) if (!dims.includes(d)) dims.push(d);
    }
  }
  const dimensions = dims.map((path) => {
    const cells: ValueCount[][] = [];
    for (let col = 0; col <= stages; col++) {
      const values: string[] = [];
      for (const t of runs) {
        const row = t.rows[Math.max(0, col - 1)];
        if (!row || row.status !== "ok") continue;
        const v = col === 0
          ? (row.before && path in row.before
            ? row.before[path]
            : _at(row.config, path))
          : _at(row.config, path);
        if (v !== undefined) values.push(JSON.stringify(v));
      }
      cells.push(_count(values));
    }
    return { path, cells };
  });
  const schedules = _count(
    runs.map((t) => t.rows.map((r) => r.toId ?? "?").join(" → ")),
  );
  const reasons = _count(
    runs.flatMap((t) =>
      t.rows.filter((r) => r.status === "ok" && r.rationale).map((r) =>
        reasonKey(r.rationale!)
      )
    ),
  );
  return {
    group: trajectories[0]?.group ?? "",
    name: trajectories[0]?.name ?? "",
    label,
    runs: runs.length,
    columns: [
      "start",
      ...Array.from({ length: stages }, (_, i) => `after ${i}`),
    ],
    dimensions,
    commonSchedule: {
      count: schedules[0]?.count ?? 0,
      ids: schedules[0]?.value ?? "",
    },
    reasons: reasons.map((x) => ({ text: x.value, count: x.count })),
  };
}
