/**
 * The experiment's graph, collapsed by stage and variant (the engine's
 * `collapseGraph`, the same as `plan --format dot`), drawn as a static SVG
 * for the report: boxes in layers from left to right (longest path), a
 * `stages` node as a dashed frame around its boxes, stage-to-stage edges as
 * dashed arcs under the boxes.
 *
 * @module
 */
import { boxDetail, type CollapsedGraph } from "@envsmith/engine/run";
import { escapeHtml as esc } from "./escape.ts";

const BOX_W = 150, BOX_H = 42, GAP_X = 56, GAP_Y = 22, PAD = 28;

/** Layer of each box: the longest path to it over the edges within a stage. */
function _layers(g: CollapsedGraph): Map<string, number> {
  const layer = new Map<string, number>(g.nodes.map((n) => [n.id, 0]));
  const edges = g.edges.filter((e) => !e.nextStage && e.from !== e.to);
  // Boxes are in topological order of the expanded graph, so one pass per
  // box settles the longest paths (bounded: the graph has no cycle).
  for (let pass = 0; pass < g.nodes.length; pass++) {
    let moved = false;
    for (const e of edges) {
      const want = (layer.get(e.from) ?? 0) + 1;
      if (want > (layer.get(e.to) ?? 0)) {
        layer.set(e.to, want);
        moved = true;
      }
    }
    if (!moved) break;
  }
  return layer;
}

/**
 * The SVG of a collapsed graph (an `<svg>` element, with a `<title>`).
 *
 * @example
 * ```ts
 * import { dagSvg } from "./dag_svg.ts";
 * import assert from "node:assert/strict";
 * const svg = dagSvg({
 *   experiment: "x",
 *   nodes: [
 *     { id: "a", name: "a", kind: "generate", count: 1, status: {} },
 *     { id: "s.*.p", name: "p", kind: "train", cluster: "s", count: 4, status: {} },
 *   ],
 *   edges: [
 *     { from: "a", to: "s.*.p", nextStage: false },
 *     { from: "s.*.p", to: "s.*.p", nextStage: true },
 *   ],
 *   clusters: new Map([["s", 4]]),
 * });
 * assert.match(svg, /<g class="box" data-node="s\.\*\.p">/);
 * assert.match(svg, /s: 4 stages/);
 * ```
 */
