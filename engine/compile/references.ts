/**
 * References in `with:`: every string starting with `$` is parsed into a
 * {@linkcode NodeRef}, {@linkcode MatrixRef} or {@linkcode SeedRef} (or, for
 * `$stage` and stage-0 `$prev` literals, a value), and the node's
 * dependencies are recorded. An unresolvable reference is reported with the
 * valid alternatives and becomes {@linkcode BROKEN}.
 *
 * @module
 */
import {
  type FieldPath,
  getField,
  MatrixRef,
  NodeRef,
  parseReference,
  SeedRef,
  type Template,
} from "../refs.ts";
import type { DocPath } from "../source.ts";
import { didYouMean } from "../suggest.ts";
import type { Json } from "../types.ts";
import { isRecord } from "./diagnostics.ts";
import type { Compilation, PlainNode, StageScope } from "./plain_node.ts";

/** Stands for a reference that could not be resolved (already reported): a hole, never a value. */
export class Broken {}
/** The one {@linkcode Broken} value. */
export const BROKEN: Template = new Broken() as unknown as Template;

/** Parses the references of a plain node's `with:` into its template. */
export function buildTemplate(c: Compilation, p: PlainNode): void {
  p.template = _walk(c, p.rawWith, [...p.at, "with"], p, false);
}

function _walk(
  c: Compilation,
  x: unknown,
  at: DocPath,
  p: PlainNode,
  global: boolean,
): Template {
  if (typeof x === "string") {
    return x.startsWith("$") ? _ref(c, x, at, p, global) : x;
  }
  if (Array.isArray(x)) {
    return x.map((y, i) => _walk(c, y, [...at, i], p, global));
  }
  if (isRecord(x)) {
    const out: { [k: string]: Template } = {};
    for (const [k, y] of Object.entries(x)) {
      out[k] = _walk(c, y, [...at, k], p, global);
    }
    return out;
  }
  return x as Json;
}

/** Resolves one reference string; `global` ignores the stage scope (for `from:` values). */
function _ref(
  c: Compilation,
  s: string,
  at: DocPath,
  p: PlainNode,
  global: boolean,
): Template {
  if (s.startsWith("$$")) return s.slice(1);
  const parsed = parseReference(s);
  if ("error" in parsed) {
    c.diags.report("reference", at, parsed.error);
    return BROKEN;
  }
  const segs = parsed.segments;
  const head = segs[0]!;
  const stage = global ? undefined : p.stage;
  if (head === "seed") {
    if (segs.length > 1) {
      c.diags.report("reference", at, `"${s}": $seed has no fields`);
    }
    p.hasMatrix = true;
    return new SeedRef(s);
  }
  if (head === "matrix") return _matrixRef(c, s, segs, at, p);
  if (stage) {
    const local = _stageRef(c, s, segs, at, p, stage);
    if (local !== undefined) return local;
  }
  for (let k = segs.length; k >= 1; k--) {
    const plain = c.names.get(k === 1 ? head : segs.slice(0, k).join("."));
    if (plain !== undefined) return _nodeRef(plain, segs.slice(k), s, p);
  }
  _reportUnresolved(c, s, segs, at, stage);
  return BROKEN;
}

function _matrixRef(
  c: Compilation,
  s: string,
  segs: string[],
  at: DocPath,
  p: PlainNode,
): Template {
  const axisName = segs[1];
  const axis = c.axes.find((a) => a.name === axisName);
  if (!axis) {
    c.diags.report(
      "reference",
      at,
      axisName === undefined
        ? `"${s}" needs an axis: $matrix.AXIS`
        : `Cannot resolve "${s}": no matrix axis named "${axisName}"${
          didYouMean(axisName, c.axes.map((a) => a.name))
        }`,
    );
    return BROKEN;
  }
  p.hasMatrix = true;
  return new MatrixRef(axis.name, segs.slice(2), s, at);
}

