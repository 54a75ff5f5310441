import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { exportBundle, importBundle } from "./bundle.ts";
import { gc } from "./gc.ts";
import { UserError } from "../errors.ts";
import { type Entry, Store } from "./store.ts";
import { sha256Hex } from "../canonical.ts";
import { computeKeys } from "./keys.ts";
import { makePlan } from "../run/plan.ts";
import { buildTable } from "../tables/tables.ts";
import { compile, exportedRun, runAll, tmpProject } from "../_test_util.ts";
import { blobExperiment } from "../_test_util.ts";
import { pathExists } from "../path_exists.ts";

const YAML = blobExperiment("bundle");

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
  const a = await exportBundle(p.store, plain);
  const b = await exportBundle(p.store, packed);
  assert.equal(a.entries, 3);
  assert.equal(b.entries, 3);
  assert.ok(a.blobs >= 1);
  assert.ok(b.bytes < a.bytes, `gzip ${b.bytes} >= plain ${a.bytes}`);
  const bytes = Deno.readFileSync(packed);
  assert.deepEqual([bytes[0], bytes[1]], [0x1f, 0x8b]);

  for (const file of [plain, packed]) {
    const other = new Store(join(p.dir, `cache-${file.endsWith(".gz")}`));
    const r = await importBundle(other, file);
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
    // The same bundle again, trusted: the entries it marked become results.
    const again = await importBundle(other, file, { trust: true });
    assert.equal(again.entries, 0);
    for (const k of keys) {
      assert.equal(other.importMark(k), null);
      assert.ok(other.loadVerified(k), "a cached result now");
    }
    // Trusted, the same bundle's entries are used as they are.
    const trusted = new Store(join(p.dir, `trusted-${file.endsWith(".gz")}`));
    const t = await importBundle(trusted, file, { trust: true });
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
  await assert.rejects(
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
    return new Uint8Array(Buffer.concat(parts));
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
  await using p = await exportedRun(YAML);
  const { exp } = p;
  const b = records(Deno.readFileSync(p.bundle));
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
  const r = await importBundle(other, forged);
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
  const again = await importBundle(other, forged);
  assert.deepEqual([again.entries, again.kept], [0, 4]);
  assert.equal((other.loadVerified(keyA)!.value as { sum: number }).sum, 3);
});

