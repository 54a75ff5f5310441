// The local runtime on a real llama.cpp (node-llama-cpp's prebuilt CPU
// binary) with a tiny random-weight GGUF written here: no server, no
// download. Random weights: the replies are noise; what is tested is the
// runtime (loading, chat template, grammar, seeds, digests, cache).
import assert from "node:assert/strict";
import { join } from "node:path";
import { rejectsType } from "./_testing.ts";
import {
  LlmCacheMissError,
  LlmConfigError,
  LlmContextOverflowError,
} from "./errors.ts";
import { ggufDigest, LocalChatClient } from "./local.ts";
import { writeRandomGguf } from "./random_gguf.ts";
import { withModelDir } from "./_local_testing.ts";

const messages = [
  { role: "system" as const, content: "You answer briefly." },
  { role: "user" as const, content: "Name a colour: é" },
];

Deno.test("local runtime: a random-weight GGUF through node-llama-cpp", async (t) => {
  await withModelDir("envsmith-local-", async (dir) => {
    const model = join(dir, "tiny.gguf");
    const other = join(dir, "tiny-seed2.gguf");
    const copy = join(dir, "renamed.gguf");
    await writeRandomGguf(model, { seed: 1 });
    await writeRandomGguf(other, { seed: 2 });
    await Deno.copyFile(model, copy);

    await t.step("it loads and the ChatML template applies", async () => {
      const reply = await new LocalChatClient({ gguf: model, maxTokens: 8 })
        .chat(messages);
      assert.equal(reply.local?.chatWrapper, "ChatML");
      // BOS <|im_start|>system\n...<|im_end|>\n<|im_start|>user\n...<|im_end|>\n<|im_start|>assistant\n
      // (node-llama-cpp's ChatML wrapper starts with the BOS token): 6 control
      // tokens, every other byte one token (byte-level BPE without merges).
      const plain =
        "system\nYou answer briefly.\nuser\nName a colour: é\nassistant\n";
      const bytes = new TextEncoder().encode(plain).length;
      assert.equal(reply.usage.promptTokens, 6 + bytes);
      assert.equal(reply.usage.completionTokens, 8);
      assert.equal(reply.finishReason, "length");
      assert.equal(reply.cached, false);
      assert.ok(reply.local!.promptMs >= 0 && reply.local!.generationMs >= 0);
    });

    await t.step(
      "the same request gives the same reply; seeds differ",
      async () => {
        const ask = (seed: number) =>
          new LocalChatClient({
            gguf: model,
            temperature: 1,
            seed,
            maxTokens: 24,
          }).chat(messages);
        const a = await ask(1), b = await ask(1), c = await ask(2);
        assert.equal(a.text, b.text);
        assert.notEqual(a.text, c.text);
        assert.equal(a.requestHash, b.requestHash);
        assert.notEqual(a.requestHash, c.requestHash);
      },
    );

    await t.step("a grammar decides what can be said", async () => {
      for (let seed = 1; seed <= 6; seed++) {
        const r = await new LocalChatClient({
          gguf: model,
          grammar: 'root ::= "yes" | "no" | "maybe " [0-9]',
          temperature: 1,
          seed,
        }).chat(messages);
        assert.match(r.text, /^(yes|no|maybe [0-9])$/);
        assert.equal(r.finishReason, "stop");
      }
    });

    await t.step(
      "a Qwen3-style template (reads enable_thinking): thinking off puts the empty think block in the prompt, also under a grammar",
      async () => {
        // Like Qwen3's: ChatML, plus an empty think block after the
        // assistant header when enable_thinking is false. Unset, it renders
        // as plain ChatML, which is why it must not resolve to that wrapper.
        const qwen3 = join(dir, "qwen3-style.gguf");
        await writeRandomGguf(qwen3, {
          seed: 1,
          chatTemplate: QWEN3_STYLE_TEMPLATE,
        });
        const ask = (o: { thinking: "on" | "off" }) =>
          new LocalChatClient({ gguf: qwen3, maxTokens: 2, ...o }).chat(
            messages,
          );
        const on = await ask({ thinking: "on" });
        const off = await ask({ thinking: "off" });
        assert.equal(on.local?.chatWrapper, "Qwen");
        assert.equal(off.local?.chatWrapper, "Qwen");
        // "<think>\n\n</think>\n\n": 19 bytes, a token each
        assert.equal(off.usage.promptTokens - on.usage.promptTokens, 19);
        // a grammar always turns thinking off, and still decides the reply
        const g = await new LocalChatClient({
          gguf: qwen3,
          thinking: "on",
          grammar: 'root ::= "yes" | "no"',
        }).chat(messages);
        assert.equal(g.usage.promptTokens, off.usage.promptTokens);
        assert.equal(g.finishReason, "stop");
        assert.match(g.text, /^(yes|no)$/);
      },
    );

    await t.step(
      "the file's digest, not its path, names the model",
      async () => {
        const [d1, d1copy, d2] = await Promise.all([
          ggufDigest(model),
          ggufDigest(copy),
          ggufDigest(other),
        ]);
        assert.match(d1, /^[0-9a-f]{64}$/);
        assert.equal(d1, d1copy);
        assert.notEqual(d1, d2);
        const hash = (gguf: string) =>
          new LocalChatClient({ gguf, maxTokens: 4 }).hashOf(messages);
        assert.equal(await hash(model), await hash(copy));
        assert.notEqual(await hash(model), await hash(other));
      },
    );

    await t.step("replies replay offline from the cache", async () => {
      const cacheDir = join(dir, "cache");
      const live = await new LocalChatClient({
        gguf: model,
        cacheDir,
        temperature: 1,
        seed: 3,
        maxTokens: 16,
      }).chat(messages);
      assert.equal(live.cached, false);
      const replay = await new LocalChatClient({
        gguf: copy, // same bytes under another name
        cacheDir,
        temperature: 1,
        seed: 3,
        maxTokens: 16,
        offline: true,
      }).chat(messages);
      assert.equal(replay.cached, true);
      assert.equal(replay.text, live.text);
      assert.equal(replay.local, undefined);
      const miss = await rejectsType(
        () =>
          new LocalChatClient({ gguf: other, cacheDir, offline: true })
            .chat(messages),
        LlmCacheMissError,
      );
      assert.match(miss.message, /not in the reply cache/);
    });

    await t.step(
      "bad files and an overfull context are clear errors",
      async () => {
        const missing = await rejectsType(
          () =>
            new LocalChatClient({ gguf: join(dir, "nope.gguf") }).chat(
              messages,
            ),
          LlmConfigError,
        );
        assert.match(missing.message, /does not exist.*ENVSMITH_LLM_GGUF/);
        const text = join(dir, "model.gguf.txt");
        await Deno.writeTextFile(text, "not a model");
        const notGguf = await rejectsType(
          () => new LocalChatClient({ gguf: text }).chat(messages),
          LlmConfigError,
        );
        assert.match(notGguf.message, /not a GGUF model file/);
        const over = await rejectsType(
          () =>
            new LocalChatClient({ gguf: model, contextSize: 64, maxTokens: 32 })
              .chat(messages),
          LlmContextOverflowError,
        );
        assert.match(over.message, /do not fit the context of 64 tokens/);
        assert.throws(
          () => new LocalChatClient({ gguf: model, threads: 0 }),
          LlmConfigError,
        );
      },
    );
  });
});

/** A Qwen3-style chat template: ChatML with the `enable_thinking` switch. */
const QWEN3_STYLE_TEMPLATE = `{%- for message in messages -%}
<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endfor -%}
{%- if add_generation_prompt -%}
<|im_start|>assistant
{% if enable_thinking is defined and enable_thinking is false %}<think>

</think>

{% endif -%}
{%- endif -%}`;
