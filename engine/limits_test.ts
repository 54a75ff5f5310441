import assert from "node:assert/strict";
import { join } from "node:path";
import { compileExperiment, loadExperiment } from "./compile/experiment.ts";
import {
  type Diagnostic,
  ExperimentError,
  ExperimentSyntaxError,
  UserError,
} from "./errors.ts";
import { DEFAULT_LIMITS, LIMITS, parseLimits } from "./limits.ts";
import { kinds } from "./testdata/kinds.ts";
import type { Limits } from "./limits.ts";
import { loadFactor, scaledMs } from "./_test_util.ts";

function diagnostics(text: string, limits?: Partial<Limits>): Diagnostic[] {
  try {
    compileExperiment("e.yaml", text, { kinds, ...(limits ? { limits } : {}) });
  } catch (e) {
    if (e instanceof ExperimentError || e instanceof ExperimentSyntaxError) {
      return [...e.diagnostics];
    }
    throw e;
  }
  assert.fail("expected the file to be refused");
}

/** The one diagnostic of `text`, checked to come within `ms`. */
function refused(text: string, ms = 2000, limits?: Partial<Limits>) {
  const t0 = performance.now();
  const ds = diagnostics(text, limits);
  const took = performance.now() - t0;
  // scaled to the machine's load: the bound is for milliseconds, not minutes
  const bound = scaledMs(ms);
  assert.ok(
    took < bound,
    `refused in ${took.toFixed(0)} ms (bound ${
      bound.toFixed(0)
    } ms at load factor ${loadFactor().toFixed(1)})`,
  );
  assert.equal(ds.length, 1, ds.map((d) => d.message).join("\n"));
  return ds[0]!;
}

const HEAD = "experiment: x\nseed: 1\n";

Deno.test("parseLimits: names, units, and a clear error for anything else", () => {
  assert.deepEqual(parseLimits("stages=20000, nodes=2M"), {
    stages: 20000,
    nodes: 2_000_000,
  });
  assert.deepEqual(parseLimits("file-bytes=8M,depth=100"), {
    fileBytes: 8 * 1024 * 1024,
    depth: 100,
  });
  assert.deepEqual(parseLimits(""), {});
  for (const bad of ["stage=3", "stages", "stages=-1", "stages=0", "x=1k"]) {
    assert.throws(
      () => parseLimits(bad),
      (e) =>
        e instanceof UserError && e.message.includes(bad) &&
        /expected NAME=N|positive integer/.test(e.message),
      bad,
    );
  }
  // Every limit has a name, a description and its default in DEFAULT_LIMITS.
  for (const l of LIMITS) assert.equal(DEFAULT_LIMITS[l.field], l.default);
  assert.equal(LIMITS.length, Object.keys(DEFAULT_LIMITS).length);
});

Deno.test("limits: stage count is checked before unrolling (count: 10^8 in milliseconds)", () => {
  const d = refused(
    HEAD +
      "nodes:\n  s:\n    kind: stages\n    count: 100000000\n    each:\n      a: { kind: test.add, with: { a: $stage } }\n",
    500,
  );
  assert.equal(d.code, "limit");
  assert.deepEqual([d.line, d.col], [6, 12]);
  assert.match(
    d.message,
    /count: 100,000,000 stages; a stages node is limited to 10,000; raise it with --limit stages=N/,
  );
  // Under the limit but too many nodes once unrolled.
  const n = refused(
    HEAD +
      "nodes:\n  s:\n    kind: stages\n    count: 9000\n    each:\n      a: { kind: test.add, with: { a: 1 } }\n      b: { kind: test.add, with: { a: 1 } }\n",
    2000,
    { nodes: 10000 },
  );
  assert.match(
    n.message,
    /unroll into 18,000 nodes; .*limited to 10,000 nodes/,
  );
  // Raised, it compiles.
  const exp = compileExperiment(
    "e.yaml",
    HEAD +
      "nodes:\n  s:\n    kind: stages\n    count: 12\n    each:\n      a: { kind: test.add, with: { a: $stage } }\n",
    { kinds, limits: { stages: 12 } },
  );
  assert.equal(exp.nodes.length, 12);
});