Deno.test("an entry whose key is not the hash of its components is refused, and a bad record late in a bundle imports nothing", async () => {
  await using p = await exportedRun(YAML);
  const b = records(Deno.readFileSync(p.bundle));
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
  await assert.rejects(
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
  await assert.rejects(
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
  await assert.rejects(
    () => importBundle(other, join(p.dir, "type.esb")),
    /the record header at byte 18 is not an object/,
  );
  // An aux path that leaves the cache.
  const aux = b.write([{
    head: { type: "aux", name: "../../etc/x" },
    body: new Uint8Array([1]),
  }]);
  Deno.writeFileSync(join(p.dir, "aux.esb"), aux);
  await assert.rejects(
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
  await exportBundle(p.store, json, { jsonOnly: true });
  const fresh = new Store(join(p.dir, "fresh"));
  const r = await importBundle(fresh, json);
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
    const zeros = new Uint8Array(64 * 2 ** 20);
    const head = new TextEncoder().encode(
      `envsmith-bundle 1\n{"type":"blob","name":"${
        sha256Hex(zeros)
      }","size":${zeros.length},"sha256":"${sha256Hex(zeros)}"}\n`,
    );
    const all = new Uint8Array(head.length + zeros.length);
    all.set(head);
    Deno.writeFileSync(bomb, gzipSync(all));
    // Not a bundle at all: refused at its first line.
    const junk = join(dir, "junk.esb.gz");
    Deno.writeFileSync(junk, gzipSync(zeros));
    await assert.rejects(
      () => importBundle(store, junk, { maxBytes: 2 ** 20 }),
      /junk\.esb\.gz is not an envsmith bundle/,
    );
    assert.ok(Deno.statSync(bomb).size < 100_000);
    await assert.rejects(
      () => importBundle(store, bomb, { maxBytes: 2 ** 20 }),
      (e: unknown) =>
        e instanceof UserError &&
        /bomb\.esb\.gz: expands to more than 1048576 bytes, the most a bundle may hold.*export the cache in parts/
          .test(e.message),
    );
    const big = join(dir, "big.esb");
    Deno.writeFileSync(big, new Uint8Array(2 ** 20 + 1));
    await assert.rejects(
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

Deno.test("export works after a results-only import, and the entries stay marked imported", async () => {
  await using p = await tmpProject(YAML);
  await runAll(compile(p.file, YAML), p.store);
  const json = join(p.dir, "json.esb");
  await exportBundle(p.store, json, { jsonOnly: true });
  const fresh = new Store(join(p.dir, "fresh"));
  await importBundle(fresh, json);
  const again = join(p.dir, "again.esb.gz");
  const r = await exportBundle(fresh, again);
  assert.deepEqual([r.entries, r.blobs, r.resultsOnly, r.missingBlobs], [
    3,
    0,
    1,
    [],
  ]);
  const third = new Store(join(p.dir, "third"));
  const i = await importBundle(third, again, { trust: true });
  assert.deepEqual([i.entries, i.marked, i.resultsOnly], [3, 3, 1]);
});

Deno.test("import checks every record before writing any: duplicates, control characters in aux names, with --trust too", async () => {
  await using p = await exportedRun(YAML);
  const b = records(Deno.readFileSync(p.bundle));
  const entry = b.records.find((r) => r.head.type === "entry")!;
  const twice = [...b.records, {
    head: entry.head,
    body: forgeEntry(entry.body, (e) => {
      (e as { created: string }).created = "2020-01-01T00:00:00.000Z";
    }),
  }];
  Deno.writeFileSync(join(p.dir, "twice.esb"), b.write(twice));
  const other = new Store(join(p.dir, "other"));
  await assert.rejects(
    () => importBundle(other, join(p.dir, "twice.esb"), { trust: true }),
    /twice\.esb: entry [0-9a-f]{64} appears twice; .*nothing was imported/,
  );
  const nul = [...b.records, {
    head: { type: "aux", name: "llm/a\u0000b.json" },
    body: new Uint8Array([1]),
  }];
  Deno.writeFileSync(join(p.dir, "nul.esb"), b.write(nul));
  await assert.rejects(
    () => importBundle(other, join(p.dir, "nul.esb"), { trust: true }),
    /nul\.esb: aux path "llm\/a\\u0000b\.json" holds a control character/,
  );
  assert.deepEqual([...other.keys()], []);
  assert.deepEqual([...other.blobHashes()], []);
});

Deno.test("a killed export leaves nothing that outlives the next export or gc; export keeps import's size limit", async () => {
  await using p = await tmpProject(YAML);
  await runAll(compile(p.file, YAML), p.store);
  const file = join(p.dir, "out.esb");
  // What a process killed mid-export leaves: its temporary file beside the
  // bundle, and its note in the cache.
  const child = new Deno.Command("true").spawn();
  await child.status;
  const dead = child.pid;
  const host = (await import("node:os")).hostname();
  const leftover = join(p.dir, `.out.esb.export@${host}~${dead}~0123abcd`);
  Deno.writeFileSync(leftover, new Uint8Array(1000));
  await exportBundle(p.store, file);
  assert.equal(pathExists(leftover), false, "removed by the next export");
  Deno.writeFileSync(leftover, new Uint8Array(1000));
  Deno.writeTextFileSync(
    join(p.store.root, "tmp", `export-note@${host}~${dead}~0123abcd`),
    leftover,
  );
  p.store.cleanLeftovers();
  assert.equal(pathExists(leftover), false, "removed by gc");
  // The size limit: export refuses to write what import would refuse.
  await assert.rejects(
    () => exportBundle(p.store, join(p.dir, "big.esb"), { maxBytes: 2000 }),
    /big\.esb: the bundle would hold more than 2000 bytes, the most `cache import` accepts/,
  );
  assert.deepEqual(
    [...Deno.readDirSync(p.dir)].map((e) => e.name).filter((n) =>
      n.includes("big.esb")
    ),
    [],
  );
});

Deno.test("a bundle imported before (same sha256) with every record still here is not read again; a missing record or other bytes import as usual", async () => {
  await using p = await exportedRun(YAML, "r.esb.gz");
  const file = p.bundle;
  const other = new Store(join(p.dir, "other"));
  const first = await importBundle(other, file);
  assert.equal(first.entries, 3);
  assert.equal(first.remembered, undefined);
  const again = await importBundle(other, file);
  assert.equal(again.entries, 0);
  assert.ok(again.remembered, "remembered by content hash");
  assert.ok(again.kept >= 4, `kept ${again.kept}: 3 entries and the blob`);

  // An entry removed since (say, by cache gc): the bundle is imported again.
  const gone = [...other.keys()][0]!;
  Deno.removeSync(other.entryPath(gone));
  const refill = await importBundle(other, file);
  assert.equal(refill.remembered, undefined);
  assert.equal(refill.entries, 1);
  assert.ok(other.hasEntry(gone));

  // Other bytes under the same name are another bundle: checked in full.
  const bytes = Deno.readFileSync(file);
  bytes[bytes.length - 9]! ^= 0xff; // inside the gzip CRC
  Deno.writeFileSync(file, bytes);
  await assert.rejects(() => importBundle(other, file), UserError);
});

Deno.test("a finished import leaves no record that stops gc: only its remembered hash, which gc ignores", async () => {
  await using p = await exportedRun(YAML, "r.esb");
  const file = p.bundle;
  const other = new Store(join(p.dir, "other"));
  assert.equal((await importBundle(other, file)).entries, 3);
  // Remembered by hash, so the second import reads nothing again.
  const again = await importBundle(other, file);
  assert.equal(again.entries, 0);
  assert.ok(again.kept >= 3, `kept ${again.kept}`);
  const remembered = [...Deno.readDirSync(join(other.root, "imports"))]
    .map((e) => e.name);
  assert.equal(remembered.filter((n) => n.endsWith(".json")).length, 1);
  assert.deepEqual(other.importRecords(), [], "no import in progress");
  // gc runs (no manifest names the imported entries, so they go).
  const r = await gc(other);
  assert.equal(r.entries.length, 3);
});
