import assert from "node:assert/strict";
import { join } from "node:path";
import { checkMutations, copyTree, ROOT, runMutations } from "./mutate.ts";
import { type Mutation, MUTATIONS } from "./mutations.ts";

Deno.test("mutations: the list is in step with the code (every snippet found once, every test beside its code) and covers what it must", () => {
  assert.deepEqual(checkMutations(MUTATIONS), []);
  assert.ok(MUTATIONS.length >= 25, `${MUTATIONS.length} mutations`);
  const names = MUTATIONS.map((m) => m.name);
  for (
    const must of [
      "pvl-sums-absolute-advantages",
      "accel-edits-lowest-regret",
      "digest-ignores-dynamic-import",
      "bootstrap-instances-not-resampled",
      "key-drops-field-path",
      "plr-replay-order-reversed",
      "lm-reward-on-goal-not-a-share",
      "store-skips-entry-hash",
    ]
  ) assert.ok(names.includes(must), must);
});

Deno.test("mutations: a moved snippet, a repeated one and a distant test are each named with the fix", () => {
  const base: Mutation = {
    name: "m",
    file: "policy/pvl.ts",
    from: "if (a > 0) positive[l] = positive[l]! + a;",
    to: "",
    tests: ["policy/pvl_test.ts"],
    why: "",
  };
  assert.deepEqual(checkMutations([base]), []);
  const moved = checkMutations([{ ...base, from: "no such code" }]);
  assert.match(
    moved[0]!,
    /^m: its original snippet is no longer in policy\/pvl\.ts/,
  );
  const twice = checkMutations([{ ...base, from: "positive" }]);
  assert.match(twice[0]!, /occurs \d+ times in policy\/pvl\.ts \(lengthen it/);
  const far = checkMutations([{ ...base, tests: ["architecture_test.ts"] }]);
  assert.match(far[0]!, /architecture_test\.ts is not beside policy\/pvl\.ts/);
  const gone = checkMutations([{ ...base, tests: ["policy/none_test.ts"] }]);
  assert.match(gone[0]!, /the test policy\/none_test\.ts does not exist/);
});

Deno.test("mutate: a mutation is applied to a copy, never the tree, and a survivor is reported as such", async () => {
  const before = Deno.readTextFileSync(join(ROOT, "policy/pvl.ts"));
  const dir = copyTree();
  try {
    // a no-op mutation (a comment) survives; a real one is killed
    const results = await runMutations(dir, [
      {
        name: "comment",
        file: "policy/pvl.ts",
        from: " * @module\n",
        to: " * @module (mutated)\n",
        tests: ["policy/pvl_test.ts"],
        why: "",
      },
      MUTATIONS.find((m) => m.name === "pvl-sums-absolute-advantages")!,
    ], () => {});
    assert.deepEqual(results.map((r) => [r.name, r.killed]), [
      ["comment", false],
      ["pvl-sums-absolute-advantages", true],
    ]);
    assert.equal(Deno.readTextFileSync(join(dir, "policy/pvl.ts")), before);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
  assert.equal(Deno.readTextFileSync(join(ROOT, "policy/pvl.ts")), before);
});
