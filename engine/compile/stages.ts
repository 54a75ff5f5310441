/**
 * `nodes:`: plain nodes and `kind: stages` nodes, unrolled into one plain
 * node per stage and `each` entry (`STAGES.i.NAME`), with the aliases
 * `STAGES.NAME` for the last stage.
 *
 * @module
 */
import * as v from "valibot";
import {
  IdSchema,
  PlainNodeSchema,
  StagesNodeSchema,
} from "./experiment_schema.ts";
import type { DocPath } from "./source.ts";
import { didYouMean } from "../suggest.ts";
import { isRecord } from "./diagnostics.ts";
import { type Compilation, type PlainNode, RESERVED } from "./plain_node.ts";
import { checkStageCount } from "./bounds.ts";

/** Collects the nodes of `nodes:` into `c.plains` and `c.names`. */
export function collectNodes(
  c: Compilation,
  nodes: Record<string, unknown>,
): void {
  for (const [id, raw] of Object.entries(nodes)) {
    const at = ["nodes", id];
    if (!v.is(IdSchema, id) || RESERVED.has(id)) {
      c.diags.report(
        "structure",
        at,
        RESERVED.has(id)
          ? `"${id}" is reserved for references ($${id}); choose another node id`
          : `node id "${id}" must be letters, digits, _ or - and start with a letter or _`,
        true,
      );
    } else if (!isRecord(raw) || typeof raw.kind !== "string") {
      c.diags.report("structure", at, `node ${id} needs a "kind"`);
    } else if (raw.kind === "stages") _collectStages(c, id, raw, at);
    else {
      _checkNodeShape(c, raw, at);
      c.names.set(id, id);
      c.plains.set(id, _plain(id, id, raw.kind, raw.with, at));
    }
  }
}

function _plain(
  id: string,
  group: string,
  kindName: string,
  rawWith: unknown,
  at: DocPath,
  stage?: PlainNode["stage"],
): PlainNode {
  return {
    id,
    group,
    kindName,
    rawWith: isRecord(rawWith) ? rawWith : {},
    at,
    ...(stage ? { stage } : {}),
    template: null,
    deps: new Set(),
    pinned: [],
    axes: [],
    hasMatrix: false,
  };
}

function _checkNodeShape(
  c: Compilation,
  node: Record<string, unknown>,
  at: DocPath,
): void {
  c.diags.unknownKeys(
    node,
    Object.keys(PlainNodeSchema.entries),
    at,
    "key of a node",
  );
  const r = v.safeParse(PlainNodeSchema, node);
  if (!r.success) c.diags.issues(r.issues, at, "structure");
}

function _collectStages(
  c: Compilation,
  id: string,
  raw: Record<string, unknown>,
  at: DocPath,
): void {
  c.diags.unknownKeys(
    raw,
    Object.keys(StagesNodeSchema.entries),
    at,
    `key of a stages node`,
  );
  const r = v.safeParse(StagesNodeSchema, raw);
  if (!r.success) c.diags.issues(r.issues, at, "stages");
  // A count that is not a positive number was reported above; a fractional
  // one is rounded down so the rest of the file is still checked.
  if (
    typeof raw.count !== "number" || !Number.isFinite(raw.count) ||
    raw.count < 1 || !isRecord(raw.each)
  ) return;
  const count = Math.floor(raw.count);
  const each = raw.each;
  if (!checkStageCount(c, count, Object.keys(each).length, [...at, "count"])) {
    return;
  }
  const from = isRecord(raw.from) ? raw.from : {};
  const eachNames = new Set(Object.keys(each));
  for (const name of eachNames) {
    const eat = [...at, "each", name];
    const node = each[name];
    if (!_stageEntryOk(c, name, node, eat)) continue;
    _checkNodeShape(c, node as Record<string, unknown>, eat);
    const kindName = (node as { kind: string }).kind;
    for (let i = 0; i < count; i++) {
      const pid = `${id}.${i}.${name}`;
      c.names.set(pid, pid);
      c.plains.set(
        pid,
        _plain(pid, id, kindName, (node as { with?: unknown }).with, eat, {
          index: i,
          count,
          name,
          each: eachNames,
          from,
          fromAt: [...at, "from"],
        }),
      );
    }
    c.names.set(`${id}.${name}`, `${id}.${count - 1}.${name}`);
  }
  for (const k of Object.keys(from)) {
    if (!eachNames.has(k)) {
      c.diags.report(
        "stages",
        [...at, "from", k],
        `from.${k} does not name a node of each${didYouMean(k, eachNames)}`,
        true,
      );
    }
  }
}

function _stageEntryOk(
  c: Compilation,
  name: string,
  node: unknown,
  eat: DocPath,
): boolean {
  if (!v.is(IdSchema, name) || RESERVED.has(name)) {
    c.diags.report(
      "stages",
      eat,
      `stage node name "${name}" must be an id (letters, digits, _ or -) and not one of ${
        [...RESERVED].join(", ")
      }`,
      true,
    );
    return false;
  }
  if (!isRecord(node) || typeof node.kind !== "string") {
    c.diags.report("stages", eat, `stage node ${name} needs a "kind"`);
    return false;
  }
  if (node.kind === "stages") {
    c.diags.report("stages", [...eat, "kind"], "stages cannot be nested");
    return false;
  }
  return true;
}
