import assert from "node:assert/strict";
import {
  gbnfLiteral,
  GbnfSchemaError,
  jsonSchemaToGbnf,
  numberRangeGbnf,
} from "./gbnf.ts";

/** A JS regex for a GBNF alternation of literals and classes (what numberRangeGbnf writes). */
function toRegex(gbnf: string): RegExp {
  const alt = gbnf.split(" | ").map((seq) =>
    seq.split(" ").map((atom) =>
      atom.startsWith('"') ? JSON.parse(atom).replace(/[.\-]/g, "\\$&") : atom
    ).join("")
  );
  return new RegExp(`^(?:${alt.join("|")})$`);
}

Deno.test("numberRangeGbnf: integers in range, nothing else, no leading zeros", () => {
  for (const [min, max] of [[2, 64], [1, 4096], [0, 12], [1, 512], [7, 7]]) {
    const re = toRegex(numberRangeGbnf(min!, max!, { integer: true }));
    for (let x = 0; x <= 5000; x++) {
      assert.equal(
        re.test(String(x)),
        x >= min! && x <= max!,
        `${x} in ${min}..${max}`,
      );
      assert.equal(re.test("0" + x), false, `leading zero 0${x}`);
    }
    assert.equal(re.test(`${min}.0`), false);
    assert.equal(re.test(`-${min}`), false);
  }
});

Deno.test("numberRangeGbnf: decimals within the bounds, up to the allowed places", () => {
  const cases: [number, number, number][] = [[0, 0.6, 3], [1, 10, 3], [
    0.000001,
    1e6,
    6,
  ], [-1.5, 2, 2]];
  for (const [min, max, d] of cases) {
    const re = toRegex(numberRangeGbnf(min, max, { decimals: d }));
    const texts = new Set<string>();
    for (let i = -20; i <= 120; i++) {
      for (
        const frac of [
          "",
          ".0",
          ".5",
          ".25",
          ".125",
          ".0625",
          ".000001",
          ".6",
          ".60",
          ".600",
          ".601",
        ]
      ) {
        texts.add(`${i}${frac}`);
      }
    }
    for (const t of texts) {
      const x = Number(t);
      const places = t.includes(".") ? t.split(".")[1]!.length : 0;
      const negZero = t.startsWith("-0") && x === 0;
      const expect = x >= min && x <= max && places <= d && !negZero;
      assert.equal(re.test(t), expect, `${t} in ${min}..${max} (${d} places)`);
    }
    assert.equal(re.test("1e3"), false);
    assert.equal(re.test("."), false);
  }
  assert.throws(() => numberRangeGbnf(3, 2), RangeError);
});

Deno.test("jsonSchemaToGbnf: objects in order with optional members, arrays within bounds, enums, strings", () => {
  const g = jsonSchemaToGbnf({
    type: "object",
    properties: {
      name: { type: "string", maxLength: 5 },
      mode: { enum: ["a", "b"] },
      size: { type: "integer", minimum: 1, maximum: 3 },
      tags: { type: "array", items: { const: "x" }, minItems: 1, maxItems: 2 },
    },
    required: ["name", "size"],
    additionalProperties: false,
  });
  assert.match(g, /^root ::= value$/m);
  assert.match(g, /"\\"" char\{0,5\} "\\""/);
  assert.match(g, /value-mode ::= "\\"a\\"" \| "\\"b\\""/);
  assert.match(g, /value-size ::= \[1-3\]/);
  assert.match(g, /\("," ws value-tags-item\)\{0,1\}/);
  // optional members: `mode` may be absent, `tags` too
  assert.match(g, /\)\?|\| value-m/);
  assert.throws(
    () => jsonSchemaToGbnf({ type: "string", pattern: "^a" }),
    (e) => e instanceof GbnfSchemaError && /"pattern"/.test(e.message),
  );
  assert.throws(
    () => jsonSchemaToGbnf({ type: "array" }),
    (e) => e instanceof GbnfSchemaError && /items/.test(e.message),
  );
  assert.equal(gbnfLiteral('say "hi"\n'), '"say \\"hi\\"\\n"');
});
