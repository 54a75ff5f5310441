import assert from "node:assert/strict";
import { hostname } from "node:os";
import { join } from "node:path";
import { gc, GC_LOCK, GcRefusedError, verifyCache } from "./gc.ts";
import { announceRun } from "./run_start.ts";
import { type Manifest, writeManifest } from "./manifest.ts";
import { Store } from "./store.ts";
import { testEntry } from "../_test_util.ts";

const entry = testEntry;

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

async function withStore(
  fn: (store: Store) => void | Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-gc-" });
  try {
    await fn(new Store(join(dir, "cache")));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Entries a..e and one good manifest naming a; returns the store's keys. */
function _seed(store: Store): void {
  for (const c of ["a", "b", "c", "d", "e"]) store.writeEntry(entry(key(c)));
  writeManifest(store, manifest("1-ok", [key("a")]));
}

function _count(store: Store): number {
  return [...store.keys()].length;
}

async function _refused(
  store: Store,
  pattern: RegExp,
  dryRunToo = true,
): Promise<void> {
  await assert.rejects(() => gc(store), (e: unknown) => {
    assert.ok(e instanceof GcRefusedError, String(e));
    assert.match(e.message, /^cache gc removed nothing: /);
    assert.match(e.message, pattern);
    assert.equal(e.message.split("\n").length, 1);
    return true;
  });
  assert.equal(_count(store), 5, "every entry is kept");
  // A dry run refuses alike.
  if (dryRunToo) {
    await assert.rejects(() => gc(store, { dryRun: true }), GcRefusedError);
  }
}

for (
  const [what, text, problem] of [
    ["not JSON", "not json", /is not JSON \(/],
    ["empty", "", /is not JSON \(/],
    ["a JSON array", "[1,2,3]", /not a run manifest: a JSON array/],
    [
      "truncated",
      JSON.stringify(manifest("2-bad", [key("b")])).slice(0, -40),
      /is not JSON \(/,
    ],
    [
      "of the wrong shape",
      JSON.stringify({ ...manifest("2-bad", [key("b")]), nodes: 3 }),
      /not a run manifest: nodes: /,
    ],
  ] as const
) {
  Deno.test(`gc: a manifest that is ${what} keeps every entry and names the file and the fix`, async () => {
    await withStore(async (store) => {
      _seed(store);
      const bad = join(store.runsDir("e"), "2-bad.json");
      Deno.writeTextFileSync(bad, text);
      await _refused(store, problem);
      await assert.rejects(() => gc(store), (e: unknown) => {
        const m = (e as Error).message;
        assert.ok(m.includes(bad), m);
        assert.match(
          m,
          /so gc cannot tell which entries that run needs\. Repair it, or delete it if that run's results are not needed; then run `cache gc` again\.$/,
        );
        return true;
      });
      // The bad file is left where it is (moving it would hide it).
      assert.equal(Deno.readTextFileSync(bad), text);
      // Once deleted, gc removes what no manifest names.
      Deno.removeSync(bad);
      const r = await gc(store);
      assert.deepEqual(r.entries.sort(), ["b", "c", "d", "e"].map(key));
      assert.equal(store.hasEntry(key("a")), true);
    });
  });
}

Deno.test("gc: two bad manifests: the first is named, the count of the others given", async () => {
  await withStore(async (store) => {
    _seed(store);
    Deno.writeTextFileSync(join(store.runsDir("e"), "2-x.json"), "{");
    Deno.writeTextFileSync(join(store.runsDir("f"), "3-y.json"), "{");
    await _refused(
      store,
      /2-x\.json is not JSON .*\(and 1 more bad manifest\)/,
    );
  });
});

Deno.test("gc: a symlink named like a manifest is refused, not followed", async () => {
  await withStore(async (store) => {
    _seed(store);
    Deno.symlinkSync("/etc/passwd", join(store.runsDir("e"), "2-l.json"));
    await _refused(store, /2-l\.json is a symlink to \/etc\/passwd/);
  });
});

Deno.test("gc: a manifest an older gc moved to corrupt/ stops gc until it is repaired or deleted", async () => {
  await withStore(async (store) => {
    _seed(store);
    const aside = join(store.root, "corrupt", "manifest-e-2-bad.json.1-abc");
    Deno.mkdirSync(join(store.root, "corrupt"), { recursive: true });
    Deno.writeTextFileSync(aside, "not json");
    await _refused(
      store,
      /manifest-e-2-bad\.json\.1-abc is a manifest an earlier gc moved aside.*move it back into runs\//,
    );
  });
});

Deno.test("gc: an import that runs, or that was killed halfway, stops gc", async () => {
  await withStore(async (store) => {
    _seed(store);
    const rec = store.beginImport("/data/r.esb");
    await _refused(
      store,
      /a `cache import` of \/data\/r\.esb \(pid \d+ on this host\) is writing into this cache.*when the import has finished\.$/,
    );
    rec.release();
    assert.deepEqual(store.importRecords(), []);
    // Killed: its record names a process that is gone.
    const dir = join(store.root, "imports");
    const path = join(dir, "import@x~1~abcdef01.lock");
    Deno.writeTextFileSync(
      path,
      JSON.stringify({
        pid: 2 ** 22 + 7,
        host: hostname(),
        token: "t",
        note: "/data/r.esb",
        since: new Date().toISOString(),
      }),
    );
    await _refused(
      store,
      /a `cache import` of \/data\/r\.esb stopped halfway \(pid 4194311 on this host, gone; record .*\). .*Import the bundle again to finish it/,
    );
    // A record whose owner cannot be read, written just now.
    Deno.writeTextFileSync(path, '{"pid":');
    await _refused(store, /import record .* owner cannot be read \(not JSON/);
    Deno.removeSync(path);
    assert.equal((await gc(store)).entries.length, 4);
  });
});

Deno.test("gc: a lock whose owner cannot be determined, or that no manifest explains, stops gc; stale locks do not", async () => {
  await withStore(async (store) => {
    _seed(store);
    Deno.mkdirSync(join(store.root, "locks"), { recursive: true });
    const lock = store.lockPath(key("f"));
    Deno.writeTextFileSync(lock, "garbage");
    await _refused(
      store,
      /lock .*f{64}\.lock was written 0 s ago but its owner cannot be determined \(not JSON \(half-written\?\)\).*\(rm .*\)\.$/,
    );
    // Not refreshed for longer than a live owner would allow: stale.
    const old = new Date(Date.now() - 600_000);
    Deno.utimeSync(lock, old, old);
    const held = store.lock(key("g"), "n7 in run X");
    assert.ok("release" in held);
    await _refused(
      store,
      /entry g{64} is being computed \(n7 in run X in pid \d+ on this host\) by a process no run manifest accounts for/,
    );
    // A live run that names the key accounts for it.
    writeManifest(
      store,
      manifest("2-live", [key("g")], { status: "running", pid: Deno.pid }),
    );
    const r = await gc(store);
    assert.deepEqual(r.entries.sort(), ["b", "c", "d", "e"].map(key));
    held.release();
  });
});

Deno.test("gc: another gc holding the cache stops a second one", async () => {
  await withStore(async (store) => {
    _seed(store);
    const other = store.lock(GC_LOCK, "cache gc");
    assert.ok("release" in other);
    await _refused(
      store,
      /another `cache gc` \(pid \d+ on this host\) is running on this cache/,
      false, // a dry run only reads
    );
    other.release();
    assert.equal((await gc(store)).entries.length, 4);
    assert.equal(store.lockHolder(GC_LOCK), null, "gc released its lock");
  });
});

Deno.test("gc: a starting run is waited for; gc then keeps what its manifest names", async () => {
  await withStore(async (store) => {
    _seed(store);
    const run = await announceRun(store, "2-starting", "run e");
    // Never writes its manifest: gc waits, then refuses.
    await assert.rejects(
      () => gc(store, { startWaitMs: 300 }),
      /a run \(pid \d+ on this host, run e\) is starting on this cache and has not written its manifest yet/,
    );
    assert.equal(_count(store), 5);
    // Writes it while gc waits: gc goes on and keeps its entries.
    setTimeout(
      () =>
        writeManifest(
          store,
          manifest("2-starting", [key("b")], {
            status: "running",
            pid: Deno.pid,
          }),
        ),
      300,
    );
    const r = await gc(store, { startWaitMs: 5000 });
    assert.deepEqual(r.entries.sort(), ["c", "d", "e"].map(key));
    run.release();
  });
});

Deno.test("gc: a run waits for a gc that holds the cache, saying so once", async () => {
  await withStore(async (store) => {
    const held = store.lock(GC_LOCK, "cache gc");
    assert.ok("release" in held);
    const lines: string[] = [];
    let started = false;
    const p = announceRun(store, "r1", "run e", {
      pollMs: 20,
      onWait: (l) => lines.push(l),
    }).then((l) => {
      started = true;
      return l;
    });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(started, false);
    held.release();
    const l = await p;
    assert.equal(lines.length, 1);
    assert.match(
      lines[0]!,
      /^waiting for `cache gc` \(pid \d+ on host .*\) to finish before planning/,
    );
    l.release();
  });
});

Deno.test("gc: a live run keeps its manifest and entries whatever --keep-runs says", async () => {
  await withStore(async (store) => {
    for (const c of ["a", "b", "d"]) store.writeEntry(entry(key(c)));
    writeManifest(
      store,
      manifest("1-live", [key("a")], { status: "running", pid: Deno.pid }),
    );
    writeManifest(store, manifest("2-done", [key("b")]));
    writeManifest(store, manifest("3-done", [key("d")]));
    const r = await gc(store, { keepRuns: 1 });
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
    const r2 = await gc(store, { keepRuns: 1 });
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
