/**
 * A tiny environment family for tests: walk to the end of a line whose
 * length and gap count are the dimensions. Deterministic, editable, and
 * small enough to state every number of a test by hand.
 *
 * @module
 */
import * as v from "valibot";
import type { EnvironmentFamily } from "./family.ts";

/** A configuration of the line family. */
export interface LineConfig {
  /** Cells of the line, 1..9. */
  readonly length: number;
  /** Gaps (cells to jump), 0..3. */
  readonly gaps: number;
}

/** An instance: a line and where its gaps are. */
export interface LineInstance {
  /** Id. */
  readonly id: string;
  /** Cells. */
  readonly length: number;
  /** Positions of the gaps. */
  readonly gaps: readonly number[];
}

/** The line family, named `name`, for tests. */
export function lineFamily(
  name = "line",
): EnvironmentFamily<LineConfig, LineInstance, { success: boolean }> {
  const clamp = (x: number, lo: number, hi: number) =>
    Math.max(lo, Math.min(hi, Math.round(x)));
  return {
    name,
    description: "walk to the end of a line",
    module: import.meta.url,
    schema: v.strictObject({
      length: v.pipe(
        v.number(),
        v.integer(),
        v.minValue(1),
        v.maxValue(9),
        v.description("cells of the line"),
      ),
      gaps: v.pipe(
        v.number(),
        v.integer(),
        v.minValue(0),
        v.maxValue(3),
        v.description("gaps to jump"),
      ),
    }),
    dimensions: [
      {
        path: "length",
        description: "cells",
        min: 1,
        max: 9,
        step: 1,
        integer: true,
        harder: "up",
      },
      {
        path: "gaps",
        description: "gaps to jump",
        min: 0,
        max: 3,
        step: 1,
        integer: true,
        harder: "up",
      },
    ],
    presets: {
      easy: { length: 2, gaps: 0 },
      medium: { length: 5, gaps: 1 },
      hard: { length: 9, gaps: 3 },
    },
    get: (c, path) => path === "gaps" ? c.gaps : c.length,
    set: (c, path, value) =>
      path === "gaps"
        ? { ...c, gaps: clamp(value, 0, 3) }
        : { ...c, length: clamp(value, 1, 9) },
    generate: (c, seed, count) =>
      Array.from({ length: count }, (_, i) => ({
        id: `line-${seed}-${i}`,
        length: c.length,
        gaps: Array.from(
          { length: Math.min(c.gaps, c.length - 1) },
          (_, g) => (seed + i + g) % c.length,
        ),
      })),
    mutate: (inst, rng, seed) => ({
      ...inst,
      id: `${inst.id}-m${seed}`,
      length: clamp(inst.length + (rng.int(2) === 0 ? -1 : 1), 1, 9),
    }),
    check: (inst) =>
      inst.length >= 1 && inst.gaps.every((g) => g >= 0 && g < inst.length)
        ? undefined
        : `line ${inst.id}: a gap lies off the line`,
    instanceId: (inst) => inst.id,
    renderInstance: (inst) =>
      Array.from(
        { length: inst.length },
        (_, i) => inst.gaps.includes(i) ? "_" : ".",
      ).join(""),
    renderConfig: (c) => `length ${c.length}, gaps ${c.gaps}`,
    suites: {
      long: {
        description: "length 9, no gap",
        split: "test",
        instances: (count = 2) =>
          Array.from(
            { length: count },
            (_, i) => ({ id: `long-${i}`, length: 9, gaps: [] }),
          ),
      },
    },
    diagnosis: {
      statistics: (eps) => ({
        success_rate: eps.filter((e) => e.success).length /
          Math.max(1, eps.length),
      }),
      failureCases: () => [],
    },
  };
}
