import assert from "node:assert/strict";
import type { BlobRef, NodeContext } from "@envsmith/engine/kind";
import { generate } from "../mapf/generator.ts";
import type { Level } from "../engineer/levels.ts";
import { PRESETS } from "../schemas/env_config.ts";
import { configOf, isLevelSet, LevelSetSchema } from "./level_set.ts";
import { drawLevels, readLevelSet, writeLevelSet } from "./level_set_io.ts";
import { kind as generateKind } from "./generate.ts";
import * as v from "valibot";
import { memoryContext } from "./_memory_context.ts";

/** Blobs in memory. */
const memBlobs = () => memoryContext("/tmp");

const instances = generate({ preset: "easy" }, { count: 5, seed: 9 }).instances;
const levels: Level[] = instances.map((instance, i) => ({
  id: instance.id,
  instance,
  score: 0.1 * i,
  seen: i,
  origin: i === 4 ? "edit" : "new",
  success: i === 0 ? null : 0.5,
  parent: i === 4 ? instances[0]!.id : null,
}));
const replay = [0.1, 0.2, 0.3, 0.15, 0.25];

Deno.test("level set: written, validated and read back with its instances in order", async () => {
  const mem = memBlobs();
  const value = await writeLevelSet(
    { levels, replay, source: PRESETS.medium },
    mem.writeBlob,
  );
  assert.ok(isLevelSet(value));
  v.parse(LevelSetSchema, value);
  assert.deepEqual(configOf(value), PRESETS.medium);
  const back = await readLevelSet(
    value as v.InferOutput<typeof LevelSetSchema>,
    mem.readBlob,
  );
  assert.deepEqual(back.levels.map((l) => l.instance), instances);
  assert.deepEqual(back.replay, replay);
  assert.equal(back.levels[4]!.parent, instances[0]!.id);
});

Deno.test("level set: a stage's draw takes only buffer levels, at the replay frequencies (chi-square, p = 0.001)", () => {
  const n = 20_000;
  const drawn = drawLevels(levels, replay, n, 17);
  const counts = new Map<string, number>();
  for (const d of drawn) counts.set(d.id, (counts.get(d.id) ?? 0) + 1);
  assert.deepEqual(
    [...counts.keys()].sort(),
    instances.map((i) => i.id).sort(),
  );
  let chi2 = 0;
  levels.forEach((l, i) => {
    const e = n * replay[i]!;
    chi2 += (counts.get(l.id)! - e) ** 2 / e;
  });
  assert.ok(chi2 < 18.467, `chi-square ${chi2.toFixed(2)} (4 df)`);
  assert.deepEqual(
    drawLevels(levels, replay, 50, 3),
    drawLevels(levels, replay, 50, 3),
  );
});

Deno.test("generate: a level set as config replays count instances from its buffer; its value names the source but claims no config", async () => {
  const mem = memBlobs();
  const value = await writeLevelSet(
    { levels, replay, source: PRESETS.easy },
    mem.writeBlob,
  );
  const ctx = {
    readBlob: mem.readBlob,
    writeBlob: mem.writeBlob,
    log() {},
    progress() {},
    signal: new AbortController().signal,
  } as unknown as NodeContext;
  const out = await generateKind.run(
    { config: value, count: 64, seed: 3, stream: 1 },
    ctx,
  );
  const val = out.value as unknown as {
    instances: BlobRef;
    count: number;
    config?: unknown;
    level_source: unknown;
    summary: { distinct: number; buffer: number };
  };
  assert.equal(val.count, 64);
  assert.equal(val.config, undefined);
  assert.deepEqual(val.level_source, PRESETS.easy);
  assert.equal(val.summary.buffer, 5);
  const lines = new TextDecoder().decode(await mem.readBlob(val.instances))
    .trim().split("\n").map((l) => JSON.parse(l).id as string);
  assert.equal(lines.length, 64);
  const ids = new Set(instances.map((i) => i.id));
  assert.ok(
    lines.every((id) => ids.has(id)),
    "only buffer levels are trained on",
  );
});
