/**
 * The graph of an experiment collapsed for a picture: one box per node of
 * the file (all its variants together), the nodes of a `stages` node once
 * inside one cluster (all its stages together), with the edge from one stage
 * to the next drawn once. A plan of 1,731 nodes becomes about a dozen boxes.
 * Written as Graphviz DOT or Mermaid (`plan --format dot|mermaid`), and drawn
 * as SVG in the report.
 *
 * @module
 */
import type { Experiment, GraphNode } from "../compile/experiment.ts";
import type { PlanStatus } from "./plan.ts";

/** One box: a node of the file with all its variants (and stages). */
export interface CollapsedNode {
  /** Stable id: the plain id, with `*` for the stage index (`curriculum.*.policy`). */
  readonly id: string;
  /** Short name shown (`policy`). */
  readonly name: string;
  /** Kind name. */
  readonly kind: string;
  /** The `stages` node it belongs to, if any. */
  readonly cluster?: string;
  /** How many expanded nodes it stands for. */
  readonly count: number;
  /** How many of them per plan status (when a plan was given). */
  readonly status: Partial<Record<PlanStatus, number>>;
}

/** An edge between boxes. */
export interface CollapsedEdge {
  /** From box id. */
  readonly from: string;
  /** To box id. */
  readonly to: string;
  /** The edge goes from one stage to the next (`$prev`). */
  readonly nextStage: boolean;
}

/**
 * A collapsed graph.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type CollapsedGraph, toMermaid } from "./plan_graph.ts";
 * const g: CollapsedGraph = {
 *   experiment: "e",
 *   nodes: [
 *     { id: "a", name: "a", kind: "one", count: 1, status: {} },
 *     { id: "b", name: "b", kind: "one", count: 1, status: {} },
 *   ],
 *   edges: [{ from: "a", to: "b", nextStage: false }],
 *   clusters: new Map(),
 * };
 * assert.match(toMermaid(g), /n0 --> n1$/);
 * ```
 */
export interface CollapsedGraph {
  /** Experiment name. */
  readonly experiment: string;
  /** Boxes in the experiment's order. */
  readonly nodes: readonly CollapsedNode[];
  /** Edges, each once. */
  readonly edges: readonly CollapsedEdge[];
  /** `stages` nodes: id -> stage count. */
  readonly clusters: ReadonlyMap<string, number>;
}

/** The box id of an expanded node. */
export function collapsedId(n: GraphNode): string {
  return n.stage ? `${n.group}.*.${n.stage.name}` : n.plain;
}

/**
 * Collapses an experiment's graph (with each node's plan status, when
 * given, counted per box).
 *
 * @example
 * ```ts
 * import { collapseGraph } from "./plan_graph.ts";
 * import { compileExperiment } from "../compile/experiment.ts";
 * import { kinds } from "../testdata/kinds.ts";
 * import assert from "node:assert/strict";
 * const exp = compileExperiment("x.yaml", `experiment: x
 * seed: 1
 * matrix: { k: [1, 2, 3] }
 * nodes:
 *   a: { kind: test.add, with: { a: $matrix.k } }
 *   s: { kind: stages, count: 4, from: { v: $a }, each: { v: { kind: test.add, with: { a: 1, note: $prev.v } } } }
 * `, { kinds });
 * const g = collapseGraph(exp);
 * assert.deepEqual(g.nodes.map((n) => [n.id, n.count]), [["a", 3], ["s.*.v", 12]]);
 * assert.deepEqual(g.edges, [
 *   { from: "a", to: "s.*.v", nextStage: false },
 *   { from: "s.*.v", to: "s.*.v", nextStage: true },
 * ]);
 * ```
 */
export function collapseGraph(
  exp: Experiment,
  statusOf?: (n: GraphNode) => PlanStatus | undefined,
): CollapsedGraph {
  const boxes = new Map<string, {
    id: string;
    name: string;
    kind: string;
    cluster?: string;
    count: number;
    status: Partial<Record<PlanStatus, number>>;
  }>();
  const clusters = new Map<string, number>();
  const edges = new Map<string, CollapsedEdge>();
  for (const n of exp.nodes) {
    const id = collapsedId(n);
    let b = boxes.get(id);
    if (!b) {
      b = {
        id,
        name: n.stage ? n.stage.name : n.plain,
        kind: n.kind.name,
        ...(n.stage ? { cluster: n.group } : {}),
        count: 0,
        status: {},
      };
      boxes.set(id, b);
    }
    b.count++;
    if (n.stage) {
      clusters.set(
        n.group,
        Math.max(clusters.get(n.group) ?? 0, n.stage.index + 1),
      );
    }
    const st = statusOf?.(n);
    if (st) b.status[st] = (b.status[st] ?? 0) + 1;
    for (const d of n.deps) {
      const dep = exp.nodes[d]!;
      const from = collapsedId(dep);
      const nextStage = dep.stage !== undefined && n.stage !== undefined &&
        dep.group === n.group && dep.stage.index < n.stage.index;
      const k = `${from}\u0000${id}\u0000${nextStage}`;
      if (!edges.has(k)) edges.set(k, { from, to: id, nextStage });
    }
  }
  return {
    experiment: exp.name,
    nodes: [...boxes.values()],
    edges: [...edges.values()],
    clusters,
  };
}

