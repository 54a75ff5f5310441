/**
 * The `blind` engineer: a pace-matched blind schedule, the control that
 * separates *which* dimension an informed engineer chooses from *how fast*
 * it moves. It is given the informed run's move at this stage (its config
 * before and after) and measures only its pace ({@linkcode curriculumPace}:
 * signed one-step moves of the leading edge). It then moves its own leading
 * edge by the same number of steps, in the same direction, along the least
 * developed dimension (hardening) or the most developed one (easing),
 * chosen afresh after each step: the `rules` engineer's `none` schedule with
 * the informed run's pace. It reads nothing from the context; a pace of 0
 * keeps the current config.
 *
 * @module
 */
import {
  type AnyEnvConfig,
  configId,
  parseEnvConfig,
} from "../schemas/env_config.ts";
import {
  curriculumPace,
  frontier,
  leastDeveloped,
  mostDeveloped,
  step,
} from "./config_ops.ts";
import type { Engineer, Proposal, ProposeInput } from "./engineer.ts";
import * as v from "valibot";
import { canonicalJson } from "@envsmith/engine/hash";
import { EngineerConfigError, type EngineerKind } from "./engineer_kind.ts";
import {
  curriculumOrder,
  DEFAULT_FAMILY,
  type EnvironmentFamily,
  progress,
  stepConfig,
} from "../families/family.ts";
import { EnvConfigSpecSchema } from "../schemas/env_config.ts";

/** A configuration of any family: a mapping (the family checks it). */
const _ANY_CONFIG = v.union([
  EnvConfigSpecSchema,
  v.record(v.string(), v.unknown()),
], "a configuration must be a mapping");

/** The informed move whose pace a blind schedule copies. */
export interface Pace {
  /** The informed run's config before its redesign. */
  from: unknown;
  /** The informed run's config after its redesign. */
  to: unknown;
}

/**
 * The blind engineer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { blindEngineer } from "./blind.ts";
 * import { buildContext } from "./context.ts";
 * import { PRESETS } from "../schemas/mod.ts";
 * const twoUp = { ...PRESETS.easy, agents: PRESETS.easy.agents + 4 };
 * const e = blindEngineer({ from: PRESETS.easy, to: twoUp });
 * const p = await e.propose({
 *   context: buildContext("none", null, PRESETS.easy),
 *   config: PRESETS.easy,
 *   seed: 1,
 * });
 * assert.equal(
 *   p.rationale,
 *   "blind engineer: informed pace +2; agents +1, interaction +1.",
 * );
 * ```
 * @throws {TypeError} when `from` or `to` is not a valid configuration.
 */
export function blindEngineer(pace: Pace): Engineer {
  const from: AnyEnvConfig = parseEnvConfig(pace.from);
  const to: AnyEnvConfig = parseEnvConfig(pace.to);
  const n = curriculumPace(from, to);
  return {
    name: "blind",
    propose(input: ProposeInput): Promise<Proposal> {
      const sign = n > 0 ? "+" : "";
      if (n === 0) {
        return Promise.resolve({
          config: input.config,
          rationale:
            "blind engineer: informed pace 0; the configuration is kept.",
          events: [],
          reads: [],
        });
      }
      let c = frontier(input.config);
      const moved = new Map<string, number>();
      for (let k = 0; k < Math.abs(n); k++) {
        const dim = n > 0 ? leastDeveloped(c) : mostDeveloped(c);
        const before = configId(c);
        c = step(c, dim, Math.sign(n));
        if (configId(c) !== before) {
          moved.set(dim, (moved.get(dim) ?? 0) + Math.sign(n));
        }
      }
      const what = [...moved].map(([d, k]) => `${d} ${k > 0 ? "+" : ""}${k}`)
        .join(", ") || "no effective change (at bounds)";
      return Promise.resolve({
        config: c,
        rationale: `blind engineer: informed pace ${sign}${n}; ${what}.`,
        events: [],
        reads: [],
      });
    },
  };
}

/**
 * The pace of an informed move on `family`: its signed one-step moves, per
 * dimension the change over the dimension's step (positive when harder),
 * summed.
 */
export function familyPace(
  family: EnvironmentFamily,
  from: unknown,
  to: unknown,
): number {
  let n = 0;
  for (const d of family.dimensions) {
    const delta = (family.get(to, d.path) - family.get(from, d.path)) / d.step;
    n += Math.round(delta) * (d.harder === "up" ? 1 : -1);
  }
  return n;
}

/**
 * The blind engineer on another family: the informed move's pace
 * ({@linkcode familyPace}), spent one step at a time along the least
 * developed dimension (hardening) or the most developed one (easing) of
 * the family's curriculum order, progress measured between its `easy` and
 * `hard` presets; ties go to the earlier dimension.
 *
 * @throws {EngineerConfigError} when `from` or `to` is outside the family's space.
 */
export function familyBlindEngineer(
  family: EnvironmentFamily,
  pace: Pace,
): Engineer {
  const parse = (x: unknown, which: string) => {
    const r = v.safeParse(family.schema, x);
    if (r.success) return r.output;
    throw new EngineerConfigError(
      `engineer blind on family ${family.name}: pace ${which} is outside the family's space (${
        r.issues[0]!.message
      })`,
    );
  };
  const n = familyPace(
    family,
    parse(pace.from, "FROM"),
    parse(pace.to, "TO"),
  );
  const order = curriculumOrder(family);
  return {
    name: "blind",
    propose(input: ProposeInput): Promise<Proposal> {
      if (n === 0) {
        return Promise.resolve({
          config: input.config,
          rationale:
            "blind engineer: informed pace 0; the configuration is kept.",
          events: [],
          reads: [],
        });
      }
      let c: unknown = input.config;
      const moved = new Map<string, number>();
      const dir = Math.sign(n);
      for (let k = 0; k < Math.abs(n); k++) {
        let best = order[0]!, bestP = dir > 0 ? Infinity : -Infinity;
        for (const d of order) {
          const p = progress(family, c, d);
          if (dir > 0 ? p < bestP : p > bestP) [best, bestP] = [d, p];
        }
        const before = canonicalJson(c as never);
        c = stepConfig(family, c, best, dir);
        if (canonicalJson(c as never) !== before) {
          moved.set(best, (moved.get(best) ?? 0) + dir);
        }
      }
      const what = [...moved].map(([d, k]) => `${d} ${k > 0 ? "+" : ""}${k}`)
        .join(", ") || "no effective change (at bounds)";
      return Promise.resolve({
        config: c as AnyEnvConfig,
        rationale: `blind engineer: informed pace ${
          n > 0 ? "+" : ""
        }${n}; ${what}.`,
        events: [],
        reads: [],
      });
    },
  };
}

/** The `blind` engineer kind: `engineer: { name: blind, pace: [FROM, TO] }`. */
export const engineer: EngineerKind<{ pace: unknown[] }> = {
  name: "blind",
  description:
    "open-loop control: moves at an informed run's pace along blindly chosen dimensions; reads nothing",
  params: v.strictObject({
    pace: v.pipe(
      v.array(_ANY_CONFIG),
      v.length(
        2,
        "pace is [FROM, TO]: the informed run's config before and after",
      ),
      v.description(
        "[FROM, TO]: the informed run's config before and after this stage's redesign",
      ),
    ),
  }),
  module: import.meta.url,
  families: "any",
  create: (params, env) =>
    env.family !== undefined && env.family.name !== DEFAULT_FAMILY
      ? familyBlindEngineer(env.family, {
        from: params.pace[0],
        to: params.pace[1],
      })
      : blindEngineer({ from: params.pace[0], to: params.pace[1] }),
};