Deno.test("limits: a 10^6-variant matrix is refused before variants are listed", () => {
  const axes = Array.from(
    { length: 6 },
    (_, i) => `  a${i}: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]`,
  ).join("\n");
  const d = refused(
    HEAD +
      `matrix:\n${axes}\nnodes:\n  x: { kind: test.add, with: { a: $matrix.a0, note: [$matrix.a1, $matrix.a2, $matrix.a3, $matrix.a4, $matrix.a5] } }\n`,
    500,
  );
  assert.deepEqual([d.line, d.col, d.code], [3, 1, "limit"]);
  assert.match(
    d.message,
    /the matrix has 1,000,000 variants \(10 a0 x 10 a1 x 10 a2 x 10 a3 x 10 a4 x 10 a5\); a matrix is limited to 100,000/,
  );
});

Deno.test("limits: the node count is checked before the graph is built, naming the largest nodes", () => {
  const d = refused(
    HEAD +
      "matrix:\n  a: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n  b: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nnodes:\n  x: { kind: test.add, with: { a: $matrix.a, note: $matrix.b } }\n  y: { kind: test.add, with: { a: $matrix.a } }\n",
    500,
    { nodes: 100 },
  );
  assert.match(
    d.message,
    /expands to 110 nodes \(x: 100, y: 10\); an experiment is limited to 100; raise it with --limit nodes=N/,
  );
});

Deno.test("limits: $earlier over 3,000 stages is refused at the reference, in one line, before n²/2 references are made", () => {
  const d = refused(
    HEAD +
      "nodes:\n  s:\n    kind: stages\n    count: 3000\n    from: { c: 1 }\n    each:\n      c: { kind: test.add, with: { a: 1, note: $earlier.c } }\n",
    3000,
  );
  assert.equal(d.code, "limit");
  assert.equal(d.line, 9);
  assert.match(
    d.message,
    /"\$earlier\.c" at stage 632 brings the references between nodes past 200,000 .*raise it with --limit references=N/,
  );
  // Within the limit (or raised), it compiles.
  const ok = compileExperiment(
    "e.yaml",
    HEAD +
      "nodes:\n  s:\n    kind: stages\n    count: 30\n    from: { c: 1 }\n    each:\n      c: { kind: test.add, with: { a: 1, note: $earlier.c } }\n",
    { kinds, limits: { references: 435 } },
  );
  assert.equal(ok.nodes.length, 30);
  // References copied by the matrix count per copy.
  const m = refused(
    HEAD +
      "matrix:\n  a: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nnodes:\n  x: { kind: test.add, with: { a: 1 } }\n  y: { kind: test.add, with: { a: $matrix.a, note: [$x.sum, $x.sum, $x.sum] } }\n",
    500,
    { references: 20 },
  );
  assert.match(
    m.message,
    /expands to 30 references between nodes \(y: 30, x: 0\); an experiment is limited to 20/,
  );
});

Deno.test("limits: file size, alias bombs, depth and long strings each get one located line", () => {
  const big = HEAD + "description: " + "x".repeat(5 * 1024 * 1024) + "\n";
  const size = refused(big, 500);
  assert.match(
    size.message,
    /the file is 5\.0 MB; experiment files are limited to 1\.0 MB .*--limit file-bytes=N/,
  );
  const bomb = HEAD + "nodes: {}\n" +
    ["a: &a [x, x, x, x, x, x, x, x, x]"].concat(
      "bcdefg".split("").map((k, i) =>
        `${k}: &${k} [${Array(9).fill("*" + "abcdefg"[i]).join(", ")}]`
      ),
    ).map((l) => `z${l.slice(0, 1)}${l.slice(1)}`).join("\n") + "\n";
  const alias = refused(bomb, 1000);
  assert.equal(alias.code, "limit");
  assert.match(alias.message, /aliases .* expanded more than 10000 times/);
  assert.equal(alias.line, 5, "at the first alias");
  // Deep nesting: refused at the same place every time, before the YAML
  // parser's own recursion could overflow.
  const deep = HEAD + "nodes:\n  x: { kind: test.add, with: { a: 1, note: " +
    "[".repeat(20000) + "]".repeat(20000) + " } }\n";
  const first = refused(deep, 3000);
  assert.match(first.message, /nested deeper than 64 levels/);
  const again = refused(deep, 3000);
  assert.deepEqual([again.line, again.col], [first.line, first.col]);
  assert.deepEqual([first.line, first.col], [4, 104]);
  // Deep through aliases.
  const chain = Array.from(
    { length: 10 },
    (_, i) =>
      `z${i}: &z${i} ${"[".repeat(8)}${i === 0 ? 1 : `*z${i - 1}`}${
        "]".repeat(8)
      }`,
  ).join("\n");
  assert.match(
    refused(HEAD + "nodes: {}\n" + chain + "\n").message,
    /nested deeper than 64 levels once YAML aliases are expanded/,
  );
  const long = refused(
    HEAD + "description: " + "y".repeat(200_000) + "\nnodes: {}\n",
  );
  assert.deepEqual([long.line, long.col], [3, 14]);
  assert.match(
    long.message,
    /a string of 200000 characters; strings are limited to 100000 characters/,
  );
});