/**
 * The second line of a box: kind, count, statuses.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { boxDetail } from "./plan_graph.ts";
 * assert.equal(
 *   boxDetail({ id: "s.*.v", name: "v", kind: "train", count: 4, status: { cached: 1, run: 3 } }),
 *   "train ×4 · 1 cached, 3 to run",
 * );
 * ```
 */
export function boxDetail(n: CollapsedNode): string {
  const parts = [`${n.kind} ×${n.count}`];
  const st = Object.entries(n.status).filter(([, c]) => c && c > 0);
  if (st.length) {
    parts.push(
      st.map(([s, c]) => `${c} ${s === "run" ? "to run" : s}`).join(", "),
    );
  }
  return parts.join(" · ");
}

function _dotString(s: string): string {
  return `"${
    s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")
  }"`;
}

/** Fill colour of a box by its statuses: all cached green, any failed-to-run/blocked amber, else blue. */
function _fill(n: CollapsedNode): string {
  const total = Object.values(n.status).reduce((a, b) => a + (b ?? 0), 0);
  if (total === 0) return "#ffffff";
  if ((n.status.cached ?? 0) === total) return "#d9f2d9";
  if ((n.status.skipped ?? 0) === total) return "#eeeeee";
  return "#dbe8fb";
}

/** Graphviz DOT of a collapsed graph (a `stages` node is a cluster; stage-to-stage edges dashed). */
export function toDot(g: CollapsedGraph): string {
  const lines = [
    `digraph ${_dotString(g.experiment)} {`,
    "  rankdir=LR;",
    '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11];',
    '  edge [color="#555555"];',
  ];
  const box = (n: CollapsedNode, indent: string) =>
    `${indent}${_dotString(n.id)} [label=${
      _dotString(`${n.name}\n${boxDetail(n)}`)
    }, fillcolor=${_dotString(_fill(n))}];`;
  for (const n of g.nodes) if (!n.cluster) lines.push(box(n, "  "));
  for (const [c, count] of g.clusters) {
    lines.push(`  subgraph ${_dotString(`cluster_${c}`)} {`);
    lines.push(
      `    label=${_dotString(`${c}: ${count} stage${count > 1 ? "s" : ""}`)};`,
    );
    lines.push('    style="rounded,dashed";');
    for (const n of g.nodes) if (n.cluster === c) lines.push(box(n, "    "));
    lines.push("  }");
  }
  for (const e of g.edges) {
    lines.push(
      `  ${_dotString(e.from)} -> ${_dotString(e.to)}${
        e.nextStage
          ? ' [style=dashed, label="next stage"]'
          : e.from === e.to
          ? ' [label="another variant"]'
          : ""
      };`,
    );
  }
  lines.push("}");
  return lines.join("\n");
}

/** Mermaid flowchart of a collapsed graph (ids made safe, labels quoted). */
export function toMermaid(g: CollapsedGraph): string {
  const ids = new Map(g.nodes.map((n, i) => [n.id, `n${i}`]));
  const label = (s: string) => s.replace(/"/g, "#quot;");
  const box = (n: CollapsedNode, indent: string) =>
    `${indent}${ids.get(n.id)}["${label(n.name)}<br/>${label(boxDetail(n))}"]`;
  const lines = ["flowchart LR"];
  for (const n of g.nodes) if (!n.cluster) lines.push(box(n, "  "));
  let ci = 0;
  for (const [c, count] of g.clusters) {
    lines.push(
      `  subgraph c${ci++}["${
        label(`${c}: ${count} stage${count > 1 ? "s" : ""}`)
      }"]`,
    );
    for (const n of g.nodes) if (n.cluster === c) lines.push(box(n, "    "));
    lines.push("  end");
  }
  for (const e of g.edges) {
    lines.push(
      `  ${ids.get(e.from)} ${
        e.nextStage
          ? '-. "next stage" .->'
          : e.from === e.to
          ? '-- "another variant" -->'
          : "-->"
      } ${ids.get(e.to)}`,
    );
  }
  return lines.join("\n");
}
