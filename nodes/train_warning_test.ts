import assert from "node:assert/strict";
import { join } from "node:path";
import { SilentReporter } from "@envsmith/engine/run";
import { main } from "../cli.ts";
import {
  finalTrainingSuccess,
  LEARNING_THRESHOLD,
  trainingWarning,
} from "./train_warning.ts";

Deno.test("finalTrainingSuccess: the last tenth of the updates (at least 3), weighted by episodes", () => {
  // 40 updates: the last 4 count; episodes weight them.
  const curve = Array.from({ length: 40 }, (_, i) => ({
    success: i < 36 ? 0 : i < 38 ? 0.5 : 1,
    episodes: i < 38 ? 10 : 30,
  }));
  // (0.5*10*2 + 1*30*2) / (20 + 60) = 70 / 80
  assert.equal(finalTrainingSuccess({ curve }), 70 / 80);
  assert.equal(finalTrainingSuccess({ curve: [] }), null);
  assert.equal(
    finalTrainingSuccess({ curve: [{ success: 0, episodes: 0 }] }),
    null,
  );
  assert.equal(finalTrainingSuccess(null), null);
});

Deno.test("trainingWarning: below the threshold only", () => {
  const at = (success: number) =>
    trainingWarning({
      value: null,
      report: { curve: [{ success, episodes: 5 }] },
    });
  assert.equal(at(LEARNING_THRESHOLD), null);
  assert.equal(at(0.9), null);
  const w = at(0.03)!;
  assert.equal(w.summary, "the policy did not learn its training task");
  assert.equal(w.detail, "final training success 0.03 < 0.10");
});

const TINY = `experiment: tiny
seed: 7
matrix:
  seed: [1, 2]
nodes:
  envs:  { kind: generate, with: { config: { preset: hard }, count: 8, seed: 3 } }
  start: { kind: policy.init, with: { hidden: [8], seed: $seed } }
  last:  { kind: train, with: { policy: $start, envs: $envs, updates: 2, parallel: 4, steps: 8, minibatch: 32 } }
  score: { kind: evaluate, with: { policy: $last, envs: $envs } }
tables:
  - { name: tiny, node: score, rows: seed, columns: value.success_rate }
`;

Deno.test("a deliberately tiny budget: the run, tables and the report warn that the policy did not learn", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-warn-" });
  try {
    const file = join(dir, "tiny.yaml");
    await Deno.writeTextFile(file, TINY);
    const cli = async (args: string[]) => {
      const out: string[] = [], err: string[] = [];
      const code = await main(["--cache", join(dir, "cache"), ...args], {
        reporter: new SilentReporter(),
        output: { out: (l) => out.push(l), err: (l) => err.push(l) },
      });
      return { code, out: out.join("\n"), err: err.join("\n") };
    };
    const warning =
      /^warning: the policy did not learn its training task in 2 of 2 "last" nodes \(final training success 0\.\d\d < 0\.10 in last\[seed=1\]; final training success 0\.\d\d < 0\.10 in last\[seed=2\]\): where every policy of a comparison is like this, its cells measure nothing; /m;
    const run = await cli(["run", file, "--jobs", "2"]);
    assert.equal(run.code, 0, run.err);
    assert.match(run.err, warning);
    const tables = await cli(["tables", file, "--out", join(dir, "t")]);
    assert.match(tables.out, warning);
    const report = await cli(["report", file, "--out", join(dir, "r.html")]);
    assert.equal(report.code, 0, report.err);
    const html = await Deno.readTextFile(join(dir, "r.html"));
    assert.match(
      html,
      /<div class="callout warning"><strong>Warning:<\/strong> the policy did not learn its training task in 2 of 2 &quot;last&quot; nodes/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
