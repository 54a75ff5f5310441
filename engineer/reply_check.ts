/**
 * Checking a configuration reply from an untrusted source (a language
 * model, an `exec` engineer's program): extract the JSON object, unwrap
 * `{"config", "rationale"}`, reject non-finite and absurd values, clamp
 * mild ones, and check that the generator can realise every component.
 * The `llm` and `exec` engineers share this path, so a reply is judged the
 * same whoever wrote it.
 *
 * @module
 */
import {
  type AnyEnvConfig,
  clampEnvConfig,
  components,
  ENV_CONFIG_BOUNDS,
  type EnvConfig,
  safeParseEnvConfig,
} from "../schemas/env_config.ts";
import { generate, GenerationError } from "../mapf/generator.ts";
import { extractJson } from "../llm/json_extract.ts";
import { JsonExtractionError } from "../llm/errors.ts";

/** The outcome of checking one reply. */
export type ReplyCheck =
  | {
    ok: true;
    config: AnyEnvConfig;
    rationale: string;
    adjustments: readonly string[];
  }
  | { ok: false; error: string };

function _bound(path: string): { min: number; max: number } | undefined {
  const last = path.split(".").filter((p) => !/^\d+$/.test(p));
  const B = ENV_CONFIG_BOUNDS as Record<string, { min: number; max: number }>;
  const key = last.at(-1) ?? "";
  const parent = last.at(-2) ?? "";
  if (parent === "horizon") return B[`horizon_${key}`];
  if (parent === "distance") return B.distance;
  if (key === "weight") return B.weight;
  return B[key];
}

/** Find non-finite numbers and values beyond one range-width outside their bounds. */
function _absurd(value: unknown, path: string, out: string[]): void {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) {
      out.push(`${path || "value"} is ${value}, not a finite number`);
      return;
    }
    const b = _bound(path);
    if (b !== undefined) {
      const span = b.max - b.min;
      if (value < b.min - span || value > b.max + span) {
        out.push(
          `${path} is ${value}, far outside its range ${b.min}..${b.max}`,
        );
      }
    }
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((x, i) => _absurd(x, `${path}.${i}`, out));
  } else if (typeof value === "object" && value !== null) {
    for (const [k, x] of Object.entries(value)) {
      _absurd(x, path ? `${path}.${k}` : k, out);
    }
  }
}

const MILD = /clamped to|reduced to|swapped|converted string/;

/**
 * Check one reply: extract, unwrap, validate, clamp mild problems, and (by
 * default) check that the generator can realise every component.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkReply } from "./reply_check.ts";
 * import { PRESETS } from "../schemas/env_config.ts";
 * const r = checkReply('{"rationale": "more agents", "config": {"agents": 3}}', PRESETS.easy);
 * assert.equal(r.ok, true);
 * ```
 */
export function checkReply(
  text: string,
  previous: EnvConfig,
  options: CheckReplyOptions = {},
): ReplyCheck {
  const r = _checkShape(text, previous);
  if (!r.ok || options.generate === false) return r;
  const why = ungeneratable(r.config, options.seed ?? 0);
  return why === null
    ? r
    : { ok: false, error: `the generator cannot realise it: ${why}` };
}

/** Options of {@linkcode checkReply}. */
export interface CheckReplyOptions {
  /**
   * Also generate one instance of each component (up to 100 draws, as the
   * `generate` kind does), so a valid config the generator cannot realise
   * (a start-goal distance longer than the grid allows, agents that never
   * fit between the holes) is a rejected reply, not a failed next stage.
   * @default {true}
   */
  generate?: boolean;
  /** Seed of the trial generation. @default {0} */
  seed?: number;
}

/**
 * Why the generator cannot produce an instance of some component of
 * `config` (its message, naming the component and the fix), or `null`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ungeneratable } from "./reply_check.ts";
 * import { PRESETS } from "../schemas/env_config.ts";
 * assert.equal(ungeneratable(PRESETS.easy, 1), null);
 * ```
 */
export function ungeneratable(
  config: AnyEnvConfig,
  seed: number,
): string | null {
  const parts = components(config);
  for (let i = 0; i < parts.length; i++) {
    try {
      generate(parts[i]!.config, { count: 1, seed: seed & 0x7fffffff });
    } catch (e) {
      if (!(e instanceof GenerationError)) throw e;
      return parts.length > 1 ? `mixture.${i}: ${e.message}` : e.message;
    }
  }
  return null;
}

function _checkShape(text: string, previous: EnvConfig): ReplyCheck {
  let value: unknown;
  try {
    value = extractJson(text);
  } catch (e) {
    if (e instanceof JsonExtractionError) {
      return { ok: false, error: e.message };
    }
    throw e;
  }
  const obj = value as Record<string, unknown>;
  const rationale = typeof obj.rationale === "string"
    ? obj.rationale.slice(0, 2000)
    : "";
  let config: unknown = obj;
  if ("config" in obj) config = obj.config;
  else if ("rationale" in obj) {
    const { rationale: _r, ...rest } = obj;
    config = rest;
  }
  const absurd: string[] = [];
  _absurd(config, "", absurd);
  if (absurd.length > 0) {
    return { ok: false, error: `invalid values: ${absurd.join("; ")}` };
  }
  const strict = safeParseEnvConfig(config);
  if (strict.success) {
    return { ok: true, config: strict.config, rationale, adjustments: [] };
  }
  const clamped = clampEnvConfig(config, previous);
  const severe = clamped.adjustments.filter((a) => !MILD.test(a));
  if (severe.length > 0 || clamped.adjustments.length === 0) {
    const issues = strict.issues.map((
      i,
    ) => (i.path ? `${i.path}: ${i.message}` : i.message));
    return {
      ok: false,
      error: `invalid configuration: ${issues.slice(0, 6).join("; ")}`,
    };
  }
  // Re-validate the repaired config (clamp promises validity; check anyway).
  const again = safeParseEnvConfig(clamped.config);
  if (!again.success) {
    return {
      ok: false,
      error: `invalid configuration: ${
        again.issues.map((i) => i.message).join("; ")
      }`,
    };
  }
  return {
    ok: true,
    config: again.config,
    rationale,
    adjustments: clamped.adjustments,
  };
}
