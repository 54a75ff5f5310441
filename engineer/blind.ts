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
import { EnvConfigSpecSchema } from "../schemas/env_config.ts";
import type { EngineerKind } from "./engineer_kind.ts";

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

/** The `blind` engineer kind: `engineer: { name: blind, pace: [FROM, TO] }`. */
export const engineer: EngineerKind<{ pace: unknown[] }> = {
  name: "blind",
  description:
    "open-loop control: moves at an informed run's pace along blindly chosen dimensions; reads nothing",
  params: v.strictObject({
    pace: v.pipe(
      v.array(EnvConfigSpecSchema),
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
  create: (params) =>
    blindEngineer({ from: params.pace[0], to: params.pace[1] }),
};
