/**
 * The LM node kinds (`lm.init`, `train.lm`) through the command line: what
 * `plan` refuses before anything runs (one line, exit 2), what enters their
 * keys (never the machine's Python environment: `tables` reads their results
 * without it), and a micro run end to end (ignored without the trainer's
 * Python environment).
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { LM_CUDA_REQUIREMENTS, lmVenvDir } from "./lm_env.ts";
import { requirementsDigest } from "./lm_env.ts";

const CLI = new URL("../cli.ts", import.meta.url).pathname;
const VENV_READY = (() => {
  try {
    Deno.statSync(join(lmVenvDir(), "bin", "python"));
    return true;
  } catch {
    return false;
  }
})();
/** Why the end-to-end test is ignored, in its name (empty when it runs). */
const IGNORED = VENV_READY
  ? ""
  : ` [ignored: the Python environment ${lmVenvDir()} is missing; create it with \`./envsmith setup:lm\`]`;

async function cli(
  args: string[],
  env: Record<string, string> = {},
  cwd?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const o = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    env,
    ...(cwd ? { cwd } : {}),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return {
    code: o.code,
    stdout: d.decode(o.stdout),
    stderr: d.decode(o.stderr),
  };
}

/** A stand-in venv: a python that exists, a stamp, and torch's version.py. */
function fakeVenv(root: string, cuda: string | null, stamp?: string): string {
  const venv = join(root, "venv");
  Deno.mkdirSync(join(venv, "bin"), { recursive: true });
  Deno.writeTextFileSync(join(venv, "bin", "python"), "");
  Deno.writeTextFileSync(
    join(venv, "envsmith-requirements.sha256"),
    (stamp ??
      requirementsDigest(cuda === null ? undefined : LM_CUDA_REQUIREMENTS)) +
      "\n",
  );
  const torch = join(venv, "lib", "python3.12", "site-packages", "torch");
  Deno.mkdirSync(torch, { recursive: true });
  Deno.writeTextFileSync(
    join(torch, "version.py"),
    `cuda: Optional[str] = ${cuda === null ? "None" : `'${cuda}'`}\n`,
  );
  return venv;
}

/** A checkpoint directory that passes the plan checks (not loadable weights). */
function fakeCheckpoint(
  dir: string,
  opts: { modelType?: string; template?: boolean; weights?: string } = {},
): void {
  Deno.mkdirSync(dir, { recursive: true });
  Deno.writeTextFileSync(
    join(dir, "config.json"),
    JSON.stringify({ model_type: opts.modelType ?? "llama" }),
  );
  Deno.writeTextFileSync(join(dir, "model.safetensors"), opts.weights ?? "w1");
  Deno.writeTextFileSync(join(dir, "tokenizer.json"), "{}");
  Deno.writeTextFileSync(
    join(dir, "tokenizer_config.json"),
    JSON.stringify(
      opts.template === false ? {} : { chat_template: "{{ messages }}" },
    ),
  );
}

const trainYaml = (base: string, extra = "") =>
  `experiment: lmplan
seed: 1
nodes:
  envs: { kind: generate, with: { config: { preset: easy, width: 3, height: 3, agents: 1 }, count: 4, seed: 1 } }
  policy: { kind: train.lm, with: { base: ${base}, envs: $envs, budget: { prompts: 2, samples: 2 }${extra} } }
  score: { kind: evaluate, with: { policy: { llm: { gguf: $policy.gguf, max_tokens: 8 }, prompt: bare }, envs: $envs } }
`;

async function planIn(
  dir: string,
  yaml: string,
  env: Record<string, string>,
  json = false,
) {
  const file = join(dir, "exp.yaml");
  await Deno.writeTextFile(file, yaml);
  return await cli(
    ["--cache", join(dir, "cache"), "plan", file, ...(json ? ["--json"] : [])],
    env,
  );
}

/** Exit 2 and one line (after the "N errors in FILE:" header of file errors). */
function oneLine(r: { code: number; stderr: string }, re: RegExp): void {
  assert.equal(r.code, 2, r.stderr);
  const lines = r.stderr.trim().split("\n")
    .filter((l) => !/^\d+ errors? in /.test(l));
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0]!, re);
}

