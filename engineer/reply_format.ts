/**
 * The shape the llm engineer's replies are constrained to, derived from the
 * configuration schema itself (`EngineerReplySchema`: a rationale and an
 * `AnyEnvConfigSchema`), so it follows every change of the schema:
 *
 * - {@linkcode replyJsonSchema}: the JSON Schema (through
 *   `@valibot/to-json-schema`), numeric bounds as `minimum`/`maximum`;
 * - {@linkcode replyResponseFormat}: the `response_format` sent to
 *   OpenAI-compatible servers (`json_schema`, strict);
 * - {@linkcode replyGrammar}: the llama.cpp grammar of the local runtime,
 *   every range spelled out (`llm/gbnf.ts`), so a reply is a parseable,
 *   in-range configuration by construction.
 *
 * What neither can express are the cross-field rules (agents must fit the
 * grid, `distance.min <= distance.max`, the minimum distance must be
 * reachable): a reply breaking one is repaired by the clamp (event
 * `clamped`), as for any endpoint.
 *
 * @module
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import { EngineerReplySchema } from "../schemas/llm.ts";
import { type JsonSchema, jsonSchemaToGbnf } from "../llm/gbnf.ts";
import type { EnvironmentFamily } from "../families/family.ts";

let _schema: JsonSchema | undefined;
let _grammar: string | undefined;

/** The JSON Schema of a reply (cross-field checks are not expressible and left out). */
export function replyJsonSchema(): JsonSchema {
  if (_schema === undefined) {
    const s = toJsonSchema(EngineerReplySchema, {
      errorMode: "ignore",
    }) as JsonSchema;
    delete s.$schema;
    _schema = s;
  }
  return structuredClone(_schema);
}

/** `response_format` for OpenAI-compatible servers: the reply schema, strict. */
export function replyResponseFormat(): Record<string, unknown> {
  return {
    type: "json_schema",
    json_schema: {
      name: "environment_config",
      strict: true,
      schema: replyJsonSchema(),
    },
  };
}

/** The GBNF grammar of a reply (root rule `root`). */
export function replyGrammar(): string {
  _grammar ??= jsonSchemaToGbnf(replyJsonSchema());
  return _grammar;
}

/** The JSON Schema of a configuration of `family` (cross-field checks left out). */
export function familyConfigJsonSchema(family: EnvironmentFamily): JsonSchema {
  const s = toJsonSchema(family.schema, { errorMode: "ignore" }) as JsonSchema;
  delete s.$schema;
  return s;
}

/** The JSON Schema of a reply on `family`: `{ rationale, config }`. */
export function familyReplyJsonSchema(family: EnvironmentFamily): JsonSchema {
  return {
    type: "object",
    properties: {
      rationale: { type: "string" },
      config: familyConfigJsonSchema(family),
    },
    required: ["rationale", "config"],
    additionalProperties: false,
  } as JsonSchema;
}

/** `response_format` for OpenAI-compatible servers on `family`: its reply schema, strict. */
export function familyReplyResponseFormat(
  family: EnvironmentFamily,
): Record<string, unknown> {
  return {
    type: "json_schema",
    json_schema: {
      name: "environment_config",
      strict: true,
      schema: familyReplyJsonSchema(family),
    },
  };
}

/** The GBNF grammar of a reply on `family` (root rule `root`). */
export function familyReplyGrammar(family: EnvironmentFamily): string {
  return jsonSchemaToGbnf(familyReplyJsonSchema(family));
}
