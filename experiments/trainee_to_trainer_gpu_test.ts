/**
 * The GPU example (`trainee-to-trainer-gpu.yaml`) on a machine without a
 * GPU: it plans up to the one line that says what the machine lacks (the
 * model, then the CUDA environment and a GPU), plans through where they are
 * (a stand-in model directory and environment, the GPU check deferred), and
 * its tables are computed without any of them.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { requirementsDigest } from "../nodes/lm_env.ts";

const CLI = new URL("../cli.ts", import.meta.url).pathname;
const FILE = new URL("./trainee-to-trainer-gpu.yaml", import.meta.url).pathname;

async function cli(args: string[], env: Record<string, string>) {
  const o = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    env: { PATH: "/nonexistent", ...env }, // no nvidia-smi, whatever the machine
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: o.code, out: d.decode(o.stdout), err: d.decode(o.stderr) };
}

function oneLine(r: { code: number; err: string }, re: RegExp): void {
  assert.equal(r.code, 2, r.err);
  const lines = r.err.trim().split("\n");
  assert.equal(lines.length, 1, r.err);
  assert.match(lines[0]!, re);
}

Deno.test("GPU example: plans on a machine without a GPU up to the one line saying what it lacks", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-gpu-plan-" });
  try {
    // the file in an experiments/ folder of its own, the model beside it
    const file = join(dir, "experiments", "trainee-to-trainer-gpu.yaml");
    Deno.mkdirSync(join(dir, "experiments"));
    Deno.copyFileSync(FILE, file);
    const cache = join(dir, "cache");
    const env = {
      ENVSMITH_LM_CUDA_VENV: join(dir, "no-venv"),
      ENVSMITH_LM_VENV: join(dir, "no-venv"),
    };
    // 1. no model
    oneLine(
      await cli(["--cache", cache, "plan", file], env),
      /^curriculum\.0\.policy\[seed=1\]: base: .*models\/Qwen3-4B does not exist; give a Hugging Face checkpoint directory/,
    );
    // 2. the model (a stand-in that passes the checks), no CUDA
    // environment, no GPU: both in one line
    const model = join(dir, "models", "Qwen3-4B");
    Deno.mkdirSync(model, { recursive: true });
    Deno.writeTextFileSync(
      join(model, "config.json"),
      JSON.stringify({ model_type: "qwen3" }),
    );
    Deno.writeTextFileSync(join(model, "model.safetensors"), "w");
    Deno.writeTextFileSync(join(model, "tokenizer.json"), "{}");
    Deno.writeTextFileSync(
      join(model, "tokenizer_config.json"),
      JSON.stringify({ chat_template: "{{ messages }}" }),
    );
    oneLine(
      await cli(["--cache", cache, "plan", file], env),
      /^curriculum\.0\.policy\[seed=1\] \(and 20 more nodes\): device: cuda, but this machine lacks the CUDA Python environment .*no-venv \(create it with `deno task setup:lm --cuda`\); and a GPU \(nvidia-smi -L lists none; .*ENVSMITH_LM_GPU_CHECK=run/,
    );
    // 3. a CUDA environment (stand-in: its stamp and torch's version.py),
    // the GPU check deferred to where the nodes run: the whole file plans
    const venv = join(dir, "cuda-venv");
    const torch = join(venv, "lib", "python3.11", "site-packages", "torch");
    Deno.mkdirSync(join(venv, "bin"), { recursive: true });
    Deno.mkdirSync(torch, { recursive: true });
    Deno.writeTextFileSync(join(venv, "bin", "python"), "");
    Deno.writeTextFileSync(join(torch, "version.py"), "cuda = '13.0'\n");
    Deno.writeTextFileSync(
      join(venv, "envsmith-requirements.sha256"),
      requirementsDigest(
        new URL("../lm/requirements-cuda.txt", import.meta.url).pathname,
      ) + "\n",
    );
    const planned = await cli(["--cache", cache, "plan", file], {
      ...env,
      ENVSMITH_LM_CUDA_VENV: venv,
      ENVSMITH_LM_GPU_CHECK: "run",
    });
    assert.equal(planned.code, 0, planned.err);
    assert.match(planned.out, /: \d+ nodes: 0 cached, \d+ to run/);
    assert.equal(
      [...planned.out.matchAll(/^\s+\S+\s+(?:curriculum\.\d\.policy|last)\[/gm)]
        .length,
      21,
      "3 seeds x (stage 0, shared by the engineers, + 3 engineers x 2 stages)",
    );
    // 4. tables need none of it
    const tables = await cli(["--cache", cache, "tables", file], env);
    assert.match(tables.out, /\| checkpoint-engineer \| missing \| missing/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
