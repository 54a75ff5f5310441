import { scaledMs } from "../_test_util.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { compileExperiment } from "../compile/experiment.ts";
import { makePlan } from "./plan.ts";
import { runPlan } from "./scheduler.ts";
import { exec } from "./exec_kind.ts";
import { Store } from "../cache/store.ts";
import { UserError } from "../errors.ts";

const SCRIPT = `
const input = JSON.parse(Deno.readTextFileSync(Deno.env.get("ENVSMITH_INPUT")));
Deno.mkdirSync("out", { recursive: true });
const bytes = new Uint8Array(16).map((_, i) => (i * input.k) & 255);
Deno.writeFileSync("model.bin", bytes);
Deno.writeTextFileSync("out/result.json", JSON.stringify({
  k: input.k, seedIsNumber: /^\\d+$/.test(Deno.env.get("ENVSMITH_SEED")),
  allowed: Deno.env.get("ALLOWED_VAR") ?? null, secret: Deno.env.get("SECRET_VAR") ?? null,
}));
console.log("wrote model");
if (input.k === 13) { console.error("unlucky k"); Deno.exit(3); }
`;
const READER = `
const b = Deno.readFileSync("in.bin");
Deno.writeTextFileSync("sum.json", JSON.stringify({ sum: b.reduce((a, x) => a + x, 0) }));
`;

function yaml(k: number) {
  const deno = JSON.stringify(Deno.execPath());
  return `experiment: ex
seed: 1
nodes:
  k: { kind: test.add, with: { a: ${k} } }
  train:
    kind: exec
    with:
      command: ${deno}
      args: [run, -A, script.js]
      inputs: [script.js]
      input: { k: $k.sum }
      outputs: [model.bin, { name: result, path: out/result.json }]
      json: out/result.json
      env: [ALLOWED_VAR]
  read:
    kind: exec
    with:
      command: ${deno}
      args: [run, -A, reader.js]
      inputs: [reader.js]
      files: { in.bin: $train.outputs.model_bin }
      json: sum.json
`;
}

