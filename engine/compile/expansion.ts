/**
 * Expansion: plain nodes in dependency order (cycles reported as paths),
 * the matrix axes each node varies with (directly or through its inputs),
 * and one graph node per distinct projection of the variants onto those
 * axes (minimal expansion), with matrix values and the seed substituted.
 *
 * @module
 */
import * as v from "valibot";
import type { GraphNode } from "./graph.ts";
import {
  getField,
  InputRef,
  MatrixRef,
  NodeRef,
  type Resolvable,
  SeedRef,
  type Template,
} from "../refs.ts";
import type { Json, NodeKind } from "../types.ts";
import { validateParams } from "./parameters.ts";
import type { AxisDef, Compilation, PlainNode } from "./plain_node.ts";
import type { DocPath } from "./source.ts";
import { Broken } from "./references.ts";
import { isFileReference } from "./file_refs.ts";

/** The plain nodes in a topological order, or null after reporting every cycle. */
export function orderNodes(c: Compilation): PlainNode[] | null {
  const indeg = new Map<string, number>();
  const users = new Map<string, string[]>();
  for (const p of c.plains.values()) {
    indeg.set(p.id, 0);
    users.set(p.id, []);
  }
  for (const p of c.plains.values()) {
    for (const d of p.deps) {
      if (!c.plains.has(d)) continue;
      indeg.set(p.id, indeg.get(p.id)! + 1);
      users.get(d)!.push(p.id);
    }
  }
  const queue = [...indeg].filter(([, n]) => n === 0).map(([id]) => id);
  const order: PlainNode[] = [];
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i]!;
    order.push(c.plains.get(id)!);
    for (const u of users.get(id)!) {
      const n = indeg.get(u)! - 1;
      indeg.set(u, n);
      if (n === 0) queue.push(u);
    }
  }
  if (order.length === c.plains.size) return order;
  _reportCycles(
    c,
    new Set([...indeg].filter(([, n]) => n > 0).map(([id]) => id)),
  );
  return null;
}

/** Reports each cycle among `left` (the nodes a topological sort could not place) once, as a path. */
function _reportCycles(c: Compilation, left: ReadonlySet<string>): void {
  const reported = new Set<string>();
  for (const start of left) {
    if (reported.has(start)) continue;
    const stack: string[] = [];
    const onStack = new Map<string, number>();
    let cur: string | undefined = start;
    while (cur !== undefined && !onStack.has(cur)) {
      onStack.set(cur, stack.length);
      stack.push(cur);
      cur = [...c.plains.get(cur)!.deps].find((d) => left.has(d));
    }
    if (cur === undefined) continue;
    const cycle = stack.slice(onStack.get(cur)!);
    if (cycle.some((x) => reported.has(x))) continue;
    for (const x of cycle) reported.add(x);
    const p = c.plains.get(cycle[0]!)!;
    c.diags.report(
      "cycle",
      [...p.at, "with"],
      `cycle: ${
        [...cycle, cycle[0]].join(" -> ")
      } (a node cannot depend on itself)`,
    );
  }
}

/**
 * Sets `axes` of every node: the axes it reads directly plus those of its
 * inputs. A pinned input contributes its axes but those pinned to a fixed
 * value; an axis pinned relatively (`+1`) is one the node varies with.
 * Pinned inputs may point back (another variant of the node itself), so
 * this runs to a fixed point.
 */
export function assignAxes(c: Compilation, order: readonly PlainNode[]): void {
  const axisOrder = c.axes.map((a) => a.name);
  const hasSeedAxis = axisOrder.includes("seed");
  for (let changed = true; changed;) {
    changed = false;
    for (const p of order) {
      const set = new Set<string>(p.axes);
      if (p.hasMatrix) _directAxes(p.template, set, hasSeedAxis);
      for (const d of p.deps) {
        for (const a of c.plains.get(d)?.axes ?? []) set.add(a);
      }
      for (const r of p.pinned) {
        const fixed = new Set(
          r.pins.filter((x) => x.label !== undefined).map((x) => x.axis),
        );
        for (const a of c.plains.get(r.node)?.axes ?? []) {
          if (!fixed.has(a)) set.add(a);
        }
        for (const x of r.pins) if (x.shift !== undefined) set.add(x.axis);
      }
      const axes = axisOrder.filter((a) => set.has(a));
      if (axes.length !== p.axes.length) {
        p.axes = axes;
        changed = true;
      }
    }
  }
}

/** The expanded graph. */
export interface ExpandedGraph {
  /** Nodes in a topological order. */
  readonly nodes: GraphNode[];
  /** Expanded id -> index. */
  readonly byId: Map<string, number>;
}

/** Expands the ordered plain nodes over `variants`. */
export function expandGraph(
  c: Compilation,
  order: readonly PlainNode[],
  variants: readonly Record<string, string>[],
  baseSeed: number,
): ExpandedGraph {
  const graph: ExpandedGraph = { nodes: [], byId: new Map() };
  const x: _Expansion = {
    c,
    graph,
    baseSeed,
    axisByName: new Map(c.axes.map((a) => [a.name, a])),
    projections: _allProjections(order, variants),
    instances: new Map(order.map((p) => [p.id, new Map()])),
    building: new Set(),
  };
  for (const p of order) {
    for (const [pk, proj] of x.projections.get(p.id)!) {
      _instanceOf(x, p, pk, proj);
    }
  }
  return graph;
}

