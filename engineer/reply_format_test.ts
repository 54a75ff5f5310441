import assert from "node:assert/strict";
import { join } from "node:path";
import {
  ENV_CONFIG_BOUNDS,
  ENV_CONFIG_FIELDS,
  parseEnvConfig,
  PRESETS,
} from "../schemas/env_config.ts";
import { RATIONALE_MAX_CHARS } from "../schemas/llm.ts";
import { numberRangeGbnf } from "../llm/gbnf.ts";
import { LocalChatClient } from "../llm/local.ts";
import { writeRandomGguf } from "../llm/random_gguf.ts";
import { buildContext } from "./context.ts";
import { checkReply, llmEngineer, ungeneratable } from "./llm.ts";
import {
  replyGrammar,
  replyJsonSchema,
  replyResponseFormat,
} from "./reply_format.ts";
import { withModelDir } from "../llm/_local_testing.ts";

Deno.test("the reply grammar is derived from the config schema: every bound of it is spelled out", () => {
  const g = replyGrammar();
  const decimals = (x: number) =>
    Number.isInteger(x)
      ? 0
      : String(x).includes("e-")
      ? Number(String(x).split("e-")[1])
      : String(x).split(".")[1]!.length;
  for (const [name, b] of Object.entries(ENV_CONFIG_BOUNDS)) {
    if (name === "components") continue;
    const rule = numberRangeGbnf(b.min, b.max, {
      integer: b.integer,
      decimals: Math.max(3, decimals(b.min), decimals(b.max)),
    });
    assert.ok(g.includes(`::= ${rule}\n`), `${name} ${b.min}..${b.max}`);
  }
  assert.match(
    g,
    new RegExp(`\\{0,${ENV_CONFIG_BOUNDS.components.max - 1}\\}`),
  );
  assert.ok(g.includes(`char{0,${RATIONALE_MAX_CHARS}}`));
  for (const f of ENV_CONFIG_FIELDS) assert.ok(g.includes(`"\\"${f}\\""`), f);
  assert.ok(g.includes('"\\"fail\\"" | "\\"block\\""'));
  // The JSON Schema sent to servers carries the same bounds.
  const s = JSON.stringify(replyJsonSchema());
  assert.match(s, /"minimum":0\.000001/);
  assert.match(s, /"maximum":4096/);
  assert.deepEqual(
    (replyResponseFormat().json_schema as { name: string }).name,
    "environment_config",
  );
});

Deno.test("20 seeded replies of a random-weight model under the grammar: all parse into in-range configs", async () => {
  await withModelDir("envsmith-reply-", async (dir) => {
    const gguf = join(dir, "tiny.gguf");
    // JSON-friendly extra tokens only make replies shorter (faster test).
    await writeRandomGguf(gguf, {
      seed: 11,
      extraTokens: [
        ...ENV_CONFIG_FIELDS.map((f) => `"${f}":`),
        '"rationale":',
        '"config":',
        '"mixture":',
        '"weight":',
        '"factor":',
        '"steps":',
        '"min":',
        '"max":',
      ],
    });
    // Short prompts keep it fast: the grammar, not the prompt, is under test.
    const messages = [
      {
        role: "system" as const,
        content: "Reply with the next configuration.",
      },
      { role: "user" as const, content: "none" },
    ];
    const grammar = replyGrammar();
    let generatable = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const reply = await new LocalChatClient({
        gguf,
        grammar,
        temperature: 1,
        seed,
        contextSize: 2048,
      }).chat(messages);
      assert.equal(reply.finishReason, "stop");
      JSON.parse(reply.text); // the whole reply is one JSON object
      const check = checkReply(reply.text, PRESETS.easy, { generate: false });
      assert.ok(check.ok, `seed ${seed}: ${!check.ok && check.error}`);
      parseEnvConfig(check.config);
      // Only cross-field rules (which a grammar cannot state) are repaired:
      // no value was ever out of its range, of the wrong type or unknown.
      if (check.adjustments.length > 0) {
        const notes = check.adjustments.join("; ");
        assert.match(notes, /reduced to|swapped/, notes);
        assert.doesNotMatch(
          notes,
          /clamped to|not a number|unknown|not one of|converted|neither|not an object/,
        );
      }
      if (ungeneratable(check.config, seed) === null) generatable++;
    }
    // Random values often ask for distances the grid cannot hold: the
    // engineer rejects those replies (next test file), the grammar cannot.
    assert.ok(generatable < 20);
  });
});

Deno.test("thinking on a local model: no grammar, and a reply cut off at max_tokens is a `truncated` event", async () => {
  await withModelDir("envsmith-think-", async (dir) => {
    const gguf = join(dir, "tiny.gguf");
    await writeRandomGguf(gguf, { seed: 12 });
    const p = await llmEngineer({
      chat: { gguf, thinking: "on", maxTokens: 8, temperature: 1, seed: 1 },
      prompts: {
        system: "Think, then answer.",
        user: "{{context_type}}",
        retry: "{{error}}",
      },
      reasks: 0,
    }).propose({
      context: buildContext("none", null, PRESETS.easy, { history: [] }),
      config: PRESETS.easy,
      seed: 1,
    });
    assert.deepEqual(p.events.map((e) => e.type), ["truncated", "fallback"]);
    assert.match(
      p.events[0]!.detail,
      /cut off at max_tokens 8 before its JSON/,
    );
    assert.deepEqual(
      { truncated: p.llm!.truncated, fallback: p.llm!.fallback },
      { truncated: 1, fallback: 1 },
    );
  });
});
