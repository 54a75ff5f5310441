import assert from "node:assert/strict";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { exportBundle, importBundle } from "./bundle.ts";
import { UserError } from "../errors.ts";
import { type Entry, Store } from "./store.ts";
import { sha256Hex } from "../canonical.ts";
import { computeKeys } from "./keys.ts";
import { makePlan } from "../run/plan.ts";
import { buildTable } from "../tables/tables.ts";
import { compile, runAll, tmpProject } from "../_test_util.ts";

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
  // An aux file (as the LLM reply cache writes them), nested one level.
  const auxFile = join(p.store.auxDir("test.add"), "replies", "ab.json");
  Deno.mkdirSync(join(p.store.auxDir("test.add"), "replies"));
  Deno.writeTextFileSync(auxFile, '{"reply":"hi"}');

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
    assert.equal(r.marked, 3, "imported entries are marked");
    assert.deepEqual([...other.keys()].sort(), keys);
    for (const k of keys) {
      assert.deepEqual(
        other.readEntry(k)!.value,
        p.store.loadVerified(k)!.value,
      );
      assert.equal(other.importMark(k)?.resultsOnly, false);
      assert.equal(other.loadVerified(k), null, "never a cached result");
    }
    // Trusted, the same bundle's entries are used as they are.
    const trusted = new Store(join(p.dir, `trusted-${file.endsWith(".gz")}`));
    const t = importBundle(trusted, file, { trust: true });
    assert.equal(t.marked, 0);
    assert.equal(t.aux, 1);
    for (const k of keys) assert.ok(trusted.loadVerified(k));
    assert.equal(
      Deno.readTextFileSync(
        join(trusted.auxDir("test.add"), "replies", "ab.json"),
      ),
      '{"reply":"hi"}',
    );
    assert.deepEqual(
      [...Deno.readDirSync(join(trusted.root, "tmp"))].map((e) => e.name),
      [],
      "no temporary file left behind",
    );
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

/** The records of a plain bundle, and a function that writes them back (recomputing every hash, as a forger would). */
function records(bytes: Uint8Array) {
  const dec = new TextDecoder(), enc = new TextEncoder();
  const out: { head: Record<string, unknown>; body: Uint8Array }[] = [];
  let pos = bytes.indexOf(10) + 1;
  for (;;) {
    const nl = bytes.indexOf(10, pos);
    const head = JSON.parse(dec.decode(bytes.subarray(pos, nl)));
    pos = nl + 1;
    if (head.type === "end") break;
    out.push({ head, body: bytes.slice(pos, pos + head.size) });
    pos += head.size + 1;
  }
  const write = (recs: typeof out, count = recs.length): Uint8Array => {
    const parts: Uint8Array[] = [enc.encode("envsmith-bundle 1\n")];
    for (const r of recs) {
      parts.push(
        enc.encode(
          JSON.stringify({
            ...r.head,
            size: r.body.length,
            sha256: r.head.type === "blob" ? r.head.sha256 : sha256Hex(r.body),
          }) + "\n",
        ),
        r.body,
        enc.encode("\n"),
      );
    }
    parts.push(enc.encode(JSON.stringify({ type: "end", count }) + "\n"));
    const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let o = 0;
    for (const p of parts) {
      all.set(p, o);
      o += p.length;
    }
    return all;
  };
  return { records: out, write };
}

/** An entry file with `edit` applied to its JSON and a valid header hash again. */
function forgeEntry(body: Uint8Array, edit: (e: Entry) => void): Uint8Array {
  const text = new TextDecoder().decode(body);
  const nl = text.indexOf("\n");
  const entry = JSON.parse(text.slice(nl + 1)) as Entry;
  edit(entry);
  const json = JSON.stringify(entry);
  const blobs = entry.blobs.length ? " " + entry.blobs.join(" ") : "";
  return new TextEncoder().encode(
    `envsmith-entry 1 ${sha256Hex(json)}${blobs}\n${json}`,
  );
}

