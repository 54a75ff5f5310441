import assert from "node:assert/strict";
import * as v from "valibot";
import { compileExperiment } from "../compile/experiment.ts";
import { computeKeys } from "../cache/keys.ts";
import { ExperimentError } from "../errors.ts";
import { isAbsolute, relative, resolve } from "node:path";
import { Store } from "../cache/store.ts";
import { filePathOf } from "./file_input.ts";
import { jobFromSpec } from "./job_spec.ts";
import { runAll, tmpProject, valueOf } from "../_test_util.ts";
import { kinds } from "../testdata/kinds.ts";
import type { Json, NodeKind } from "../types.ts";

/** Writes `text` as a file output `model` (and a plain field `note`). */
const maker: NodeKind<{ text: string }> = {
  name: "test.maker",
  description: "writes a file output (test kind)",
  params: v.strictObject({ text: v.string() }),
  module: import.meta.url,
  files: { model: "the model file" },
  async run(p, ctx) {
    const ref = await ctx.writeBlob(
      new TextEncoder().encode(p.text),
      "application/x-test",
    );
    return { value: { model: ref as unknown as Json, note: p.text } };
  },
};

const seen: unknown[] = [];
/** Reads a file by path; its fingerprint records what it is shown. */
const reader: NodeKind<{ file: string; tag?: string | undefined }> = {
  name: "test.reader",
  description: "reads a file by path (test kind)",
  params: v.strictObject({ file: v.string(), tag: v.optional(v.string()) }),
  module: import.meta.url,
  fingerprint(literal) {
    seen.push(literal);
    return null;
  },
  async run(p) {
    return {
      value: { path: p.file, text: await Deno.readTextFile(p.file) },
    };
  },
};

const all = [...kinds, maker, reader] as NodeKind[];
const exp = (text: string, file = "e.yaml") =>
  compileExperiment(file, text, { kinds: all });
const yaml = (text: string) =>
  `experiment: f
seed: 1
nodes:
  m: { kind: test.maker, with: { text: "${text}" } }
  r: { kind: test.reader, with: { file: $m.model, tag: x } }
`;

Deno.test("a file reference runs with the verified file's path, in process and from a job spec", async () => {
  await using p = await tmpProject(yaml("weights v1"));
  const e = exp(await Deno.readTextFile(p.file), p.file);
  const res = await runAll(e, p.store);
  assert.equal(res.failures.length, 0);
  const got = valueOf(e, res, "r") as { path: string; text: string };
  assert.equal(got.text, "weights v1");
  assert.ok(got.path.startsWith(p.cache), got.path);
  // A job rebuilt from its key components (run-node, remote executors)
  // resolves the marked reference the same way.
  const key = computeKeys(e)[e.byId.get("r")!]!.key;
  const job = jobFromSpec(p.store, key, new Map(all.map((k) => [k.name, k])));
  assert.deepEqual(job.params, { file: got.path, tag: "x" });
});

Deno.test("a file reference: its key reads the producer's key (marked file), the fingerprint does not see it", () => {
  seen.length = 0;
  const a = exp(yaml("weights v1")), b = exp(yaml("weights v2"));
  const ka = computeKeys(a), kb = computeKeys(b);
  const r = a.byId.get("r")!, m = a.byId.get("m")!;
  assert.deepEqual(ka[r]!.components.params, {
    file: { $ref: { key: ka[m]!.key, path: ["model"], file: true } },
    tag: "x",
  });
  // another model file (the producer computes other bytes): another key
  assert.notEqual(ka[m]!.key, kb[m]!.key);
  assert.notEqual(ka[r]!.key, kb[r]!.key);
  // the fingerprint saw the literal without the file reference
  assert.deepEqual(seen[0], { tag: "x" });
  // a plain field of the same producer stays an ordinary reference
  const plain = exp(`experiment: f
seed: 1
nodes:
  m: { kind: test.maker, with: { text: "a" } }
  r: { kind: test.reader, with: { file: $m.note } }
`);
  const kp = computeKeys(plain);
  assert.deepEqual(kp[1]!.components.params, {
    file: { $ref: { key: kp[0]!.key, path: ["note"] } },
  });
});

Deno.test("a file field read from a node that produces no such file is refused at plan", () => {
  let err: unknown;
  try {
    exp(`experiment: f
seed: 1
nodes:
  m: { kind: test.add, with: { a: 1 } }
  r: { kind: test.reader, with: { file: $m.model } }
`);
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof ExperimentError);
  assert.equal(err.diagnostics.length, 1);
  assert.match(
    err.diagnostics[0]!.message,
    /"\$m\.model": m \(kind test\.add\) produces no model file; reference a node of kind test\.maker/,
  );
  assert.equal(err.diagnostics[0]!.line, 5);
});

Deno.test("a file reference resolves to an absolute path when the cache was given as a relative one", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-file-input-" });
  try {
    const store = new Store(relative(Deno.cwd(), dir));
    const ref = store.writeBlob(new TextEncoder().encode("w"), "x/y");
    const path = filePathOf(ref as unknown as Json, "m", "model", store);
    assert.ok(isAbsolute(path), path);
    assert.equal(path, resolve(dir, "blobs", ref.$blob.slice(0, 2), ref.$blob));
    assert.equal(await Deno.readTextFile(path), "w");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
