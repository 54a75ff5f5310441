import assert from "node:assert/strict";
import { runChild } from "@envsmith/engine/run";
import { lineFamily } from "../families/_test_family.ts";
import { checkFamilyReply } from "./family_reply.ts";
import { engineer as exec } from "./exec.ts";
import { createFromKind } from "./registry.ts";

const line = lineFamily();

Deno.test("family reply: a config inside the family's space passes; outside it is named", () => {
  const ok = checkFamilyReply(
    line,
    'Here: {"config": {"length": 4, "gaps": 2}, "rationale": "longer"}',
    { length: 3, gaps: 1 },
  );
  assert.deepEqual(ok, {
    ok: true,
    config: { length: 4, gaps: 2 },
    rationale: "longer",
    adjustments: [],
  });
  const bad = checkFamilyReply(
    line,
    '{"config": {"length": 14, "gaps": 2}, "rationale": ""}',
    { length: 3, gaps: 1 },
  );
  assert.deepEqual(bad, {
    ok: false,
    error:
      "config.length: Invalid value: Expected <=9 but received 14 (family line)",
  });
  assert.equal(checkFamilyReply(line, "no json here", {}).ok, false);
});

Deno.test("exec on another family: the program gets the family's schema and dimensions; its reply is checked against them", async () => {
  const dir = Deno.makeTempDirSync();
  const reply = '{"config":{"length":6,"gaps":1},"rationale":"one longer"}';
  // the program answers only when its stdin names the family, its
  // dimensions and its schema's bounds (an assertion fails it otherwise)
  const script = `import json,sys
d=json.load(sys.stdin)
assert d["family"]=="line" and [x["path"] for x in d["dimensions"]]==["length","gaps"]
assert d["config_schema"]["properties"]["length"]["maximum"]==9
print(${JSON.stringify(reply)})`;
  Deno.writeTextFileSync(`${dir}/eng.py`, script);
  const e = createFromKind(exec, { command: ["python3", "eng.py"] }, {
    family: line,
    baseDir: dir,
    log: () => {},
    runProgram: runChild,
  });
  const context = { json: { type: "stats", stage: 1 }, text: "" } as never;
  const p = await e.propose({
    context,
    config: { length: 5, gaps: 1 } as never,
    seed: 1,
  });
  assert.deepEqual(p.config, { length: 6, gaps: 1 });
  assert.equal(p.rationale, "exec engineer: one longer");
  assert.equal(p.llm?.fallback, 0);
});