Deno.test("a forged bundle (real keys, edited values, valid hashes) is imported only as marked; run recomputes and replaces it", async () => {
  await using p = await tmpProject(YAML);
  const exp = compile(p.file, YAML);
  await runAll(exp, p.store);
  exportBundle(p.store, join(p.dir, "r.esb"));
  const b = records(Deno.readFileSync(join(p.dir, "r.esb")));
  const keyA = computeKeys(exp)[exp.byId.get("a")!]!.key;
  for (const r of b.records) {
    if (r.head.name === keyA) {
      r.body = forgeEntry(r.body, (e) => {
        (e.value as { sum: number }).sum = 999;
      });
    }
  }
  const forged = join(p.dir, "forged.esb");
  Deno.writeFileSync(forged, b.write(b.records));
  const other = new Store(join(p.dir, "other"));
  const r = importBundle(other, forged);
  assert.deepEqual([r.entries, r.marked], [3, 3]);
  assert.equal((other.readEntry(keyA)!.value as { sum: number }).sum, 999);
  // plan: not cached (imported), and no corruption warning.
  const plan = makePlan(exp, other);
  assert.deepEqual(plan.notes, []);
  const a = plan.items.find((it) => it.node.id === "a")!;
  assert.equal(a.status, "run");
  assert.match(a.why[0]!, /imported from forged\.esb, not computed here/);
  assert.equal(a.imported?.bundle, "forged.esb");
  // A run computes it here and replaces the imported value.
  const run = await runAll(exp, other);
  assert.equal(run.failures.length, 0);
  assert.equal(run.manifest.counts.done, 3);
  assert.equal((other.loadVerified(keyA)!.value as { sum: number }).sum, 3);
  assert.equal(other.importMark(keyA), null);
  assert.equal(other.importedKeys().size, 0);
  assert.equal(
    makePlan(exp, other).items.every((it) => it.status === "cached"),
    true,
  );
  // Importing the forged bundle again keeps the local results.
  const again = importBundle(other, forged);
  assert.deepEqual([again.entries, again.kept], [0, 4]);
  assert.equal((other.loadVerified(keyA)!.value as { sum: number }).sum, 3);
});

Deno.test("an entry whose key is not the hash of its components is refused, and a bad record late in a bundle imports nothing", async () => {
  await using p = await tmpProject(YAML);
  const exp = compile(p.file, YAML);
  await runAll(exp, p.store);
  exportBundle(p.store, join(p.dir, "r.esb"));
  const b = records(Deno.readFileSync(join(p.dir, "r.esb")));
  const entries = b.records.filter((r) => r.head.type === "entry");
  // Components edited (to pass the forged value off as another parameter's).
  const edited = b.records.map((r) =>
    r === entries[1]
      ? {
        ...r,
        body: forgeEntry(r.body, (e) => {
          (e.components as unknown as { params: { a: number } }).params.a = 7;
        }),
      }
      : r
  );
  const other = new Store(join(p.dir, "other"));
  const f1 = join(p.dir, "edited.esb");
  Deno.writeFileSync(f1, b.write(edited));
  assert.throws(
    () => importBundle(other, f1),
    (e) =>
      e instanceof UserError &&
      /edited\.esb: entry [0-9a-f]{64} is not the result of its key .*nothing was imported/
        .test(e.message),
  );
  assert.equal(
    [...other.keys()].length,
    0,
    "the records before it were not kept",
  );
  assert.equal([...other.blobHashes()].length, 0);
  // A malformed record header names what is wrong (not "undefined undefined").
  const bytes = new TextEncoder().encode(
    'envsmith-bundle 1\n{"type":"entry"}\n\n{"type":"end","count":1}\n',
  );
  Deno.writeFileSync(join(p.dir, "hdr.esb"), bytes);
  assert.throws(
    () => importBundle(other, join(p.dir, "hdr.esb")),
    (e) =>
      e instanceof UserError &&
      e.message ===
        `${
          join(p.dir, "hdr.esb")
        }: the entry record at byte 18 has no name; the bundle is damaged or was edited, nothing was imported (export it again)`,
  );
  Deno.writeFileSync(
    join(p.dir, "type.esb"),
    new TextEncoder().encode("envsmith-bundle 1\n[1, 2]\n"),
  );
  assert.throws(
    () => importBundle(other, join(p.dir, "type.esb")),
    /the record header at byte 18 is not an object/,
  );
  // An aux path that leaves the cache.
  const aux = b.write([{
    head: { type: "aux", name: "../../etc/x" },
    body: new Uint8Array([1]),
  }]);
  Deno.writeFileSync(join(p.dir, "aux.esb"), aux);
  assert.throws(
    () => importBundle(other, join(p.dir, "aux.esb"), { trust: true }),
    /aux path \.\.\/\.\.\/etc\/x escapes the cache/,
  );
});

