import assert from "node:assert/strict";
import { promptTokensAtLeast } from "./prompt_budget.ts";

/** A whitespace tokenizer that counts the characters it was given. */
function counting() {
  let chars = 0;
  const tokenize = (text: string) => {
    chars += text.length;
    return text.split(" ").filter((w) => w);
  };
  return { tokenize, read: () => chars };
}

Deno.test("promptTokensAtLeast: a lower bound, counted only until it passes the limit", () => {
  const words = "lorem ipsum dolor sit amet ".repeat(200_000); // 1,000,000 words
  const c = counting();
  const n = promptTokensAtLeast(
    c.tokenize,
    [{ role: "user", content: words }],
    8192,
  );
  assert.ok(n > 8192 && n < 8192 + 8192, `${n}`);
  // about a context's worth of text was tokenized, not 5.4 million characters
  assert.ok(c.read() < 100_000, `${c.read()} characters tokenized`);
  // a short prompt: never more than its tokens
  for (const text of ["a b c", "one two three four five six".repeat(3000)]) {
    const exact = text.split(" ").filter((w) => w).length + 1;
    const got = promptTokensAtLeast(
      counting().tokenize,
      [{ role: "user", content: text }],
      1e9,
    );
    assert.ok(got <= exact, `${got} > ${exact}`);
    assert.ok(got >= exact - 2 * Math.ceil(text.length / 4096), `${got}`);
  }
  // every message counts at least its role marker
  assert.equal(
    promptTokensAtLeast(
      counting().tokenize,
      Array.from(
        { length: 50 },
        () => ({ role: "user" as const, content: "" }),
      ),
      1000,
    ),
    50,
  );
});
