import assert from "node:assert/strict";
import { join } from "node:path";
import type { Command } from "@commander-js/extra-typings";
import { UserError } from "@envsmith/engine/errors";
import { generate, instancesToJsonLines } from "../mapf/mod.ts";
import { initCheckpoint, loadCheckpoint, OBS_VERSION } from "../policy/mod.ts";
import { startStubServer } from "../llm/mod.ts";
import { compileInstance } from "../mapf/instance.ts";
import { parsePrompt } from "../mapf/render_text.ts";
import { pathsToPlan } from "../mapf/replay.ts";
import { solveMakespan } from "../mapf/solve_makespan.ts";
import { trainCommand } from "./train_command.ts";
import { evaluateCommand } from "./evaluate_command.ts";
import type { PolicyCliIo } from "./_policy.ts";
import { tmpExperiment } from "../_test_util.ts";

async function run(
  // deno-lint-ignore no-explicit-any
  make: (io: PolicyCliIo) => Command<any, any, any>,
  args: string[],
  cache?: string,
): Promise<{ out: string; err: string; status: string[] }> {
  const out: string[] = [], err: string[] = [], status: string[] = [];
  const cmd = make({
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    status: (t) => status.push(t),
    endStatus: () => {},
    ...(cache !== undefined ? { cache } : {}),
  });
  cmd.exitOverride();
  cmd.configureOutput({
    writeOut: (s) => out.push(s),
    writeErr: (s) => err.push(s),
  });
  await cmd.parseAsync(args, { from: "user" });
  return { out: out.join("\n"), err: err.join("\n"), status };
}

Deno.test("cli train -> evaluate: checkpoint, progress lines, resume, text and JSON metrics", async () => {
  await using tmp = await tmpExperiment("policy");
  const { dir } = tmp;
  const out = join(dir, "p.onnx");
  const r = await run(trainCommand, [
    "--preset",
    "easy",
    "--count",
    "60",
    "--updates",
    "2",
    "--parallel",
    "16",
    "--seed",
    "3",
    "--hidden",
    "16,16",
    "--out",
    out,
    "--curve",
    join(dir, "curve.json"),
  ]);
  assert.equal(r.status.length, 2);
  assert.match(r.status[1]!, /^train ppo: update 2, [\d,]+ samples/);
  assert.match(
    r.err,
    /trained 2 updates \(2 in total\).*on 60 instances; wrote/,
  );
  const ck = loadCheckpoint(await Deno.readFile(out));
  assert.deepEqual(ck.net.spec.hidden, [16, 16]);
  assert.equal(ck.counters.updates, 2);
  assert.equal(
    JSON.parse(await Deno.readTextFile(join(dir, "curve.json"))).length,
    2,
  );
  // resume from the checkpoint, training on a JSON-lines file
  const file = join(dir, "train.jsonl");
  await Deno.writeTextFile(
    file,
    instancesToJsonLines(
      generate({ preset: "easy" }, { count: 20, seed: 4 }).instances,
    ),
  );
  const out2 = join(dir, "p2.onnx");
  await run(trainCommand, [
    "--instances",
    file,
    "--policy",
    out,
    "--updates",
    "1",
    "--parallel",
    "8",
    "--out",
    out2,
  ]);
  assert.equal(loadCheckpoint(await Deno.readFile(out2)).counters.updates, 3);

  const text = await run(evaluateCommand, [
    "--policy",
    out2,
    "--suite",
    "base",
    "--count",
    "12",
  ]);
  assert.match(
    text.out,
    /on suite base \(validation\): 12 instances x 1 episode \(sampled actions\)/,
  );
  const onTest = await run(evaluateCommand, [
    "--policy",
    out2,
    "--suite",
    "base",
    "--split",
    "test",
    "--count",
    "12",
    "--json",
  ]);
  const onTestJs = JSON.parse(onTest.out) as { instances: string };
  assert.equal(onTestJs.instances, "suite base (test)");
  assert.match(text.out, /success rate +\d\.\d{3}/);
  assert.match(text.out, /vertex_collision rate +\d\.\d{3}/);
  assert.match(text.out, /path efficiency/);
  const js = await run(evaluateCommand, [
    "--policy",
    out2,
    "--preset",
    "hard",
    "--count",
    "5",
    "--episodes",
    "2",
    "--json",
  ]);
  const m = JSON.parse(js.out);
  assert.equal(m.episodes, 10);
  assert.equal(m.count, 5);
  assert.equal(m.instances, "preset hard");
  assert.ok(
    Math.abs(
      Object.values(m.outcome_rates as Record<string, number>).reduce(
        (a, b) => a + b,
        0,
      ) - 1,
    ) < 1e-6,
  );
  assert.equal(m.outcome_rates.success, m.success_rate);
});