/** `$stage`, `$prev.NAME`, `$earlier.NAME`, `$NAME` inside `each`; undefined for anything else. */
function _stageRef(
  c: Compilation,
  s: string,
  segs: string[],
  at: DocPath,
  p: PlainNode,
  stage: StageScope,
): Template | undefined {
  const head = segs[0]!;
  if (head === "stage") {
    if (segs.length > 1) {
      c.diags.report(
        "reference",
        at,
        `"${s}": $stage is an integer and has no fields`,
      );
    }
    return stage.index;
  }
  if (head === "prev" || head === "earlier") {
    const name = segs[1];
    if (name === undefined || !stage.each.has(name)) {
      c.diags.report(
        "reference",
        at,
        `Cannot resolve "${s}": $${head} needs a node of this stage's each: ` +
          `${
            name === undefined
              ? "none given"
              : `"${name}" is not one${didYouMean(name, stage.each)}`
          }`,
      );
      return BROKEN;
    }
    const rest = segs.slice(2);
    if (head === "earlier") {
      const out: Template[] = [];
      for (let j = 0; j < stage.index; j++) {
        out.push(_nodeRef(`${p.group}.${j}.${name}`, rest, s, p));
      }
      return out;
    }
    if (stage.index > 0) {
      return _nodeRef(`${p.group}.${stage.index - 1}.${name}`, rest, s, p);
    }
    return _fromRef(c, s, name, rest, at, p, stage);
  }
  if (stage.each.has(head)) {
    return _nodeRef(`${p.group}.${stage.index}.${head}`, segs.slice(1), s, p);
  }
  return undefined;
}

/** `$prev.NAME.rest` at stage 0: `from.NAME` (a reference or a literal). */
function _fromRef(
  c: Compilation,
  s: string,
  name: string,
  rest: FieldPath,
  at: DocPath,
  p: PlainNode,
  stage: StageScope,
): Template {
  if (!Object.hasOwn(stage.from, name)) {
    c.diags.report(
      "reference",
      at,
      `Cannot resolve "${s}" at stage 0: add from.${name} to the stages node (the value stage 0 reads as $prev.${name})`,
    );
    return BROKEN;
  }
  const init = stage.from[name];
  const fromAt = [...stage.fromAt, name];
  if (
    typeof init === "string" && init.startsWith("$") && !init.startsWith("$$")
  ) {
    const t = _ref(c, init, fromAt, p, true);
    if (rest.length === 0) return t;
    if (t instanceof NodeRef) {
      return new NodeRef(t.node, [...t.path, ...rest], s);
    }
    if (t instanceof MatrixRef) {
      return new MatrixRef(t.axis, [...t.path, ...rest], s, t.at);
    }
    c.diags.report(
      "reference",
      at,
      `"${s}": from.${name} has no field ${rest.join(".")}`,
    );
    return BROKEN;
  }
  const lit = _walk(c, init, fromAt, p, true);
  if (rest.length === 0) return lit;
  const got = getField(lit as Json, rest);
  if (got === undefined) {
    c.diags.report(
      "reference",
      at,
      `Cannot resolve "${s}" at stage 0: from.${name} has no field ${
        rest.join(".")
      }`,
    );
    return BROKEN;
  }
  return got;
}

function _reportUnresolved(
  c: Compilation,
  s: string,
  segs: string[],
  at: DocPath,
  stage: StageScope | undefined,
): void {
  const head = segs[0]!;
  const candidates = [...c.names.keys()].filter((n) => !/\.\d+\./.test(n));
  if (stage) {
    candidates.push(
      ...stage.each,
      ...[...stage.each].map((n) => `prev.${n}`),
      "stage",
    );
  }
  candidates.push(...c.axes.map((a) => `matrix.${a.name}`), "seed");
  const guess = segs.length > 1 ? segs.slice(0, 2).join(".") : head;
  const m1 = didYouMean(head, candidates);
  c.diags.report(
    "reference",
    at,
    `Cannot resolve "${s}": no node named "${head}"${
      m1 || didYouMean(guess, candidates)
    }`,
  );
}

function _nodeRef(
  plain: string,
  path: FieldPath,
  raw: string,
  p: PlainNode,
): NodeRef {
  p.deps.add(plain);
  return new NodeRef(plain, path, raw);
}
