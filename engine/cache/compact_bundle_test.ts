import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { brotliCompressSync } from "node:zlib";
import { join } from "node:path";
import { exportBundle, importBundle } from "./bundle.ts";
import {
  COMPACT_HEADER,
  decodeCompact,
  encodeCompact,
  isCompactBundle,
} from "./compact_bundle.ts";
import { Store } from "./store.ts";
import { sha256Hex } from "../canonical.ts";
import { compile, exportedRun, runAll, tmpProject } from "../_test_util.ts";
import { blobExperiment } from "../_test_util.ts";

const YAML = blobExperiment("compact");

/** The bytes of `chunks` one after another. */
function concat(chunks: Iterable<Uint8Array>): Uint8Array {
  return new Uint8Array(Buffer.concat([...chunks]));
}

Deno.test("a compact bundle decodes to the plain bundle byte for byte, imports with every entry intact, and re-exports identically", async () => {
  await using p = await tmpProject(YAML);
  await runAll(compile(p.file, YAML), p.store);
  const keys = [...p.store.keys()].sort();
  const plainFile = join(p.dir, "r.esb"), compactFile = join(p.dir, "r.esc");
  await exportBundle(p.store, plainFile);
  const c = await exportBundle(p.store, compactFile, { compact: true });
  assert.equal(c.entries, 3);
  const bytes = Deno.readFileSync(compactFile);
  assert.ok(isCompactBundle(bytes));
  assert.equal(c.bytes, bytes.length);
  // The compact file stands for exactly the plain bundle's bytes.
  assert.deepEqual(
    concat(decodeCompact(bytes, 2 ** 30)),
    Deno.readFileSync(plainFile),
  );
  // A re-export of the same cache is the same file.
  const again = join(p.dir, "again.esc");
  await exportBundle(p.store, again, { compact: true });
  assert.deepEqual(Deno.readFileSync(again), bytes);

  // Import recognises the format by its first line, whatever the name.
  const other = new Store(join(p.dir, "other"));
  const r = await importBundle(other, compactFile);
  assert.equal(r.entries, 3);
  assert.ok(r.blobs >= 1);
  assert.deepEqual([...other.keys()].sort(), keys);
  for (const k of keys) {
    // The entry file is the original's (its header hash verifies).
    assert.deepEqual(other.entryBytes(k), p.store.entryBytes(k));
  }
  // Exported from the importing cache, the same records give the same file.
  const round = join(p.dir, "round.esc");
  await exportBundle(other, round, { compact: true });
  const roundBytes = Deno.readFileSync(round);
  assert.ok(isCompactBundle(roundBytes));
  const again2 = join(p.dir, "round2.esc");
  await exportBundle(other, again2, { compact: true });
  assert.deepEqual(Deno.readFileSync(again2), roundBytes);
});

Deno.test("an entry whose JSON was not written by JSON.stringify is kept raw and comes back exactly", () => {
  const enc = new TextEncoder();
  const body = '{"key":"k","kind":"x","blobs":[],"value":1.50}';
  const entry = enc.encode(`envsmith-entry 1 ${"0".repeat(64)}\n${body}`);
  const canonical = '{"key":"k2","kind":"x","blobs":[],"value":[1,{"a":"b"}]}';
  const rec = (name: string, b: Uint8Array) => [
    enc.encode(
      JSON.stringify({ type: "entry", name, size: b.length, sha256: "0" }) +
        "\n",
    ),
    b,
    enc.encode("\n"),
  ];
  const canonicalEntry = enc.encode(
    `envsmith-entry 1 ${sha256Hex(enc.encode(canonical))}\n${canonical}`,
  );
  const plain = concat([
    enc.encode("envsmith-bundle 1\n"),
    ...rec("a".repeat(64), entry),
    ...rec("b".repeat(64), canonicalEntry),
    enc.encode('{"type":"end","count":2}\n'),
  ]);
  const compact = encodeCompact(plain);
  const back = new TextDecoder().decode(concat(decodeCompact(compact, 1e6)));
  // Record headers are rebuilt with the real sha256 of each body.
  assert.ok(back.includes(`"sha256":"${sha256Hex(entry)}"`));
  assert.ok(back.includes(body), "the non-canonical entry is kept as it was");
  assert.ok(back.includes(canonical));
  assert.ok(back.startsWith("envsmith-bundle 1\n"));
  assert.ok(back.endsWith('{"type":"end","count":2}\n'));
});