/**
 * The graph node of `p` for one projection, made first if need be (a pinned
 * reference can need a variant before plain order reaches it); -1 after
 * reporting a cycle between variants.
 */
function _instanceOf(
  x: _Expansion,
  p: PlainNode,
  pk: string,
  proj: Record<string, string>,
): number {
  const have = x.instances.get(p.id)!.get(pk);
  if (have !== undefined) return have;
  const key = `${p.id}\u0000${pk}`;
  if (x.building.has(key)) {
    x.c.diags.report(
      "cycle",
      [...p.at, "with"],
      `cycle between variants: ${p.id} [${
        Object.entries(proj).map(([a, l]) => `${a}=${l}`).join(",")
      }] reads itself through pinned references (a node cannot depend on itself)`,
    );
    return -1;
  }
  x.building.add(key);
  const index = _instance(x, p, proj);
  x.building.delete(key);
  x.instances.get(p.id)!.set(pk, index);
  return index;
}

interface _Expansion {
  readonly c: Compilation;
  readonly graph: ExpandedGraph;
  readonly baseSeed: number;
  readonly axisByName: ReadonlyMap<string, AxisDef>;
  /** plain id -> projection key -> its projection, for the variants that exist */
  readonly projections: ReadonlyMap<
    string,
    Map<string, Record<string, string>>
  >;
  /** plain id -> projection key -> index */
  readonly instances: Map<string, Map<string, number>>;
  /** Instances being made (plain id and projection key), to catch cycles. */
  readonly building: Set<string>;
}

/** The distinct projections of `variants` onto the node's axes, by projection key. */
function _projections(
  axes: readonly string[],
  variants: readonly Record<string, string>[],
): Map<string, Record<string, string>> {
  const out = new Map<string, Record<string, string>>();
  for (const vt of variants) {
    const proj: Record<string, string> = {};
    for (const a of axes) proj[a] = vt[a]!;
    const k = axes.map((a) => proj[a]).join("\u0000");
    if (!out.has(k)) out.set(k, proj);
  }
  return out;
}

/**
 * The projections of every plain node, computed once per distinct list of
 * axes: a matrix of tens of thousands of variants over a hundred plain
 * nodes (most sharing a few axis lists) is otherwise a pass over every
 * variant per node. The maps are shared between nodes and only read.
 */
function _allProjections(
  order: readonly PlainNode[],
  variants: readonly Record<string, string>[],
): Map<string, Map<string, Record<string, string>>> {
  const byAxes = new Map<string, Map<string, Record<string, string>>>();
  const out = new Map<string, Map<string, Record<string, string>>>();
  for (const p of order) {
    const sig = p.axes.join("\u0000");
    let m = byAxes.get(sig);
    if (!m) byAxes.set(sig, m = _projections(p.axes, variants));
    out.set(p.id, m);
  }
  return out;
}

/** Adds the graph node of `p` for one projection; returns its index. */
function _instance(
  x: _Expansion,
  p: PlainNode,
  proj: Record<string, string>,
): number {
  const kind = x.c.kinds.get(p.kindName);
  const id = p.axes.length === 0
    ? p.id
    : `${p.id}[${p.axes.map((a) => `${a}=${proj[a]}`).join(",")}]`;
  const deps = new Set<number>();
  let skipped: string | undefined;
  for (const a of p.axes) {
    const val = x.axisByName.get(a)!.values.find((y) => y.label === proj[a])!;
    const missing = val.requiresEnv.find((n) => !x.c.env(n));
    if (missing && !skipped) skipped = `${missing} not set`;
  }
  const params = _substitute(x, p.template, proj, deps, [...p.at, "with"]);
  for (const d of deps) skipped ??= x.graph.nodes[d]!.skipped;
  if (kind && p.hasMatrix) {
    validateParams(
      x.c,
      kind,
      params,
      [...p.at, "with"],
      p.axes.length ? ` (in ${id})` : "",
    );
  }
  const index = x.graph.nodes.length;
  x.graph.nodes.push({
    index,
    id,
    plain: p.id,
    group: p.group,
    ...(p.stage ? { stage: { index: p.stage.index, name: p.stage.name } } : {}),
    kind: kind ?? _MISSING,
    variant: proj,
    deps: [...deps],
    params,
    literal: _literal(p.template, params, proj, (r) => isFileReference(x.c, r)),
    ...(skipped ? { skipped } : {}),
  });
  x.graph.byId.set(id, index);
  return index;
}

