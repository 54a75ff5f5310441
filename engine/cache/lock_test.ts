import assert from "node:assert/strict";
import { join } from "node:path";
import { hostname } from "node:os";
import { Lock, lockHolder, tryLock } from "./lock.ts";

Deno.test("locks: exclusive, released by token, stale when the owner process is gone or silent", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "k.lock");
    const a = tryLock(path, "a", { heartbeatMs: 0 });
    assert.ok(a instanceof Lock);
    const b = tryLock(path, "b", { heartbeatMs: 0 });
    assert.ok(!(b instanceof Lock));
    assert.equal(b.note, "a");
    a.release();
    const c = tryLock(path, "c", { heartbeatMs: 0 });
    assert.ok(c instanceof Lock);
    // Releasing an old handle does not remove someone else's lock.
    a.release();
    assert.equal(JSON.parse(await Deno.readTextFile(path)).note, "c");
    c.release();
    // A lock of a dead process on this host is stale.
    const dead = new Deno.Command("true").spawn();
    const pid = dead.pid;
    await dead.status;
    await Deno.writeTextFile(
      path,
      JSON.stringify({
        pid,
        host: hostname(),
        token: "x",
        note: "dead",
        since: "",
      }),
    );
    const d = tryLock(path, "d", { heartbeatMs: 0 });
    assert.ok(d instanceof Lock, "stale lock of a dead pid is broken");
    d.release();
    // A lock of another host is stale only when untouched for staleMs.
    await Deno.writeTextFile(
      path,
      JSON.stringify({
        pid: 1,
        host: "elsewhere",
        token: "y",
        note: "remote",
        since: "",
      }),
    );
    assert.ok(
      !(tryLock(path, "e", { staleMs: 60_000, heartbeatMs: 0 }) instanceof
        Lock),
    );
    const old = new Date(Date.now() - 120_000);
    await Deno.utime(path, old, old);
    const e = tryLock(path, "e", { staleMs: 60_000, heartbeatMs: 0 });
    assert.ok(e instanceof Lock, "silent remote lock is broken");
    e.release();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("lockHolder: the live holder without taking the lock; null when free, stale or dead", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "k.lock");
    assert.equal(lockHolder(path), null);
    const a = tryLock(path, "mine", { heartbeatMs: 0 });
    assert.ok(a instanceof Lock);
    assert.equal(lockHolder(path)?.note, "mine");
    assert.ok(tryLock(path, "x", { heartbeatMs: 0 }) instanceof Lock === false);
    // untouched for longer than staleMs
    const old = new Date(Date.now() - 10_000);
    Deno.utimeSync(path, old, old);
    assert.equal(lockHolder(path, { staleMs: 5_000 }), null);
    assert.equal(lockHolder(path, { staleMs: 60_000 })?.note, "mine");
    // a holder on this host whose process is gone
    Deno.writeTextFileSync(
      path,
      JSON.stringify({ ...a.info, pid: 2 ** 22 + 12345 }),
    );
    assert.equal(lockHolder(path), null);
    // another host's fresh lock counts
    Deno.writeTextFileSync(
      path,
      JSON.stringify({ ...a.info, host: `not-${hostname()}` }),
    );
    assert.equal(lockHolder(path)?.host, `not-${hostname()}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
