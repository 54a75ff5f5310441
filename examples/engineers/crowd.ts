/**
 * An engineer in TypeScript, as a plugin module: `crowd` adds agents while
 * the policy succeeds and removes them when it fails. Load it with
 * `plugins: [../examples/engineers/crowd.ts]` in an experiment file (the
 * path is relative to the file) or `--plugins examples/engineers/crowd.ts`
 * on the command line, then write `engineer: { name: crowd, threshold: 0.7 }`.
 *
 * A plugin module exports `engineers` (and may export `kinds` and
 * `executors`). Each engineer declares its parameters as a valibot object
 * (`v.description` texts reach `./envsmith engineers` and the JSON
 * Schema) and `module: import.meta.url`: the redesign nodes that use it are
 * keyed by this file's import graph, nothing else.
 *
 * @module
 */
import * as v from "valibot";
import type { EngineerKind } from "../../engineer/engineer_kind.ts";
import {
  type AnyEnvConfig,
  components,
  ENV_CONFIG_BOUNDS,
  type EnvConfig,
} from "../../schemas/env_config.ts";

/** Parameters of `crowd`. */
export interface CrowdParams {
  /** Success rate at or above which agents are added. */
  threshold: number;
  /** Agents added or removed per stage. */
  step: number;
}

function _crowd(c: EnvConfig, delta: number): EnvConfig {
  const fit = Math.floor((c.width * c.height) / 2);
  const max = Math.min(fit, ENV_CONFIG_BOUNDS.agents.max);
  const agents = Math.max(1, Math.min(max, c.agents + delta));
  return { ...c, agents };
}

/** The engineers this module registers. */
export const engineers: EngineerKind<CrowdParams>[] = [{
  name: "crowd",
  description:
    "adds agents while the success rate is at or above a threshold, removes them below it",
  params: v.strictObject({
    threshold: v.optional(
      v.pipe(
        v.number(),
        v.minValue(0),
        v.maxValue(1),
        v.description(
          "success rate at or above which agents are added; default 0.8",
        ),
      ),
      0.8,
    ),
    step: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(1),
        v.description("agents added or removed per stage; default 1"),
      ),
      1,
    ),
  }),
  module: import.meta.url,
  create: (params) => ({
    name: "crowd",
    propose({ context, config }) {
      const success = context.json.stats?.success_rate ?? null;
      if (success === null) {
        return Promise.resolve({
          config,
          rationale: "crowd: no success rate in the context; kept the config.",
          events: [],
          reads: [],
        });
      }
      const delta = success >= params.threshold ? params.step : -params.step;
      const parts = components(config).map((m) => ({
        weight: m.weight,
        config: _crowd(m.config, delta),
      }));
      const next: AnyEnvConfig = parts.length === 1
        ? parts[0]!.config
        : { mixture: parts };
      return Promise.resolve({
        config: next,
        rationale: `crowd: success ${success.toFixed(2)} ${
          delta > 0 ? ">=" : "<"
        } ${params.threshold}; agents ${delta > 0 ? "+" : ""}${delta}.`,
        events: [],
        reads: ["stats.success_rate"],
      });
    },
  }),
}];
