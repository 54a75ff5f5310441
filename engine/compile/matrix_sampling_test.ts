import assert from "node:assert/strict";
import { compileExperiment } from "./experiment.ts";
import { computeKeys } from "../cache/keys.ts";
import { sampleAxis, unitSamples } from "./matrix_sampling.ts";
import { kinds } from "../testdata/kinds.ts";

const compile = (matrix: string, seed = 7) =>
  compileExperiment(
    "s.yaml",
    `experiment: s
seed: ${seed}
matrix:
${matrix}
nodes:
  a: { kind: test.add, with: { a: $matrix.lr, b: 1 } }
`,
    { kinds, env: () => undefined },
  );

Deno.test("sampled axes: seeded values in their range, rounded to 4 digits, the same on every call", () => {
  const lr = sampleAxis("lr", { log_uniform: [1e-4, 1e-2], samples: 8 }, 7);
  assert.deepEqual(
    lr,
    sampleAxis("lr", { log_uniform: [1e-4, 1e-2], samples: 8 }, 7),
  );
  assert.equal(lr.length, 8);
  for (const x of lr) {
    assert.ok(x >= 1e-4 && x <= 1e-2, String(x));
    assert.equal(Number(x.toPrecision(4)), x);
  }
  assert.notDeepEqual(
    lr,
    sampleAxis("lr", { log_uniform: [1e-4, 1e-2], samples: 8 }, 8),
    "another seed, other values",
  );
  const ints = sampleAxis("k", { int_uniform: [2, 5], samples: 200 }, 1);
  assert.deepEqual([...new Set(ints)].sort(), [2, 3, 4, 5]);
});

Deno.test("Latin hypercube: every stratum of every axis holds exactly one point", () => {
  for (const name of ["lr", "clip", "x"]) {
    const u = unitSamples(10, "lhs", 3, name);
    assert.deepEqual(
      u.map((x) => Math.floor(x * 10)).sort((a, b) => a - b),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
  }
  // Random draws need not (and with this seed do not) cover every stratum.
  const r = unitSamples(10, "random", 3, "lr");
  assert.ok(new Set(r.map((x) => Math.floor(x * 10))).size < 10);
});

Deno.test("sampled axes in a matrix: drawn jointly per (method, samples, seed), crossed with the grid; keys stay put when another axis is added", () => {
  const one = compile(
    "  lr: { log_uniform: [1e-4, 1e-2], samples: 4, method: lhs }\n  seed: [1, 2]\n",
  );
  assert.equal(one.nodes.length, 4);
  const two = compile(
    "  lr: { log_uniform: [1e-4, 1e-2], samples: 4, method: lhs }\n  clip: { uniform: [0.1, 0.3], samples: 4, method: lhs }\n  seed: [1, 2]\n",
  );
  // lr and clip are one 4-point sample (not 16 combinations) x 2 seeds
  const ids = two.nodes.map((n) => n.id);
  assert.equal(two.axes.find((a) => a.name === "clip")!.values.length, 4);
  assert.equal(
    new Set(two.nodes.map((n) => n.variant.lr)).size,
    4,
  );
  assert.equal(ids.length, 4, "a reads lr only: one copy per lr value");
  // lr's values (and so a's keys) are the same with clip added
  assert.deepEqual(
    two.axes[0]!.values.map((v) => v.value),
    one.axes[0]!.values.map((v) => v.value),
  );
  assert.deepEqual(
    computeKeys(two).map((k) => k.key).sort(),
    computeKeys(one).map((k) => k.key).sort(),
  );
  // the experiment's seed draws them unless the axis names its own
  const other = compile(
    "  lr: { log_uniform: [1e-4, 1e-2], samples: 4, method: lhs, seed: 7 }\n",
    99,
  );
  assert.deepEqual(
    other.axes[0]!.values.map((v) => v.value),
    one.axes[0]!.values.map((v) => v.value),
  );
});

Deno.test("sampled axes: a bad range or two ranges is one clear error at its place", () => {
  for (
    const [m, why] of [
      ["  lr: { log_uniform: [0, 1], samples: 4 }\n", /positive low end/],
      ["  lr: { uniform: [2, 1], samples: 4 }\n", /low < high/],
      [
        "  lr: { uniform: [0, 1], log_uniform: [1, 2], samples: 4 }\n",
        /names one range/,
      ],
      ["  lr: { uniform: [0, 1], samples: 0 }\n", /samples/],
    ] as const
  ) {
    assert.throws(() => compile(m), (e) => why.test((e as Error).message), m);
  }
});

Deno.test("a table over sampled axes: one axis of a jointly drawn group as rows fixes the others; a crossed axis must still be named", () => {
  const file = (tableExtra: string) =>
    `experiment: s
seed: 7
matrix:
  lr: { log_uniform: [1e-4, 1e-2], samples: 4, method: lhs }
  clip: { uniform: [0.1, 0.3], samples: 4, method: lhs }
  width: [1, 2]
  seed: [1, 2]
nodes:
  a: { kind: test.add, with: { a: $matrix.lr, b: $matrix.clip, more: [$matrix.width, $seed] } }
tables:
  - { name: t, node: a, rows: lr, columns: [{ label: v, path: value }], over: seed${tableExtra} }
`;
  const ok = compileExperiment("s.yaml", file(", where: { width: 1 }"), {
    kinds,
    env: () => undefined,
  });
  assert.equal(ok.tables.length, 1);
  assert.throws(
    () =>
      compileExperiment("s.yaml", file(""), { kinds, env: () => undefined }),
    (e: Error) =>
      /node a also varies with width; fix it with where/.test(e.message) &&
      !/varies with clip/.test(e.message),
  );
});
