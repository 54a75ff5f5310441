/**
 * The fault campaign with a fixed seed (the bench `bench/fault_campaign.ts`
 * sweeps seeds): every invariant of docs/caching.md after every step.
 */
import assert from "node:assert/strict";
import { runCampaign } from "./campaign.ts";

/** Steps of the CI campaign: about 1 to 2 minutes on a loaded 2-core machine. */
const STEPS = 12;
const SEED = 31;

Deno.test("faults: a seeded campaign of kills, concurrent gcs, damaged files, imports, full and read-only disks keeps every invariant", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-campaign-" });
  const lines: string[] = [];
  try {
    const r = await runCampaign({
      steps: STEPS,
      seed: SEED,
      dir,
      log: (l) => lines.push(l),
    });
    const why = `seed ${SEED}:\n${lines.join("\n")}\n${JSON.stringify(r)}`;
    assert.equal(r.failure, undefined, why);
    // Every step and the final repair survived.
    assert.equal(r.survived, STEPS + 1, why);
    // The seed's sequence exercises the faults it is there for.
    assert.ok(r.kills >= 1, why);
    assert.ok(r.refusals >= 1, why);
    assert.ok(r.compared >= 4, why);
    for (const k of ["kill", "run+gc", "damage manifest", "import"]) {
      assert.ok((r.kinds[k] ?? 0) >= 1, `${k} taken: ${why}`);
    }
    if (r.skippedMounts) {
      console.log(`full disk and read-only skipped: ${r.skippedMounts}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
