import assert from "node:assert/strict";
import { parse } from "yaml";
import { compileExperiment } from "@envsmith/engine/compile";
import { computeKeys } from "@envsmith/engine/cache";
import { allKinds } from "../mod.ts";
import type { DrBox } from "../mapf/box.ts";
import { initCheckpoint } from "../policy/checkpoint.ts";
import { type Batch, LevelSampler } from "../policy/level_sampler.ts";
import { trainWithSampler } from "../policy/sampler_training.ts";
import { samplerOptions, type SamplerParams } from "../nodes/train_sampler.ts";

interface Row {
  name: string;
  start: unknown;
  engineer: Record<string, unknown>;
  train: { envs: unknown; sampler: SamplerParams | null };
}

function paper() {
  const doc = parse(
    Deno.readTextFileSync(new URL("./paper.yaml", import.meta.url)),
  );
  const rows = new Map<string, Row>(
    doc.matrix.method.map((m: Row) => [m.name, m]),
  );
  return { doc, rows };
}

// a box of small maps, so a policy plays a batch in milliseconds
const SMALL_BOX: DrBox = {
  size: [6, 7],
  agents: [1, 2],
  hole_density: [0, 0.1],
};

Deno.test("paper.yaml: dr, plr and accel are train's per-batch samplers; the per-stage forms are rows of their own", () => {
  const { doc, rows } = paper();
  for (const n of ["dr", "plr", "accel"]) {
    const r = rows.get(n)!;
    assert.equal(r.train.sampler?.name, n, n);
    assert.equal(r.train.envs, null, `${n}: levels come from the sampler`);
    // the reference's defaults: nothing overridden but the name
    assert.deepEqual(Object.keys(r.train.sampler!), ["name"], n);
    // the redesign keeps the configuration: it does not choose the levels
    assert.equal(r.engineer.name, "fixed", n);
    assert.deepEqual(r.start, { preset: "easy" }, n);
  }
  for (const n of ["dr-stage", "plr-stage", "accel-stage"]) {
    const r = rows.get(n)!;
    assert.equal(r.engineer.name, n);
    assert.equal(r.start, "$dr_start");
    assert.equal(r.train.sampler, null);
    assert.equal(r.train.envs, "$envs");
    assert.deepEqual(r.engineer.box, rows.get("dr-stage")!.engineer.box);
  }
  for (const n of ["plr-stage", "accel-stage", "probe"]) {
    assert.equal(rows.get(n)!.engineer.policy, "$policy", n);
  }
  assert.equal(rows.get("probe-base")!.engineer.policy, "$start");
  // every other row trains on its stage's generated levels
  for (const [n, r] of rows) {
    if (["dr", "plr", "accel"].includes(n)) continue;
    assert.deepEqual(
      r.train,
      { envs: "$envs", last_envs: "$last_envs", sampler: null },
      n,
    );
  }
  // one train node for all rows: equal agent-step budgets, paired seeds
  const each = doc.nodes.curriculum.each.policy.with;
  assert.equal(each.samples, 250000);
  assert.equal(each.sampler, "$matrix.method.train.sampler");
  assert.equal(doc.nodes.last.with.samples, 250000);
  assert.equal(doc.nodes.last.with.sampler, "$matrix.method.train.sampler");
  assert.deepEqual(
    doc.matrix.seed,
    Array.from({ length: 20 }, (_, i) => i + 1),
  );
});

Deno.test("paper.yaml's plr row re-ranks its buffer once per batch: N batches, N re-rankings", () => {
  const { rows } = paper();
  const o = samplerOptions(rows.get("plr")!.train.sampler!, 3);
  // the row's sampler at a small scale: 8 levels a batch, a 32-level buffer
  const s = new LevelSampler({ ...o, batch: 8, buffer: 32, box: SMALL_BOX });
  const ck = initCheckpoint({ seed: 3, hidden: [16, 16] });
  const order: Batch[] = [];
  const r = trainWithSampler(ck, s, {
    trainer: { seed: 3, reward: { progress: 0, step: 0 } },
    maxSamples: 4000,
    onBatch: (_, b) => order.push(b),
  });
  assert.equal(s.options.replayProb, 0.8);
  assert.equal(s.options.staleness, 0.3);
  assert.equal(s.options.temperature, 0.3);
  assert.equal(r.batches, order.length);
  assert.ok(r.batches >= 10, `${r.batches} batches`);
  assert.equal(s.counts.reranks, r.batches);
  assert.equal(s.counts.edit, 0, "plr never edits");
  assert.equal(s.counts.replay + s.counts.new, r.batches);
});

Deno.test("paper.yaml's accel row edits after every replay batch: M replay batches, M edit generations", () => {
  const { rows } = paper();
  const o = samplerOptions(rows.get("accel")!.train.sampler!, 4);
  const s = new LevelSampler({ ...o, batch: 8, buffer: 32, box: SMALL_BOX });
  assert.equal(s.options.edits, 5, "the reference's 5 edits per child");
  const ck = initCheckpoint({ seed: 4, hidden: [16, 16] });
  const order: Batch[] = [];
  trainWithSampler(ck, s, {
    trainer: { seed: 4, reward: { progress: 0, step: 0 } },
    maxSamples: 5000,
    onBatch: (_, b) => order.push(b),
  });
  const c = s.counts;
  // the run may end on a replay batch, whose edits would come next
  const pending = order.at(-1)!.branch === "replay" ? 1 : 0;
  assert.ok(c.replay >= 5, `${c.replay} replay batches`);
  assert.equal(c.edit, c.replay - pending);
  assert.equal(c.reranks, order.length);
  order.forEach((b, i) => {
    if (b.branch === "edit") assert.equal(order[i - 1]!.branch, "replay");
  });
});

Deno.test("paper.yaml's rules row and ablate-context.yaml's full row are the same runs (same keys)", () => {
  const key = (file: string, id: string) => {
    const path = new URL(file, import.meta.url).pathname;
    const exp = compileExperiment(path, Deno.readTextFileSync(path), {
      kinds: allKinds,
    });
    return computeKeys(exp)[exp.byId.get(id)!]!.key;
  };
  assert.equal(
    key("./paper.yaml", "score[method=rules,seed=3]"),
    key("./ablate-context.yaml", "score[variant=full,seed=3]"),
  );
  // and shaping.yaml's outcome rows train the paper's policies
  assert.equal(
    key("./paper.yaml", "last[method=plr,seed=3]"),
    key("./shaping.yaml", "last[reward=outcome,method=plr,seed=3]"),
  );
});
