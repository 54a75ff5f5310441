import assert from "node:assert/strict";
import * as v from "valibot";
import { compileExperiment } from "./experiment.ts";
import { ExperimentError } from "../errors.ts";
import { exec } from "../run/exec_kind.ts";
import { kinds } from "../testdata/kinds.ts";
import type { NodeKind } from "../types.ts";

/** A kind whose parameter is a strict object, like an environment config. */
const shaped: NodeKind = {
  name: "shaped",
  description: "",
  params: v.strictObject({
    config: v.strictObject({ width: v.number(), preset: v.string() }),
    n: v.optional(v.number()),
  }),
  module: import.meta.url,
  run: () => Promise.resolve({ value: 1 }),
};

function messages(yaml: string): string[] {
  try {
    compileExperiment("e.yaml", yaml, { kinds: [...kinds, shaped, exec] });
  } catch (e) {
    if (e instanceof ExperimentError) {
      return e.diagnostics.map((d) => `${d.line}:${d.col} ${d.message}`);
    }
    throw e;
  }
  return [];
}

Deno.test("unknown keys inside a parameter are errors at plan time (a literal, a stage-0 from value, a matrix value)", () => {
  const got = messages(`experiment: x
seed: 1
matrix:
  start: [{ name: a, config: { width: 3, preset: easy, colour: red } }]
nodes:
  lit: { kind: shaped, with: { config: { width: 3, preset: easy, wdith: 4 } } }
  mat: { kind: shaped, with: { config: $matrix.start.config } }
  s:
    kind: stages
    count: 2
    from: { c: { width: 3, preset: easy, hieght: 2 } }
    each:
      c: { kind: shaped, with: { config: $prev.c } }
`);
  assert.equal(got.length, 3, got.join("\n"));
  assert.match(got[0]!, /^6:66 config\.wdith: unknown key "wdith"$/);
  assert.match(got[1]!, /^7:32 config\.colour: .*\(in mat\[start=a\]\)$/);
  // (at the reference that reads the `from` value)
  assert.match(got[2]!, /^13:\d+ config\.hieght: unknown key "hieght"$/);
  // Unknown top-level parameters keep their own message (with did-you-mean), once.
  const top = messages(
    "experiment: x\nseed: 1\nnodes:\n  a: { kind: shaped, with: { config: { width: 1, preset: p }, m: 1 } }\n",
  );
  assert.equal(top.length, 1);
  assert.match(
    top[0]!,
    /unknown parameter of kind shaped "m"; did you mean "n"\?/,
  );
});

Deno.test("exec: a file name that leaves the work directory is refused at plan time, even with a reference as its value", () => {
  const got = messages(`experiment: x
seed: 1
nodes:
  b: { kind: test.blob, with: { size: 10 } }
  run:
    kind: exec
    with:
      command: "true"
      files: { ../escape: $b.blob, ok/inside: $b.blob, /abs: $b.blob }
      outputs: [../out.txt]
`);
  assert.equal(got.length, 3, got.join("\n"));
  assert.match(
    got[0]!,
    /^9:16 files\.\.\.\/escape: must be a relative path inside/,
  );
  assert.match(got[1]!, /^9:56 files\.\/abs: must be a relative path inside/);
  assert.match(got[2]!, /^10:17 outputs\.0: must be a relative path inside/);
});
