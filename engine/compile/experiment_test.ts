import assert from "node:assert/strict";
import { compileExperiment } from "./experiment.ts";
import { ExperimentError, ExperimentSyntaxError } from "../errors.ts";
import type { InputRef } from "../refs.ts";
import { kinds } from "../testdata/kinds.ts";

const opts = { kinds, env: (n: string) => (n === "HAVE_IT" ? "1" : undefined) };

/** The one diagnostic of the experiment `text` (there must be exactly one). */
function onlyError(text: string) {
  const ds = errorsOf(text);
  assert.equal(ds.length, 1, ds.map((d) => d.message).join("\n"));
  return ds[0]!;
}

function errorsOf(text: string) {
  try {
    compileExperiment("exp.yaml", text, opts);
  } catch (e) {
    if (e instanceof ExperimentError || e instanceof ExperimentSyntaxError) {
      return e.diagnostics;
    }
    throw e;
  }
  assert.fail("expected an ExperimentError");
}

const CURRICULUM = `experiment: demo
seed: 7
matrix:
  context: [none, full]
  seed: [1, 2, 3]
nodes:
  bench: { kind: test.add, with: { a: 1000 } }
  start: { kind: test.add, with: { a: $seed } }
  curriculum:
    kind: stages
    count: 3
    from: { config: { size: 4 }, policy: $start }
    each:
      policy: { kind: test.add, with: { a: 1, note: [$prev.policy, $prev.config] } }
      config: { kind: test.add, with: { a: $stage, note: { ctx: $matrix.context, hist: $earlier.config, p: $policy.sum } } }
  score: { kind: test.add, with: { a: 0, note: [$curriculum.policy, $bench.sum] } }
`;

Deno.test("stages unroll into plain nodes with $prev/$earlier/$stage", () => {
  const exp = compileExperiment("exp.yaml", CURRICULUM, opts);
  const ids = exp.nodes.map((n) => n.id);
  assert.ok(ids.includes("curriculum.0.policy[seed=1]"));
  assert.ok(ids.includes("curriculum.2.config[context=full,seed=3]"));
  // bench depends on no axis: shared, expanded once.
  assert.equal(ids.filter((i) => i.startsWith("bench")).length, 1);
  // start depends on $seed (matrix has a seed axis) only.
  assert.deepEqual(ids.filter((i) => i.startsWith("start")), [
    "start[seed=1]",
    "start[seed=2]",
    "start[seed=3]",
  ]);
  // Stage 0's policy depends on seed only (start + literal config); later stages on context too.
  assert.equal(
    ids.filter((i) => i.startsWith("curriculum.0.policy")).length,
    3,
  );
  assert.equal(
    ids.filter((i) => i.startsWith("curriculum.1.policy")).length,
    6,
  );
  assert.equal(ids.filter((i) => i.startsWith("score")).length, 6);
  // Topological order.
  for (const n of exp.nodes) for (const d of n.deps) assert.ok(d < n.index);
  const c2 = exp
    .nodes[exp.byId.get("curriculum.2.config[context=full,seed=3]")!]!;
  const note = (c2.params as Record<string, unknown>).note as Record<
    string,
    unknown
  >;
  assert.equal((c2.params as Record<string, unknown>).a, 2);
  assert.equal(note.ctx, "full");
  const hist = note.hist as InputRef[];
  assert.equal(hist.length, 2);
  assert.deepEqual(hist.map((r) => exp.nodes[r.index]!.id), [
    "curriculum.0.config[context=full,seed=3]",
    "curriculum.1.config[context=full,seed=3]",
  ]);
  assert.equal(
    exp.nodes[(note.p as InputRef).index]!.id,
    "curriculum.2.policy[context=full,seed=3]",
  );
  assert.deepEqual((note.p as InputRef).path, ["sum"]);
  // Stage 0: $prev.config is the literal from.config; $prev.policy is $start.
  const p0 = exp.nodes[exp.byId.get("curriculum.0.policy[seed=2]")!]!;
  const n0 = (p0.params as Record<string, unknown>).note as unknown[];
  assert.equal(exp.nodes[(n0[0] as InputRef).index]!.id, "start[seed=2]");
  assert.deepEqual(n0[1], { size: 4 });
  // $curriculum.policy is the last stage's policy.
  const score = exp.nodes[exp.byId.get("score[context=none,seed=1]")!]!;
  const sn = (score.params as Record<string, unknown>).note as InputRef[];
  assert.equal(
    exp.nodes[sn[0]!.index]!.id,
    "curriculum.2.policy[context=none,seed=1]",
  );
  assert.equal(exp.nodes[sn[1]!.index]!.id, "bench");
  assert.deepEqual(exp.plainAxes.get("score"), ["context", "seed"]);
});

