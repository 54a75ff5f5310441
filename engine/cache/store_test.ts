import assert from "node:assert/strict";
import { hostname } from "node:os";
import { join } from "node:path";
import { CorruptEntryError } from "../errors.ts";
import { type Entry, Store, tmpName, tmpOwner } from "./store.ts";

async function withStore(fn: (store: Store, dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-store-" });
  try {
    await fn(new Store(join(dir, "cache")), dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function entry(key: string, blobs: string[] = []): Entry {
  return {
    key,
    id: "n",
    kind: "k",
    components: { format: 1, kind: "k", code: "c", params: null },
    inputs: {},
    codeFiles: {},
    value: 1,
    blobs,
    created: new Date().toISOString(),
    ms: 1,
    versions: {},
  };
}

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
