import { scaledMs } from "../_test_util.ts";
import assert from "node:assert/strict";
import { hostname } from "node:os";
import { join } from "node:path";
import { CorruptEntryError } from "../errors.ts";
import { Store, tmpName, tmpOwner } from "./store.ts";
import { testEntry } from "../_test_util.ts";

async function withStore(fn: (store: Store, dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-store-" });
  try {
    await fn(new Store(join(dir, "cache")), dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const entry = testEntry;

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = new Deno.Command("true").spawn();
  await child.status;
  return child.pid;
}

Deno.test("tmpName names the owner; tmpOwner reads it back", () => {
  const n = tmpName("work-0123456789abcdef");
  assert.deepEqual(tmpOwner(n), { host: hostname(), pid: Deno.pid });
  assert.equal(tmpOwner("w-123-abc"), null);
});

Deno.test("cleanLeftovers removes a killed process's temporary files at once, never a live one's", async () => {
  await withStore(async (store) => {
    store.ensureWritable();
    const tmp = join(store.root, "tmp");
    const dead = await deadPid();
    const host = hostname();
    const names = {
      deadWork: `work-0123456789abcdef@${host}~${dead}~0badf00d`,
      deadFile: `w@${host}~${dead}~0badf00e`,
      mine: tmpName("w"),
      otherHost: `w@elsewhere.example~${dead}~0badf00f`,
      legacy: `w-${dead}-0b4df00d`,
    };
    Deno.mkdirSync(join(tmp, names.deadWork));
    Deno.writeTextFileSync(
      join(tmp, names.deadWork, "out.bin"),
      "x".repeat(10),
    );
    for (
      const n of [names.deadFile, names.mine, names.otherHost, names.legacy]
    ) {
      Deno.writeTextFileSync(join(tmp, n), "12345");
    }
    const r = store.cleanLeftovers();
    assert.equal(r.removed, 2);
    assert.equal(r.bytes, 5, "files count their bytes");
    const left = new Set([...Deno.readDirSync(tmp)].map((e) => e.name));
    assert.deepEqual(
      left,
      new Set([names.mine, names.otherHost, names.legacy]),
      "other hosts' and unnamed files wait for the age rule",
    );
    assert.equal(store.cleanLeftovers(0).removed, 2, "...which removes them");
    assert.deepEqual([...Deno.readDirSync(tmp)].map((e) => e.name), [
      names.mine,
    ]);
  });
});

Deno.test("an entry whose blob is missing is moved aside once: reported, then recomputed, not reported on every run", async () => {
  await withStore((store) => {
    const ref = store.writeBlob(new Uint8Array([1, 2, 3]), "x");
    const key = "ab".repeat(32);
    store.writeEntry(entry(key, [ref.$blob]));
    Deno.removeSync(store.blobPath(ref.$blob));
    assert.throws(
      () => store.checkEntry(key),
      (e) =>
        e instanceof CorruptEntryError &&
        e.file === store.entryPath(key) &&
        /its blob [0-9a-f]{64} is missing/.test(e.message),
    );
    assert.equal(store.hasEntry(key), false, "moved to corrupt/");
    assert.equal(store.checkEntry(key), false, "absent now: no second report");
    assert.equal(
      [...Deno.readDirSync(join(store.root, "corrupt"))].length,
      1,
    );
    return Promise.resolve();
  });
});

/** Puts something that is not a regular file at `path`. */
function plant(path: string, what: string, dir: string): void {
  Deno.mkdirSync(join(path, ".."), { recursive: true });
  if (what === "dir") Deno.mkdirSync(path);
  else if (what === "etc") Deno.symlinkSync("/etc", path);
  else if (what === "zero") Deno.symlinkSync("/dev/zero", path);
  else if (what === "dangling") Deno.symlinkSync(join(dir, "nowhere"), path);
  else if (what === "fifo") {
    const r = new Deno.Command("mkfifo", { args: [path] }).outputSync();
    assert.equal(r.success, true);
  }
}

const EXPECTED: Record<string, RegExp> = {
  dir: /a directory, not an? (entry|blob) file/,
  etc: /a symlink to \/etc, not an? (entry|blob) file/,
  zero: /a symlink to \/dev\/zero, not an? (entry|blob) file/,
  dangling: /a dangling symlink to .*nowhere, not an? (entry|blob) file/,
  fifo: /a FIFO, not an? (entry|blob) file/,
};

Deno.test("Store: entries and blobs that are not regular files are corrupt, named, moved aside, never followed", async () => {
  for (const what of Object.keys(EXPECTED)) {
    await withStore(async (store, dir) => {
      const key = what.padEnd(64, "0").replace(/[^0-9a-f]/g, "a");
      plant(store.entryPath(key), what, dir);
      const t0 = performance.now();
      assert.throws(
        () => store.loadVerified(key),
        (e: unknown) =>
          e instanceof CorruptEntryError && EXPECTED[what]!.test(e.message),
      );
      assert.ok(performance.now() - t0 < scaledMs(1000), what);
      // Moved aside: the next read finds nothing, so the node is recomputed.
      assert.equal(store.hasEntry(key), false, what);
      assert.equal(store.readEntry(key), null);
      assert.equal(store.writeEntry(entry(key)), true);
      assert.equal(store.loadVerified(key)!.key, key);
      // The same for a blob.
      const hash = key.replace(/^./, "b");
      plant(store.blobPath(hash), what, dir);
      assert.throws(
        () => store.readBlob({ $blob: hash }),
        (e: unknown) =>
          e instanceof CorruptEntryError && EXPECTED[what]!.test(e.message),
      );
      assert.equal(store.hasBlob(hash), false);
      await Promise.resolve();
    });
  }
});

Deno.test("Store: a blob larger than its reference says is refused before it is read", async () => {
  await withStore(async (store) => {
    const ref = store.writeBlob(new Uint8Array(10), "application/octet-stream");
    Deno.chmodSync(store.blobPath(ref.$blob), 0o644);
    Deno.writeFileSync(store.blobPath(ref.$blob), new Uint8Array(1000));
    assert.throws(
      () => store.readBlob(ref),
      /larger than 10 bytes \(1000\), more than its reference says/,
    );
    await Promise.resolve();
  });
});

Deno.test("store: writing a result whose blob or entry file exists damaged replaces the damaged copy", async () => {
  await withStore((store) => {
    const bytes = new TextEncoder().encode("spin 42");
    const ref = store.writeBlob(bytes, "text/plain");
    const path = store.blobPath(ref.$blob);
    const bad = Deno.readFileSync(path);
    bad[0]! ^= 1;
    Deno.writeFileSync(path, bad);
    // Another process (a fresh Store) computes the same output again.
    const again = new Store(store.root);
    again.writeBlob(bytes, "text/plain");
    assert.deepEqual(Deno.readFileSync(path), bytes);
    assert.deepEqual(new Store(store.root).readBlob(ref), bytes);
    const moved = [...Deno.readDirSync(join(store.root, "corrupt"))];
    assert.equal(moved.length, 1);
    // The same for an entry file (truncated).
    const key = "ab".repeat(32);
    assert.equal(store.writeEntry(entry(key)), true);
    const file = store.entryPath(key);
    const full = Deno.readFileSync(file);
    Deno.writeFileSync(file, full.slice(0, 20));
    assert.equal(again.writeEntry(entry(key)), true);
    assert.equal(new Store(store.root).readEntry(key)?.key, key);
    // An intact one stays (write-once).
    const kept = Deno.readFileSync(file);
    assert.equal(again.writeEntry(entry(key)), false);
    assert.deepEqual(Deno.readFileSync(file), kept);
    return Promise.resolve();
  });
});

Deno.test("store: an entry or blob edited in place (same length) fails its sha256 check, is named and moved aside", async () => {
  await withStore((store) => {
    const ref = store.writeBlob(new TextEncoder().encode("spin 42"), "x");
    const key = "cd".repeat(32);
    store.writeEntry(entry(key, [ref.$blob]));
    // a fresh store (nothing verified in this process) reads the edited files
    const fresh = new Store(store.root);
    const blobFile = store.blobPath(ref.$blob);
    Deno.chmodSync(blobFile, 0o644);
    Deno.writeFileSync(blobFile, new TextEncoder().encode("spin 43"));
    assert.throws(
      () => fresh.readBlob(ref),
      (e) =>
        e instanceof CorruptEntryError && e.file === blobFile &&
        /sha256 of the bytes does not match the blob's name/.test(e.message),
    );
    assert.equal(fresh.hasBlob(ref.$blob), false, "the blob is moved aside");
    const file = store.entryPath(key);
    Deno.chmodSync(file, 0o644);
    const text = Deno.readTextFileSync(file);
    assert.match(text, /"value":1/);
    Deno.writeTextFileSync(file, text.replace('"value":1', '"value":2'));
    assert.throws(
      () => new Store(store.root).checkEntry(key),
      (e) =>
        e instanceof CorruptEntryError && e.file === file &&
        /sha256 of the content does not match its header/.test(e.message),
    );
    assert.equal(store.hasEntry(key), false, "the entry is moved aside");
    return Promise.resolve();
  });
});
