import { scaledMs } from "../_test_util.ts";
import assert from "node:assert/strict";
import { compileExperiment } from "./experiment.ts";
import { ExperimentError, ExperimentSyntaxError } from "../errors.ts";
import { computeKeys } from "../cache/keys.ts";
import { makePlan } from "../run/plan.ts";
import { runPlan } from "../run/scheduler.ts";
import { Store } from "../cache/store.ts";
import { kinds } from "../testdata/kinds.ts";
import { parseOverride } from "./overrides.ts";

const FILE = `experiment: demo
seed: 7
matrix:
  seed: [1, 2]
nodes:
  bench: { kind: test.add, with: { a: 1000, more: [1, 2] } }
  curriculum:
    kind: stages
    count: 2
    each:
      policy: { kind: test.add, with: { a: $seed, b: 5 } }
  score: { kind: test.add, with: { a: 0, note: $curriculum.policy } }
tables:
  - { name: t, node: score, rows: seed, columns: value.sum }
`;

function compile(sets: string[]) {
  return compileExperiment("exp.yaml", FILE, { kinds, overrides: sets });
}

function errorsOf(sets: string[]) {
  try {
    compile(sets);
  } catch (e) {
    if (e instanceof ExperimentError || e instanceof ExperimentSyntaxError) {
      return e.diagnostics.map((d) =>
        `${d.file}:${d.line}:${d.col}: ${d.message}`
      );
    }
    throw e;
  }
  assert.fail("expected an ExperimentError");
}

function paramsOf(exp: ReturnType<typeof compile>, id: string) {
  return exp.nodes[exp.byId.get(id)!]!.literal;
}

Deno.test("--set reaches a top-level scalar, a matrix axis, a node parameter, a stage parameter, a stage count, a list index and a table", () => {
  const sets = [
    "seed=9",
    "matrix.seed=3,4,5",
    "bench.with.a=12",
    "curriculum.each.policy.with.b=60000",
    "curriculum.count=3",
    "bench.with.more.1=7",
    "tables[0].columns=value.parts",
  ];
  const exp = compile([...sets]);
  assert.equal(exp.seed, 9);
  assert.deepEqual(exp.axes[0]!.values.map((v) => v.value), [3, 4, 5]);
  assert.deepEqual(paramsOf(exp, "bench"), { a: 12, more: [1, 7] });
  assert.deepEqual(paramsOf(exp, "curriculum.2.policy[seed=5]"), {
    a: 5,
    b: 60000,
  });
  assert.match(JSON.stringify(exp.tables[0]!.columns), /"value\.parts"/);
  // the overrides are recorded as given, in their order
  assert.deepEqual(exp.overrides, sets);
});

Deno.test("--set values are typed as YAML: numbers, strings, lists and mappings", () => {
  const exp = compile([
    "bench.with.note={x: [1, two], y: 0.5}",
    "matrix.seed=[8]",
    "nodes.score.with.b=3",
    "tables.0.name=renamed",
  ]);
  assert.deepEqual(paramsOf(exp, "bench"), {
    a: 1000,
    more: [1, 2],
    note: { x: [1, "two"], y: 0.5 },
  });
  assert.deepEqual(exp.variants, [{ seed: "8" }]);
  assert.equal((paramsOf(exp, "score[seed=8]") as { b: number }).b, 3);
  assert.equal(exp.tables[0]!.name, "renamed");
});

Deno.test("--set changes the keys of the node it changes and of what follows, nothing upstream", () => {
  const base = compile([]);
  const changed = compile(["curriculum.each.policy.with.b=6"]);
  const k0 = computeKeys(base), k1 = computeKeys(changed);
  const key = (exp: typeof base, k: typeof k0, id: string) =>
    k[exp.byId.get(id)!]!.key;
  assert.equal(key(base, k0, "bench"), key(changed, k1, "bench"));
  assert.notEqual(
    key(base, k0, "curriculum.0.policy[seed=1]"),
    key(changed, k1, "curriculum.0.policy[seed=1]"),
  );
  assert.notEqual(
    key(base, k0, "score[seed=2]"),
    key(changed, k1, "score[seed=2]"),
  );
});

