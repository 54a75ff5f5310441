/**
 * GGUF export of the LM trainer (`lm/envsmith_lm/gguf_export.py`) against
 * node-llama-cpp: for micro Llama, Qwen2 and Qwen3 checkpoints (random
 * weights, non-trivial norms and biases), the Hugging Face tokenizer and
 * llama.cpp give the same token ids on benchmark prompts rendered with the
 * chat template, and torch's next-token distribution after each prompt
 * matches llama.cpp's within 2e-3 (absolute, every token of the
 * vocabulary; measured 1e-4 to 5e-4 with f32 weights).
 *
 * Needs the Python environment (`deno task setup:lm`); CI creates it first.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { generate } from "../mapf/generator.ts";
import { LM_DIR, lmPython } from "./lm_env.ts";
import { llmPolicyMessages } from "../policy/llm_policy.ts";

const TOLERANCE = 2e-3;

function _python(): string | null {
  try {
    return lmPython();
  } catch {
    return null;
  }
}
const python = _python();

Deno.test({
  name:
    "gguf export: same token ids and next-token distributions in torch and node-llama-cpp (llama, qwen2, qwen3)",
  ignore: python === null, // the environment is missing: `deno task setup:lm`
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir();
    try {
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
      const st = await new Deno.Command(python!, {
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
        for (const arch of ["llama", "qwen2", "qwen3"]) {
          const exp = JSON.parse(
            await Deno.readTextFile(join(dir, arch, "expected.json")),
          );
          const model = await llama.loadModel({
            modelPath: join(dir, arch, "model.gguf"),
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
            const probs =
              (first.value as { probabilities: Map<number, number> })
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
              worst < TOLERANCE,
              `${arch} ${c.id}: max |p_torch - p_llama.cpp| = ${worst}`,
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
      } finally {
        await llama.dispose();
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "gguf export: a directory that is not a checkpoint, or an unsupported architecture, is one line and exit 2",
  ignore: python === null,
  fn: async () => {
    const dir = await Deno.makeTempDir();
    try {
      const run = async () => {
        const o = await new Deno.Command(python!, {
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
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
