import assert from "node:assert/strict";
import { join } from "node:path";
import { cacheExportCommand } from "../cli/cache_commands.ts";
import { importBundle, selectBlobKeys, SELECTED_BLOB_BYTES } from "./bundle.ts";
import { computeKeys } from "./keys.ts";
import { Store } from "./store.ts";
import { compile, runAll, tmpProject } from "../_test_util.ts";
import { kinds } from "../testdata/kinds.ts";

const YAML = `experiment: blobs
seed: 1
matrix:
  size: [3000, 3001, 3002]
nodes:
  roll: { kind: test.blob, with: { size: $matrix.size } }
  score: { kind: test.blob, with: { read: $roll.blob } }
`;

Deno.test("a JSON-only bundle carries the blobs of the chosen nodes only (--blobs-of), within a size bound", async () => {
  await using p = await tmpProject(YAML);
  const exp = compile(p.file, YAML);
  await runAll(exp, p.store);
  const keys = computeKeys(exp);
  const keyOf = (id: string) => keys[exp.byId.get(id)!]!.key;
  const out: string[] = [];
  const bundle = join(p.dir, "results.esb");
  const ctx = {
    kinds,
    cache: p.cache,
    output: {
      out: (l: string) => out.push(l),
      err: (l: string) => out.push(l),
    },
  };
  assert.equal(
    await cacheExportCommand(ctx, bundle, {
      jsonOnly: true,
      experiments: [p.file],
      blobsOf: ["roll[size=3000]"],
    }),
    0,
  );
  // Every entry, and one blob: the first variant's.
  assert.match(out.at(-1)!, /: 6 entries, 1 blobs, 0 aux files/);
  const other = new Store(join(p.dir, "other"));
  await importBundle(other, bundle);
  const blobOf = (id: string) =>
    (other.readEntry(keyOf(id))!.value as { blob: { $blob: string } }).blob;
  assert.equal(other.readBlob(blobOf("roll[size=3000]")).length, 3000);
  assert.throws(() => other.readBlob(blobOf("roll[size=3001]")));

  // The bound: 3000 + 3001 bytes fit in 7000, the third blob does not.
  const all = ["roll[size=3000]", "roll[size=3001]", "roll[size=3002]"].map(
    keyOf,
  );
  const sel = selectBlobKeys(p.store, all, 7000);
  assert.deepEqual([...sel.keys], all.slice(0, 2));
  assert.deepEqual(sel.left, all.slice(2));
  assert.equal(sel.bytes, 6001);
  assert.equal(selectBlobKeys(p.store, all).keys.size, 3);
  assert.ok(SELECTED_BLOB_BYTES >= 1 << 20);
});

Deno.test("a blob larger than one read chunk comes back byte for byte, from a plain and from a compact bundle", async () => {
  const yaml = `experiment: big-blob
seed: 1
nodes:
  roll: { kind: test.blob, with: { size: 3145851 } }
`;
  await using p = await tmpProject(yaml);
  const exp = compile(p.file, yaml);
  await runAll(exp, p.store);
  const key = computeKeys(exp)[exp.byId.get("roll")!]!.key;
  const ref = (p.store.readEntry(key)!.value as { blob: { $blob: string } })
    .blob;
  const want = p.store.readBlob(ref);
  assert.equal(want.length, 3145851);
  const ctx = {
    kinds,
    cache: p.cache,
    output: { out: () => {}, err: () => {} },
  };
  for (const compact of [false, true]) {
    const bundle = join(p.dir, compact ? "big.esb" : "big-plain.esb");
    assert.equal(
      await cacheExportCommand(ctx, bundle, {
        experiments: [p.file],
        ...(compact ? { compact: true } : {}),
      }),
      0,
    );
    const other = new Store(join(p.dir, compact ? "c" : "plain"));
    await importBundle(other, bundle);
    assert.deepEqual(other.readBlob(ref), want, `compact: ${compact}`);
  }
});