export function dagSvg(g: CollapsedGraph): string {
  const layer = _layers(g);
  // A stages node's boxes take the top rows of the layers they span, so its
  // frame holds only them; other boxes in those layers go below it.
  const byLayer = new Map<number, { inside: string[]; outside: string[] }>();
  const span = new Map<string, [number, number]>();
  for (const n of g.nodes) {
    const l = layer.get(n.id)!;
    const at = byLayer.get(l) ?? { inside: [], outside: [] };
    (n.cluster ? at.inside : at.outside).push(n.id);
    byLayer.set(l, at);
    if (n.cluster) {
      const [a, b] = span.get(n.cluster) ?? [l, l];
      span.set(n.cluster, [Math.min(a, l), Math.max(b, l)]);
    }
  }
  const inSpan = (l: number) =>
    [...span.values()].some(([a, b]) => l >= a && l <= b);
  const clusterRows = Math.max(
    0,
    ...[...byLayer.values()].map((x) => x.inside.length),
  );
  const pos = new Map<string, { x: number; y: number }>();
  let rows = 0;
  for (const [l, { inside, outside }] of byLayer) {
    const first = inSpan(l) ? clusterRows : 0;
    const place = (id: string, row: number) =>
      pos.set(id, {
        x: PAD + l * (BOX_W + GAP_X),
        y: PAD + 20 + row * (BOX_H + GAP_Y) +
          (inSpan(l) && row >= clusterRows ? 24 : 0),
      });
    inside.forEach((id, i) => place(id, i));
    outside.forEach((id, i) => place(id, first + i));
    rows = Math.max(rows, first + outside.length, inside.length);
  }
  const layers = Math.max(1, ...[...byLayer.keys()].map((l) => l + 1));
  const width = PAD * 2 + layers * BOX_W + (layers - 1) * GAP_X;
  const height = PAD * 2 + 20 + rows * (BOX_H + GAP_Y) + 36;
  const out: string[] = [
    `<svg class="dag" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" font-family="system-ui,sans-serif"><title>${
      esc(`The graph of ${g.experiment}, collapsed by stage and variant`)
    }</title>`,
    `<defs><marker id="dag-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#6b7480"/></marker></defs>`,
  ];
  for (const [c, count] of g.clusters) {
    const members = g.nodes.filter((n) => n.cluster === c).map((n) =>
      pos.get(n.id)!
    );
    if (!members.length) continue;
    const x0 = Math.min(...members.map((p) => p.x)) - 12;
    const y0 = Math.min(...members.map((p) => p.y)) - 24;
    const x1 = Math.max(...members.map((p) => p.x)) + BOX_W + 12;
    const y1 = Math.max(...members.map((p) => p.y)) + BOX_H + 30;
    out.push(
      `<g class="cluster" data-cluster="${
        esc(c)
      }"><rect x="${x0}" y="${y0}" width="${x1 - x0}" height="${
        y1 - y0
      }" rx="10" fill="#f7f9fc" stroke="#9aa3b0" stroke-dasharray="5 4"/><text x="${
        x0 + 10
      }" y="${y0 + 16}" font-size="12" fill="#36404c" font-weight="600">${
        esc(`${c}: ${count} stage${count > 1 ? "s" : ""}`)
      }</text></g>`,
    );
  }
  for (const e of g.edges) {
    const a = pos.get(e.from), b = pos.get(e.to);
    if (!a || !b) continue;
    let d: string;
    if (e.nextStage || e.from === e.to) {
      // Under the boxes: from the bottom of one back to the bottom of the other.
      const x1 = a.x + BOX_W / 2 + 10, y1 = a.y + BOX_H;
      const x2 = b.x + BOX_W / 2 - 10, y2 = b.y + BOX_H;
      const dip = Math.max(y1, y2) + 22 + Math.abs(x1 - x2) * 0.08;
      d = `M${x1},${y1} C${x1},${dip} ${x2},${dip} ${x2},${y2 + 2}`;
    } else {
      const x1 = a.x + BOX_W, y1 = a.y + BOX_H / 2;
      const x2 = b.x - 2, y2 = b.y + BOX_H / 2;
      const mid = (x1 + x2) / 2;
      d = `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`;
    }
    out.push(
      `<path class="edge${
        e.nextStage ? " next-stage" : ""
      }" d="${d}" fill="none" stroke="#6b7480" stroke-width="1.3"${
        e.nextStage || e.from === e.to ? ' stroke-dasharray="4 3"' : ""
      } marker-end="url(#dag-arrow)"><title>${
        esc(
          `${e.from} → ${e.to}${
            e.nextStage
              ? " (next stage)"
              : e.from === e.to
              ? " (another variant)"
              : ""
          }`,
        )
      }</title></path>`,
    );
  }
  for (const n of g.nodes) {
    const p = pos.get(n.id)!;
    out.push(
      `<g class="box" data-node="${
        esc(n.id)
      }"><rect x="${p.x}" y="${p.y}" width="${BOX_W}" height="${BOX_H}" rx="7" fill="#fff" stroke="#0b5cad" stroke-width="1.2"/><text x="${
        p.x + 10
      }" y="${p.y + 17}" font-size="13" font-weight="600" fill="#1f2933">${
        esc(n.name)
      }</text><text x="${p.x + 10}" y="${
        p.y + 33
      }" font-size="11" fill="#5b6573">${esc(boxDetail(n))}</text></g>`,
    );
  }
  out.push(`</svg>`);
  return out.join("");
}