Deno.test("$seed without a seed axis is the base seed; $$ escapes a literal $", () => {
  const exp = compileExperiment(
    "e.yaml",
    `experiment: x\nseed: 42\nnodes:\n  a: { kind: test.add, with: { a: $seed, note: ["$$HOME", $$x] } }\n`,
    opts,
  );
  assert.deepEqual(exp.nodes[0]!.params, { a: 42, note: ["$HOME", "$x"] });
});

Deno.test("matrix object values: name labels, fields, exclude, requires_env skips", () => {
  const exp = compileExperiment(
    "e.yaml",
    `experiment: x
seed: 1
matrix:
  engineer:
    - { name: rules, level: 1 }
    - { name: llm, level: 2, requires_env: [MISSING_KEY] }
    - { name: llm2, level: 3, requires_env: [HAVE_IT] }
  seed: [1, 2]
  exclude:
    - { engineer: rules, seed: 2 }
nodes:
  a: { kind: test.add, with: { a: $matrix.engineer.level, b: $seed } }
  b: { kind: test.add, with: { a: 1, note: $a } }
`,
    opts,
  );
  const ids = exp.nodes.map((n) => n.id);
  assert.ok(!ids.includes("a[engineer=rules,seed=2]"));
  assert.equal(exp.variants.length, 5);
  const llm = exp.nodes[exp.byId.get("a[engineer=llm,seed=1]")!]!;
  assert.equal(llm.skipped, "MISSING_KEY not set");
  assert.equal(
    exp.nodes[exp.byId.get("b[engineer=llm,seed=1]")!]!.skipped,
    "MISSING_KEY not set",
  );
  assert.equal(
    exp.nodes[exp.byId.get("a[engineer=llm2,seed=2]")!]!.skipped,
    undefined,
  );
  assert.deepEqual(
    exp.nodes[exp.byId.get("a[engineer=llm2,seed=2]")!]!.params,
    { a: 3, b: 2 },
  );
});

// ---- one test per error class: file:line:col and message -------------------

Deno.test("error: YAML syntax names line:col", () => {
  const [d, ...rest] = errorsOf(
    `experiment: x\nseed: 1\nnodes:\n  a: { kind: test.add, with: { a: 1 }\n`,
  );
  assert.equal(rest.length, 0);
  assert.equal(d!.code, "yaml");
  assert.equal(d!.file, "exp.yaml");
  assert.equal(d!.line, 5);
  assert.match(d!.message, /flow map|\}/i);
});

Deno.test("error: duplicate key is a YAML error at the second key", () => {
  const ds = errorsOf(
    `experiment: x\nseed: 1\nnodes:\n  a: { kind: test.add, with: { a: 1 } }\n  a: { kind: test.add, with: { a: 2 } }\n`,
  );
  assert.equal(ds[0]!.code, "yaml");
  assert.equal(ds[0]!.line, 5);
  assert.equal(ds[0]!.col, 3);
  assert.match(ds[0]!.message, /unique/i);
});

Deno.test("error: unknown top-level key with did-you-mean", () => {
  const d = onlyError(`experiment: x\nseed: 1\nnodse: {}\nnodes: {}\n`);
  assert.deepEqual([d.code, d.line, d.col], ["structure", 3, 1]);
  assert.match(
    d.message,
    /unknown top-level key "nodse"; did you mean "nodes"\?/,
  );
});

Deno.test("error: ill-typed seed and missing nodes", () => {
  const ds = errorsOf(`experiment: x\nseed: one\n`);
  const seed = ds.find((d) => d.path === "seed")!;
  assert.deepEqual([seed.line, seed.col], [2, 7]);
  assert.match(seed.message, /seed: .*number/);
  assert.ok(ds.some((d) => /nodes/.test(d.message)));
});

Deno.test("error: unknown kind with did-you-mean", () => {
  const d = onlyError(
    `experiment: x\nseed: 1\nnodes:\n  a:\n    kind: test.ad\n    with: { a: 1 }\n`,
  );
  assert.deepEqual([d.code, d.line, d.col], ["unknown-kind", 5, 11]);
  assert.equal(
    d.message,
    `unknown kind "test.ad"; did you mean "test.add"?`,
  );
});

