/**
 * The program kinds end to end through the command line: a generator that
 * is not deterministic, a trainer that names no file, and a crash fail
 * their node in one line and cache nothing; the program's file enters the
 * key; train and evaluate chain checkpoints through the cache.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadExperiment } from "@envsmith/engine/compile";
import { computeKeys, Store } from "@envsmith/engine/cache";
import type { Json } from "@envsmith/engine/kind";
import { kinds } from "./mod.ts";
import { runCli } from "../_test_util.ts";

const ODD = new URL(
  "../families/program/testdata/odd_family.py",
  import.meta.url,
);

const cli = runCli;

function experiment(mode: string, trainMode = mode): string {
  return `experiment: odd
seed: 1
nodes:
  envs: { kind: program.generate, with: { family: { command: [python3, odd.py, ${mode}] }, config: { n: 2 }, count: 3, seed: 4 } }
  policy: { kind: program.train, with: { family: { command: [python3, odd.py, ${trainMode}] }, envs: $envs, budget: 10 } }
  again: { kind: program.train, with: { family: { command: [python3, odd.py, ${trainMode}] }, envs: $envs, policy: $policy, budget: 10 } }
  score: { kind: program.evaluate, with: { family: { command: [python3, odd.py, ${trainMode}] }, envs: $envs, policy: $again } }
`;
}

Deno.test("program kinds: bad programs fail their node in one line and cache nothing; good ones chain checkpoints", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-program-" });
  try {
    await Deno.copyFile(ODD, join(dir, "odd.py"));
    const file = join(dir, "exp.yaml");
    const cache = ["--cache", join(dir, "cache")];

    await Deno.writeTextFile(file, experiment("random"));
    const random = await cli([...cache, "run", file]);
    assert.notEqual(random.code, 0);
    assert.match(
      random.err,
      /family program odd\.py \(generate\): not deterministic: two requests with seed 4 gave different instances \(first at index 0\); draw every random number from a generator seeded by the request's seed/,
    );
    // refused at plan, before anything runs: nothing in the cache
    const plan1 = await cli([...cache, "plan", file]);
    assert.notEqual(plan1.code, 0);
    assert.match(
      plan1.err,
      /^envs: family program odd\.py \(generate\): not deterministic/m,
    );
    assert.equal(random.out.includes("computed"), false);

    await Deno.writeTextFile(file, experiment("good", "no-file"));
    const noFile = await cli([...cache, "run", file]);
    assert.notEqual(noFile.code, 0);
    assert.match(
      noFile.err,
      /family program odd\.py \(train\): the reply names checkpoint missing\.txt, but out_dir holds no such file; write it into out_dir before replying/,
    );
    const plan2 = await cli([...cache, "plan", file]);
    assert.match(plan2.out, /cached +envs/);
    assert.match(plan2.out, /run +policy +failed in the last run/);

    await Deno.writeTextFile(file, experiment("good"));
    const good = await cli([...cache, "run", file]);
    assert.equal(good.code, 0, good.err);
    // the second trainer read the first one's checkpoint from the cache
    const exp = await loadExperiment(file, { kinds });
    const keys = computeKeys(exp);
    const store = new Store(join(dir, "cache"));
    const value = (id: string) =>
      store.readEntry(keys[exp.byId.get(id)!]!.key)!.value as {
        [k: string]: Json;
      };
    const ck = value("again").checkpoint as { $blob: string };
    assert.equal(
      await Deno.readTextFile(store.blobPath(ck.$blob)),
      "None+3+3",
    );
    const score = value("score");
    assert.equal(score.success_rate, 0.333333);
    assert.deepEqual(
      (score.per_instance as { id: string; success_rate: number }[]).map((
        x,
      ) => [x.id, x.success_rate]),
      [["i0", 0], ["i1", 1], ["i2", 0]],
    );
    const again = await cli([...cache, "plan", file]);
    assert.match(again.out, /4 nodes: 4 cached/);

    // editing the program moves every key that runs it
    await Deno.writeTextFile(join(dir, "odd.py"), "\n# edited\n", {
      append: true,
    });
    const edited = await cli([...cache, "plan", file]);
    assert.match(edited.out, /4 nodes: 0 cached/);
    assert.match(edited.out, /run +envs +.*odd\.py/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
