// A served model's process: ready on GET /v1/models, stopped whole (its
// process group) on stop, on a failed start, on timeout, and when the
// process that started it dies.
import { scaledMs } from "../engine/testdata/load.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { rejectsType } from "./_testing.ts";
import {
  FAKE_SERVER,
  groupMembers as members,
  pgidOf,
} from "./_served_testing.ts";
import {
  freePort,
  groupAlive,
  LlmServeError,
  startServedProcess,
} from "./served_process.ts";

Deno.test("served process: ready when /v1/models answers; stop ends the whole group", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-served-" });
  try {
    const script = join(dir, "fake.ts");
    await Deno.writeTextFile(script, FAKE_SERVER);
    const port = freePort();
    const log: string[] = [];
    // the command forks a second process: both are in the group
    const server = await startServedProcess({
      command: [
        "sh",
        "-c",
        `sleep 600 & exec "${Deno.execPath()}" run -A "${script}" ${port} my-model`,
      ],
      port,
      readyTimeoutMs: 60_000,
      log: (l) => log.push(l),
    });
    assert.equal(server.baseURL, `http://127.0.0.1:${port}/v1`);
    assert.equal(server.model, "my-model");
    assert.equal(server.pgid, pgidOf(log));
    // sh (the wrapper), the watchdog, sleep, deno: all in one group
    assert.ok(members(server.pgid).length >= 3, `${members(server.pgid)}`);
    await server.stop();
    assert.equal(groupAlive(server.pgid), false);
    assert.deepEqual(members(server.pgid), []);
    assert.match(log.at(-1)!, /serve: stopped/);
    await server.stop(); // idempotent
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("served process: a command that exits first is an error with its stderr tail", async () => {
  const log: string[] = [];
  const e = await rejectsType(
    () =>
      startServedProcess({
        command: ["sh", "-c", "echo 'CUDA error: no GPU found' >&2; exit 3"],
        port: freePort(),
        readyTimeoutMs: 30_000,
        log: (l) => log.push(l),
      }),
    LlmServeError,
  );
  assert.match(e.message, /exited \(code 3\) before it answered GET/);
  assert.match(e.message, /its stderr ends:\nCUDA error: no GPU found/);
  assert.equal(e.stderrTail, "CUDA error: no GPU found");
  assert.equal(groupAlive(pgidOf(log)), false);
});

Deno.test("served process: no answer within the time limit stops the group and says why", async () => {
  const log: string[] = [];
  const t0 = performance.now();
  const e = await rejectsType(
    () =>
      startServedProcess({
        command: ["sh", "-c", "echo loading weights >&2; sleep 600"],
        port: freePort(),
        readyTimeoutMs: 1000,
        killGraceMs: 500,
        log: (l) => log.push(l),
      }),
    LlmServeError,
  );
  assert.ok(performance.now() - t0 < scaledMs(10_000));
  assert.match(
    e.message,
    /did not answer GET http:\/\/127\.0\.0\.1:\d+\/v1\/models within 1 s \(serve\.ready_timeout_s\)/,
  );
  assert.match(e.message, /loading weights/);
  assert.deepEqual(members(pgidOf(log)), []);
});

Deno.test("served process: when the process that started it is killed, the server goes too", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-served-" });
  try {
    const parent = join(dir, "parent.ts");
    await Deno.writeTextFile(
      parent,
      `import { freePort, startServedProcess } from ${
        JSON.stringify(new URL("./served_process.ts", import.meta.url).href)
      };
await startServedProcess({
  command: ["sh", "-c", "sleep 600"],
  port: freePort(),
  readyTimeoutMs: 600_000,
  log: (l) => console.log(l),
});`,
    );
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", parent],
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream())
      .getReader();
    let text = "";
    while (!/process group \d+/.test(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    const pgid = pgidOf([text]);
    assert.ok(groupAlive(pgid));
    child.kill("SIGKILL");
    await child.status;
    reader.cancel().catch(() => {});
    const t0 = performance.now();
    while (groupAlive(pgid) && performance.now() - t0 < 15_000) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(members(pgid), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
