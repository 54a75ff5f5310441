import assert from "node:assert/strict";
import * as v from "valibot";
import { join } from "node:path";
import { compileExperiment } from "../compile/experiment.ts";
import { computeKeys, explainChange, seedOfKey } from "./keys.ts";
import { clearDigestCache, codeDigest } from "./digest.ts";
import { canonicalJson } from "../canonical.ts";
import { toFileUrl } from "../paths.ts";
import { kinds } from "../testdata/kinds.ts";
import type { NodeKind } from "../types.ts";

const opts = { kinds };

function keysOf(text: string) {
  const exp = compileExperiment("e.yaml", text, opts);
  const keys = computeKeys(exp);
  return new Map(exp.nodes.map((n, i) => [n.id, keys[i]!]));
}

const BASE = `experiment: k
seed: 3
matrix:
  lr: [1, 2]
nodes:
  a: { kind: test.add, with: { a: 1, b: 2 } }
  b: { kind: test.add, with: { a: $matrix.lr, note: { x: $a.sum, y: [1, 2] } } }
  c: { kind: test.add, with: { a: 5, note: $b } }
  d: { kind: test.add, with: { a: 6, note: $a } }
`;

Deno.test("canonical JSON sorts keys and rejects non-JSON", () => {
  assert.equal(
    canonicalJson({ z: 1, a: { c: [1, "x"], b: null } }),
    '{"a":{"b":null,"c":[1,"x"]},"z":1}',
  );
  assert.throws(
    () => canonicalJson({ a: Infinity }),
    /Cannot hash the number Infinity at a/,
  );
  assert.throws(() => canonicalJson({ a: new Date() }), /class Date/);
});

Deno.test("reordering YAML keys does not change keys", () => {
  const reordered = `nodes:
  d: { with: { note: $a, a: 6 }, kind: test.add }
  c: { kind: test.add, with: { note: $b, a: 5 } }
  b:
    with:
      note: { y: [1, 2], x: $a.sum }
      a: $matrix.lr
    kind: test.add
  a: { with: { b: 2, a: 1 }, kind: test.add }
matrix:
  lr: [1, 2]
seed: 3
experiment: k
`;
  const k1 = keysOf(BASE), k2 = keysOf(reordered);
  assert.equal(k1.size, 6);
  for (const [id, k] of k1) {
    assert.equal(k2.get(id)!.key, k.key, id);
    assert.ok(k.cacheable);
    assert.match(k.key, /^[0-9a-f]{64}$/);
  }
});

Deno.test("changing one parameter invalidates exactly that node and its descendants", () => {
  const k1 = keysOf(BASE);
  const k2 = keysOf(BASE.replace("y: [1, 2]", "y: [1, 3]"));
  const changed = [...k1].filter(([id, k]) => k2.get(id)!.key !== k.key).map((
    [id],
  ) => id).sort();
  assert.deepEqual(changed, ["b[lr=1]", "b[lr=2]", "c[lr=1]", "c[lr=2]"]);
  const k3 = keysOf(BASE.replace("b: 2 }", "b: 4 }"));
  const changed3 = [...k1].filter(([id, k]) => k3.get(id)!.key !== k.key).map((
    [id],
  ) => id).sort();
  assert.deepEqual(changed3, [
    "a",
    "b[lr=1]",
    "b[lr=2]",
    "c[lr=1]",
    "c[lr=2]",
    "d",
  ]);
  // Different matrix values give different keys; the same value the same key.
  assert.notEqual(k1.get("b[lr=1]")!.key, k1.get("b[lr=2]")!.key);
});

Deno.test("a reference's field path enters the key: two nodes reading different fields of one input differ", () => {
  const k = keysOf(`experiment: f
seed: 1
nodes:
  a: { kind: test.add, with: { a: 1, b: 2 } }
  whole: { kind: test.add, with: { a: 0, note: $a } }
  sum: { kind: test.add, with: { a: 0, note: $a.sum } }
  parts: { kind: test.add, with: { a: 0, note: $a.parts } }
`);
  const keys = ["whole", "sum", "parts"].map((id) => k.get(id)!.key);
  assert.equal(new Set(keys).size, 3, keys.join(" "));
  const params = k.get("sum")!.components.params as {
    note: { $ref: { key: string; path: string[] } };
  };
  assert.deepEqual(params.note.$ref, { key: k.get("a")!.key, path: ["sum"] });
});