Deno.test("values JSON cannot carry exactly are refused at file:line:col, never changed", () => {
  const ds = diagnostics(
    HEAD +
      "nodes:\n  x: { kind: test.add, with: { a: 1, note: { nan: .nan, minf: -.inf, inf: .Inf, nz: -0, big: 123456789012345678901234567890, hex: 0x1FFFFFFFFFFFFFFF, tiny: 1e-400, ok: [9007199254740991, 0.1, 1e300, -1.5, 0, '.nan', \"-0\"] } } }\n",
  );
  assert.deepEqual(
    ds.map((d) => [d.line, d.col, d.code]),
    [51, 63, 75, 85, 94, 131, 157].map((col) => [4, col, "value"]),
  );
  assert.match(ds[0]!.message, /\.nan is NaN, which JSON cannot carry/);
  assert.match(ds[1]!.message, /-\.inf is minus infinity/);
  assert.match(ds[3]!.message, /-0 is negative zero, which JSON carries as 0/);
  assert.match(
    ds[4]!.message,
    /the integer 123456789012345678901234567890 is beyond 2\^53 .* carried as 1\.2345678901234568e\+29; write it as a string/,
  );
  assert.match(ds[6]!.message, /1e-400 is too small .* carried as 0/);
  // The fine ones compile, exactly.
  const exp = compileExperiment(
    "e.yaml",
    HEAD +
      "nodes:\n  x: { kind: test.add, with: { a: 1, note: [9007199254740991, 0.1, '.nan', \"-0\"] } }\n",
    { kinds },
  );
  assert.deepEqual((exp.nodes[0]!.params as { note: unknown }).note, [
    9007199254740991,
    0.1,
    ".nan",
    "-0",
  ]);
});

Deno.test("a __proto__ key is refused (it would replace the prototype, not add a key)", () => {
  const d = refused(
    HEAD +
      "nodes:\n  x: { kind: test.add, with: { a: 1, note: { __proto__: { polluted: 1 } } } }\n",
  );
  assert.deepEqual([d.line, d.col, d.code], [4, 46, "value"]);
  assert.match(d.message, /key named "__proto__" cannot be used/);
});

Deno.test("a count that is not a number is reported once", () => {
  const ds = diagnostics(
    HEAD +
      "nodes:\n  s:\n    kind: stages\n    count: -1.5\n    each:\n      a: { kind: test.add, with: { a: 1 } }\n",
  );
  assert.equal(ds.length, 1, ds.map((d) => d.message).join("\n"));
  assert.match(ds[0]!.message, /count: /);
  assert.equal(
    diagnostics(
      HEAD +
        "nodes:\n  s:\n    kind: stages\n    count: .nan\n    each:\n      a: { kind: test.add, with: { a: 1 } }\n",
    ).length,
    1,
  );
});

Deno.test("loadExperiment refuses a file over the size limit before reading it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "big.yaml");
    // A sparse 60 MB file: reading it would take memory and time.
    const f = await Deno.open(file, { create: true, write: true });
    await f.truncate(60 * 1024 * 1024);
    f.close();
    const t0 = performance.now();
    await assert.rejects(
      () => loadExperiment(file, { kinds }),
      (e) =>
        e instanceof ExperimentError &&
        /big\.yaml:1:1: the file is 60\.0 MB; experiment files are limited to 1\.0 MB/
          .test(e.message),
    );
    assert.ok(performance.now() - t0 < scaledMs(500));
    // A small file under a lowered limit is refused too; raised, it loads.
    const small = join(dir, "small.yaml");
    await Deno.writeTextFile(small, HEAD + "nodes: {}\n");
    await assert.rejects(
      () => loadExperiment(small, { kinds, limits: { fileBytes: 10 } }),
      /limited to 0\.0 MB/,
    );
    assert.equal(
      (await loadExperiment(small, { kinds, limits: { fileBytes: 1000 } }))
        .name,
      "x",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
