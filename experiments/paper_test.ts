import assert from "node:assert/strict";
import { parse } from "yaml";
import { compileExperiment } from "@envsmith/engine/compile";
import { computeKeys } from "@envsmith/engine/cache";
import { canonicalJson } from "@envsmith/engine/hash";
import type { Json } from "@envsmith/engine";
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
  train: { envs: unknown; last_envs: unknown; sampler: SamplerParams | null };
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
    // tuned: the sampler's own parameters, never the levels' source
    assert.equal(r.train.last_envs, null, n);
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
  // 10 paired seeds (the file's description says why not 20)
  assert.deepEqual(
    doc.matrix.seed,
    Array.from({ length: 10 }, (_, i) => i + 1),
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
  // tuned in tuning.yaml; the staleness is the reference's
  assert.equal(s.options.replayProb, 0.58);
  assert.equal(s.options.staleness, 0.3);
  assert.equal(s.options.temperature, 0.35);
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
  assert.equal(s.options.edits, 4, "4 edits per child, tuned in tuning.yaml");
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

function compiled(file: string) {
  const path = new URL(file, import.meta.url).pathname;
  return compileExperiment(path, Deno.readTextFileSync(path), {
    kinds: allKinds,
  });
}

Deno.test("paper.yaml's rules-default row and ablate-context.yaml's full row are the same runs (same keys)", () => {
  const key = (file: string, id: string) => {
    const exp = compiled(file);
    return computeKeys(exp)[exp.byId.get(id)!]!.key;
  };
  assert.equal(
    key("./paper.yaml", "score[method=rules-default,seed=3]"),
    key("./ablate-context.yaml", "score[variant=full,seed=3]"),
  );
  assert.notEqual(
    key("./paper.yaml", "score[method=rules,seed=3]"),
    key("./ablate-context.yaml", "score[variant=full,seed=3]"),
    "the tuned rules row is its own run",
  );
  // and shaping.yaml's outcome rows train the paper's policies
  for (const m of ["rules", "plr", "accel-stage", "probe-base"]) {
    assert.equal(
      key("./paper.yaml", `last[method=${m},seed=3]`),
      key("./shaping.yaml", `last[reward=outcome,method=${m},seed=3]`),
      m,
    );
  }
});

/** What a row's first stage was tuned on: its engineer, or its sampler. */
function tunedChoice(n: { plain: string; literal: unknown }): string | null {
  const lit = n.literal as Record<string, unknown>;
  if (n.plain === "curriculum.0.config") {
    return canonicalJson(lit.engineer as Json);
  }
  if (n.plain === "curriculum.0.policy") {
    return canonicalJson(lit.sampler as Json);
  }
  return null;
}

Deno.test("paper.yaml runs every tuned engineer at tuning.yaml's defaults or at one of its 8 points", () => {
  // every engineer and sampler tuning.yaml tried, by row (defaults and -lhs)
  const tried = new Map<string, Set<string>>();
  for (const n of compiled("./tuning.yaml").nodes) {
    const method = n.variant.method?.replace(/-lhs$/, "");
    const c = tunedChoice(n);
    if (!method || c === null || n.variant.seed !== "1") continue;
    if (!tried.has(method)) tried.set(method, new Set());
    tried.get(method)!.add(`${n.plain} ${c}`);
  }
  assert.equal(tried.size, 9);
  for (const [m, points] of tried) {
    // 9 choices (defaults + 8) for each of engineer and sampler
    assert.ok(points.size >= 9 && points.size <= 18, `${m}: ${points.size}`);
  }
  let checked = 0;
  for (const n of compiled("./paper.yaml").nodes) {
    const m = n.variant.method;
    const c = tunedChoice(n);
    if (!m || c === null || n.variant.seed !== "1") continue;
    // probe-base takes probe's values; it differs only in the policy probed
    const asTuned = m === "probe-base"
      ? c.replace('"name":"probe-base"', '"name":"probe"')
        .replace('"policy":"$start"', '"policy":"$policy"')
      : c;
    const points = tried.get(m === "probe-base" ? "probe" : m);
    if (!points) continue;
    if (m === "rules-default") continue;
    assert.ok(points.has(`${n.plain} ${asTuned}`), `${m}: ${n.plain} ${c}`);
    checked++;
  }
  assert.equal(checked, 2 * 10, "10 tuned rows, engineer and sampler each");
});