Deno.test("error: unknown parameter with did-you-mean, at the key", () => {
  const d = onlyError(
    `experiment: x\nseed: 1\nnodes:\n  a:\n    kind: test.sleep\n    with:\n      ms: 1\n      stpes: 3\n`,
  );
  assert.deepEqual([d.code, d.line, d.col], ["unknown-param", 8, 7]);
  assert.match(
    d.message,
    /unknown parameter of kind test.sleep "stpes"; did you mean "steps"\?/,
  );
});

Deno.test("error: ill-typed parameter at the value; references are not type-checked early", () => {
  const d = onlyError(
    `experiment: x\nseed: 1\nnodes:\n  b: { kind: test.add, with: { a: 2 } }\n  a:\n    kind: test.add\n    with:\n      a: $b.sum\n      b: "three"\n`,
  );
  assert.deepEqual([d.code, d.line, d.col], ["invalid-param", 9, 10]);
  assert.match(
    d.message,
    /^b: Invalid type: Expected number but received "three"/,
  );
});

Deno.test("error: ill-typed parameter coming from a matrix value names the variant", () => {
  const d = onlyError(
    `experiment: x\nseed: 1\nmatrix:\n  n: [1, two]\nnodes:\n  a: { kind: test.add, with: { a: $matrix.n } }\n`,
  );
  assert.equal(d.code, "invalid-param");
  assert.equal(d.line, 6);
  assert.match(
    d.message,
    /a: Invalid type: Expected number but received "two" \(in a\[n=two\]\)/,
  );
});

Deno.test("error: dangling reference with did-you-mean", () => {
  const d = onlyError(
    `experiment: x\nseed: 1\nnodes:\n  env: { kind: test.add, with: { a: 1 } }\n  train: { kind: test.add, with: { a: 1, note: $envs } }\n`,
  );
  assert.deepEqual([d.code, d.line, d.col], ["reference", 5, 48]);
  assert.equal(
    d.message,
    `Cannot resolve "$envs": no node named "envs"; did you mean "env"?`,
  );
  assert.equal(d.path, "nodes.train.with.note");
});

Deno.test("error: unknown matrix axis and bad reference syntax", () => {
  const ds = errorsOf(
    `experiment: x\nseed: 1\nmatrix:\n  context: [a]\nnodes:\n  t:\n    kind: test.add\n    with:\n      a: 1\n      note: [$matrix.contxt, "$5 dollars"]\n`,
  );
  assert.equal(ds.length, 2);
  assert.deepEqual([ds[0]!.line, ds[0]!.col], [10, 14]);
  assert.match(
    ds[0]!.message,
    /no matrix axis named "contxt"; did you mean "context"\?/,
  );
  assert.deepEqual([ds[1]!.line, ds[1]!.col], [10, 30]);
  assert.match(ds[1]!.message, /not a valid reference.*write "\$\$5 dollars"/);
});

Deno.test("error: cycle names the path", () => {
  const d = onlyError(
    `experiment: x\nseed: 1\nnodes:\n  a: { kind: test.add, with: { a: 1, note: $b } }\n  b: { kind: test.add, with: { a: 1, note: $c.sum } }\n  c: { kind: test.add, with: { a: 1, note: $a } }\n`,
  );
  assert.equal(d.code, "cycle");
  assert.equal(d.line, 4);
  assert.match(
    d.message,
    /cycle: (a -> b -> c -> a|b -> c -> a -> b|c -> a -> b -> c)/,
  );
});

Deno.test("error: stages: $prev at stage 0 needs from, from keys must name each nodes", () => {
  const ds = errorsOf(`experiment: x
seed: 1
nodes:
  cur:
    kind: stages
    count: 2
    from: { polciy: 1 }
    each:
      policy: { kind: test.add, with: { a: 1, note: $prev.policy } }
      config: { kind: test.add, with: { a: 1, note: $prev.confg } }
`);
  const byCode = ds.map((d) => `${d.code}@${d.line}:${d.col} ${d.message}`);
  assert.equal(ds.length, 3, byCode.join("\n"));
  assert.ok(
    byCode.some((s) =>
      /^stages@7:13 from.polciy does not name a node of each; did you mean "policy"\?/
        .test(s)
    ),
    byCode.join("\n"),
  );
  assert.ok(
    byCode.some((s) =>
      /^reference@9:53 Cannot resolve "\$prev.policy" at stage 0: add from.policy/
        .test(s)
    ),
    byCode.join("\n"),
  );
  assert.ok(
    byCode.some((s) =>
      /^reference@10:53 .*"confg" is not one; did you mean "config"\?/.test(s)
    ),
    byCode.join("\n"),
  );
});

