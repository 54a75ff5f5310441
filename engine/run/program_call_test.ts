import { scaledMs } from "../_test_util.ts";
import assert from "node:assert/strict";
import { callProgram, ProgramCallError } from "./program_call.ts";

const PY = "python3";

async function failure(
  script: string,
  options: { timeoutMs?: number; stdoutCapBytes?: number } = {},
): Promise<ProgramCallError> {
  try {
    await callProgram([PY, "-c", script], { request: "x" }, {
      name: "fam.py",
      ...options,
    });
  } catch (e) {
    assert.ok(e instanceof ProgramCallError, String(e));
    return e;
  }
  throw new Error("no failure");
}

Deno.test("callProgram: the reply is the JSON on stdout; stderr goes to the log", async () => {
  const lines: string[] = [];
  const reply = await callProgram(
    [
      PY,
      "-c",
      "import json,sys; r=json.load(sys.stdin); print('hi', file=sys.stderr); print(json.dumps({'got': r['n'] * 2}))",
    ],
    { n: 21 },
    { name: "fam.py", log: (l) => lines.push(l) },
  );
  assert.deepEqual(reply, { got: 42 });
  assert.deepEqual(lines, ["fam.py: hi"]);
});

Deno.test("callProgram: a hang, a crash, a flood and garbage are one line each", async () => {
  const t0 = performance.now();
  const hang = await failure("import time; time.sleep(60)", {
    timeoutMs: 300,
  });
  assert.equal(hang.failure, "timeout");
  assert.match(hang.message, /^fam\.py timed out after 0\.3 s/);
  assert.ok(performance.now() - t0 < scaledMs(20_000));
  const crash = await failure(
    "import sys; print('boom', file=sys.stderr); sys.exit(3)",
  );
  assert.equal(crash.failure, "crash");
  assert.equal(crash.message, "fam.py exited with code 3; stderr ends: boom");
  const flood = await failure("print('x' * 100000)", { stdoutCapBytes: 1000 });
  assert.equal(flood.failure, "flood");
  assert.match(
    flood.message,
    /^fam\.py flooded stdout \(over 1000 bytes; 99001 dropped\)/,
  );
  const garbage = await failure("print('hello')");
  assert.equal(garbage.failure, "garbage");
  assert.match(garbage.message, /not JSON on stdout .*it begins "hello"/);
  for (const e of [hang, crash, flood, garbage]) {
    assert.ok(!e.message.includes("\n"), e.message);
  }
  const start = await callProgram(["envsmith-no-such-program"], {}).catch((e) =>
    e
  );
  assert.ok(start instanceof ProgramCallError);
  assert.equal(start.failure, "start");
});
