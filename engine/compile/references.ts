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
  type Pin,
  type PinText,
  SeedRef,
  type Template,
} from "../refs.ts";
import type { DocPath } from "./source.ts";
import { didYouMean } from "../suggest.ts";
import type { Json } from "../types.ts";
import { isRecord } from "./diagnostics.ts";
import type { Compilation, PlainNode, StageScope } from "./plain_node.ts";

/** Stands for a reference that could not be resolved (already reported): a hole, never a value. */
export class Broken {}
/** The one {@linkcode Broken} value. */
export const BROKEN: Template = new Broken() as unknown as Template;

/**
 * Parses the references of a plain node's `with:` into its template and
 * records what it reads: plain ids in `deps`, pinned references (which
 * select other variants, possibly of the node itself) in `pinned`.
 */
export function buildTemplate(c: Compilation, p: PlainNode): void {
  p.template = _walk(c, p.rawWith, [...p.at, "with"], p, false);
  p.deps.clear();
  p.pinned.length = 0;
  _collectDeps(p.template, p);
}

function _collectDeps(t: Template, p: PlainNode): void {
  if (t instanceof NodeRef) {
    if (t.pins.length > 0) p.pinned.push(t);
    else p.deps.add(t.node);
  } else if (t instanceof MatrixRef) {
    for (const e of t.embedded.values()) _collectDeps(e, p);
  } else if (Array.isArray(t)) {
    for (const x of t) _collectDeps(x, p);
  } else if (t !== null && typeof t === "object" && !(t instanceof Broken)) {
    if (t instanceof SeedRef) return;
    for (const x of Object.values(t)) _collectDeps(x, p);
  }
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
  if (parsed.pins.length > 0) {
    if (head === "seed" || head === "matrix" || (stage && head === "stage")) {
      c.diags.report(
        "reference",
        at,
        `"${s}": pins ([axis=value]) select a variant of a node; $${head} is not a node`,
      );
      return BROKEN;
    }
    const pins = _pins(c, s, parsed.pins, at);
    if (pins === null) return BROKEN;
    return _pinned(_ref(c, s.slice(0, s.indexOf("[")), at, p, global), pins, s);
  }
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

/** Checks pins against the matrix: known axes, known labels, integer shifts. */
function _pins(
  c: Compilation,
  s: string,
  texts: readonly PinText[],
  at: DocPath,
): Pin[] | null {
  const out: Pin[] = [];
  for (const { axis, value } of texts) {
    const def = c.axes.find((a) => a.name === axis);
    if (!def) {
      c.diags.report(
        "reference",
        at,
        `"${s}": no matrix axis named "${axis}"${
          didYouMean(axis, c.axes.map((a) => a.name))
        }`,
      );
      return null;
    }
    if (out.some((x) => x.axis === axis)) {
      c.diags.report("reference", at, `"${s}": axis ${axis} is pinned twice`);
      return null;
    }
    if (/^[+-]\d+$/.test(value)) {
      out.push({ axis, shift: Number(value) });
    } else if (def.values.some((x) => x.label === value)) {
      out.push({ axis, label: value });
    } else {
      c.diags.report(
        "reference",
        at,
        `"${s}": axis ${axis} has no value "${value}"${
          didYouMean(value, def.values.map((x) => x.label))
        } (or write +k / -k for the value k places after / before this variant's)`,
      );
      return null;
    }
  }
  return out;
}

/** The node references of `t` (a reference, or a list of them for `$earlier`) with pins added. */
function _pinned(t: Template, pins: readonly Pin[], raw: string): Template {
  if (t instanceof NodeRef) return new NodeRef(t.node, t.path, raw, pins);
  if (Array.isArray(t)) return t.map((x) => _pinned(x, pins, raw));
  return t; // a literal (stage 0's from value): the same in every variant
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
  return new MatrixRef(
    axis.name,
    segs.slice(2),
    s,
    at,
    _embedded(c, axis.name, segs.slice(2), p),
  );
}

/**
 * References held in an axis's values (at `path`), parsed in the scope of
 * the node that reads them: per value label, the parsed template, for the
 * values that hold any.
 */
function _embedded(
  c: Compilation,
  axisName: string,
  path: FieldPath,
  p: PlainNode,
): Map<string, Template> {
  const out = new Map<string, Template>();
  const axis = c.axes.find((a) => a.name === axisName)!;
  axis.values.forEach((val, i) => {
    const sub = getField(val.value, path);
    if (sub === undefined || !_holdsReference(sub)) return;
    out.set(
      val.label,
      _walk(c, sub, ["matrix", axisName, i, ...path], p, false),
    );
  });
  return out;
}

function _holdsReference(x: Json): boolean {
  if (typeof x === "string") return x.startsWith("$");
  if (Array.isArray(x)) return x.some(_holdsReference);
  if (x !== null && typeof x === "object") {
    return Object.values(x).some(_holdsReference);
  }
  return false;
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
  _p: PlainNode,
): NodeRef {
  return new NodeRef(plain, path, raw);
}