Deno.test("error: matrix exclude with unknown axis and value", () => {
  const ds = errorsOf(
    `experiment: x\nseed: 1\nmatrix:\n  context: [a, b]\n  exclude:\n    - { contex: a }\n    - { context: c }\nnodes:\n  t: { kind: test.add, with: { a: $matrix.context } }\n`,
  );
  const msgs = ds.map((d) => `${d.code}@${d.line}:${d.col} ${d.message}`);
  assert.ok(
    msgs.some((m) =>
      /^matrix@6:9 exclude names unknown axis "contex"; did you mean "context"\?/
        .test(m)
    ),
    msgs.join("\n"),
  );
  assert.ok(
    msgs.some((m) => /^matrix@7:18 axis context has no value "c"/.test(m)),
    msgs.join("\n"),
  );
});

Deno.test("error: tables: unknown node, unknown axis, free axis", () => {
  const ds = errorsOf(`experiment: x
seed: 1
matrix:
  context: [a, b]
  seed: [1, 2]
nodes:
  score: { kind: test.add, with: { a: $seed, note: $matrix.context } }
tables:
  - { name: t1, node: scor, rows: context, columns: value.sum }
  - { name: t2, node: score, rows: contxt, columns: value.sum, over: seed }
  - { name: t3, node: score, rows: context, columns: value.sum }
`);
  const msgs = ds.map((d) => `${d.code}@${d.line}:${d.col} ${d.message}`);
  assert.equal(ds.length, 3, msgs.join("\n"));
  assert.ok(
    msgs.some((m) =>
      /^table@9:23 table t1: no node named "scor"; did you mean "score"\?/.test(
        m,
      )
    ),
    msgs.join("\n"),
  );
  assert.ok(
    msgs.some((m) =>
      /^table@10:36 table t2: rows names unknown axis "contxt"; did you mean "context"\?/
        .test(m)
    ),
    msgs.join("\n"),
  );
  assert.ok(
    msgs.some((m) =>
      /^table@11:5 table t3: node score also varies with seed/.test(m)
    ),
    msgs.join("\n"),
  );
});

Deno.test("all errors of a file are reported in one pass", () => {
  const ds = errorsOf(`experiment: x
seed: 1
nodes:
  a: { kind: test.addd, with: { a: 1 } }
  b: { kind: test.add, with: { a: 1, c: 2 } }
  c: { kind: test.add, with: { a: $nope } }
  d: { kind: test.add, with: { a: "str" } }
`);
  assert.deepEqual(ds.map((d) => [d.code, d.line]), [
    ["unknown-kind", 4],
    ["unknown-param", 5],
    ["reference", 6],
    ["invalid-param", 7],
  ]);
});

Deno.test("ExperimentError message lists file:line:col per problem", () => {
  try {
    compileExperiment(
      "dir/exp.yaml",
      `experiment: x\nseed: 1\nnodes:\n  a: { kind: nope }\n`,
      opts,
    );
    assert.fail("no error");
  } catch (e) {
    assert.ok(e instanceof ExperimentError);
    assert.ok(e instanceof TypeError);
    assert.match(e.message, /dir\/exp\.yaml:4:14: unknown kind "nope"/);
  }
});

Deno.test("YAML anchors and merge keys share parameters", () => {
  const exp = compileExperiment(
    "e.yaml",
    `experiment: x
seed: 1
nodes:
  a: { kind: test.sleep, with: &common { ms: 5, steps: 2, tag: shared } }
  b:
    kind: test.sleep
    with:
      <<: *common
      tag: own
`,
    opts,
  );
  assert.deepEqual(exp.nodes[exp.byId.get("b")!]!.params, {
    ms: 5,
    steps: 2,
    tag: "own",
  });
  assert.deepEqual(exp.nodes[exp.byId.get("a")!]!.params, {
    ms: 5,
    steps: 2,
    tag: "shared",
  });
});

Deno.test("error: every duplicate key is reported, nested ones too", () => {
  const ds = errorsOf(
    `experiment: x\nseed: 1\nnodes:\n  a: { kind: test.add, with: { a: 1, a: 2 } }\n  b: { kind: test.add, with: { a: 1 } }\n  b: { kind: test.add }\n`,
  );
  assert.deepEqual(ds.map((d) => [d.code, d.line, d.col]), [["yaml", 4, 38], [
    "yaml",
    6,
    3,
  ]]);
  assert.equal(ds[0]!.message, `Map keys must be unique; "a" is repeated`);
});