Deno.test("a results-only bundle: no corruption warnings, run recomputes what needs blobs, tables show the recomputed values", async () => {
  const yaml = `experiment: ro
seed: 1
nodes:
  w: { kind: test.blob, with: { size: 2048 } }
  r: { kind: test.blob, with: { read: $w.blob } }
  s: { kind: test.add, with: { a: $matrix.x, b: 1, note: $r } }
tables:
  - { name: ro_t, node: s, rows: seed, columns: value.sum }
`.replace("rows: seed", "rows: x").replace(
    "nodes:",
    "matrix: { x: [1] }\nnodes:",
  );
  await using p = await tmpProject(yaml);
  const exp = compile(p.file, yaml);
  await runAll(exp, p.store);
  const json = join(p.dir, "json.esb");
  exportBundle(p.store, json, { jsonOnly: true });
  const fresh = new Store(join(p.dir, "fresh"));
  const r = importBundle(fresh, json);
  assert.deepEqual([r.entries, r.resultsOnly, r.blobs], [3, 1, 0]);
  for (let i = 0; i < 2; i++) {
    const plan = makePlan(exp, fresh);
    assert.deepEqual(plan.notes, [], "no 'Corrupt cache blob' warnings");
    const w = plan.items.find((it) => it.node.id === "w")!;
    assert.match(
      w.why[0]!,
      /without its blobs \(results only\): run computes it here/,
    );
  }
  const run = await runAll(exp, fresh);
  assert.equal(run.failures.length, 0);
  assert.equal(run.manifest.counts.done, 3);
  assert.equal(fresh.importedKeys().size, 0, "every imported entry replaced");
  const t = buildTable(exp, exp.tables[0]!, (n) => {
    const k = computeKeys(exp)[n.index]!.key;
    const e = fresh.readEntry(k)!;
    return {
      status: "ok",
      value: e.value,
      ...(fresh.importMark(k) ? { imported: true } : {}),
    };
  }, () => "");
  assert.deepEqual(t.cells.map((c) => [c.mean, c.imported]), [[2, undefined]]);
});

Deno.test("a bundle larger than maxBytes, as a file or once gunzipped (a gzip bomb), is refused before it fills memory", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-test-" });
  try {
    const store = new Store(join(dir, "cache"));
    // 64 MB of zeros gzip to about 62 KB: a small file that expands far.
    const bomb = join(dir, "bomb.esb.gz");
    Deno.writeFileSync(bomb, gzipSync(new Uint8Array(64 * 2 ** 20)));
    assert.ok(Deno.statSync(bomb).size < 100_000);
    assert.throws(
      () => importBundle(store, bomb, { maxBytes: 2 ** 20 }),
      (e: unknown) =>
        e instanceof UserError &&
        /bomb\.esb\.gz: expands to more than 1048576 bytes, the most a bundle may hold.*export the cache in parts/
          .test(e.message),
    );
    const big = join(dir, "big.esb");
    Deno.writeFileSync(big, new Uint8Array(2 ** 20 + 1));
    assert.throws(
      () => importBundle(store, big, { maxBytes: 2 ** 20 }),
      (e: unknown) =>
        e instanceof UserError &&
        /big\.esb: holds more than 1048576 bytes/.test(e.message),
    );
    // Nothing was written.
    assert.deepEqual([...store.keys()], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
