import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import * as v from "valibot";
import type { BlobRef, NodeContext } from "@envsmith/engine/kind";
import {
  encodeTrajectories,
  type Episode,
  instancesToJsonLines,
  validateInstance,
} from "../mapf/mod.ts";
import { FindingsSchema, PRESETS } from "../schemas/mod.ts";
import { DiagnoseParamsSchema, kind, RolloutInputError } from "./diagnose.ts";

const inst = validateInstance({
  id: "i-0",
  config: "x",
  seed: 1,
  index: 0,
  width: 3,
  height: 3,
  cells: ["...", ".H.", "..."],
  starts: [[0, 0]],
  goals: [[0, 2]],
  slip: 0,
  horizon: 6,
  collision: "fail",
  holes: "lethal",
  reference: { soc: 2, makespan: 2, solver: "cbs" },
  stats: { holes: 1, walls: 0, mean_distance: 2, interaction: 0, component: 0 },
});

const ok: Episode = {
  instance: "i-0",
  width: 3,
  agents: 1,
  seed: 0,
  steps: 2,
  positions: Int32Array.of(0, 1, 2),
  actions: Uint8Array.of(4, 4),
  outcome: "success",
  failAgents: [],
  failStep: -1,
};
const fall: Episode = {
  ...ok,
  seed: 1,
  positions: Int32Array.of(0, 1, 4),
  outcome: "hole",
  failAgents: [0],
  failStep: 2,
};

function ctxWith(blobs: Map<string, Uint8Array>): NodeContext {
  return {
    id: "d",
    key: "0".repeat(64),
    seed: 5,
    signal: new AbortController().signal,
    workDir: ".",
    auxDir: ".",
    baseDir: ".",
    progress() {},
    log() {},
    writeBlob() {
      throw new Error("unused");
    },
    readBlob(ref: BlobRef) {
      const b = blobs.get(ref.$blob);
      if (!b) throw new Error("missing blob");
      return Promise.resolve(b);
    },
  };
}

function put(
  blobs: Map<string, Uint8Array>,
  bytes: Uint8Array,
  media: string,
): BlobRef {
  const h = createHash("sha256").update(bytes).digest("hex");
  blobs.set(h, bytes);
  return { $blob: h, size: bytes.length, media };
}

Deno.test("diagnose node: trajectories blob + instances blob -> valid findings", async () => {
  const blobs = new Map<string, Uint8Array>();
  const trajectories = put(
    blobs,
    encodeTrajectories([ok, fall, ok]),
    "application/x-mapf-trajectories",
  );
  const instances = put(
    blobs,
    new TextEncoder().encode(instancesToJsonLines([inst])),
    "application/x-ndjson",
  );
  const params = v.parse(DiagnoseParamsSchema, {
    rollouts: { trajectories, summary: { success_rate: 0.67 } },
    envs: { instances, count: 1 },
    config: { preset: "easy" },
  });
  const r = await kind.run(params, ctxWith(blobs));
  const f = v.parse(FindingsSchema, r.value);
  assert.equal(f.episodes, 3);
  assert.equal(f.success_rate, 0.6667);
  assert.equal(f.outcomes.hole, 1);
  assert.equal(f.seed, 5); // the node's seed when none is given
  assert.deepEqual(f.config, PRESETS.easy);
  assert.equal(f.components[0]!.episodes, 3);
  assert.equal(f.failures[0]!.outcome, "hole");
  assert.deepEqual(r.report, {
    episodes: 3,
    success_rate: 0.6667,
    agent_success_rate: 0.6667,
    outcomes: f.outcomes,
    efficiency: 1,
  });
  // Same inputs, same findings.
  const again = await kind.run(params, ctxWith(blobs));
  assert.equal(JSON.stringify(again.value), JSON.stringify(r.value));
});

Deno.test("diagnose node: missing trajectories or instances are clear errors", async () => {
  const blobs = new Map<string, Uint8Array>();
  const trajectories = put(
    blobs,
    encodeTrajectories([ok]),
    "application/x-mapf-trajectories",
  );
  await assert.rejects(
    () => kind.run({ rollouts: { summary: {} } }, ctxWith(blobs)),
    (e) => e instanceof RolloutInputError && /no trajectories/.test(e.message),
  );
  await assert.rejects(
    () => kind.run({ rollouts: { trajectories } }, ctxWith(blobs)),
    (e) => e instanceof RolloutInputError && /envs: \$envs/.test(e.message),
  );
  // Instances inline in the rollouts value work too.
  const r = await kind.run(
    { rollouts: { trajectories, instances: [inst] } },
    ctxWith(blobs),
  );
  assert.equal((r.value as { episodes: number }).episodes, 1);
});
