import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { initCheckpoint } from "./checkpoint.ts";
import { scoreLevels } from "./level_scores.ts";
import { mlpRunner, rollout } from "./rollout.ts";
import { randomInstances } from "./_test_instances.ts";

const sha = (b: Uint8Array | string) =>
  createHash("sha256").update(b).digest("hex").slice(0, 16);

const instances = randomInstances(10, 9, {
  size: 6,
  agents: 3,
  holes: 0.15,
  slip: 0.1,
});

// Digests recorded at commit 32489ee, before the two loops became one
// (`deno test -A policy/acting_loop_test.ts` printed them from the code of
// that commit): the shared loop reproduces both rollouts byte for byte.
Deno.test("acting loop: scoring rollouts give the values recorded before the loops were shared", () => {
  const ck = initCheckpoint({ seed: 3, hidden: [8, 8] });
  const s = scoreLevels(ck, instances, { episodes: 3, seed: 11, envs: 4 });
  assert.ok(s.some((x) => x.pvl > 0) && s.every((x) => x.episodes === 3));
  assert.equal(sha(JSON.stringify(s)), "96ada257031fa345");
});

Deno.test("acting loop: evaluation rollouts (sampled and greedy) give the episodes and trajectories recorded before", async () => {
  const ck = initCheckpoint({ seed: 3, hidden: [8, 8] });
  const want = {
    sampled: ["0dded1baa2e82b4b", "0083a91e82a47264"],
    greedy: ["d34b8feddd67a937", "066c9c42418a1699"],
  };
  for (const greedy of [false, true]) {
    const r = await rollout(mlpRunner(ck.net), instances, {
      obs: ck.obs,
      episodes: 3,
      seed: 11,
      envs: 4,
      greedy,
    });
    assert.equal(r.episodes.length, 30);
    assert.deepEqual(
      [
        sha(JSON.stringify([r.episodes, r.summary, r.suites])),
        sha(r.trajectories!),
      ],
      want[greedy ? "greedy" : "sampled"],
    );
  }
});

Deno.test("acting loop: scoring and evaluation rollouts act through the one shared loop", async () => {
  for (const file of ["level_scores.ts", "rollout.ts"]) {
    const src = await Deno.readTextFile(new URL(`./${file}`, import.meta.url));
    assert.match(src, /from "\.\/acting_loop\.ts";/, file);
    assert.match(src, /runActingLoop(Async)?\(/, file);
    // a second loop would step the environments or sample actions itself
    assert.doesNotMatch(
      src,
      /env\.step\(|rng\.float\(\)|sampleActions\(/,
      file,
    );
  }
});
