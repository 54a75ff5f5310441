/**
 * Speed of the local runtime (node-llama-cpp, CPU): prompt and generation
 * tokens per second, and the time of one llm-engineer call, for a tiny
 * random-weight model written on the fly and, when given, larger GGUF files
 * (a random-weight model with a real model's shape, or a real model).
 *
 * ```sh
 * deno run -A bench/llm_local.ts                              # tiny model only
 * deno run -A bench/llm_local.ts --shape qwen2.5-0.5b         # + a 0.5B-shaped random model (q8_0, ~530 MB, temp file)
 * deno run -A bench/llm_local.ts --threads 1,2 model.gguf     # + a GGUF file, at 1 and 2 threads
 * deno run -A bench/llm_local.ts --no-tiny --reps 1 --context full model.gguf
 * ```
 *
 * Per model and thread count: one free reply of 64 tokens and one engineer
 * call (the neutral system prompt, the context `none` or, with `--context
 * full`, a diagnosed stage's full context, under the reply grammar), each
 * repeated `--reps` times (median). Random weights:
 * the replies are noise; only the speed means anything. The byte-level
 * tokenizer of the random models spends one token per byte, so their
 * prompts are about 3-4 times as many tokens as a real tokenizer's: compare
 * tokens/s, and convert prompt times with the real token count.
 *
 * @module
 */
import { join } from "node:path";
import { PRESETS } from "../schemas/env_config.ts";
import { buildContext } from "../engineer/context.ts";
import { diagnose } from "../engineer/diagnose.ts";
import { dimensionsText, loadPrompts } from "../engineer/llm.ts";
import { replyGrammar } from "../engineer/reply_format.ts";
import {
  corridorCollisionEpisode,
  oscillationTimeoutEpisode,
  slipHoleEpisode,
  successEpisode,
} from "../engineer/_fixtures.ts";
import type { ChatMessage } from "../llm/client.ts";
import {
  disposeLocalModels,
  LocalChatClient,
  type LocalTiming,
} from "../llm/local.ts";
import { writeRandomGguf } from "../llm/random_gguf.ts";
import { takeFlag } from "./_common.ts";

const args = [...Deno.args];
const flag = (name: string) => takeFlag(args, name);
const threads = (flag("--threads") ?? "1").split(",").map(Number);
const reps = Number(flag("--reps") ?? "3");
const shape = flag("--shape");
const contextType = flag("--context") ?? "none";
const noTiny = args.includes("--no-tiny");
if (noTiny) args.splice(args.indexOf("--no-tiny"), 1);
const files = [...args];

const dir = await Deno.makeTempDir({ prefix: "envsmith-llm-bench-" });
const models: { name: string; path: string }[] = [];
const tiny = join(dir, "tiny.gguf");
if (!noTiny) {
  await writeRandomGguf(tiny, { shape: "tiny", seed: 1 });
  models.push({ name: "tiny (random, f16)", path: tiny });
}
if (shape !== undefined) {
  const p = join(dir, `${shape}.gguf`);
  const t0 = performance.now();
  const bytes = await writeRandomGguf(p, { shape, seed: 1, type: "q8_0" });
  console.error(
    `wrote ${shape}-shaped random model: ${(bytes / 1e6).toFixed(0)} MB in ${
      ((performance.now() - t0) / 1000).toFixed(1)
    } s`,
  );
  models.push({ name: `${shape}-shaped (random, q8_0)`, path: p });
}
for (const f of files) models.push({ name: f, path: f });

const findings = diagnose([
  successEpisode(),
  slipHoleEpisode(),
  corridorCollisionEpisode(),
  oscillationTimeoutEpisode(),
], {
  seed: 1,
  config: PRESETS.easy,
});
const context = buildContext(
  contextType === "full" ? "full" : "none",
  contextType === "full" ? findings : null,
  PRESETS.easy,
  { history: [] },
);
const prompts = loadPrompts("neutral");
const messages: ChatMessage[] = [
  {
    role: "system",
    content: prompts.system.replace("{{dimensions}}", dimensionsText()),
  },
  {
    role: "user",
    content: prompts.user.replace("{{context_type}}", context.json.type)
      .replace(
        "{{context}}",
        context.text,
      ),
  },
];
const promptChars = messages.reduce((n, m) => n + m.content.length, 0);
console.error(
  `engineer prompt (context ${context.json.type}): ${promptChars} characters`,
);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const rows: string[] = [];
const grammar = replyGrammar();
for (const m of models) {
  for (const t of threads) {
    const run = async (kind: "engineer" | "free") => {
      const ts: LocalTiming[] = [];
      const walls: number[] = [];
      for (let r = 0; r < reps; r++) {
        const client = new LocalChatClient({
          gguf: m.path,
          threads: t,
          temperature: 1,
          seed: r + 1,
          contextSize: 16384,
          ...(kind === "engineer" ? { grammar } : { maxTokens: 64 }),
        });
        const t0 = performance.now();
        const reply = await client.chat(messages);
        walls.push(performance.now() - t0);
        ts.push(reply.local!);
      }
      const promptTps = median(
        ts.map((x) => x.promptTokens / (x.promptMs / 1000)),
      );
      const genTps = median(
        ts.map((x) => (x.completionTokens - 1) / (x.generationMs / 1000)),
      );
      const row = `| ${m.name} | ${t} | ${kind} | ${ts[0]!.promptTokens} | ${
        promptTps.toFixed(0)
      } | ${median(ts.map((x) => x.completionTokens))} | ${
        genTps.toFixed(1)
      } | ${(median(walls) / 1000).toFixed(2)} |`;
      console.log(row);
      rows.push(row);
    };
    await run("free");
    await run("engineer");
  }
  await disposeLocalModels(); // one model in memory at a time
}
await Deno.remove(dir, { recursive: true });
console.log(
  "\n| model | threads | call | prompt tokens | prompt tok/s | reply tokens (median) | generation tok/s | wall s (median) |",
);
console.log("|---|---:|---|---:|---:|---:|---:|---:|");
for (const r of rows) console.log(r);
