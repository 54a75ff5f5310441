/**
 * Warm workers give the results of a fresh worker per node: the shipped
 * smoke experiment (every domain kind: generate, policy.init, train,
 * rollout, diagnose, redesign, evaluate) run through the CLI with the
 * local executor's warm workers and with `workers: fresh`, entry by entry.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { main } from "../cli.ts";
import { Store } from "@envsmith/engine/cache";
import { SilentReporter } from "@envsmith/engine/run";

const FILE = new URL("./smoke.yaml", import.meta.url).pathname;

async function run(cache: string, file: string): Promise<string> {
  const err: string[] = [];
  const code = await main(["--cache", cache, "run", file, "--jobs", "2"], {
    reporter: new SilentReporter(),
    output: { out: () => {}, err: (l) => err.push(l) },
  });
  assert.equal(code, 0, err.join("\n"));
  return err.join("\n");
}

Deno.test("smoke experiment: warm workers store exactly the entries of a fresh worker per node", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-warm-" });
  try {
    const yaml = await Deno.readTextFile(FILE);
    const freshFile = join(dir, "smoke_fresh.yaml");
    await Deno.writeTextFile(
      freshFile,
      `${yaml}\nexecutor: { type: local, workers: fresh }\n`,
    );
    const warm = new Store(join(dir, "warm")),
      fresh = new Store(join(dir, "fresh"));
    await run(warm.root, FILE);
    await run(fresh.root, freshFile);
    const keys = [...warm.keys()].sort();
    assert.equal(keys.length, 20);
    assert.deepEqual([...fresh.keys()].sort(), keys);
    for (const key of keys) {
      const a = warm.loadVerified(key)!, b = fresh.loadVerified(key)!;
      assert.deepEqual(a.value, b.value, `${a.id} (${a.kind})`);
      assert.deepEqual(a.blobs, b.blobs, `${a.id} (${a.kind}) blobs`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
