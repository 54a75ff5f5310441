import { scaledMs } from "../_test_util.ts";
import assert from "node:assert/strict";
import { ChildSpawnError, describeExit, runChild } from "./child_process.ts";

/** Whether process `pid` still exists (a zombie counts as gone). */
function _alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

async function _gone(pids: number[], ms = 3000): Promise<boolean> {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    if (pids.every((p) => !_alive(p))) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

function _pids(bytes: Uint8Array): number[] {
  return new TextDecoder().decode(bytes).trim().split(/\s+/).map(Number);
}

// `sh` prints its own pid and its background child's, then waits.
const FORKS = "echo $$; sleep 60 & echo $!; sleep 60 & echo $!; wait";

Deno.test("runChild: a timeout kills the whole process group within the grace", async () => {
  const t0 = performance.now();
  const r = await runChild("sh", {
    args: ["-c", FORKS],
    timeoutMs: 300,
    killGraceMs: 300,
  });
  const ms = performance.now() - t0;
  assert.equal(r.timedOut, true);
  assert.equal(r.success, false);
  assert.ok(ms < scaledMs(2500), `took ${ms} ms`);
  const pids = _pids(r.stdout);
  assert.equal(pids.length, 3);
  assert.ok(await _gone(pids), `still alive: ${pids.filter(_alive)}`);
  assert.match(
    describeExit("sh", r, { timeoutMs: 300 }),
    /timed out after 300 ms/,
  );
});

Deno.test("runChild: plain sh -c 'sleep 60' and 'sleep 60 & sleep 60' stop at the timeout", async () => {
  for (const script of ["sleep 60", "sleep 60 & sleep 60"]) {
    const t0 = performance.now();
    const r = await runChild("sh", { args: ["-c", script], timeoutMs: 200 });
    assert.equal(r.timedOut, true, script);
    assert.ok(performance.now() - t0 < scaledMs(2500), script);
  }
});

Deno.test("runChild: aborting the signal kills the group", async () => {
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 300);
  const t0 = performance.now();
  const r = await runChild("sh", { args: ["-c", FORKS], signal: ac.signal });
  assert.equal(r.aborted, true);
  assert.equal(r.success, false);
  assert.ok(performance.now() - t0 < scaledMs(2500));
  assert.ok(await _gone(_pids(r.stdout)));
  assert.match(describeExit("sh", r), /was stopped/);
});

Deno.test("runChild: an already aborted signal stops the child at once", async () => {
  const ac = new AbortController();
  ac.abort();
  const r = await runChild("sleep", { args: ["60"], signal: ac.signal });
  assert.equal(r.aborted, true);
  assert.ok(r.ms < scaledMs(2500));
});

Deno.test("runChild: what a successful child left in the background is killed, and the call does not wait for it", async () => {
  const r = await runChild("sh", { args: ["-c", "sleep 60 & echo $!"] });
  assert.equal(r.success, true);
  assert.ok(r.ms < scaledMs(2500), `took ${r.ms} ms`);
  assert.ok(await _gone(_pids(r.stdout)));
});

Deno.test("runChild: a process that left the group (setsid) is found by its mark and killed too", async () => {
  const r = await runChild("sh", {
    args: ["-c", "setsid sleep 60 & echo $!; sleep 0.2"],
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
  });
  assert.equal(r.success, true);
  const pids = _pids(r.stdout);
  assert.ok(await _gone(pids), `still alive: ${pids.filter(_alive)}`);
});

Deno.test("runChild: stdin in, stdout out, exit codes", async () => {
  const r = await runChild("cat", { stdin: '{"a":1}' });
  assert.equal(r.success, true);
  assert.deepEqual(JSON.parse(new TextDecoder().decode(r.stdout)), { a: 1 });
  const big = new Uint8Array(3 * 1024 * 1024).fill(65);
  const r2 = await runChild("wc", { args: ["-c"], stdin: big });
  assert.equal(new TextDecoder().decode(r2.stdout).trim(), String(big.length));
  // A child that never reads stdin does not block the call.
  const r3 = await runChild("true", { stdin: big });
  assert.equal(r3.success, true);
  const r4 = await runChild("sh", { args: ["-c", "echo oops >&2; exit 3"] });
  assert.equal(r4.code, 3);
  assert.equal(r4.success, false);
  assert.equal(
    describeExit("sh", r4),
    "sh exited with code 3; stderr ends:\noops",
  );
});