Deno.test("a damaged compact bundle is refused with one line naming the file", async () => {
  await using p = await exportedRun(YAML, "r.esc", { compact: true });
  const file = p.bundle;
  const bytes = Deno.readFileSync(file);
  const cut = bytes.subarray(0, COMPACT_HEADER.length + 1 + 20);
  Deno.writeFileSync(file, cut);
  const other = new Store(join(p.dir, "other"));
  await assert.rejects(
    () => importBundle(other, file),
    (e: Error) =>
      e.message.startsWith(`${file}: `) && !e.message.includes("\n") &&
      /nothing was imported/.test(e.message),
  );
  assert.equal([...other.keys()].length, 0);
});

Deno.test("--omit leaves a field out of one kind's entries: their header hash and key still verify, they import marked imported even when trusted, other entries are untouched", async () => {
  await using p = await tmpProject(YAML);
  await runAll(compile(p.file, YAML), p.store);
  const file = join(p.dir, "r.esc");
  const r = await exportBundle(p.store, file, {
    compact: true,
    omit: ["test.add:value.parts"],
  });
  assert.equal(r.omitted, 2);
  for (const trust of [false, true]) {
    const other = new Store(join(p.dir, `other-${trust}`));
    const i = await importBundle(other, file, { trust });
    assert.equal(i.entries, 3);
    for (const k of p.store.keys()) {
      const mine = p.store.readEntry(k)!;
      const got = other.readEntry(k)!; // verifies the header hash
      if (mine.kind === "test.add") {
        const v = got.value as Record<string, unknown>;
        assert.equal(v.sum, (mine.value as Record<string, unknown>).sum);
        assert.equal("parts" in v, false);
        assert.ok(other.importMark(k) !== null, "never a cached result");
      } else {
        assert.deepEqual(other.entryBytes(k), p.store.entryBytes(k));
      }
    }
  }
  await assert.rejects(
    () => exportBundle(p.store, join(p.dir, "x.esc"), { omit: ["parts"] }),
    /--omit parts: give KIND:field.path/,
  );
});

Deno.test("a format 1 compact bundle (no zipped columns, differences or key references) is still read", () => {
  const enc = new TextEncoder();
  const json = '{"key":"k","kind":"x","blobs":[],"value":7}';
  const name = "c".repeat(64);
  const cols: [string, string][] = [
    ["\0kind", '"x"'],
    ["x", '{["key","kind","blobs","value"]'],
    ["x.blobs", "[0"],
    ["x.key", '"k"'],
    ["x.kind", '"x"'],
    ["x.value", "7"],
  ];
  const meta = JSON.stringify({
    records: [["e", name, 1, []]],
    columns: cols.map(([n, t]) => [n, 1, enc.encode(t).length]),
  });
  const payload = enc.encode(meta + "\n" + cols.map(([, t]) => t).join(""));
  const v1 = Buffer.concat([
    enc.encode("envsmith-compact 1\n"),
    brotliCompressSync(payload),
  ]);
  assert.ok(isCompactBundle(v1));
  const body = `envsmith-entry 1 ${sha256Hex(enc.encode(json))}\n${json}`;
  const plain = new TextDecoder().decode(concat(decodeCompact(v1, 1e6)));
  assert.equal(
    plain,
    "envsmith-bundle 1\n" +
      JSON.stringify({
        type: "entry",
        name,
        size: enc.encode(body).length,
        sha256: sha256Hex(enc.encode(body)),
        imported: true,
      }) + "\n" + body + "\n" + '{"type":"end","count":1}\n',
  );
  // written again, it is format 2 and stands for the same plain bundle
  const v2 = encodeCompact(enc.encode(plain));
  assert.ok(
    new TextDecoder().decode(v2.subarray(0, 19)) === "envsmith-compact 2\n",
  );
  assert.equal(new TextDecoder().decode(concat(decodeCompact(v2, 1e6))), plain);
});