Deno.test("explainChange names the parameter, the input and the code", () => {
  const k1 = keysOf(BASE);
  const k2 = keysOf(
    BASE.replace("y: [1, 2]", "y: [1, 3]").replace("a: 1, b: 2", "a: 1, b: 3"),
  );
  const b = explainChange(k1.get("b[lr=1]")!, k2.get("b[lr=1]")!);
  assert.deepEqual(b, [
    "input a changed",
    "param with.note.y[1] changed 2 -> 3",
  ]);
  assert.deepEqual(explainChange(k1.get("a")!, k2.get("a")!), [
    "param with.b changed 2 -> 3",
  ]);
  assert.deepEqual(explainChange(k1.get("c[lr=2]")!, k2.get("c[lr=2]")!), [
    "input b[lr=2] changed",
  ]);
  const code = explainChange(
    {
      components: { ...k1.get("a")!.components, code: "x" },
      codeFiles: { "nodes/train.ts": "1", "mapf/env.ts": "2" },
    },
    {
      ...k1.get("a")!,
      codeFiles: { "nodes/train.ts": "9", "mapf/env.ts": "2" },
    },
  );
  assert.deepEqual(code, ["code of nodes/train.ts changed"]);
});

Deno.test("ctx seed is a uint32 from the key", () => {
  assert.equal(seedOfKey("ffffffff00"), 4294967295);
  assert.equal(seedOfKey("0000000a"), 10);
});