Deno.test("cli train --kernel: the TypeScript reference and the SIMD kernels train the same policy up to rounding", async () => {
  await using tmp = await tmpExperiment("policy");
  const { dir } = tmp;
  const params: Record<string, Float32Array> = {};
  for (const kernel of ["ts", "simd"]) {
    const out = join(dir, `${kernel}.onnx`);
    await run(trainCommand, [
      "--preset",
      "easy",
      "--count",
      "40",
      "--updates",
      "2",
      "--parallel",
      "8",
      "--seed",
      "5",
      "--hidden",
      "16,16",
      "--kernel",
      kernel,
      "--out",
      out,
    ]);
    const ck = loadCheckpoint(await Deno.readFile(out));
    assert.equal(ck.counters.updates, 2);
    params[kernel] = ck.net.params;
  }
  const ts = params.ts!, simd = params.simd!;
  assert.equal(ts.length, simd.length);
  const init = initCheckpoint({
    hidden: [16, 16],
    obs: { version: OBS_VERSION, radius: 2 },
    seed: 5,
  }).net.params;
  let maxDiff = 0, maxMove = 0;
  for (let i = 0; i < ts.length; i++) {
    maxDiff = Math.max(maxDiff, Math.abs(ts[i]! - simd[i]!));
    maxMove = Math.max(maxMove, Math.abs(ts[i]! - init[i]!));
  }
  // Both trained (the weights moved), to the same weights up to the order of
  // float additions.
  assert.ok(
    maxMove > 1e-4,
    `largest move from the initial weights ${maxMove}`,
  );
  assert.ok(
    maxDiff < maxMove / 100,
    `ts vs simd: ${maxDiff} (moves ${maxMove})`,
  );
  await assert.rejects(
    () =>
      run(trainCommand, [
        "--preset",
        "easy",
        "--kernel",
        "avx",
        "--out",
        join(dir, "x.onnx"),
      ]),
    /--kernel.*avx.*Allowed choices are simd, ts/s,
  );
});

Deno.test("cli evaluate/train: user errors name the problem (no stack traces)", async () => {
  await using tmp = await tmpExperiment("policy");
  const { dir } = tmp;
  const bad = join(dir, "bad.onnx");
  await Deno.writeFile(bad, new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]));
  // a command, its arguments and the message of the UserError it throws
  const cases: [Parameters<typeof run>[0], string[], RegExp][] = [
    [
      evaluateCommand,
      ["--policy", bad, "--suite", "base", "--count", "2"],
      /Cannot use ONNX policy .*bad\.onnx: .*corrupt/,
    ],
    [
      evaluateCommand,
      ["--policy", bad, "--suite", "base", "--preset", "easy"],
      /exactly one of --suite, --preset/,
    ],
    [
      trainCommand,
      [
        "--preset",
        "easy",
        "--policy",
        bad,
        "--out",
        join(dir, "x.onnx"),
        "--updates",
        "1",
      ],
      /bad\.onnx/,
    ],
  ];
  for (const [command, args, message] of cases) {
    await assert.rejects(
      () => run(command, args),
      (e: unknown) => e instanceof UserError && message.test(e.message),
      args.join(" "),
    );
  }
});

