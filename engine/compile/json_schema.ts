/**
 * The JSON Schema of experiment files, from the valibot schemas of the file
 * structure and of every registered kind's parameters, so YAML editors
 * (yaml-language-server) complete and check experiment files. Any parameter
 * may also be a reference string (`$node.field`), which the schema allows.
 *
 * @module
 */
import type { ExecutorDeclaration } from "./executor_block.ts";
import { toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import { MatrixSchema, TableSchema } from "./experiment_schema.ts";
import type { NodeKind } from "../types.ts";

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

/** A definition name for a kind (letters, digits and `_`). */
function _defName(kind: string): string {
  return `kind_${kind.replace(/[^A-Za-z0-9_]/g, "_")}`;
}

/**
 * Moves the `$defs` a conversion produced (valibot's `lazy` schemas become
 * `$ref: "#/$defs/0"` beside the sub-schema) into the root `definitions`,
 * rewriting every reference to them. A `$ref` resolves against the document
 * root, so a `$defs` left inside a kind's `with` is unresolvable (ajv and
 * yaml-language-server reject the whole schema). Equal definitions of
 * different kinds share one name.
 */
function _hoistDefs(s: _Js, owner: string, definitions: _Js): _Js {
  const local = (s.$defs ?? {}) as _Js;
  const names = new Map<string, string>();
  const byContent = new Map<string, string>();
  for (const [name, def] of Object.entries(definitions)) {
    byContent.set(JSON.stringify(def), name);
  }
  for (const key of Object.keys(local)) {
    names.set(
      `#/$defs/${key}`,
      `${owner}_${key.replace(/[^A-Za-z0-9_]/g, "_")}`,
    );
  }
  const rewrite = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(rewrite);
    if (x === null || typeof x !== "object") return x;
    const out: _Js = {};
    for (const [k, val] of Object.entries(x as _Js)) {
      if (k === "$defs") continue;
      out[k] = k === "$ref" && typeof val === "string" && names.has(val)
        ? `#/definitions/${names.get(val)}`
        : rewrite(val);
    }
    return out;
  };
  const added: string[] = [];
  const merged = new Map<string, string>();
  for (const [key, def] of Object.entries(local)) {
    const ref = `#/$defs/${key}`;
    const body = _allowRefs(rewrite(def) as _Js, true);
    const same = byContent.get(JSON.stringify(body));
    if (same !== undefined) {
      merged.set(`#/definitions/${names.get(ref)!}`, `#/definitions/${same}`);
      names.set(ref, same);
      continue;
    }
    definitions[names.get(ref)!] = body;
    added.push(names.get(ref)!);
    byContent.set(JSON.stringify(body), names.get(ref)!);
  }
  // A definition rewritten before a later one was found equal to an
  // existing one still names the later one's own name: point it at the
  // definition kept.
  const relink = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(relink);
    if (x === null || typeof x !== "object") return x;
    const out: _Js = {};
    for (const [k, val] of Object.entries(x as _Js)) {
      out[k] = k === "$ref" && typeof val === "string" && merged.has(val)
        ? merged.get(val)
        : relink(val);
    }
    return out;
  };
  if (merged.size > 0) {
    for (const name of added) definitions[name] = relink(definitions[name]);
  }
  return rewrite(s) as _Js;
}

/**
 * Puts each parameter's line of `docs` on its property (beside the
 * `anyOf` of value and reference, where an editor's hover reads it).
 */
function _describe(s: _Js, docs: Readonly<Record<string, string>>): _Js {
  if (!s.properties || typeof s.properties !== "object") return s;
  const props: _Js = {};
  for (const [k, p] of Object.entries(s.properties as _Js)) {
    props[k] = docs[k] === undefined
      ? p
      : { description: docs[k], ...(p as _Js) };
  }
  return { ...s, properties: props };
}

function _nodeSchema(kind: NodeKind, definitions: _Js): _Js {
  return {
    type: "object",
    description: kind.description,
    properties: {
      kind: { const: kind.name, description: kind.description },
      with: _describe(
        _hoistDefs(
          _allowRefs(_convert(kind.params as v.GenericSchema), true),
          _defName(kind.name),
          definitions,
        ),
        kind.paramDocs ?? {},
      ),
      description: { type: "string" },
    },
    required: ["kind"],
    additionalProperties: false,
  };
}