Deno.test("code digest follows local imports and npm versions from deno.lock; edits change keys", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      join(dir, "deno.json"),
      JSON.stringify({ imports: { valibot: "npm:valibot@^1.5.0" } }),
    );
    await Deno.writeTextFile(
      join(dir, "deno.lock"),
      JSON.stringify({ specifiers: { "npm:valibot@^1.5.0": "1.5.0" } }),
    );
    await Deno.mkdir(join(dir, "lib"));
    await Deno.writeTextFile(
      join(dir, "lib", "helper.ts"),
      "export const x = 1;\n",
    );
    await Deno.writeTextFile(
      join(dir, "lib", "types.ts"),
      "export type T = number;\n",
    );
    await Deno.writeTextFile(join(dir, "lib", "prompt.md"), "hello\n");
    await Deno.writeTextFile(
      join(dir, "kind.ts"),
      `import * as v from "valibot";\nimport { x } from "./lib/helper.ts";\nimport type { T } from "../types.ts";\n` +
        `const p = new URL("./lib/prompt.md", import.meta.url);\nexport const kind = { v, x, p };\n`,
    );
    const url = toFileUrl(join(dir, "kind.ts"));
    clearDigestCache();
    const d1 = codeDigest(url);
    assert.deepEqual(Object.keys(d1.files), [
      "kind.ts",
      "lib/helper.ts",
      "lib/prompt.md",
    ]);
    assert.deepEqual(d1.packages, ["npm:valibot@1.5.0"]);
    await Deno.writeTextFile(
      join(dir, "lib", "types.ts"),
      "export type T = string;\n",
    );
    clearDigestCache();
    assert.equal(
      codeDigest(url).digest,
      d1.digest,
      "type-only imports are not code",
    );
    await Deno.writeTextFile(
      join(dir, "lib", "helper.ts"),
      "export const x = 2;\n",
    );
    clearDigestCache();
    const d2 = codeDigest(url);
    assert.notEqual(d2.digest, d1.digest);
    await Deno.writeTextFile(join(dir, "lib", "prompt.md"), "hello!\n");
    clearDigestCache();
    assert.notEqual(
      codeDigest(url).digest,
      d2.digest,
      "data files read via new URL(..., import.meta.url) count",
    );
    // The digest does not depend on where the project lives.
    const dir2 = await Deno.makeTempDir();
    for (const f of ["deno.json", "deno.lock", "kind.ts"]) {
      await Deno.copyFile(join(dir, f), join(dir2, f));
    }
    await Deno.mkdir(join(dir2, "lib"));
    for (const f of ["helper.ts", "types.ts", "prompt.md"]) {
      await Deno.copyFile(join(dir, "lib", f), join(dir2, "lib", f));
    }
    clearDigestCache();
    assert.equal(
      codeDigest(toFileUrl(join(dir2, "kind.ts"))).digest,
      codeDigest(url).digest,
    );
    await Deno.remove(dir2, { recursive: true });
  } finally {
    clearDigestCache();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a kind whose code cannot be digested is not cached, nor are its dependents", () => {
  const remote: NodeKind = {
    name: "remote",
    description: "",
    params: v.object({}),
    module: "https://example.invalid/kind.ts",
    run: () => Promise.resolve({ value: 1 }),
  };
  const exp = compileExperiment(
    "e.yaml",
    `experiment: r\nseed: 1\nnodes:\n  r: { kind: remote }\n  a: { kind: test.add, with: { a: 1, note: $r } }\n  b: { kind: test.add, with: { a: 1 } }\n`,
    { kinds: [...kinds, remote] },
  );
  const keys = computeKeys(exp);
  const by = new Map(exp.nodes.map((n, i) => [n.id, keys[i]!]));
  assert.equal(by.get("r")!.cacheable, false);
  assert.match(by.get("r")!.reason!, /not a local file/);
  assert.equal(by.get("a")!.cacheable, false);
  assert.equal(by.get("a")!.reason, "input r is not cacheable");
  assert.equal(by.get("b")!.cacheable, true);
  // A number JSON cannot carry never reaches a key: it is refused at load,
  // at its position.
  assert.throws(
    () =>
      compileExperiment(
        "e.yaml",
        `experiment: r\nseed: 1\nnodes:\n  a: { kind: test.add, with: { a: .inf } }\n`,
        opts,
      ),
    /e\.yaml:4:35: \.inf is infinity, which JSON cannot carry/,
  );
});

Deno.test("a key holds its kind's code digest and its fingerprint: editing either moves the node's key and its dependents'", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "kind.ts");
    await Deno.writeTextFile(file, "export const version = 1;\n");
    let stamp = "one";
    const local: NodeKind = {
      name: "local",
      description: "",
      params: v.object({}),
      module: toFileUrl(file),
      fingerprint: () => ({ input: stamp }),
      run: () => Promise.resolve({ value: 1 }),
    };
    const yaml =
      `experiment: c\nseed: 1\nnodes:\n  l: { kind: local }\n  a: { kind: test.add, with: { a: 1, note: $l } }\n  b: { kind: test.add, with: { a: 1 } }\n`;
    const keys = () => {
      clearDigestCache();
      const exp = compileExperiment("e.yaml", yaml, {
        kinds: [...kinds, local],
      });
      const k = computeKeys(exp);
      return new Map(exp.nodes.map((n, i) => [n.id, k[i]!.key]));
    };
    const k1 = keys();
    await Deno.writeTextFile(file, "export const version = 2;\n");
    const k2 = keys();
    assert.notEqual(k2.get("l"), k1.get("l"), "the code moved the key");
    assert.notEqual(k2.get("a"), k1.get("a"), "and its dependent's");
    assert.equal(k2.get("b"), k1.get("b"), "an unrelated node keeps its key");
    stamp = "two";
    const k3 = keys();
    assert.notEqual(k3.get("l"), k2.get("l"), "the fingerprint moved the key");
    assert.notEqual(k3.get("a"), k2.get("a"));
    assert.equal(k3.get("b"), k2.get("b"));
  } finally {
    clearDigestCache();
    await Deno.remove(dir, { recursive: true });
  }
});