Deno.test("--set errors sit at the column of the argument, with did-you-mean", () => {
  // A typo in a node name of the path.
  assert.deepEqual(errorsOf(["curriculum.each.polcy.with.b=1"]), [
    '--set curriculum.each.polcy.with.b=1:1:17: no key "polcy" in nodes.curriculum.each; did you mean "policy"? (there: policy)',
  ]);
  // A typo in the first segment: a node or a top-level key.
  assert.match(
    errorsOf(["bnch.with.a=1"])[0]!,
    /^--set bnch\.with\.a=1:1:1: no node or top-level key "bnch" in nodes; did you mean "bench"\?/,
  );
  // A typo in the last segment is an unknown parameter of the kind.
  assert.match(
    errorsOf(["bench.with.mor=[1]"])[0]!,
    /^--set bench\.with\.mor=\[1\]:1:12: unknown parameter of kind test\.add "mor"; did you mean "more"\?/,
  );
  // A value of the wrong type, at the value's column.
  assert.match(
    errorsOf(["curriculum.each.policy.with.b=abc"])[0]!,
    /^--set curriculum\.each\.policy\.with\.b=abc:1:31: b: Invalid type: Expected number but received "abc"$/,
  );
  // Inside a list value: at the element.
  assert.match(
    errorsOf(["bench.with.more=1,x"])[0]!,
    /^--set bench\.with\.more=1,x:1:19: more\.1: /,
  );
  // Not YAML.
  assert.match(
    errorsOf(["curriculum.count=[1"])[0]!,
    /^--set curriculum\.count=\[1:1:\d+: Flow sequence must end with a \]/,
  );
  // No "=", a path through a scalar, an index out of range, an empty value.
  assert.match(
    errorsOf(["seed"])[0]!,
    /--set seed:1:1: an override is PATH=VALUE/,
  );
  assert.match(
    errorsOf(["seed.x=1"])[0]!,
    /--set seed\.x=1:1:1: seed is a value \(7\), not a mapping or list: set it whole \(--set seed=VALUE\)/,
  );
  assert.match(
    errorsOf(["bench.with.more.5=1"])[0]!,
    /is a list of 2; "5" is not an index of it \(0 to 1\)/,
  );
  assert.match(errorsOf(["bench.with.a="])[0]!, /:1:14: no value after "="/);
  // Every override's problem at once.
  assert.equal(errorsOf(["bnch.with.a=1", "seed=x"]).length, 2);
});

Deno.test("a run records its overrides in the manifest", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-test-" });
  try {
    const exp = compile(["matrix.seed=3"]);
    const store = new Store(dir);
    const r = await runPlan(makePlan(exp, store), store, { jobs: 2 });
    assert.deepEqual(r.manifest.overrides, ["matrix.seed=3"]);
    const written = JSON.parse(await Deno.readTextFile(r.manifestPath));
    assert.deepEqual(written.overrides, ["matrix.seed=3"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("parseOverride: columns of the written segments, nodes implied", () => {
  const o = parseOverride("curriculum.each[0].x=1", ["seed", "nodes"]);
  assert.deepEqual(o.path, ["nodes", "curriculum", "each", 0, "x"]);
  assert.deepEqual(o.segmentCols, [1, 12, 16, 20]);
  assert.equal(o.valueCol, 22);
  assert.deepEqual(parseOverride("seed=1", ["seed"]).path, ["seed"]);
});

Deno.test("overrides: --set values within the limits alone but over them together are refused at once, in one line", () => {
  // Each value expands to 1,000 x 30 = 30,000 values: under a limit of
  // 50,000 alone, over it three together.
  const value = `[&a [${Array(1000).fill("x").join(",")}], ${
    Array(29).fill("*a").join(",")
  }]`;
  const limits = { yamlValues: 50_000 };
  const one = compileExperiment("exp.yaml", FILE, {
    kinds,
    limits,
    overrides: [`bench.with.note=${value}`],
  });
  assert.equal(one.nodes.length > 0, true);
  const t0 = performance.now();
  let diags: string[] = [];
  try {
    compileExperiment("exp.yaml", FILE, {
      kinds,
      limits,
      overrides: ["bench", "score", "bench"].map((n, i) =>
        `${n}.with.${i === 2 ? "more" : "note"}=${value}`
      ),
    });
    assert.fail("expected an ExperimentError");
  } catch (e) {
    if (!(e instanceof ExperimentError)) throw e;
    diags = e.diagnostics.map((d) =>
      `${d.file}:${d.line}:${d.col}: ${d.message}`
    );
  }
  assert.ok(performance.now() - t0 < scaledMs(5000));
  assert.equal(diags.length, 1);
  assert.match(
    diags[0]!,
    /^--set bench\.with\.more=\[&a \[x,x,.*… \(2,1\d\d characters\):1:1: the file with its 3 --set value\(s\) holds more than 50000 values once YAML aliases are expanded .*--limit yaml-values=N/,
  );
  // The label of a long value is cut, so the message stays one short line.
  assert.ok(diags[0]!.length < 500, diags[0]);
});
