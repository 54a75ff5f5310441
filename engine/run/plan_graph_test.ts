import assert from "node:assert/strict";
import { fromDot } from "ts-graphviz";
import { compileExperiment } from "../compile/experiment.ts";
import { planCommand } from "../cli/commands.ts";
import { collapseGraph, toDot, toMermaid } from "./plan_graph.ts";
import { runAll, tmpProject } from "../_test_util.ts";
import { kinds } from "../testdata/kinds.ts";

const YAML = `experiment: g-q
seed: 1
matrix:
  k: [1, 2]
  seed: [1, 2, 3]
nodes:
  start: { kind: test.add, with: { a: $seed } }
  s:
    kind: stages
    count: 4
    from: { p: $start, c: $start }
    each:
      p: { kind: test.add, with: { a: 1, note: [$prev.p, $prev.c] } }
      c: { kind: test.add, with: { a: $matrix.k, note: $p } }
  score: { kind: test.add, with: { a: 0, note: $s.p } }
`;

Deno.test("plan --format dot: the graph collapsed by stage and variant parses back as DOT with its boxes, cluster and edges", async () => {
  await using p = await tmpProject(YAML);
  const exp = compileExperiment(p.file, YAML, { kinds });
  // Run part of it so the boxes count statuses.
  await runAll(exp, p.store);
  const lines: string[] = [];
  const ctx = {
    kinds,
    cache: p.cache,
    output: { out: (l: string) => lines.push(l), err: () => {} },
    overrides: ["matrix.k=1,2,3"],
  };
  assert.equal(await planCommand(ctx, p.file, { format: "dot" }), 0);
  const g = fromDot(lines.join("\n"));
  assert.equal(g.id, "g-q");
  assert.deepEqual(g.nodes.map((n) => n.id), ["start", "score"]);
  assert.equal(g.subgraphs.length, 1);
  const cluster = g.subgraphs[0]!;
  assert.equal(cluster.id, "cluster_s");
  assert.equal(cluster.get("label"), "s: 4 stages");
  assert.deepEqual(cluster.nodes.map((n) => n.id), ["s.*.p", "s.*.c"]);
  // p: 3 seeds at stage 0, then 3 k x 3 seeds (it reads $prev.c): 30,
  // cached but for k=3 (the override's new value) after stage 0; c: 36,
  // k=3 to run at stage 0 and blocked after. ("\n" is DOT's line break.)
  assert.equal(
    cluster.nodes[0]!.attributes.get("label"),
    "p\\ntest.add ×30 · 21 cached, 9 blocked",
  );
  assert.equal(
    cluster.nodes[1]!.attributes.get("label"),
    "c\\ntest.add ×36 · 24 cached, 3 to run, 9 blocked",
  );
  const edges = g.edges.map((e) =>
    `${e.targets.map((t) => (t as { id: string }).id).join("->")}${
      e.attributes.get("style") === "dashed" ? " (next stage)" : ""
    }`
  );
  assert.deepEqual(edges.sort(), [
    "s.*.c->s.*.p (next stage)",
    "s.*.p->s.*.c",
    "s.*.p->s.*.p (next stage)",
    "s.*.p->score",
    "start->s.*.p",
  ]);
});

Deno.test("plan --format mermaid: boxes, a subgraph per stages node, dashed next-stage edges", () => {
  const exp = compileExperiment("x.yaml", YAML, { kinds });
  const m = toMermaid(collapseGraph(exp)).split("\n");
  assert.deepEqual(m, [
    "flowchart LR",
    '  n0["start<br/>test.add ×3"]',
    '  n3["score<br/>test.add ×6"]',
    '  subgraph c0["s: 4 stages"]',
    '    n1["p<br/>test.add ×21"]',
    '    n2["c<br/>test.add ×24"]',
    "  end",
    "  n0 --> n1",
    "  n1 --> n2",
    '  n1 -. "next stage" .-> n1',
    '  n2 -. "next stage" .-> n1',
    "  n1 --> n3",
  ]);
  // The DOT of the same graph has no stray newline inside a label.
  assert.ok(!/label="[^"]*\n/.test(toDot(collapseGraph(exp))));
});
