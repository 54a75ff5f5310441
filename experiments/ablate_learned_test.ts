/**
 * `ablate-learned.yaml` and its micro version compile with the registered
 * kinds, and no node of the learned engineer's data (transitions,
 * hindsight, the fit and the benchmark) has the test-split suites among
 * its inputs, at any depth: test instances reach only the ablation's
 * `score` nodes.
 */
import assert from "node:assert/strict";
import { compileExperiment } from "@envsmith/engine/compile";
import { allKinds } from "../mod.ts";

const DATA_KINDS = new Set([
  "transitions",
  "hindsight",
  "learned.fit",
  "engineer.bench",
]);

for (
  const [name, path] of [
    ["ablate-learned", "./ablate-learned.yaml"],
    ["learned-micro", "../bench/learned_micro.yaml"],
  ]
) {
  Deno.test(`${name}: no test-split suite is an input of the learned engineer's data, at any depth`, () => {
    const file = new URL(path!, import.meta.url).pathname;
    const exp = compileExperiment(file, Deno.readTextFileSync(file), {
      kinds: allKinds,
    });
    const isTestSplit = (i: number) => {
      const n = exp.nodes[i]!;
      return n.kind.name === "generate" &&
        (n.literal as { split?: string }).split === "test";
    };
    const testNodes = exp.nodes.filter((n) => isTestSplit(n.index));
    assert.ok(testNodes.length > 0, "the ablation scores on a test split");
    let checked = 0;
    for (const n of exp.nodes) {
      if (!DATA_KINDS.has(n.kind.name)) continue;
      checked++;
      const seen = new Set<number>();
      const stack = [...n.deps];
      while (stack.length > 0) {
        const d = stack.pop()!;
        if (seen.has(d)) continue;
        seen.add(d);
        assert.ok(
          !isTestSplit(d),
          `${n.id} depends on the test split through ${exp.nodes[d]!.id}`,
        );
        stack.push(...exp.nodes[d]!.deps);
      }
      // and the validation suites are an input of every data node
      assert.ok(
        [...seen].some((d) =>
          exp.nodes[d]!.kind.name === "generate" &&
          (exp.nodes[d]!.literal as { split?: string }).split === "validation"
        ),
        n.id,
      );
    }
    assert.ok(checked >= 14, `${checked} learned data nodes checked`);
    // the ablation's score nodes do read the test split (the check can fail)
    const score = exp.nodes.find((n) => n.plain === "score")!;
    assert.ok(score.deps.some(isTestSplit));
  });
}