/** The `executor:` block: one of the executors' blocks, by `type`. */
function _executorSchema(executors: readonly ExecutorDeclaration[]): _Js {
  const variant = v.variant(
    "type",
    executors.map((e) => e.spec) as unknown as v.VariantOptions<"type">,
  );
  return _convert(variant as unknown as v.GenericSchema);
}

/**
 * A node: `kind` is one of `names` (one enum, so an unknown kind gets one
 * message listing the kinds), and the rest is checked against that kind's
 * own definition only (`if`/`then` on `kind`, not an `anyOf` over every
 * kind, whose errors would come from every branch).
 */
function _dispatch(names: readonly string[], description: string): _Js {
  return {
    type: "object",
    description,
    properties: {
      kind: { enum: [...names], description: "the node kind" },
    },
    required: ["kind"],
    allOf: names.map((n) => ({
      if: { properties: { kind: { const: n } }, required: ["kind"] },
      then: {
        $ref: n === "stages"
          ? "#/definitions/stages"
          : `#/definitions/${_defName(n)}`,
      },
    })),
  };
}

/**
 * The JSON Schema of an experiment file using `kinds` and `executors`. It
 * names no `$schema` draft and uses only keywords that mean the same in
 * draft-07 and 2020-12, so both Ajv (draft-07) and Ajv2020 compile it, and
 * yaml-language-server reads it.
 *
 * Long by design: a declaration of the schema's shape, mostly object literals.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import { experimentJsonSchema } from "./json_schema.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const schema = experimentJsonSchema([one as NodeKind]);
 * assert.equal(schema.type, "object");
 * assert.match(JSON.stringify(schema), /"one"/);
 * ```
 */
export function experimentJsonSchema(
  kinds: readonly NodeKind[],
  executors: readonly ExecutorDeclaration[] = [],
): _Js {
  const definitions: _Js = {
    reference: {
      type: "string",
      pattern: "^\\$[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*$",
      description:
        "$node, $node.field, $matrix.AXIS, $seed; in stages also $NAME, $prev.NAME, $earlier.NAME, $stage",
    },
  };
  for (const k of kinds) {
    definitions[_defName(k.name)] = _nodeSchema(k, definitions);
  }
  const names = kinds.map((k) => k.name);
  definitions.node = _dispatch(
    [...names, "stages"],
    "a node: { kind, with, description }, or a stages group",
  );
  definitions.stage_node = _dispatch(
    names,
    "a node of each stage: { kind, with, description }",
  );
  definitions.stages = {
    type: "object",
    description:
      "count stages of the each nodes; stage i reads stage i-1 through $prev.NAME",
    properties: {
      kind: { const: "stages" },
      count: { type: "integer", minimum: 1 },
      from: { type: "object", description: "what stage 0 reads as $prev.NAME" },
      each: {
        type: "object",
        additionalProperties: { $ref: "#/definitions/stage_node" },
      },
      description: { type: "string" },
    },
    required: ["kind", "count", "each"],
    additionalProperties: false,
  };
  const id = "^[A-Za-z_][A-Za-z0-9_-]*$";
  return {
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
      matrix: _hoistDefs(
        _convert(MatrixSchema as unknown as v.GenericSchema),
        "matrix",
        definitions,
      ),
      executor: _hoistDefs(_executorSchema(executors), "executor", definitions),
      nodes: {
        type: "object",
        propertyNames: { pattern: id },
        additionalProperties: { $ref: "#/definitions/node" },
      },
      tables: {
        type: "array",
        items: _hoistDefs(
          _convert(TableSchema as unknown as v.GenericSchema),
          "table",
          definitions,
        ),
      },
    },
    required: ["experiment", "seed", "nodes"],
    additionalProperties: false,
    definitions,
  };
}

/**
 * Writes the schema to `path`; returns the number of kinds.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import { writeExperimentSchema } from "./json_schema.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const dir = await Deno.makeTempDir();
 * assert.equal(writeExperimentSchema([one as NodeKind], `${dir}/experiment.schema.json`), 1);
 * assert.equal(JSON.parse(Deno.readTextFileSync(`${dir}/experiment.schema.json`)).type, "object");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function writeExperimentSchema(
  kinds: readonly NodeKind[],
  path: string,
  executors: readonly ExecutorDeclaration[] = [],
): number {
  Deno.writeTextFileSync(
    path,
    JSON.stringify(experimentJsonSchema(kinds, executors), null, 2) + "\n",
  );
  return kinds.length;
}
