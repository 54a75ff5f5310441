import { scaledMs } from "../../engine/testdata/load.ts";
import assert from "node:assert/strict";
import { ProgramClient, ProgramFamilyError } from "./protocol.ts";

const DIR = new URL("./testdata/", import.meta.url).pathname;

function client(mode: string, timeout = 60): ProgramClient {
  return new ProgramClient(
    {
      command: ["python3", "odd_family.py", mode],
      timeout,
      inputs: [],
      env: [],
    },
    { baseDir: DIR },
  );
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ProgramFamilyError, String(e));
    assert.ok(!e.message.includes("\n"), e.message);
    return e.message;
  }
  throw new Error("not refused");
}

Deno.test("program protocol: describe, generate, train and evaluate replies are read and checked", async () => {
  const c = client("good");
  const d = await c.describe();
  assert.equal(d.name, "odd");
  assert.deepEqual(d.dimensions.map((x) => [x.path, x.min, x.max]), [[
    "n",
    1,
    5,
  ]]);
  const a = await c.generate({ n: 3 }, 7, 4);
  assert.deepEqual(a.map((i) => [i.id, i.n]), [
    ["i0", 3],
    ["i1", 3],
    ["i2", 3],
    ["i3", 3],
  ]);
  assert.deepEqual(await c.generate({ n: 3 }, 7, 4), a);
  const out = await Deno.makeTempDir();
  try {
    const t = await c.train({
      instances: a,
      checkpoint: null,
      outDir: out,
      seed: 1,
      budget: 10,
    });
    assert.deepEqual(t, { file: "ck.txt", metrics: { steps: 10 } });
    assert.equal(await Deno.readTextFile(`${out}/ck.txt`), "None+4");
  } finally {
    await Deno.remove(out, { recursive: true });
  }
  const o = await c.evaluate({ instances: a, checkpoint: null, seed: 0 });
  assert.deepEqual(o.map((x) => [x.id, x.success, x.return, x.steps]), [
    ["i0", 0, 0, 0],
    ["i1", 1, 1, 1],
    ["i2", 0, 2, 2],
    ["i3", 1, 3, 3],
  ]);
  assert.equal(c.requests, 5); // describe once, then one per request
});

Deno.test("program protocol: a hang, a crash, garbage and a flood are one line naming the family program and the request", async () => {
  const t0 = performance.now();
  assert.match(
    await refusal(client("hang", 5).generate({ n: 1 }, 1, 2)),
    /^family program odd_family\.py \(generate\): odd_family\.py timed out after 5 s \(its process group was killed\); make it faster or raise timeout/,
  );
  assert.ok(performance.now() - t0 < scaledMs(30_000));
  assert.equal(
    await refusal(client("crash").generate({ n: 1 }, 1, 2)),
    "family program odd_family.py (generate): odd_family.py exited with code 2; stderr ends: something broke",
  );
  assert.match(
    await refusal(client("garbage").generate({ n: 1 }, 1, 2)),
    /^family program odd_family\.py \(generate\): odd_family\.py wrote something that is not JSON on stdout .*; write exactly one JSON value to stdout, and logs to stderr$/,
  );
  assert.match(
    await refusal(client("flood").generate({ n: 1 }, 1, 2)),
    /^family program odd_family\.py \(generate\): odd_family\.py flooded stdout \(over 16777216 bytes; \d+ dropped\)/,
  );
});

Deno.test("program protocol: replies that break the family's own description are refused with the fix", async () => {
  assert.match(
    await refusal(client("schema").generate({ n: 2 }, 1, 2)),
    /^family program odd_family\.py \(generate\): instance i0 fails the family's own instance_schema \(\/n must be integer\); fix the generator or the schema$/,
  );
  assert.match(
    await refusal(client("short").generate({ n: 2 }, 1, 3)),
    /\(generate\): asked for 3 instances, got 2; return exactly count$/,
  );
  assert.match(
    await refusal(client("good").generate({ n: 7 }, 1, 3)),
    /^family program odd_family\.py: configuration outside the family's space: n = 7 is outside \[1, 5\]; correct it \(presets: easy, hard\)$/,
  );
  assert.match(
    await refusal(client("bad-preset").describe()),
    /\(describe\): preset hard is outside its own space: n = 9 is outside \[1, 5\]/,
  );
  assert.match(
    await refusal(
      client("lost").evaluate({
        instances: [{ id: "a" }, { id: "b" }],
        checkpoint: null,
        seed: 0,
      }),
    ),
    /\(evaluate\): 2 instances sent, 1 outcomes \(1 distinct ids\) returned; return one outcome per instance$/,
  );
});