Deno.test("cli evaluate with an LLM policy: plans from an endpoint, cached for --offline replays", async () => {
  const dir = await Deno.makeTempDir();
  // The cache goes in through the io object, never the process-wide
  // ENVSMITH_CACHE (test files run in parallel in one process).
  const cache = join(dir, "cache");
  try {
    await using stub = startStubServer((req) => {
      const agents = Number(
        /with (\d+) agents?/.exec(req.body.messages[1].content)![1],
      );
      return {
        reply: Array.from({ length: agents }, (_, a) => `Agent ${a}: S`).join(
          "\n",
        ),
      };
    });
    const args = [
      "--base-url",
      stub.baseURL,
      "--model",
      "stub",
      "--suite",
      "base",
      "--count",
      "3",
      "--json",
    ];
    const r = await run(evaluateCommand, args, cache);
    const m = JSON.parse(r.out);
    assert.equal(m.policy, `stub at ${stub.baseURL}`);
    assert.equal(m.episodes, 3);
    assert.equal(m.outcome_rates.timeout, 1, "everyone stays: timeouts");
    assert.equal(m.valid_rate, 0);
    // "Agent 0: S" three times: 32 characters, 8 tokens by the stub's count
    assert.equal(m.tokens_per_answer, 8);
    assert.equal(stub.requests.length, 3);
    const again = await run(evaluateCommand, [...args, "--offline"], cache);
    assert.ok(
      Deno.statSync(join(cache, "aux", "evaluate", "llm")).isDirectory,
      "the reply cache is under the given cache",
    );
    assert.deepEqual(JSON.parse(again.out), m);
    assert.equal(stub.requests.length, 3, "served from the reply cache");
    await assert.rejects(
      () =>
        run(evaluateCommand, ["--base-url", stub.baseURL, "--suite", "base"]),
      (e: unknown) =>
        e instanceof UserError &&
        /LLM policy: model must not be empty/.test(e.message),
    );
    await assert.rejects(
      () => run(evaluateCommand, ["--suite", "base"]),
      (e: unknown) =>
        e instanceof UserError && /Give either --policy/.test(e.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli evaluate: an LLM answering makespan-optimal plans on the paper grid is valid and optimal in every cell", async () => {
  await using tmp = await tmpExperiment("policy");
  const { dir } = tmp;
  await using stub = startStubServer((req) => {
    const inst = parsePrompt(req.body.messages[1].content, { solve: false });
    const sol = solveMakespan(compileInstance(inst))!;
    const plan = pathsToPlan(sol.paths, inst.width);
    return {
      reply: plan.map((acts, a) =>
        `Agent ${a}: ${acts.map((x) => "SUDLR"[x]).join(" ")}`
      ).join("\n"),
    };
  });
  const paperGrid = (last: string) =>
    run(evaluateCommand, [
      "--base-url",
      stub.baseURL,
      "--model",
      "stub",
      "--suite",
      "paper-grid",
      "--split",
      "test",
      "--count",
      "1",
      last,
    ], join(dir, "cache"));
  const r = await paperGrid("--json");
  const m = JSON.parse(r.out);
  assert.equal(m.count, 21);
  assert.equal(m.valid_rate, 1);
  assert.equal(m.optimal_makespan_rate, 1);
  assert.ok(m.optimal_soc_rate <= 1);
  assert.equal(Object.keys(m.cells).length, 21);
  assert.equal(m.cells["5ag_10x10"].optimal_makespan_rate, 1);
  const text = await paperGrid("--offline");
  assert.match(text.out, /valid rate +1\.000/);
  assert.match(text.out, /optimal rate \(makespan\) 1\.000/);
  assert.match(text.out, /tokens per answer +\d+\.\d/);
});
