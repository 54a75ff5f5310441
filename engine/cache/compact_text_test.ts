import assert from "node:assert/strict";
import { KeyReferences, packColumns, unpackColumns } from "./compact_text.ts";

const H = (c: string) => c.repeat(64);

Deno.test("key references: repeats of 64-hex runs become numbered references, in payload order, and unpack exactly at every run length", () => {
  const a = H("a"), b = "0123456789abcdef".repeat(4);
  const texts = [
    `["e","${a}",0,["${b}"]]`,
    `${a}\n${b}${a}`, // two keys in one 128-hex run: both seen
    `${a.slice(0, 63)} ${a}0`, // 63 hex is not a key; a 65-hex run keeps its last digit
    `12${H("1")}`, // 66 digits: the first 64 are the run, "1" repeats below
    `${H("1")}\x41${"7".repeat(130)}`,
    `${"7".repeat(64)}${"7".repeat(64)}77`,
  ];
  const pack = new KeyReferences();
  const packed = texts.map((t) => pack.pack(t));
  assert.equal(packed[1], "\x020\x03\n\x021\x03\x020\x03");
  assert.equal(packed[2], `${a.slice(0, 63)} \x020\x030`);
  // "12" + 62 ones is a new run; the remaining "11" is not a key
  assert.equal(packed[3], `12${"1".repeat(62)}11`);
  assert.equal(packed[5], "\x024\x03\x024\x0377");
  const unpack = new KeyReferences();
  assert.deepEqual(packed.map((t) => unpack.unpack(t)), texts);
  // packed text is shorter by each repeat
  assert.ok(packed.join("").length < texts.join("").length - 5 * 60);
});

Deno.test("key references: a reference to a key not yet seen is an error, not a wrong key", () => {
  assert.throws(
    () => new KeyReferences().unpack("x\x023\x03"),
    /no key number 3/,
  );
});

Deno.test("packColumns zips an array's few-valued numeric fields of equal length, stores integer columns as differences when shorter, and unpacks to the same columns", () => {
  const n = 40;
  const ids = Array.from({ length: n }, (_, i) => String(1000 + i * 3));
  const cols = new Map<string, string[]>([
    ["evaluate.value.per_instance[]", Array(n).fill("{0")],
    ["evaluate.value.per_instance[].valid", ids.map((_, i) => String(i % 2))],
    [
      "evaluate.value.per_instance[].rate",
      ids.map((_, i) => ["0", "0.5", "1"][i % 3]!),
    ],
    ["evaluate.value.per_instance[].seed", ids], // integers, 40 values: delta, not zipped
    ["evaluate.value.per_instance[].name", ids.map((i) => `"m${i}"`)], // strings stay
    ["evaluate.value.per_instance[].*", ids.map(() => "1")], // not a plain field name
    ["evaluate.value.runs[]", ["{0", "{0"]],
    ["evaluate.value.runs[].x", ["1", "2", "3"]], // unequal count: not zipped
    ["train.value.big", ["9007199254740991", "-9007199254740991"]], // difference not safe
    ["train.value.neg", ["-5", "-3", "-1", "1", "3"]],
  ]);
  const packed = packColumns(cols);
  const byName = new Map(packed.map((c) => [c.name, c]));
  const zip = byName.get("evaluate.value.per_instance[]\trate,valid");
  assert.deepEqual(zip?.form, ["z", ["rate", "valid"]]);
  assert.deepEqual(zip?.tokens.slice(0, 3), ["0\t0", "0.5\t1", "1\t0"]);
  assert.deepEqual(byName.get("evaluate.value.per_instance[].seed")?.form, [
    "d",
  ]);
  assert.deepEqual(
    byName.get("evaluate.value.per_instance[].seed")?.tokens.slice(0, 3),
    ["1000", "3", "3"],
  );
  assert.deepEqual(byName.get("train.value.neg")?.tokens, [
    "-5",
    "2",
    "2",
    "2",
    "2",
  ]);
  for (
    const plain of [
      "train.value.big",
      "evaluate.value.runs[].x",
      "evaluate.value.per_instance[].name",
    ]
  ) {
    assert.deepEqual(byName.get(plain)?.form, [], plain);
  }
  assert.ok(!byName.has("evaluate.value.per_instance[].valid"));
  assert.deepEqual(
    packed.map((c) => c.name),
    packed.map((c) => c.name).sort(),
    "sorted by name",
  );
  assert.deepEqual(unpackColumns(packed), cols);
});

Deno.test("unpackColumns refuses a zipped row with the wrong number of values", () => {
  assert.throws(
    () =>
      unpackColumns([{
        name: "k.v.a[]\tx,y",
        form: ["z", ["x", "y"]],
        tokens: ["1\t2", "3"],
      }]),
    /column k\.v\.a\[\]\tx,y: a row of 1 values/,
  );
});
