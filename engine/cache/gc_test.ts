import assert from "node:assert/strict";
import { hostname } from "node:os";
import { join } from "node:path";
import { gc, verifyCache } from "./gc.ts";
import { type Manifest, writeManifest } from "./manifest.ts";
import { type Entry, Store } from "./store.ts";

function entry(key: string): Entry {
  return {
    key,
    id: "n",
    kind: "k",
    components: { format: 1, kind: "k", code: "c", params: null },
    inputs: {},
    codeFiles: {},
    value: 1,
    blobs: [],
    created: new Date().toISOString(),
    ms: 1,
    versions: {},
  };
}

const key = (c: string) => c.repeat(64);

function manifest(
  run: string,
  keys: string[],
  over: Partial<Manifest> = {},
): Manifest {
  return {
    format: 1,
    experiment: "e",
    file: "e.yaml",
    run,
    started: new Date().toISOString(),
    status: "ok",
    versions: {},
    host: hostname(),
    pid: 1,
    code: {},
    counts: {},
    nodes: keys.map((k, i) => ({
      id: `n${i}`,
      key: k,
      kind: "k",
      status: "done",
      cacheable: true,
    })),
    ...over,
  };
}

async function withStore(fn: (store: Store) => void): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-gc-" });
  try {
    fn(new Store(join(dir, "cache")));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("gc: a manifest of the wrong shape is reported, moved aside, and what it names stays protected", async () => {
  await withStore((store) => {
    for (const c of ["a", "b", "c"]) store.writeEntry(entry(key(c)));
    writeManifest(store, manifest("1-ok", [key("a")]));
    const runs = store.runsDir("e");
    Deno.writeTextFileSync(join(runs, "2-shape.json"), "[1,2,3]");
    // Truncated by a crash: not JSON, but it names b.
    const text = JSON.stringify(manifest("3-cut", [key("b")]));
    Deno.writeTextFileSync(join(runs, "3-cut.json"), text.slice(0, -40));
    const r = gc(store);
    assert.deepEqual(r.entries, [key("c")]);
    assert.equal(r.badManifests.length, 2);
    assert.match(
      r.badManifests[0]!,
      /2-shape\.json: not a run manifest: a JSON array, expected an object/,
    );
    assert.match(r.badManifests[1]!, /3-cut\.json: not JSON/);
    assert.equal(store.hasEntry(key("b")), true);
    // Moved aside, and b is still protected by the moved file.
    const again = gc(store);
    assert.deepEqual(again.badManifests, []);
    assert.deepEqual(again.entries, []);
    assert.equal(store.hasEntry(key("b")), true);
  });
});

Deno.test("gc: a live run keeps its manifest and entries whatever --keep-runs says", async () => {
  await withStore((store) => {
    for (const c of ["a", "b", "d"]) store.writeEntry(entry(key(c)));
    writeManifest(
      store,
      manifest("1-live", [key("a")], { status: "running", pid: Deno.pid }),
    );
    writeManifest(store, manifest("2-done", [key("b")]));
    writeManifest(store, manifest("3-done", [key("d")]));
    const r = gc(store, { keepRuns: 1 });
    assert.deepEqual(r.runs.map((p) => p.split("/").pop()), ["2-done.json"]);
    assert.deepEqual(r.liveRuns.map((p) => p.split("/").pop()), [
      "1-live.json",
    ]);
    assert.deepEqual(r.entries, [key("b")]);
    assert.equal(store.hasEntry(key("a")), true);
    // The same run, its process gone: an ordinary old run.
    writeManifest(
      store,
      manifest("1-live", [key("a")], { status: "running", pid: 2 ** 22 + 7 }),
    );
    const r2 = gc(store, { keepRuns: 1 });
    assert.deepEqual(r2.entries, [key("a")]);
  });
});

Deno.test("gc: entries and blobs that are not regular files are removed as corrupt; verify names each", async () => {
  await withStore((store) => {
    store.writeEntry(entry(key("a")));
    writeManifest(store, manifest("1", [key("a"), key("e"), key("f")]));
    Deno.mkdirSync(store.entryPath(key("e")), { recursive: true });
    Deno.mkdirSync(join(store.entryPath(key("f")), ".."), { recursive: true });
    Deno.symlinkSync("/dev/zero", store.entryPath(key("f")));
    Deno.mkdirSync(join(store.blobPath(key("9")), ".."), { recursive: true });
    Deno.symlinkSync("/etc", store.blobPath(key("9")));
    const v = verifyCache(store);
    assert.equal(v.entries, 3);
    assert.equal(v.corrupt.length, 3);
    assert.match(
      v.corrupt.join("\n"),
      /entry e{64} .*: a directory, not an entry file/,
    );
    assert.match(
      v.corrupt.join("\n"),
      /entry f{64} .*: a symlink to \/dev\/zero, not an entry file/,
    );
    assert.match(
      v.corrupt.join("\n"),
      /blob 9{64} .*: a symlink to \/etc, not a blob file/,
    );
    assert.equal(store.hasEntry(key("e")), false);
    assert.equal(verifyCache(store).corrupt.length, 0);
  });
});
