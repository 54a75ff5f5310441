import assert from "node:assert/strict";
import { compileExperiment } from "./experiment.ts";
import { ExperimentError } from "../errors.ts";
import type { InputRef } from "../refs.ts";
import { kinds } from "../testdata/kinds.ts";

const opts = { kinds, env: () => undefined };

/** The ablation shape: informed variants, a replay of another seed's informed configs, a pace copy. */
const CONTROLS = `experiment: controls
seed: 7
matrix:
  variant:
    - { name: none, engineer: { name: rules, context: none } }
    - { name: full, engineer: { name: rules, context: full } }
    - { name: replayed, engineer: { name: scripted, script: "$config[variant=full,seed=+1]" } }
    - { name: paced, engineer: { name: blind, pace: ["$prev.config[variant=full]", "$config[variant=full]"] } }
  seed: [1, 2, 3]
nodes:
  curriculum:
    kind: stages
    count: 3
    from: { config: { size: 4 } }
    each:
      config: { kind: test.add, with: { a: $stage, note: { prev: $prev.config, engineer: $matrix.variant.engineer, seed: $seed } } }
`;

function noteOf(exp: ReturnType<typeof compileExperiment>, id: string) {
  const n = exp.nodes[exp.byId.get(id)!]!;
  return n.params as { note: Record<string, unknown> };
}

function idOf(exp: ReturnType<typeof compileExperiment>, r: unknown): string {
  return exp.nodes[(r as InputRef).index]!.id;
}

Deno.test("pins: a matrix value's references read other variants of the same node, shifted seeds wrap around", () => {
  const exp = compileExperiment("exp.yaml", CONTROLS, opts);
  const replayed = noteOf(exp, "curriculum.1.config[variant=replayed,seed=3]");
  const script = (replayed.note.engineer as { script: unknown }).script;
  assert.equal(idOf(exp, script), "curriculum.1.config[variant=full,seed=1]");
  assert.deepEqual(
    (replayed.note.engineer as { name: string }).name,
    "scripted",
  );
  // the informed variants carry no references: plain values
  assert.deepEqual(
    noteOf(exp, "curriculum.2.config[variant=full,seed=2]").note.engineer,
    { name: "rules", context: "full" },
  );
  // pace: the informed run's previous and current config of the same seed;
  // at stage 0 $prev.config is the literal from value, the same everywhere
  const p0 = noteOf(exp, "curriculum.0.config[variant=paced,seed=2]").note
    .engineer as { pace: unknown[] };
  assert.deepEqual(p0.pace[0], { size: 4 });
  assert.equal(
    idOf(exp, p0.pace[1]),
    "curriculum.0.config[variant=full,seed=2]",
  );
  const p2 = noteOf(exp, "curriculum.2.config[variant=paced,seed=2]").note
    .engineer as { pace: unknown[] };
  assert.equal(
    idOf(exp, p2.pace[0]),
    "curriculum.1.config[variant=full,seed=2]",
  );
  // dependencies are graph edges, in topological order
  const i = exp.byId.get("curriculum.1.config[variant=replayed,seed=3]")!;
  const j = exp.byId.get("curriculum.1.config[variant=full,seed=1]")!;
  assert.ok(exp.nodes[i]!.deps.includes(j) && j < i);
  // every variant is expanded once per stage
  assert.equal(exp.nodes.length, 3 * 4 * 3);
  // the literal parameters show the reference as written
  assert.deepEqual(
    (exp.nodes[i]!.literal as { note: { engineer: unknown } }).note.engineer,
    { name: "scripted", script: "$config[variant=full,seed=+1]" },
  );
});

Deno.test("pins: errors name the reference, the axis or value, and the fix", () => {
  const errors = (text: string) => {
    try {
      compileExperiment("exp.yaml", text, opts);
    } catch (e) {
      if (e instanceof ExperimentError) {
        return e.diagnostics.map((d) => `${d.line}:${d.col} ${d.message}`);
      }
      throw e;
    }
    return assert.fail("expected errors");
  };
  const base = (ref: string) =>
    `experiment: x\nseed: 1\nmatrix:\n  ctx: [a, b]\n  seed: [1, 2]\nnodes:\n  n: { kind: test.add, with: { a: $seed, note: $matrix.ctx } }\n  m: { kind: test.add, with: { a: 1, note: "${ref}" } }\n`;
  assert.match(
    errors(base("$n[ctx=c]")).join("\n"),
    /8:\d+ .*axis ctx has no value "c"/,
  );
  assert.match(
    errors(base("$n[ctz=a]")).join("\n"),
    /no matrix axis named "ctz"; did you mean "ctx"/,
  );
  assert.match(errors(base("$n[ctx=a")).join("\n"), /malformed pins/);
  assert.match(errors(base("$seed[ctx=a]")).join("\n"), /\$seed is not a node/);
  assert.match(
    errors(base("$n[ctx=a,ctx=b]")).join("\n"),
    /axis ctx is pinned twice/,
  );
  // a cycle between variants: a reads b's, b reads a's
  const cyc =
    `experiment: x\nseed: 1\nmatrix:\n  v:\n    - { name: a, r: "$n[v=b]" }\n    - { name: b, r: "$n[v=a]" }\nnodes:\n  n: { kind: test.add, with: { a: 1, note: $matrix.v.r } }\n`;
  assert.match(errors(cyc).join("\n"), /cycle between variants: n \[v=[ab]\]/);
  // pinning an axis the node does not vary with
  const flat =
    `experiment: x\nseed: 1\nmatrix:\n  v: [a, b]\nnodes:\n  k: { kind: test.add, with: { a: 1 } }\n  n: { kind: test.add, with: { a: 1, note: [$matrix.v, "$k[v=a]"] } }\n`;
  assert.match(errors(flat).join("\n"), /k does not vary with axis v/);
  // an excluded target variant
  const excl =
    `experiment: x\nseed: 1\nmatrix:\n  v: [a, b]\n  exclude: [{ v: b }]\nnodes:\n  k: { kind: test.add, with: { a: 1, note: $matrix.v } }\n  n: { kind: test.add, with: { a: 1, note: "$k[v=b]" } }\n`;
  assert.match(errors(excl).join("\n"), /variant \[v=b\] of k does not exist/);
});

Deno.test("pins: $$ in a matrix value is a literal $, as in with:", () => {
  const exp = compileExperiment(
    "exp.yaml",
    `experiment: x\nseed: 1\nmatrix:\n  v:\n    - { name: a, s: "$$money" }\nnodes:\n  n: { kind: test.add, with: { a: 1, note: $matrix.v.s } }\n`,
    opts,
  );
  assert.equal((exp.nodes[0]!.params as { note: string }).note, "$money");
});