Deno.test("runChild: output past the cap keeps the tail and counts what was dropped, in bounded time", async () => {
  // 8 MiB on one line (no newline), capture capped at 1 MiB.
  const lines: [string, string][] = [];
  const r = await runChild("sh", {
    args: ["-c", "head -c 8388608 /dev/zero | tr '\\0' a; printf END"],
    stdoutCapBytes: 1024 * 1024,
    maxLineBytes: 100,
    onLine: (s, l) => lines.push([s, l]),
  });
  assert.equal(r.success, true);
  assert.equal(r.stdout.length, 1024 * 1024);
  assert.equal(r.stdoutDropped, 8 * 1024 * 1024 + 3 - 1024 * 1024);
  assert.equal(new TextDecoder().decode(r.stdout.subarray(-4)), "aEND");
  assert.equal(lines.length, 1);
  assert.equal(
    lines[0]![1],
    "a".repeat(100) +
      ` [... ${8 * 1024 * 1024 + 3 - 100} more bytes of this line dropped]`,
  );
  assert.ok(r.ms < scaledMs(5000), `took ${r.ms} ms`);
});

Deno.test("runChild: the log cap drops the middle and gives the tail with a note", async () => {
  const lines: string[] = [];
  const r = await runChild("sh", {
    args: ["-c", "i=0; while [ $i -lt 200 ]; do echo line$i; i=$((i+1)); done"],
    logCapBytes: 100,
    onLine: (_s, l) => lines.push(l),
  });
  assert.equal(r.success, true);
  // line0..line9 are 6 bytes each with the newline: 16 lines fit in 100.
  assert.deepEqual(lines.slice(0, 3), ["line0", "line1", "line2"]);
  assert.ok(r.logDropped > 0);
  const note = lines.findIndex((l) => l.startsWith("[log cap"));
  assert.ok(note > 0);
  assert.match(
    lines[note]!,
    new RegExp(`${r.logDropped} bytes of output dropped`),
  );
  assert.equal(lines.at(-1), "line199");
});

Deno.test("runChild: a program that does not exist is a ChildSpawnError naming it", async () => {
  await assert.rejects(
    runChild("no-such-program-envsmith"),
    (e: unknown) =>
      e instanceof ChildSpawnError &&
      /no-such-program-envsmith: no such program/.test(e.message),
  );
});

Deno.test("runChild: when this process is SIGKILLed, the watchdog kills the child's group", async () => {
  const code = `
    import { runChild } from ${
    JSON.stringify(new URL("./child_process.ts", import.meta.url).href)
  };
    await runChild("sh", { args: ["-c", ${
    JSON.stringify(FORKS)
  }], onLine: (_s, l) => console.log(l) });
  `;
  const parent = new Deno.Command(Deno.execPath(), {
    args: ["eval", code],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = parent.stdout.getReader();
  let text = "";
  while (text.trim().split(/\s+/).length < 3) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  const pids = text.trim().split(/\s+/).map(Number);
  assert.equal(pids.length, 3);
  assert.ok(pids.every(_alive));
  parent.kill("SIGKILL");
  await parent.status;
  reader.releaseLock();
  await parent.stdout.cancel();
  assert.ok(await _gone(pids, 5000), `still alive: ${pids.filter(_alive)}`);
});

Deno.test("runChild: a program that never reads its 8 MB stdin neither hangs the call nor loses its output", async () => {
  const stdin = new Uint8Array(8 * 1024 * 1024).fill(0x7b);
  const t0 = performance.now();
  // Exits without reading: the writer must give up, not wait forever.
  const quits = await runChild("sh", {
    args: ["-c", "echo done"],
    stdin,
    timeoutMs: 20_000,
  });
  assert.equal(quits.success, true);
  assert.equal(new TextDecoder().decode(quits.stdout).trim(), "done");
  assert.ok(performance.now() - t0 < scaledMs(10_000));
  // Never reads and never ends: the timeout ends it and its group.
  const stuck = await runChild("sh", {
    args: ["-c", "sleep 60 & sleep 60"],
    stdin,
    timeoutMs: 1500,
  });
  assert.equal(stuck.timedOut, true);
  assert.equal(stuck.success, false);
  assert.ok(performance.now() - t0 < scaledMs(20_000));
});
