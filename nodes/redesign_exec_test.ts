/**
 * The `exec` engineer: a program as the engineer, inside an experiment
 * (the shipped Python example, from a folder outside the repository), and
 * every way a program can misbehave.
 */
import { scaledMs } from "../engine/testdata/load.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadExperiment } from "@envsmith/engine/compile";
import { computeKeys } from "@envsmith/engine/cache";
import { PRESETS } from "../schemas/env_config.ts";
import { execInput } from "../engineer/exec.ts";
import { buildContext } from "../engineer/context.ts";
import { redesign, redesignKind } from "./redesign.ts";
import { engineers } from "./engineers.ts";
import { kinds } from "./mod.ts";
import { runCli } from "../_test_util.ts";
import { findingsAt } from "../engineer/_fixtures.ts";

const THRESHOLD = new URL("../examples/engineers/threshold.py", import.meta.url)
  .pathname;
const easy = PRESETS.easy;

const cli = runCli;

const findings = (success: number) => findingsAt(success, easy);

/** Writes `programs` (name -> text) into a new directory. */
async function programsIn(programs: Record<string, string>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-exec-eng-" });
  for (const [name, text] of Object.entries(programs)) {
    await Deno.writeTextFile(join(dir, name), text);
  }
  return dir;
}

/** One redesign by the exec engineer running `command` in `dir`. */
async function run(
  dir: string,
  command: string[],
  extra: Record<string, unknown> = {},
  success = 0.9,
) {
  const logs: string[] = [];
  const r = await redesign(
    {
      engineer: { name: "exec", command, ...extra },
      context: "stats",
      config: easy,
      findings: findings(success),
    },
    1,
    { engineers, baseDir: dir, log: (l) => logs.push(l) },
  );
  const events = r.report.events as { type: string; detail: string }[];
  return { r, logs, events, llm: r.report.llm as Record<string, number> };
}