/** The template with matrix values and the seed of `proj` substituted and node references as inputs. */
function _substitute(
  x: _Expansion,
  t: Template,
  proj: Record<string, string>,
  deps: Set<number>,
  at: DocPath,
): Resolvable {
  if (t instanceof NodeRef) {
    const idx = _target(x, t, proj, at);
    if (idx < 0) return null;
    deps.add(idx);
    return new InputRef(idx, t.path);
  }
  if (t instanceof SeedRef) {
    const ax = x.axisByName.get("seed");
    return ax
      ? ax.values.find((y) => y.label === proj.seed)!.value
      : x.baseSeed;
  }
  if (t instanceof MatrixRef) {
    const embedded = t.embedded.get(proj[t.axis]!);
    if (embedded !== undefined) return _substitute(x, embedded, proj, deps, at);
    return _matrixValue(x, t, proj);
  }
  if (t === null || typeof t !== "object") return t;
  if (t instanceof Broken) return null;
  if (Array.isArray(t)) return t.map((y) => _substitute(x, y, proj, deps, at));
  const out: { [k: string]: Resolvable } = {};
  for (const [k, y] of Object.entries(t)) {
    out[k] = _substitute(x, y, proj, deps, at);
  }
  return out;
}

/** The graph node a node reference reads in variant `proj` (pins applied); -1 after reporting. */
function _target(
  x: _Expansion,
  t: NodeRef,
  proj: Record<string, string>,
  at: DocPath,
): number {
  const dp = x.c.plains.get(t.node)!;
  const want: Record<string, string> = { ...proj };
  for (const pin of t.pins) {
    if (pin.label !== undefined) want[pin.axis] = pin.label;
    else {
      const labels = x.axisByName.get(pin.axis)!.values.map((v) => v.label);
      const i = labels.indexOf(proj[pin.axis]!);
      const n = labels.length;
      want[pin.axis] = labels[(((i + pin.shift!) % n) + n) % n]!;
    }
  }
  for (const pin of t.pins) {
    if (!dp.axes.includes(pin.axis)) {
      x.c.diags.report(
        "reference",
        at,
        `"${t.raw}": ${t.node} does not vary with axis ${pin.axis}, so there is no variant to pin`,
      );
      return -1;
    }
  }
  const dk = dp.axes.map((a) => want[a]).join("\u0000");
  const target = x.projections.get(t.node)?.get(dk);
  if (target === undefined) {
    x.c.diags.report(
      "reference",
      at,
      `"${t.raw}": the variant [${
        dp.axes.map((a) => `${a}=${want[a]}`).join(",")
      }] of ${t.node} does not exist (excluded by the matrix)`,
    );
    return -1;
  }
  return _instanceOf(x, dp, dk, target);
}

function _matrixValue(
  x: _Expansion,
  t: MatrixRef,
  proj: Record<string, string>,
): Json {
  const val =
    x.axisByName.get(t.axis)!.values.find((y) => y.label === proj[t.axis])!
      .value;
  const got = getField(val, t.path);
  if (got === undefined) {
    x.c.diags.report(
      "reference",
      t.at,
      `Cannot resolve "${t.raw}": the value "${
        proj[t.axis]
      }" of axis ${t.axis} has no field ${t.path.join(".")}`,
    );
    return null;
  }
  return got;
}

const _MISSING: NodeKind = {
  name: "(unknown)",
  description: "",
  params: v.unknown(),
  module: "",
  run() {
    return Promise.reject(new Error("unknown kind"));
  },
};

function _directAxes(
  t: Template,
  out: Set<string>,
  hasSeedAxis: boolean,
): void {
  if (t instanceof MatrixRef) {
    out.add(t.axis);
    for (const e of t.embedded.values()) _directAxes(e, out, hasSeedAxis);
  } else if (t instanceof SeedRef) {
    if (hasSeedAxis) out.add("seed");
  } else if (t instanceof NodeRef || t === null || typeof t !== "object") {
    return;
  } else if (Array.isArray(t)) {
    for (const x of t) _directAxes(x, out, hasSeedAxis);
  } else for (const x of Object.values(t)) _directAxes(x, out, hasSeedAxis);
}

/**
 * The parameters as the kind's fingerprint sees them: node references as
 * written (their values are not known before running), matrix and seed
 * references replaced by this variant's values; file references
 * (`NodeKind.files`) left out.
 */
function _literal(
  t: Template,
  resolved: Resolvable,
  proj: Record<string, string>,
  isFile: (ref: NodeRef) => boolean,
): Json {
  if (t instanceof NodeRef) return isFile(t) ? null : t.raw;
  if (t instanceof MatrixRef) {
    const embedded = t.embedded.get(proj[t.axis]!);
    return embedded === undefined
      ? resolved as Json
      : _literal(embedded, resolved, proj, isFile);
  }
  if (t instanceof SeedRef) return resolved as Json;
  if (t instanceof Broken) return null;
  if (t === null || typeof t !== "object") return t;
  const r = resolved as Record<string, Resolvable> & Resolvable[];
  if (Array.isArray(t)) {
    return t.map((x, i) => _literal(x, r[i]!, proj, isFile));
  }
  const out: { [k: string]: Json } = {};
  for (const [k, x] of Object.entries(t)) {
    // A file reference has no value before its producer ran: the
    // fingerprint does not see the parameter (the key reads the producer's).
    if (x instanceof NodeRef && isFile(x)) continue;
    out[k] = _literal(x, r[k]!, proj, isFile);
  }
  return out;
}
