import assert from "node:assert/strict";
import { join } from "node:path";
import { hostname } from "node:os";
import { Lock, tryLock } from "./lock.ts";

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
