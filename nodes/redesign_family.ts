/**
 * The context and diff of a redesign on a family other than
 * MAPF-FrozenLake: the configuration as JSON and in the family's own text,
 * its value on every declared dimension, and the numbers of the stage's
 * findings (any JSON object of numbers, e.g. `{ success_rate: 0.8 }`).
 * The `stats` section keeps the name MAPF-FrozenLake's contexts use, so an
 * engineer reading `stats.success_rate` reads it on every family.
 *
 * @module
 */
import { canonicalJson, sha256Hex } from "@envsmith/engine/hash";
import type { AnyEnvConfig } from "../schemas/env_config.ts";
import type { BuiltContext, ContextType } from "../engineer/context.ts";
import type { EnvironmentFamily } from "../families/family.ts";

/** The numbers of a findings value (its numeric top-level fields). */
export function findingsNumbers(findings: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (findings === null || typeof findings !== "object") return out;
  for (const [k, x] of Object.entries(findings)) {
    if (typeof x === "number" && Number.isFinite(x)) out[k] = x;
  }
  return out;
}

/**
 * The context an engineer sees on `family`: `none` shows the
 * configuration only; every other type adds the findings' numbers.
 */
export function genericContext(
  family: EnvironmentFamily,
  type: ContextType,
  config: unknown,
  findings: unknown,
  options: { stage?: number } = {},
): BuiltContext {
  const dims = Object.fromEntries(
    family.dimensions.map((d) => [d.path, family.get(config, d.path)]),
  );
  const stats = type === "none" ? undefined : findingsNumbers(findings);
  const json = {
    type,
    family: family.name,
    stage: options.stage ?? null,
    current: {
      config: config as AnyEnvConfig,
      config_id: sha256Hex(canonicalJson(config)).slice(0, 12),
      dimensions: dims,
    },
    ...(stats === undefined || !("success_rate" in stats) ? {} : { stats }),
    cut: false,
  };
  const lines = [
    `Family: ${family.name} (${family.description})`,
    `Current configuration: ${family.renderConfig(config)}`,
    ...family.dimensions.map((d) =>
      `- ${d.path} = ${
        dims[d.path]
      } (${d.min}..${d.max}, step ${d.step}, harder ${d.harder}): ${d.description}`
    ),
  ];
  if (stats !== undefined) {
    lines.push(
      "Findings:",
      ...Object.entries(stats).map(([k, x]) => `- ${k}: ${x}`),
    );
  }
  return {
    json: json as unknown as BuiltContext["json"],
    text: lines.join("\n"),
  };
}

/** One changed dimension. */
export interface DimensionChange {
  /** The dimension. */
  readonly dimension: string;
  /** Its value before. */
  readonly from: number;
  /** Its value after. */
  readonly to: number;
}

/** What changed between two configurations of `family`, per dimension. */
export function genericDiff(
  family: EnvironmentFamily,
  before: unknown,
  after: unknown,
): { changed: boolean; dimensions: DimensionChange[] } {
  const dimensions: DimensionChange[] = [];
  for (const d of family.dimensions) {
    const from = family.get(before, d.path);
    const to = family.get(after, d.path);
    if (from !== to) dimensions.push({ dimension: d.path, from, to });
  }
  return {
    changed: canonicalJson(before) !== canonicalJson(after),
    dimensions,
  };
}
