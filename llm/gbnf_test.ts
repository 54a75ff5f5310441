import { scaledMs } from "../engine/testdata/load.ts";
import assert from "node:assert/strict";
import {
  gbnfLiteral,
  GbnfSchemaError,
  type JsonSchema,
  jsonSchemaToGbnf,
  numberRangeGbnf,
  SCHEMA_LIMITS,
  SchemaLimitError,
  type SchemaLimits,
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

/** Runs `fn`, asserting it throws a SchemaLimitError of `limit` within `ms`; returns the error. */
function refused(
  fn: () => unknown,
  limit: keyof SchemaLimits,
  ms = 1000,
): SchemaLimitError {
  const t0 = performance.now();
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  const took = performance.now() - t0;
  assert.ok(err instanceof SchemaLimitError, `expected ${limit}, got ${err}`);
  assert.equal(err.limit, limit);
  assert.match(err.message, new RegExp(`the limit schema-[a-z-]+ is `));
  assert.ok(took < ms, `${limit}: refused after ${took.toFixed(0)} ms`);
  return err;
}

Deno.test("jsonSchemaToGbnf: hostile schemas are refused by a named limit in milliseconds", () => {
  const g = (s: unknown) => () => jsonSchemaToGbnf(s as JsonSchema);
  // 300 decimal places: minutes and a GB before the limit
  const tiny = refused(
    g({ type: "number", minimum: 1e-300, maximum: 1 }),
    "decimals",
  );
  assert.match(tiny.message, /minimum 1e-300 needs 300 decimal places/);
  refused(g({ type: "integer", maximum: 1e300 }), "magnitude");
  refused(
    g({ enum: Array.from({ length: 300_000 }, (_, i) => i) }),
    "enumValues",
  );
  // 100,000 levels: a stack overflow before the limit
  let deep: unknown = { type: "null" };
  for (let i = 0; i < 100_000; i++) deep = { type: "array", items: deep };
  const d = refused(g(deep), "depth");
  assert.equal(d.max, SCHEMA_LIMITS.depth);
  const wide: Record<string, unknown> = {};
  for (let i = 0; i < 700; i++) {
    wide[`p${i}`] = {
      type: "array",
      items: { type: "array", items: { type: "null" } },
    };
  }
  refused(g({ type: "object", properties: wide }), "nodes");
  refused(g({ enum: ["x".repeat(70_000)] }), "literalChars");
  refused(g({ type: "string", maxLength: 1e9 }), "stringLength");
  refused(
    g({ type: "array", items: { type: "null" }, minItems: 100_000 }),
    "items",
  );
  const strings: Record<string, unknown> = {};
  for (let i = 0; i < 100; i++) {
    strings[`s${i}`] = { type: "string", maxLength: 1000 };
  }
  refused(g({ type: "object", properties: strings }), "repeats");
  // numbers that pass each bound but add up to a large grammar
  const numbers: Record<string, unknown> = {};
  for (let i = 0; i < 900; i++) {
    numbers[`n${i}`] = {
      type: "number",
      minimum: -1e15 + i,
      maximum: 1e15,
      exclusiveMaximum: 9e14 + i / 8,
    };
  }
  refused(g({ type: "object", properties: numbers }), "grammarChars");
  // limits can be set per call
  refused(
    () => jsonSchemaToGbnf({ enum: [1, 2, 3] }, { limits: { enumValues: 2 } }),
    "enumValues",
  );
});

Deno.test("jsonSchemaToGbnf: keywords of the wrong type are schema errors, not crashes", () => {
  const bad: unknown[] = [
    null,
    [],
    5,
    { enum: "abc" },
    { enum: [] },
    { anyOf: {} },
    { anyOf: [] },
    { anyOf: [5] },
    { type: "object", properties: null },
    { type: "object", properties: [] },
    { type: "object", properties: { a: null } },
    { type: "object", required: "a" },
    { type: "array", items: null },
    { type: "array", items: { type: "null" }, minItems: -1 },
    { type: "array", items: { type: "null" }, minItems: 3, maxItems: 2 },
    { type: "string", maxLength: 1.5 },
    { type: "string", minLength: "3" },
    { type: "number", minimum: "0" },
    { type: "number", minimum: 5, maximum: 1 },
    { type: "integer", minimum: 0.2, maximum: 0.8 },
    { type: [1, 2] },
    { type: { a: 1 } },
    { const: 1n },
  ];
  for (const s of bad) {
    assert.throws(
      () => jsonSchemaToGbnf(s as JsonSchema),
      (e) => e instanceof GbnfSchemaError,
      String(JSON.stringify(s, (_, v) => typeof v === "bigint" ? "1n" : v)),
    );
  }
});

Deno.test("jsonSchemaToGbnf: optional properties cost linear time (16 took 10 s, exponential)", () => {
  for (const n of [16, 40, 1000]) {
    const props: Record<string, unknown> = {};
    for (let i = 0; i < n; i++) props[`p${i}`] = { type: "boolean" };
    const t0 = performance.now();
    const g = jsonSchemaToGbnf(
      { type: "object", properties: props } as JsonSchema,
    );
    const ms = performance.now() - t0;
    assert.ok(
      ms < scaledMs(2000),
      `${n} optional properties: ${ms.toFixed(0)} ms`,
    );
    // one rule per (member, comma) pair at most, plus the members'
    assert.ok(
      g.split("\n").length < 3 * n + 10,
      `${n}: ${g.split("\n").length} rules`,
    );
  }
});
