/**
 * Untrusted replies (an `exec` program's stdout) on a family other than
 * MAPF-FrozenLake: the JSON `{ config, rationale }` is extracted, repaired
 * with the family's `clamp` when it has one, and checked against the
 * family's configuration space; and the stdin such a program reads: the
 * context, the family's configuration schema and its dimensions.
 *
 * @module
 */
import * as v from "valibot";
import { toJsonSchema } from "@valibot/to-json-schema";
import { extractJson } from "../llm/json_extract.ts";
import type { EnvironmentFamily } from "../families/family.ts";
import type { ReplyCheck } from "./reply_check.ts";
import type { ProposeInput } from "./engineer.ts";

/** Checks one reply `{ config, rationale }` against `family`'s space. */
export function checkFamilyReply(
  family: EnvironmentFamily,
  text: string,
  previous: unknown,
): ReplyCheck {
  let json: unknown;
  try {
    json = extractJson(text);
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
  const o = json as { config?: unknown; rationale?: unknown } | null;
  if (o === null || typeof o !== "object" || !("config" in o)) {
    return {
      ok: false,
      error:
        'the reply must be a JSON object { "config": ..., "rationale": "..." }',
    };
  }
  let config = o.config;
  let adjustments: readonly string[] = [];
  if (family.clamp !== undefined) {
    const c = family.clamp(config, previous);
    config = c.config;
    adjustments = c.repairs;
  }
  const r = v.safeParse(family.schema, config);
  if (!r.success) {
    const i = r.issues[0]!;
    const path = v.getDotPath(i);
    return {
      ok: false,
      error: `config${
        path ? `.${path}` : ""
      }: ${i.message} (family ${family.name})`,
    };
  }
  return {
    ok: true,
    config: r.output,
    rationale: typeof o.rationale === "string" ? o.rationale : "",
    adjustments,
  };
}

/** The stdin of one `exec` run on `family`. */
export function familyExecInput(
  family: EnvironmentFamily,
  input: ProposeInput,
  attempt: number,
  errors: readonly string[],
): Record<string, unknown> {
  const j = input.context.json as unknown as Record<string, unknown>;
  const schema = toJsonSchema(family.schema, { errorMode: "ignore" });
  delete (schema as { $schema?: unknown }).$schema;
  return {
    envsmith: 1,
    family: family.name,
    context_type: j.type,
    stage: j.stage ?? null,
    seed: input.seed,
    config: input.config,
    stats: j.stats ?? null,
    context_text: input.context.text,
    reply_schema: {
      type: "object",
      properties: { config: schema, rationale: { type: "string" } },
      required: ["config", "rationale"],
    },
    config_schema: schema,
    dimensions: family.dimensions,
    attempt,
    errors: [...errors],
  };
}
