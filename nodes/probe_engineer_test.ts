import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { BlobRef } from "@envsmith/engine/kind";
import { initCheckpoint } from "../policy/checkpoint.ts";
import { PRESETS } from "../schemas/env_config.ts";
import { writePolicy } from "./policy_io.ts";
import { checkpointProber } from "./probe_engineer.ts";
import { redesign } from "./redesign.ts";
import { engineers } from "./engineers.ts";

function memBlobs() {
  const blobs = new Map<string, Uint8Array>();
  const reads: string[] = [];
  return {
    reads,
    writeBlob(bytes: Uint8Array, media: string): Promise<BlobRef> {
      const h = createHash("sha256").update(bytes).digest("hex");
      blobs.set(h, bytes);
      return Promise.resolve({ $blob: h, size: bytes.length, media });
    },
    readBlob(ref: BlobRef): Promise<Uint8Array> {
      reads.push(ref.$blob);
      return Promise.resolve(blobs.get(ref.$blob)!);
    },
  };
}

Deno.test("probe-base scores candidates with the stage-0 policy it is given, probe with the current checkpoint", async () => {
  const mem = memBlobs();
  const base = initCheckpoint({ seed: 1, hidden: [8, 8] });
  const current = initCheckpoint({ seed: 2, hidden: [8, 8] });
  const baseValue = await writePolicy(base, mem);
  const currentValue = await writePolicy(current, mem);
  const run = async (name: string, policy: unknown) => {
    mem.reads.length = 0;
    const r = await redesign(
      {
        engineer: { name, policy, candidates: 3, probe_instances: 6 },
        config: PRESETS.easy,
        stage: 1,
      },
      4,
      { engineers, readBlob: mem.readBlob, writeBlob: mem.writeBlob },
    );
    return { r, reads: [...mem.reads] };
  };
  const b = await run("probe-base", baseValue);
  assert.deepEqual(
    b.reads,
    [baseValue.onnx.$blob],
    "reads the stage-0 policy only",
  );
  const c = await run("probe", currentValue);
  assert.deepEqual(c.reads, [currentValue.onnx.$blob]);
  // the numbers in probe-base's events are the stage-0 policy's own
  const events = b.r.report.events as { detail: string }[];
  const cand0 = /success ([\d.]+)/.exec(events[0]!.detail)![1]!;
  const seed = (4 ^ Math.imul(2, 0x9e3779b1)) >>> 0; // the probe seed of stage 1
  const direct = await checkpointProber(base, { instances: 6, episodes: 2 })(
    [PRESETS.easy],
    seed,
  );
  assert.equal(Number(cand0), Number(direct[0]!.success.toFixed(3)));
  const cost = b.r.report.engineer_cost as {
    agent_steps: number;
    episodes: number;
  };
  assert.equal(
    cost.episodes,
    3 * 6 * 2,
    "3 candidates x 6 instances x 2 episodes",
  );
  assert.ok(cost.agent_steps > 0);
});