Deno.test("exec engineer: the shipped Python engineer runs in an experiment outside the repository with one YAML line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-python-eng-" });
  try {
    await Deno.mkdir(join(dir, "engineers"));
    await Deno.copyFile(THRESHOLD, join(dir, "engineers/threshold.py"));
    const file = join(dir, "exp.yaml");
    await Deno.writeTextFile(
      file,
      `experiment: py-engineer
seed: 7
nodes:
  start: { kind: policy.init, with: { hidden: [16], seed: $seed } }
  curriculum:
    kind: stages
    count: 2
    from: { config: { preset: easy }, policy: $start }
    each:
      envs:     { kind: generate, with: { config: $prev.config, count: 16, seed: $seed, stream: $stage } }
      policy:   { kind: train,    with: { policy: $prev.policy, envs: $envs, updates: 2, parallel: 8, steps: 16, minibatch: 64 } }
      rollouts: { kind: rollout,  with: { policy: $policy, envs: $envs } }
      findings: { kind: diagnose, with: { rollouts: $rollouts } }
      config:   { kind: redesign, with: { engineer: { name: exec, command: [python3, engineers/threshold.py], timeout: 60 }, context: stats, config: $prev.config, findings: $findings, stage: $stage } }
`,
    );
    const cache = join(dir, "cache");
    const r = await cli(["--cache", cache, "run", file, "--jobs", "2"]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /py-engineer: 11 computed, 0 cached, 0 failed/);
    const show = async (id: string, path: string) => {
      const s = await cli(["--cache", cache, "show", file, id, path]);
      assert.equal(s.code, 0, s.err);
      return JSON.parse(s.out);
    };
    for (const stage of [0, 1]) {
      const success: number = await show(
        `curriculum.${stage}.findings`,
        "value.success_rate",
      );
      const before = stage === 0
        ? easy
        : await show(`curriculum.0.config`, "value");
      const after = await show(`curriculum.${stage}.config`, "value");
      const report = await show(`curriculum.${stage}.config`, "report");
      // threshold.py's rule: >= 0.8 harder, < 0.4 easier, else unchanged.
      const step = success >= 0.8 ? 1 : success < 0.4 ? -1 : 0;
      const room = Math.floor(before.width * before.height / 2);
      assert.equal(
        after.agents,
        Math.min(room, Math.max(1, Math.min(64, before.agents + step))),
      );
      assert.equal(
        after.hole_density,
        Math.round(
          Math.max(0, Math.min(0.6, before.hole_density + 0.05 * step)) *
            1000,
        ) / 1000,
      );
      assert.equal(report.engineer, "exec");
      assert.match(report.rationale, /^exec engineer: success \d\.\d\d: /);
      assert.deepEqual(report.llm, {
        calls: 1,
        requests: 1,
        reasks: 0,
        clamped: 0,
        truncated: 0,
        fallback: 0,
        cached: 0,
      });
    }
    // The program's stderr is in the node log (logs/KEY.log).
    const before = await cli(["--cache", cache, "plan", file, "--json"]);
    const key = (JSON.parse(before.out).nodes as { id: string; key: string }[])
      .find((n) => n.id === "curriculum.0.config")!.key;
    const log = await Deno.readTextFile(join(cache, "logs", `${key}.log`));
    assert.match(log, /python3: success \d\.\d\d -> (harder|easier|unchanged)/);
    // Editing the script recomputes the redesigns and what follows them.
    await Deno.writeTextFile(
      join(dir, "engineers/threshold.py"),
      "\n# an edit\n",
      { append: true },
    );
    const plan = await cli(["--cache", cache, "plan", file, "--json"]);
    const nodes = JSON.parse(plan.out).nodes as {
      id: string;
      status: string;
    }[];
    const status = Object.fromEntries(nodes.map((n) => [n.id, n.status]));
    assert.equal(status["curriculum.0.envs"], "cached");
    assert.equal(status["curriculum.0.findings"], "cached");
    assert.equal(status["curriculum.0.config"], "run");
    assert.equal(status["curriculum.1.envs"], "blocked");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("exec engineer: stdin carries the context, the config, the schemas and the bounds; a rejected reply is re-run with the errors", async () => {
  const dir = await programsIn({
    "echo.py": `import json, sys
req = json.load(sys.stdin)
if req["attempt"] == 1:
    print("not json at all")
else:
    c = dict(req["config"]); c["agents"] = c["agents"] + 1
    keys = sorted(k for k in req if k not in ("config",))
    print(json.dumps({"config": c, "rationale": "errors=" + str(len(req["errors"])) + " keys=" + ",".join(keys)}))
`,
  });
  try {
    const { r, events, llm } = await run(dir, ["python3", "echo.py"]);
    assert.equal((r.config as typeof easy).agents, easy.agents + 1);
    assert.equal(
      r.rationale,
      "exec engineer: errors=1 keys=attempt,behavior,bounds,config_schema,context_text,context_type,envsmith,errors,failures,history,reply_schema,seed,stage,stats",
    );
    assert.deepEqual(events.map((e) => e.type), ["retry"]);
    assert.match(events[0]!.detail, /reply 1 rejected: /);
    assert.equal(llm.requests, 2);
    assert.equal(llm.reasks, 1);
    assert.equal(llm.fallback, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  // What the program reads, by context type.
  const ctx = buildContext("stats", findings(0.5), easy);
  const input = execInput({ context: ctx, config: easy, seed: 3 }, 1, []);
  assert.equal(input.context_type, "stats");
  assert.equal((input.stats as { success_rate: number }).success_rate, 0.5);
  assert.equal(input.failures, null);
  assert.equal(input.history, null);
  assert.equal(input.context_text, ctx.text);
  assert.equal(input.bounds.agents.max, 64);
  assert.ok(
    (input.config_schema as { type?: unknown; anyOf?: unknown }) !== null,
  );
});

Deno.test("exec engineer: a hang, a crash, garbage and a stdout flood each give a bounded, logged fallback counted as an event", async () => {
  const dir = await programsIn({
    "hang.sh": "sleep 30 & sleep 30\n",
    "crash.py":
      "import sys\nprint('about to fail', file=sys.stderr)\nsys.exit(3)\n",
    "garbage.py": 'print(\'{"agents": "many"\')\n',
    "flood.py": "import sys\nsys.stdout.write('x' * (2 << 20))\n",
    "clamp.py":
      'import json, sys\nc = json.load(sys.stdin)["config"]\nc["agents"] = 70\nc["width"] = 16\nc["height"] = 16\nprint(json.dumps({"config": c, "rationale": "crowd"}))\n',
  });
  try {
    const t0 = performance.now();
    const hang = await run(dir, ["sh", "hang.sh"], { timeout: 0.5 });
    const ms = performance.now() - t0;
    assert.ok(ms < scaledMs(5000), `the hang took ${ms} ms`);
    assert.deepEqual(hang.events.map((e) => e.type), [
      "program_error",
      "fallback",
    ]);
    assert.match(hang.events[0]!.detail, /sh timed out after 0\.5 s/);
    assert.equal(hang.llm.fallback, 1);
    assert.equal(hang.llm.requests, 1);
    assert.equal(
      hang.r.report.diff &&
        (hang.r.report.diff as { changed: boolean }).changed,
      false,
    );

    const crash = await run(dir, ["python3", "crash.py"]);
    assert.match(
      crash.events[0]!.detail,
      /python3 exited with code 3; stderr ends: about to fail/,
    );
    assert.equal(crash.llm.fallback, 1);
    assert.deepEqual(crash.logs, ["python3: about to fail"]);

    const garbage = await run(dir, ["python3", "garbage.py"], { reasks: 1 });
    assert.deepEqual(garbage.events.map((e) => e.type), ["retry", "fallback"]);
    assert.equal(garbage.llm.requests, 2);
    assert.equal(garbage.llm.reasks, 1);
    assert.equal(garbage.llm.fallback, 1);
    assert.match(garbage.r.rationale, /kept the previous config/);

    const flood = await run(dir, ["python3", "flood.py"]);
    assert.match(
      flood.events[0]!.detail,
      /flooded stdout \(over 1048576 bytes/,
    );
    assert.equal(flood.llm.truncated, 1);
    assert.equal(flood.llm.fallback, 1);

    const clamp = await run(dir, ["python3", "clamp.py"]);
    assert.equal((clamp.r.config as typeof easy).agents, 64);
    assert.deepEqual(clamp.events.map((e) => e.type), ["clamped"]);
    assert.equal(clamp.llm.clamped, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("exec engineer: a missing or non-executable program is refused at plan in one line; the program's files enter the key", async () => {
  const dir = await programsIn({
    "eng.py": "print('{}')\n",
    "noexec.sh": "echo {}\n",
    "helper.json": "{}",
  });
  await Deno.symlink("/dev/zero", join(dir, "zero"));
  await new Deno.Command("mkfifo", { args: [join(dir, "fifo")] }).output();
  try {
    const yaml = (engineer: string) =>
      `experiment: x\nseed: 1\nnodes:\n  c: { kind: redesign, with: { engineer: ${engineer}, config: { preset: easy } } }\n`;
    const plan = async (engineer: string) => {
      const file = join(dir, "exp.yaml");
      await Deno.writeTextFile(file, yaml(engineer));
      return await cli(["--cache", join(dir, "cache"), "plan", file]);
    };
    for (
      const [engineer, message] of [
        [
          "{ name: exec, command: [python4, eng.py] }",
          /^c: exec command python4 is not on PATH; install it, or give its path/,
        ],
        [
          "{ name: exec, command: [python3, missing.py] }",
          /^c: exec command argument missing\.py does not exist \(relative to .*\); correct the path$/,
        ],
        [
          "{ name: exec, command: [./noexec.sh] }",
          /^c: exec command \.\/noexec\.sh is not executable: chmod \+x \.\/noexec\.sh/,
        ],
        [
          "{ name: exec, command: [] }",
          /command is \[PROGRAM, ARGS\.\.\.\]/,
        ],
        // devices and FIFOs are refused before they are opened (a FIFO
        // hung plan, /dev/zero grew it past 2.5 GB)
        [
          "{ name: exec, command: [python3, eng.py], inputs: [zero] }",
          /^c: exec engineer: input zero \(\/dev\/zero\) is a device, not a regular file/,
        ],
        [
          "{ name: exec, command: [python3, eng.py], inputs: [fifo] }",
          /^c: exec engineer: input fifo is a FIFO, not a regular file/,
        ],
      ] as const
    ) {
      const t0 = performance.now();
      const r = await plan(engineer);
      assert.ok(performance.now() - t0 < scaledMs(5000), engineer);
      assert.equal(r.code, 2, engineer);
      assert.equal(r.err.split("\n").length <= 2, true, r.err);
      assert.match(r.err.split("\n").at(-1)!.trim(), message);
    }
    // keyed by content: the script and declared inputs, not the interpreter
    const file = join(dir, "exp.yaml");
    await Deno.writeTextFile(
      file,
      yaml(
        "{ name: exec, command: [python3, eng.py], inputs: [helper.json] }",
      ),
    );
    const key = async () =>
      computeKeys(await loadExperiment(file, { kinds }))[0]!;
    const k1 = await key();
    assert.deepEqual(
      Object.keys(
        (k1.components.fingerprint as { files: Record<string, string> })
          .files,
      ),
      ["eng.py", "helper.json"],
    );
    await Deno.writeTextFile(join(dir, "helper.json"), "{ }");
    assert.notEqual((await key()).key, k1.key);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  assert.equal(redesignKind(engineers).name, "redesign");
});