Deno.test("exec: runs a command with declared inputs/outputs, env allow-list, chaining, fingerprint", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-exec-" });
  try {
    await Deno.writeTextFile(join(dir, "script.js"), SCRIPT);
    await Deno.writeTextFile(join(dir, "reader.js"), READER);
    const file = join(dir, "exp.yaml");
    const store = new Store(join(dir, "cache"));
    const { kinds } = await import("../testdata/kinds.ts");
    const compile = (k: number) =>
      compileExperiment(file, yaml(k), { kinds: [...kinds, exec] });
    Deno.env.set("ALLOWED_VAR", "yes");
    Deno.env.set("SECRET_VAR", "hidden");
    const exp = compile(3);
    const r = await runPlan(makePlan(exp, store), store, { jobs: 2 });
    assert.equal(
      r.failures.length,
      0,
      r.failures.map((f) => f.message).join("\n"),
    );
    const train = r.values.get(exp.byId.get("train")!)!.value as Record<
      string,
      Record<string, unknown>
    >;
    assert.deepEqual(train.json, {
      k: 3,
      seedIsNumber: true,
      allowed: "yes",
      secret: null,
    });
    const model = train.outputs!.model_bin as { $blob: string; size: number };
    assert.equal(model.size, 16);
    assert.deepEqual([...store.readBlob(model)].slice(0, 4), [0, 3, 6, 9]);
    assert.equal(
      (train.outputs!.result as { media: string }).media,
      "application/json",
    );
    const read = r.values.get(exp.byId.get("read")!)!.value as {
      json: { sum: number };
    };
    assert.equal(
      read.json.sum,
      Array.from({ length: 16 }, (_, i) => (i * 3) & 255).reduce(
        (a, b) => a + b,
        0,
      ),
    );
    assert.match(
      await Deno.readTextFile(
        store.logPath(r.values.get(exp.byId.get("train")!)!.key),
      ),
      /stdout wrote model/,
    );
    // Editing an input file changes the key, and plan says why.
    await Deno.writeTextFile(join(dir, "script.js"), SCRIPT + "\n// edited\n");
    const plan = makePlan(compile(3), store);
    const it = plan.items.find((x) => x.node.id === "train")!;
    assert.equal(it.status, "run");
    assert.deepEqual(it.why, ["fingerprint changed: files.script.js"]);
    assert.equal(plan.items.find((x) => x.node.id === "k")!.status, "cached");
    // A failing command fails the node with the end of its stderr.
    const bad = compile(13);
    const r2 = await runPlan(makePlan(bad, store), store, { jobs: 2 });
    assert.equal(r2.failures.length, 1);
    assert.match(
      r2.failures[0]!.message,
      /exited with code 3; stderr ends:\nunlucky k/,
    );
  } finally {
    Deno.env.delete("ALLOWED_VAR");
    Deno.env.delete("SECRET_VAR");
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("exec: input files must be literal paths inside the experiment directory", () => {
  assert.throws(
    () => exec.fingerprint!({ inputs: ["$other"] }, { baseDir: "/tmp" }),
    /must be literal paths/,
  );
  assert.throws(
    () =>
      exec.fingerprint!({ inputs: ["no-such-file.py"] }, { baseDir: "/tmp" }),
    (e: unknown) =>
      e instanceof UserError &&
      /input file no-such-file\.py does not exist .*relative to \/tmp/.test(
        e.message,
      ),
  );
  // ... and planning refuses it, naming the node, before anything runs.
  const missing = compileExperiment(
    "/tmp/envsmith-no-such-dir/e.yaml",
    `experiment: x\nseed: 1\nnodes:\n  a: { kind: exec, with: { command: python3, args: [x.py], inputs: [x.py] } }\n`,
    { kinds: [exec] },
  );
  assert.throws(
    () => makePlan(missing, new Store(Deno.makeTempDirSync())),
    (e: unknown) =>
      e instanceof UserError &&
      /^a: input file x\.py does not exist/.test(e.message),
  );
  const r = compileExperiment.bind(null, "e.yaml");
  assert.throws(
    () =>
      r(
        `experiment: x\nseed: 1\nnodes:\n  a: { kind: exec, with: { command: ls, outputs: [../escape] } }\n`,
        { kinds: [exec] },
      ),
    /must be a relative path inside the directory/,
  );
});

Deno.test("exec: inputs that are not regular files, or over input-bytes, are refused at plan in one line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-exec-" });
  try {
    await Deno.symlink("/dev/zero", join(dir, "zero"));
    await new Deno.Command("mkfifo", { args: [join(dir, "fifo")] }).output();
    await Deno.writeFile(join(dir, "data.bin"), new Uint8Array(5000));
    const plan = (input: string, limits?: { inputBytes: number }) =>
      makePlan(
        compileExperiment(
          join(dir, "e.yaml"),
          `experiment: x\nseed: 1\nnodes:\n  a: { kind: exec, with: { command: cat, inputs: [${input}] } }\n`,
          { kinds: [exec], ...(limits ? { limits } : {}) },
        ),
        new Store(join(dir, "cache")),
      );
    for (
      const [input, re, limits] of [
        [
          "zero",
          /^a: input zero \(\/dev\/zero\) is a device, not a regular file: inputs: are hashed into the key/,
        ],
        ["fifo", /^a: input fifo is a FIFO, not a regular file/],
        [
          "data.bin",
          /^a: the inputs of this node hold more than 4096 bytes \(data\.bin is 5000\);.*--limit input-bytes=N/,
          { inputBytes: 4096 },
        ],
      ] as const
    ) {
      const t0 = performance.now();
      assert.throws(
        () => plan(input, limits),
        (e: unknown) =>
          e instanceof UserError && re.test(e.message) &&
          !e.message.includes("\n"),
        input,
      );
      assert.ok(performance.now() - t0 < scaledMs(5000), input);
    }
    // within the limit, the file's digest is in the key
    const ok = plan("data.bin", { inputBytes: 5000 });
    assert.equal(ok.keys.length, 1);
    assert.ok(ok.keys[0]!.cacheable);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("exec: timeout_ms and an interrupted run kill every process the command forked", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-exec-" });
  const alive = (pid: number) => {
    try {
      return !/^\d+ \(.*\) Z/.test(Deno.readTextFileSync(`/proc/${pid}/stat`));
    } catch {
      return false;
    }
  };
  const pids = async (name: string) => {
    await new Promise((r) => setTimeout(r, 200)); // reaped by init
    const text = await Deno.readTextFile(join(dir, name));
    return text.trim().split(/\s+/).map(Number);
  };
  try {
    const store = new Store(join(dir, "cache"));
    const file = join(dir, "exp.yaml");
    const forks = (name: string, timeout: string) =>
      compileExperiment(
        file,
        `experiment: x\nseed: 1\nnodes:\n  a: { kind: exec, with: { command: sh, args: [-c, "echo $$ > ${
          join(dir, name)
        }; sleep 60 & echo $! >> ${
          join(dir, name)
        }; sleep 60"]${timeout} } }\n`,
        { kinds: [exec] },
      );
    const t0 = performance.now();
    const exp = forks("p1", ", timeout_ms: 500");
    const r = await runPlan(makePlan(exp, store), store, { jobs: 1 });
    assert.ok(performance.now() - t0 < scaledMs(4000));
    assert.equal(r.failures.length, 1);
    assert.match(r.failures[0]!.message, /sh timed out after 500 ms/);
    const p1 = await pids("p1");
    assert.equal(p1.length, 2);
    assert.deepEqual(p1.filter(alive), []);
    // An abort (what SIGINT/SIGTERM of the run does) stops it as fast.
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 500);
    const t1 = performance.now();
    const exp2 = forks("p2", "");
    const r2 = await runPlan(makePlan(exp2, store), store, {
      jobs: 1,
      signal: ac.signal,
    });
    assert.ok(
      performance.now() - t1 < scaledMs(4000),
      `${performance.now() - t1} ms`,
    );
    assert.equal(r2.values.get(exp2.byId.get("a")!), undefined);
    const p2 = await pids("p2");
    assert.equal(p2.length, 2);
    assert.deepEqual(p2.filter(alive), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("exec: a declared output must be a regular file inside the work directory, checked before it is read", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-exec-" });
  try {
    const store = new Store(join(dir, "cache"));
    const cases: [string, RegExp][] = [
      [
        "ln -s /dev/zero out.bin",
        /declared output out\.bin is a symlink to \/dev\/zero, not a regular file/,
      ],
      [
        "mkfifo out.bin",
        /declared output out\.bin is a FIFO, not a regular file/,
      ],
      [
        "mkdir out.bin",
        /declared output out\.bin is a directory, not a regular file/,
      ],
      [
        "ln -s /etc sub && true",
        /declared output sub\/passwd is not inside the work directory/,
      ],
      ["true", /declared output out\.bin was not written by sh/],
    ];
    for (const [script, expected] of cases) {
      const out = script.includes("sub") ? "sub/passwd" : "out.bin";
      const exp = compileExperiment(
        join(dir, "exp.yaml"),
        `experiment: x\nseed: 1\nnodes:\n  a: { kind: exec, with: { command: sh, args: [-c, "${script}"], outputs: [${out}], timeout_ms: 5000 } }\n`,
        { kinds: [exec] },
      );
      const t0 = performance.now();
      const r = await runPlan(makePlan(exp, store), store, { jobs: 1 });
      assert.ok(performance.now() - t0 < scaledMs(3000), script);
      assert.equal(r.failures.length, 1, script);
      assert.match(r.failures[0]!.message, expected);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