Deno.test("plan refuses, in one line, an LM node it cannot run", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-lm-plan-" });
  try {
    const venv = fakeVenv(dir, null);
    const env = { ENVSMITH_LM_VENV: venv };
    await t.step("a base directory that is not a checkpoint", async () => {
      Deno.mkdirSync(join(dir, "empty"));
      oneLine(
        await planIn(dir, trainYaml("empty"), env),
        /policy: base: .*empty\/config\.json is missing, so .* is not a checkpoint; give the directory save_pretrained wrote/,
      );
    });
    await t.step("an unsupported architecture", async () => {
      fakeCheckpoint(join(dir, "gpt"), { modelType: "gpt2" });
      oneLine(
        await planIn(dir, trainYaml("gpt"), env),
        /gpt\/config\.json has model_type "gpt2", which the trainer and its GGUF export do not support; use a llama, qwen2, qwen3 checkpoint/,
      );
    });
    await t.step("a tokenizer without a chat template", async () => {
      fakeCheckpoint(join(dir, "plain"), { template: false });
      oneLine(
        await planIn(dir, trainYaml("plain"), env),
        /plain\/tokenizer_config\.json has no chat_template .*add a template \(e\.g\. ChatML\)/,
      );
    });
    fakeCheckpoint(join(dir, "ok"));
    await t.step("a missing Python environment", async () => {
      oneLine(
        await planIn(dir, trainYaml("ok"), {
          ENVSMITH_LM_VENV: join(dir, "nowhere"),
        }),
        /Python environment .*nowhere is missing; create it with `deno task setup:lm`/,
      );
    });
    await t.step("a stale Python environment", async () => {
      const stale = fakeVenv(join(dir, "stale"), null, "0".repeat(64));
      oneLine(
        await planIn(dir, trainYaml("ok"), { ENVSMITH_LM_VENV: stale }),
        /was built from other requirements than lm\/requirements\.txt; run `deno task setup:lm` again/,
      );
    });
    await t.step(
      "device: cuda without its environment nor a GPU: both in one line",
      async () => {
        oneLine(
          await planIn(dir, trainYaml("ok", ", device: cuda"), {
            ...env,
            ENVSMITH_LM_CUDA_VENV: join(dir, "nowhere"),
            PATH: "/nonexistent",
          }),
          /policy: device: cuda, but this machine lacks the CUDA Python environment .*nowhere \(create it with `deno task setup:lm --cuda`\); and a GPU \(nvidia-smi -L lists none; .*ENVSMITH_LM_GPU_CHECK=run/,
        );
      },
    );
    await t.step("device: cuda with a CPU build of torch", async () => {
      const cpuTorch = fakeVenv(
        join(dir, "cputorch"),
        null,
        requirementsDigest(LM_CUDA_REQUIREMENTS),
      );
      oneLine(
        await planIn(dir, trainYaml("ok", ", device: cuda"), {
          ...env,
          ENVSMITH_LM_CUDA_VENV: cpuTorch,
          ENVSMITH_LM_GPU_CHECK: "run",
        }),
        /device: cuda, but this machine lacks a CUDA build of torch \(the torch of .* is a CPU build; run `deno task setup:lm --cuda` again\)$/,
      );
    });
    await t.step("device: cuda with no GPU visible", async () => {
      const cudaVenv = fakeVenv(join(dir, "cuda"), "13.0");
      const env2 = { ENVSMITH_LM_CUDA_VENV: cudaVenv, PATH: "/nonexistent" };
      oneLine(
        await planIn(dir, trainYaml("ok", ", device: cuda"), env2),
        /device: cuda, but this machine lacks a GPU \(nvidia-smi -L lists none; run where one is, or set ENVSMITH_LM_GPU_CHECK=run/,
      );
      // deferred to where the node runs (a cluster's login node plans)
      const r = await planIn(dir, trainYaml("ok", ", device: cuda"), {
        ...env2,
        ENVSMITH_LM_GPU_CHECK: "run",
      });
      assert.equal(r.code, 0, r.stderr);
    });
    await t.step(
      "a model file read from a node that produces none",
      async () => {
        oneLine(
          await planIn(
            dir,
            `experiment: lmplan
seed: 1
nodes:
  envs: { kind: generate, with: { config: { preset: easy }, count: 4, seed: 1 } }
  start: { kind: policy.init, with: { hidden: [8] } }
  score: { kind: evaluate, with: { policy: { llm: { gguf: $start.gguf } }, envs: $envs } }
`,
            env,
          ),
          /"\$start\.gguf": start \(kind policy\.init\) produces no gguf file; reference a node of kind lm\.init or train\.lm/,
        );
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("without the Python environment, trainee-to-trainer's keys are computed: tables reads the cache, plan and run refuse in one line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-lm-noenv-" });
  try {
    const env = { ENVSMITH_LM_VENV: join(dir, "empty") };
    Deno.mkdirSync(env.ENVSMITH_LM_VENV);
    const file =
      new URL("../experiments/trainee-to-trainer.yaml", import.meta.url)
        .pathname;
    const cache = join(dir, "cache");
    const tables = await cli(["--cache", cache, "tables", file], env);
    // the tables are built (their cells missing in an empty cache), not
    // refused for want of the environment
    assert.match(tables.stdout, /\| checkpoint-engineer \| missing \| missing/);
    assert.doesNotMatch(
      tables.stdout + tables.stderr,
      /setup:lm|cannot be keyed/,
    );
    for (const cmd of ["plan", "run"]) {
      const r = await cli(["--cache", cache, cmd, file], env);
      oneLine(
        r,
        /^start\[seed=1\] \(and \d+ more nodes\): The LM trainer's Python environment .*empty is missing; create it with `deno task setup:lm`\.$/,
      );
    }
    // `tables` remembered its comparison (comparisons/); `run` announced
    // itself to gc (live/) and withdrew: no entry, blob or manifest.
    assert.deepEqual(
      [...Deno.readDirSync(cache)].map((e) => e.name).filter((n) =>
        !["tmp", "comparisons", "live"].includes(n)
      ),
      [],
      "run refused before it wrote anything",
    );
    assert.deepEqual([...Deno.readDirSync(join(cache, "live"))], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("train.lm's key follows the base checkpoint's content, and the model file reader's key follows it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-lm-key-" });
  try {
    const env = { ENVSMITH_LM_VENV: fakeVenv(dir, null) };
    const ck = join(dir, "ck");
    fakeCheckpoint(ck, { weights: "w1" });
    const keys = async () => {
      const r = await planIn(dir, trainYaml("ck"), env, true);
      assert.equal(r.code, 0, r.stderr);
      const plan = JSON.parse(r.stdout) as {
        nodes: { id: string; key: string }[];
      };
      return new Map(plan.nodes.map((n) => [n.id, n.key]));
    };
    const a = await keys();
    const same = await keys();
    assert.deepEqual(a, same);
    Deno.writeTextFileSync(join(ck, "model.safetensors"), "w2");
    const b = await keys();
    assert.equal(a.get("envs"), b.get("envs"));
    assert.notEqual(a.get("policy"), b.get("policy"));
    // the evaluate node reads the GGUF file of another model: another key
    assert.notEqual(a.get("score"), b.get("score"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    `micro LM loop end to end: lm.init, train.lm, the policy from its GGUF file; a crashed trainer keeps its log and loses no earlier node${IGNORED}`,
  ignore: !VENV_READY,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "envsmith-lm-e2e-" });
    try {
      // the experiment file in a folder of its own, as experiments/ is in a
      // clone: relative paths resolve against it, the cache against the caller
      const broken = join(dir, "experiments", "broken");
      fakeCheckpoint(broken, { weights: "not safetensors" });
      const file = join(dir, "experiments", "exp.yaml");
      await Deno.writeTextFile(
        file,
        `experiment: lme2e
seed: 1
matrix: { seed: [1] }
nodes:
  data: { kind: generate, with: { config: { preset: easy, width: 3, height: 3, agents: 1, holes: blocked, hole_density: 0.1, distance: { min: 1, max: 4 } }, count: 24, seed: 1 } }
  start: { kind: lm.init, with: { data: $data, sft: { steps: 3, batch: 4 }, model: { hidden: 16, layers: 1, heads: 1, ffn: 32 }, seed: 1 } }
  policy: { kind: train.lm, with: { base: $start, envs: $data, budget: { prompts: 2, samples: 2 }, rl: { batch: 1, max_new: 8 }, seed: 1 } }
  score: { kind: evaluate, with: { policy: { llm: { gguf: $policy.gguf, max_tokens: 8, context_size: 1024 }, prompt: bare }, envs: $data, trajectories: false, seed: $seed } }
  crash: { kind: train.lm, with: { base: broken, envs: $data, budget: { prompts: 2, samples: 2 } } }
  loop:
    kind: stages
    count: 1
    from: { policy: $start, config: { preset: easy, width: 3, height: 3, agents: 1 } }
    each:
      policy:   { kind: train.lm, with: { base: $prev.policy, envs: $data, budget: { prompts: 2, samples: 2 }, rl: { batch: 1, max_new: 8 }, seed: 2 } }
      rollouts: { kind: rollout, with: { policy: { llm: { gguf: $policy.gguf, max_tokens: 8, context_size: 1024 }, prompt: bare }, envs: $data } }
      findings: { kind: diagnose, with: { rollouts: $rollouts } }
      config:   { kind: redesign, with: { engineer: { name: llm, context: stats, llm: { gguf: $policy.gguf, max_tokens: 32, context_size: 4096 } }, config: $prev.config, findings: $findings, stage: $stage } }
tables:
  - { name: lme2e, node: score, rows: seed, columns: [value.episodes] }
`,
      );
      const cache = join(dir, "cache");
      const env = { ENVSMITH_LM_VENV: lmVenvDir() };
      // a relative cache, as a fresh clone's default `.envsmith/cache` is:
      // the trainer runs with lm/ on its module path, in the caller's folder
      const run = await cli(["--cache", "cache", "run", file], env, dir);
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr + run.stdout, /FAIL\s+crash/);
      const status = await cli(
        ["--cache", cache, "plan", file, "--json"],
        env,
      );
      const plan = JSON.parse(status.stdout) as {
        nodes: { id: string; key: string; status: string }[];
      };
      const st = new Map(plan.nodes.map((n) => [n.id, n]));
      for (
        const id of [
          "data",
          "start",
          "policy",
          "score[seed=1]",
          "loop.0.config",
        ]
      ) {
        assert.equal(st.get(id)!.status, "cached", id);
      }
      // the crashed trainer's output is in its node log
      const log = await Deno.readTextFile(
        join(cache, "logs", `${st.get("crash")!.key}.log`),
      );
      assert.match(log, /Traceback|Error/);
      // without the environment: the tables read the cache (the LM keys are
      // computed without it), plan and run refuse in one line (crash would run)
      const noEnv = { ENVSMITH_LM_VENV: join(dir, "experiments") };
      const tables = await cli(["--cache", cache, "tables", file], noEnv);
      assert.equal(tables.code, 0, tables.stderr);
      assert.match(tables.stdout, /\| 1 \| 24\.000 \|/);
      for (const cmd of ["plan", "run"]) {
        oneLine(
          await cli(["--cache", cache, cmd, file], noEnv),
          /^crash: The LM trainer's Python environment .*experiments is missing; create it with `deno task setup:lm`\.$/,
        );
      }
      // values: the checkpoint, its GGUF file, the curve; the score from it
      const show = async (node: string, path: string) => {
        const r = await cli(["--cache", cache, "show", file, node, path], env);
        assert.equal(r.code, 0, r.stderr);
        return JSON.parse(r.stdout);
      };
      const policy = await show("policy", "value");
      assert.equal(policy.gguf.media, "application/x-gguf");
      assert.equal(policy.checkpoint.model_type, "llama");
      assert.ok("model.safetensors" in policy.checkpoint.files);
      assert.deepEqual(policy.budget, {
        prompts: 2,
        samples: 2,
        steps: 2,
        completions: 4,
      });
      assert.equal(policy.curve.length, 2);
      for (const p of policy.curve) {
        for (const k of ["reward", "success", "invalid_plan"]) {
          assert.ok(p[k] >= 0 && p[k] <= 1, `${k} ${p[k]}`);
        }
      }
      const start = await show("start", "value");
      assert.equal(start.curve.length, 2); // SFT logs steps 0 and 2 of 3
      const score = await show("score[seed=1]", "value");
      assert.equal(score.episodes, 24);
      assert.ok(score.success_rate >= 0 && score.success_rate <= 1);
      // the stage's engineer ran the checkpoint trained in that stage, and the
      // report names it
      const report = join(dir, "report.html");
      const rep = await cli(
        ["--cache", cache, "report", file, "--out", report],
        env,
      );
      assert.equal(rep.code, 0, rep.stderr);
      assert.match(
        await Deno.readTextFile(report),
        /<b>llm<\/b><div class="meta">context stats<\/div><div class="meta">model <code>loop\.0\.policy\.gguf<\/code><\/div>/,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
