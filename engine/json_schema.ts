/**
 * The JSON Schema of experiment files, from the valibot schemas of the file
 * structure and of every registered kind's parameters, so YAML editors
 * (yaml-language-server) complete and check experiment files. Any parameter
 * may also be a reference string (`$node.field`), which the schema allows.
 *
 * @module
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import { builtinExecutors, type ExecutorKind } from "./executor.ts";
import { MatrixSchema, TableSchema } from "./experiment_schema.ts";
import type { NodeKind } from "./types.ts";

type _Js = Record<string, unknown>;

function _convert(schema: v.GenericSchema): _Js {
  return toJsonSchema(schema, {
    errorMode: "ignore",
    typeMode: "input",
  }) as _Js;
}

const _REF = { $ref: "#/definitions/reference" };

/** Lets every value below the top level also be a reference string. */
function _allowRefs(s: _Js, top: boolean): _Js {
  const out: _Js = { ...s };
  delete out.$schema;
  if (out.properties && typeof out.properties === "object") {
    const props: _Js = {};
    for (const [k, p] of Object.entries(out.properties as _Js)) {
      props[k] = _allowRefs(p as _Js, false);
    }
    out.properties = props;
  }
  if (out.items && typeof out.items === "object" && !Array.isArray(out.items)) {
    out.items = _allowRefs(out.items as _Js, false);
  }
  if (
    out.additionalProperties && typeof out.additionalProperties === "object"
  ) {
    out.additionalProperties = _allowRefs(
      out.additionalProperties as _Js,
      false,
    );
  }
  for (const k of ["anyOf", "oneOf", "allOf"]) {
    if (Array.isArray(out[k])) {
      out[k] = (out[k] as _Js[]).map((x) => _allowRefs(x, true));
    }
  }
  return top ? out : { anyOf: [out, _REF] };
}

function _nodeSchema(kind: NodeKind): _Js {
  return {
    type: "object",
    description: kind.description,
    properties: {
      kind: { const: kind.name, description: kind.description },
      with: _allowRefs(_convert(kind.params as v.GenericSchema), true),
      description: { type: "string" },
    },
    required: ["kind"],
    additionalProperties: false,
  };
}

/** The `executor:` block: one of the executors' blocks, by `type`. */
// deno-lint-ignore no-explicit-any
function _executorSchema(executors: readonly ExecutorKind<any>[]): _Js {
  const variant = v.variant(
    "type",
    executors.map((e) => e.spec) as unknown as v.VariantOptions<"type">,
  );
  return _convert(variant as unknown as v.GenericSchema);
}

/** The JSON Schema (draft-07) of an experiment file using `kinds` and `executors`. */
export function experimentJsonSchema(
  kinds: readonly NodeKind[],
  // deno-lint-ignore no-explicit-any
  executors: readonly ExecutorKind<any>[] = builtinExecutors,
): _Js {
  const nodeRefs = kinds.map((k) => ({
    $ref: `#/definitions/kind_${k.name.replace(/[^A-Za-z0-9_]/g, "_")}`,
  }));
  const definitions: _Js = {
    reference: {
      type: "string",
      pattern: "^\\$[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*$",
      description:
        "$node, $node.field, $matrix.AXIS, $seed; in stages also $NAME, $prev.NAME, $earlier.NAME, $stage",
    },
  };
  for (const k of kinds) {
    definitions[`kind_${k.name.replace(/[^A-Za-z0-9_]/g, "_")}`] = _nodeSchema(
      k,
    );
  }
  const stages = {
    type: "object",
    description:
      "count stages of the each nodes; stage i reads stage i-1 through $prev.NAME",
    properties: {
      kind: { const: "stages" },
      count: { type: "integer", minimum: 1 },
      from: { type: "object", description: "what stage 0 reads as $prev.NAME" },
      each: { type: "object", additionalProperties: { anyOf: nodeRefs } },
      description: { type: "string" },
    },
    required: ["kind", "count", "each"],
    additionalProperties: false,
  };
  const id = "^[A-Za-z_][A-Za-z0-9_-]*$";
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    title: "envsmith experiment",
    type: "object",
    properties: {
      experiment: {
        type: "string",
        pattern: id,
        description: "experiment name",
      },
      seed: {
        type: "integer",
        description: "base seed ($seed unless the matrix has a seed axis)",
      },
      description: { type: "string" },
      matrix: _convert(MatrixSchema as unknown as v.GenericSchema),
      executor: _executorSchema(executors),
      nodes: {
        type: "object",
        propertyNames: { pattern: id },
        additionalProperties: { anyOf: [stages, ...nodeRefs] },
      },
      tables: {
        type: "array",
        items: _convert(TableSchema as unknown as v.GenericSchema),
      },
    },
    required: ["experiment", "seed", "nodes"],
    additionalProperties: false,
    definitions,
  };
}

/** Writes the schema to `path`; returns the number of kinds. */
export function writeExperimentSchema(
  kinds: readonly NodeKind[],
  path: string,
): number {
  Deno.writeTextFileSync(
    path,
    JSON.stringify(experimentJsonSchema(kinds), null, 2) + "\n",
  );
  return kinds.length;
}
