import { scaledMs } from "../_test_util.ts";
import assert from "node:assert/strict";
import * as v from "valibot";
import { compileExperiment } from "../compile/experiment.ts";
import { computeKeys } from "../cache/keys.ts";
import { CorruptEntryError, ExperimentError } from "../errors.ts";
import { isAbsolute, join, relative, resolve } from "node:path";
import { Store } from "../cache/store.ts";
import { filePathOf, handFiles, removeHanded } from "./file_input.ts";
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
  // a copy made for the run, in the cache's tmp/, removed after it
  assert.ok(got.path.startsWith(join(p.cache, "tmp")), got.path);
  assert.throws(() => Deno.statSync(got.path), Deno.errors.NotFound);
  // A job rebuilt from its key components (run-node, remote executors)
  // resolves the marked reference the same way: the blob, recorded as a
  // file reference so the run hands a copy.
  const key = computeKeys(e)[e.byId.get("r")!]!.key;
  const job = jobFromSpec(p.store, key, new Map(all.map((k) => [k.name, k])));
  const m = valueOf(e, res, "m") as { model: { $blob: string } };
  const blob = resolve(p.store.blobPath(m.model.$blob));
  assert.deepEqual(job.params, { file: blob, tag: "x" });
  assert.deepEqual(job.files, [{
    path: blob,
    hash: m.model.$blob,
    input: "m",
    field: "model",
  }]);
});

/** Writes into the file it is handed (as a node must not), or reads it. */
const writer: NodeKind<{ file: string; write: boolean }> = {
  name: "test.writer",
  description: "writes into its file reference (test kind)",
  params: v.strictObject({ file: v.string(), write: v.boolean() }),
  module: import.meta.url,
  run(p) {
    const mode = Deno.statSync(p.file).mode! & 0o777;
    if (p.write) {
      Deno.chmodSync(p.file, 0o644); // (root needs no chmod; others do)
      Deno.writeTextFileSync(p.file, "tampered");
    }
    return Promise.resolve({
      value: { text: Deno.readTextFileSync(p.file), mode },
    });
  },
};

Deno.test("a node that writes into its file reference fails in one line, stores nothing, and no other reader sees it", async () => {
  await using p = await tmpProject(`experiment: f
seed: 1
nodes:
  m: { kind: test.maker, with: { text: "weights v1" } }
  bad: { kind: test.writer, with: { file: $m.model, write: true } }
  after: { kind: test.writer, with: { file: $m.model, write: false } }
  also: { kind: test.reader, with: { file: $m.model, tag: y } }
`);
  const kinds = [...all, writer as NodeKind];
  const e = compileExperiment(p.file, await Deno.readTextFile(p.file), {
    kinds,
  });
  const t0 = performance.now();
  const res = await runAll(e, p.store, { jobs: 1 });
  assert.ok(performance.now() - t0 < scaledMs(5000));
  assert.deepEqual(res.failures.map((f) => f.id), ["bad"]);
  const msg = res.failures[0]!.message;
  assert.equal(msg.split("\n").length, 1, msg);
  assert.match(
    msg,
    /^the node changed its input file \$m\.model \(.*: other bytes\); a file reference is read-only: write a new file in the work directory instead\. Nothing of this node was stored\.$/,
  );
  const keys = computeKeys(e);
  assert.equal(p.store.hasEntry(keys[e.byId.get("bad")!]!.key), false);
  // the readers after it read the producer's bytes, from read-only copies
  const after = valueOf(e, res, "after") as { text: string; mode: number };
  assert.deepEqual(after, { text: "weights v1", mode: 0o444 });
  assert.equal(
    (valueOf(e, res, "also") as { text: string }).text,
    "weights v1",
  );
  // and the store's blob is intact
  const m = valueOf(e, res, "m") as { model: { $blob: string } };
  assert.equal(
    new TextDecoder().decode(p.store.readBlob(m.model)),
    "weights v1",
  );
});

Deno.test("a file reference whose blob was changed in the store is never handed to a node", async () => {
  await using p = await tmpProject(yaml("weights v1"));
  const e = exp(await Deno.readTextFile(p.file), p.file);
  const first = await runAll(e, p.store);
  assert.equal(first.failures.length, 0);
  const m = valueOf(e, first, "m") as { model: { $blob: string } };
  const blob = p.store.blobPath(m.model.$blob);
  const tamper = () => {
    Deno.chmodSync(blob, 0o644);
    Deno.writeTextFileSync(blob, "weights v2");
  };
  // Handing it: the copy is checked while it streams (a blob verified
  // before by this process is checked again), the blob moved aside.
  p.store.verifyBlob(m.model.$blob);
  tamper();
  const ref = {
    path: resolve(blob),
    hash: m.model.$blob,
    input: "m",
    field: "model",
  };
  const dir = join(p.cache, "tmp", "handed");
  assert.throws(
    () => handFiles(p.store, [ref], { file: ref.path }, dir),
    (err: unknown) =>
      err instanceof CorruptEntryError &&
      /the file model of m does not hold what its name says .*it was moved aside, and the next run recomputes m/
        .test(err.message),
  );
  removeHanded(dir);
  assert.equal(p.store.hasBlob(m.model.$blob), false);
  // A run recomputes the producer, then the reader reads its bytes.
  const key = computeKeys(e)[e.byId.get("r")!]!.key;
  Deno.removeSync(p.store.entryPath(key));
  const again = await runAll(e, p.store);
  assert.equal(again.failures.length, 0);
  assert.equal(
    (valueOf(e, again, "r") as { text: string }).text,
    "weights v1",
  );
  assert.equal(
    new TextDecoder().decode(p.store.readBlob(m.model)),
    "weights v1",
  );
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

Deno.test("a handed copy's path is absolute when it is handed into a relative folder (a relative cache)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-file-input-" });
  try {
    const store = new Store(relative(Deno.cwd(), dir));
    const blob = store.writeBlob(new TextEncoder().encode("w"), "x/y");
    const ref = {
      path: resolve(store.blobPath(blob.$blob)),
      hash: blob.$blob,
      input: "m",
      field: "gguf",
    };
    const into = relative(Deno.cwd(), join(dir, "tmp", "in-x"));
    const handed = handFiles(store, [ref], { file: ref.path }, into);
    const copy = (handed.params as { file: string }).file;
    assert.ok(isAbsolute(copy), copy);
    assert.ok(copy.endsWith(".gguf"), copy);
    assert.equal(await Deno.readTextFile(copy), "w");
    removeHanded(into);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
