import assert from "node:assert/strict";
import { throwsType } from "./_testing.ts";
import { extractJson } from "./json_extract.ts";
import { JsonExtractionError } from "./errors.ts";

Deno.test("extractJson reads a bare object", () => {
  assert.deepEqual(extractJson(' {"a": 1, "b": [2, 3]} '), { a: 1, b: [2, 3] });
});

Deno.test("extractJson prefers a ```json fence over other fences", () => {
  const reply =
    'Plan:\n```text\n{not json}\n```\nConfig:\n```json\n{"agents": 4}\n```\n';
  assert.deepEqual(extractJson(reply), { agents: 4 });
});

Deno.test("extractJson reads an unlabelled fence", () => {
  assert.deepEqual(extractJson('```\n{"x": "y"}\n```'), { x: "y" });
});

Deno.test("extractJson skips a <think> block, even an unclosed one before the JSON", () => {
  assert.deepEqual(
    extractJson('<think>maybe {"agents": 99}?</think>\n{"agents": 3}'),
    { agents: 3 },
  );
});

Deno.test("extractJson finds an object in prose, with braces inside strings", () => {
  const reply =
    'I propose {"note": "use } and { carefully", "n": 2} as the config.';
  assert.deepEqual(extractJson(reply), { note: "use } and { carefully", n: 2 });
});

Deno.test("extractJson rejects malformed JSON with the parse error in the message", () => {
  const e = throwsType(
    () => extractJson('```json\n{"agents": 3,}\n```'),
    JsonExtractionError,
  );
  assert.deepEqual(e instanceof SyntaxError, true);
  assert.deepEqual(/does not parse/.test(e.message), true);
  assert.deepEqual(/```json/.test(e.message), true);
});

Deno.test("extractJson rejects a reply without JSON", () => {
  const e = throwsType(
    () => extractJson("I cannot help with that."),
    JsonExtractionError,
  );
  assert.deepEqual(/no JSON object found/.test(e.message), true);
  assert.deepEqual(e.replyLength, 24);
});

Deno.test("extractJson rejects an array unless objectOnly is false", () => {
  throwsType(() => extractJson("[1, 2]"), JsonExtractionError);
  assert.deepEqual(extractJson("[1, 2]", { objectOnly: false }), [1, 2]);
});

Deno.test("extractJson keeps non-finite numbers visible to the validator", () => {
  // 1e999 is valid JSON and parses to Infinity: the config validator must reject it.
  assert.deepEqual(extractJson('{"slip": 1e999}'), { slip: Infinity });
});
