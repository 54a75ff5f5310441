/**
 * GGUF export of the LM trainer (`lm/envsmith_lm/gguf_export.py`) against
 * node-llama-cpp: for micro Llama, Qwen2 and Qwen3 checkpoints (random
 * weights, non-trivial norms and biases), the Hugging Face tokenizer and
 * llama.cpp give the same token ids on benchmark prompts rendered with the
 * chat template, and torch's next-token distribution after each prompt
 * matches llama.cpp's within 2e-3 (absolute, every token of the
 * vocabulary; measured 2e-5 to 5e-4 with f32 weights). The qwen3 model is
 * also exported in f16 and q8_0, and from its checkpoint saved in bf16,
 * each checked against torch's f32 numbers within its own tolerance
 * (measured: f16 3.6e-4, bf16 checkpoint 1.1e-3, q8_0 5.7e-3).
 *
 * Needs the Python environment (`deno task setup:lm`); CI creates it first.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { generate } from "../mapf/generator.ts";
import { LM_DIR } from "./lm_env.ts";
import { lmTest } from "./_lm_test_util.ts";
import { llmPolicyMessages } from "../policy/llm_policy.ts";

const TOLERANCE = 2e-3;
/** f16 weights (measured 3.6e-4). */
const TOLERANCE_F16 = 2e-3;
/** The f32 export of a checkpoint saved in bf16 (measured 1.1e-3). */
const TOLERANCE_BF16 = 5e-3;
/** q8_0 weights (measured 5.7e-3). */
const TOLERANCE_Q8 = 2e-2;
/** The exports checked: architecture, file, tolerance (max |p_torch - p_llama.cpp|). */
const EXPORTS: readonly [string, string, number][] = [
  ["llama", "model.gguf", TOLERANCE],
  ["qwen2", "model.gguf", TOLERANCE],
  ["qwen3", "model.gguf", TOLERANCE],
  ["qwen3", "model-f16.gguf", TOLERANCE_F16],
  ["qwen3", "model-bf16.gguf", TOLERANCE_BF16],
  ["qwen3", "model-q8_0.gguf", TOLERANCE_Q8],
];

lmTest(
  "gguf export: same token ids and next-token distributions in torch and node-llama-cpp (llama, qwen2, qwen3)",
  async (python, dir) => {
    const instances = generate({
      preset: "easy",
      width: 5,
      height: 5,
      agents: 3,
      holes: "blocked",
      distance: { min: 1, max: 8 },
    }, { count: 4, seed: 5 }).instances;
    const rows = instances.map((inst, k) => {
      const [system, user] = llmPolicyMessages(inst, k % 2 ? "full" : "bare");
      return {
        id: inst.id,
        system: system.content,
        prompt: user.content,
        plan: "Agent 0: R D\nAgent 1: S\nAgent 2: L",
      };
    });
    await Deno.writeTextFile(
      join(dir, "rows.jsonl"),
      rows.map((r) => JSON.stringify(r)).join("\n") + "\n",
    );
    const st = await new Deno.Command(python, {
      args: [
        "-m",
        "envsmith_lm.parity_fixture",
        join(dir, "rows.jsonl"),
        dir,
      ],
      cwd: LM_DIR,
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(st.code, 0, new TextDecoder().decode(st.stderr));
    const { getLlama } = await import("node-llama-cpp");
    const llama = await getLlama(
      { gpu: false, build: "never", logLevel: "error" } as never,
    );
    try {
      const worstOf: Record<string, number> = {};
      for (const [arch, file, tolerance] of EXPORTS) {
        const exp = JSON.parse(
          await Deno.readTextFile(join(dir, arch, "expected.json")),
        );
        const model = await llama.loadModel({
          modelPath: join(dir, arch, file),
          gpuLayers: 0,
        });
        const ctx = await model.createContext({
          contextSize: 1024,
          threads: 1,
        });
        assert.equal(model.tokenizer("x").length, 1);
        for (const c of exp.cases) {
          assert.deepEqual(
            [...model.tokenize(c.text, true)],
            c.ids,
            `${arch} ${c.id}: token ids differ`,
          );
          const seq = ctx.getSequence();
          const it = seq.evaluateWithMetadata(
            c.ids,
            { probabilities: true },
            {
              temperature: 1,
              topK: 0,
              topP: 1,
              minP: 0,
            } as never,
          );
          const first = await it.next();
          const probs = (first.value as { probabilities: Map<number, number> })
            .probabilities;
          let worst = 0, mass = 0;
          for (let t = 0; t < exp.vocab; t++) {
            const p = probs.get(t) ?? 0;
            mass += p;
            worst = Math.max(worst, Math.abs(p - c.probs[t]));
          }
          await it.return();
          seq.dispose();
          assert.ok(
            Math.abs(mass - 1) < 1e-3,
            `${arch}: llama.cpp probabilities sum to ${mass}`,
          );
          assert.ok(
            worst < tolerance,
            `${arch} ${file} ${c.id}: max |p_torch - p_llama.cpp| = ${worst}`,
          );
          worstOf[`${arch} ${file}`] = Math.max(
            worstOf[`${arch} ${file}`] ?? 0,
            worst,
          );
          // a distribution far from uniform, so the comparison means something
          assert.ok(
            Math.max(...c.probs) > 3 / exp.vocab,
            `${arch}: torch's distribution is nearly uniform`,
          );
        }
        await ctx.dispose();
        await model.dispose();
      }
      // the lower precisions differ from f32 by more than f32 does, and
      // q8_0 by more than f16: the files are what they say
      const w = (f: string) => worstOf[`qwen3 ${f}`]!;
      assert.ok(
        w("model-f16.gguf") > w("model.gguf"),
        JSON.stringify(worstOf),
      );
      assert.ok(
        w("model-q8_0.gguf") > w("model-f16.gguf"),
        JSON.stringify(worstOf),
      );
    } finally {
      await llama.dispose();
    }
  },
  { sanitizeResources: false, sanitizeOps: false },
);

lmTest(
  "gguf export: a directory that is not a checkpoint, or an unsupported architecture, is one line and exit 2",
  async (python, dir) => {
    const run = async () => {
      const o = await new Deno.Command(python, {
        args: ["-m", "envsmith_lm", "export-gguf", dir, join(dir, "x.gguf")],
        cwd: LM_DIR,
        stdout: "null",
        stderr: "piped",
      }).output();
      return { code: o.code, err: new TextDecoder().decode(o.stderr).trim() };
    };
    let r = await run();
    assert.equal(r.code, 2);
    assert.equal(r.err.split("\n").length, 1);
    assert.match(r.err, /no config\.json, so not a Hugging Face checkpoint/);
    await Deno.writeTextFile(
      join(dir, "config.json"),
      JSON.stringify({ model_type: "gpt_neox" }),
    );
    r = await run();
    assert.equal(r.code, 2);
    assert.match(
      r.err,
      /model_type 'gpt_neox' is not supported; supported: llama, qwen2, qwen3/,
    );
  },
);
