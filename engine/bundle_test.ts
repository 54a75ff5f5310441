import assert from "node:assert/strict";
import { join } from "node:path";
import { exportBundle, importBundle } from "./bundle.ts";
import { UserError } from "./errors.ts";
import { Store } from "./store.ts";
import { compile, runAll, tmpProject } from "./_test_util.ts";

const YAML = `experiment: bundle
seed: 1
nodes:
  a: { kind: test.add, with: { a: 1, b: 2 } }
  b: { kind: test.add, with: { a: $a.sum, b: 5 } }
  c: { kind: test.blob, with: { size: 4096 } }
`;

Deno.test("bundles round-trip, plain and gzip-compressed (.gz), and a damaged one is refused", async () => {
  await using p = await tmpProject(YAML);
  await runAll(compile(p.file, YAML), p.store);
  const keys = [...p.store.keys()].sort();
  assert.equal(keys.length, 3);

  const plain = join(p.dir, "r.esb"), packed = join(p.dir, "r.esb.gz");
  const a = exportBundle(p.store, plain);
  const b = exportBundle(p.store, packed);
  assert.equal(a.entries, 3);
  assert.equal(b.entries, 3);
  assert.ok(a.blobs >= 1);
  assert.ok(b.bytes < a.bytes, `gzip ${b.bytes} >= plain ${a.bytes}`);
  const bytes = Deno.readFileSync(packed);
  assert.deepEqual([bytes[0], bytes[1]], [0x1f, 0x8b]);

  for (const file of [plain, packed]) {
    const other = new Store(join(p.dir, `cache-${file.endsWith(".gz")}`));
    const r = importBundle(other, file);
    assert.equal(r.entries, 3);
    assert.deepEqual([...other.keys()].sort(), keys);
    for (const k of keys) {
      assert.deepEqual(
        other.loadVerified(k)!.value,
        p.store.loadVerified(k)!.value,
      );
    }
  }

  const broken = join(p.dir, "broken.esb.gz");
  Deno.writeFileSync(broken, bytes.subarray(0, 40));
  assert.throws(
    () => importBundle(new Store(join(p.dir, "cache-broken")), broken),
    (e) =>
      e instanceof UserError &&
      /not a readable gzip-compressed bundle/.test(e.message),
  );
});
