import assert from "node:assert/strict";
import * as v from "valibot";
import { memoryContext } from "./_memory_context.ts";
import { kind as generate } from "./maze_generate.ts";
import { kind as train } from "./maze_train.ts";
import { kind as evaluate } from "./maze_evaluate.ts";
import { mazeSuite } from "./maze_evaluate.ts";
import { MazesValueSchema, readMazes } from "./maze_io.ts";
import { initCheckpoint } from "../policy/checkpoint.ts";
import { writePolicy } from "./policy_io.ts";

// deno-lint-ignore no-explicit-any
const run = (k: any, p: unknown, ctx: ReturnType<typeof memoryContext>) =>
  k.run(v.parse(k.params, p), ctx);

Deno.test("maze.generate: seeded and streamed configs, the held-out suite, one line for a bad request", async () => {
  const ctx = memoryContext("/tmp");
  const a = await run(generate, {
    config: { preset: "easy" },
    count: 5,
    seed: 3,
  }, ctx);
  const b = await run(generate, {
    config: { preset: "easy" },
    count: 5,
    seed: 3,
  }, ctx);
  const c = await run(generate, {
    config: { preset: "easy" },
    count: 5,
    seed: 3,
    stream: 1,
  }, ctx);
  assert.deepEqual(a.value, b.value);
  assert.notDeepEqual(a.value.mazes.$blob, c.value.mazes.$blob);
  const held = await run(generate, { suite: "heldout" }, ctx);
  assert.equal(held.value.count, 38);
  const mazes = await readMazes(v.parse(MazesValueSchema, held.value), ctx);
  assert.equal(mazes[0]!.name, "SixteenRooms");
  await assert.rejects(
    () => run(generate, { count: 3 }, ctx),
    /give either config or suite/,
  );
  assert.ok(
    !v.safeParse(generate.params, {
      config: { size: 13, walls: { density: 2 } },
    }).success,
  );
});

Deno.test("maze.train -> maze.evaluate: a policy trained on a corridor solves it; per-maze suites; a MAPF policy is refused", async () => {
  const ctx = memoryContext("/tmp", { seed: 4 });
  const envs = await run(generate, {
    config: {
      size: 5,
      walls: { density: 0 },
      goal: { min_distance: 1, max_distance: 3 },
      max_steps: 40,
    },
    count: 32,
    seed: 1,
  }, ctx);
  const pol = await run(train, {
    envs: envs.value,
    samples: 30000,
    hidden: [32],
    lr: 0.003,
    seed: 2,
  }, ctx);
  assert.equal(pol.value.family, "maze");
  assert.ok(pol.value.samples >= 30000);
  const score = await run(evaluate, {
    policy: pol.value,
    envs: envs.value,
    episodes: 2,
    seed: 1,
  }, ctx);
  assert.ok(
    score.value.success_rate > 0.9,
    `success ${score.value.success_rate}`,
  );
  assert.equal(score.value.per_instance.length, 32);
  assert.equal(score.value.episodes, 64);
  const more = await run(train, {
    policy: pol.value,
    envs: envs.value,
    samples: 1000,
    seed: 2,
  }, ctx);
  assert.ok(more.value.samples >= pol.value.samples + 1000);
  const mapf = await writePolicy(initCheckpoint({ hidden: [8] }), ctx);
  await assert.rejects(
    () =>
      run(
        evaluate,
        { policy: { ...mapf, family: "maze" }, envs: envs.value },
        ctx,
      ),
    /not a maze policy/,
  );
  assert.equal(mazeSuite("LargeCorridor#3"), "LargeCorridor");
  assert.equal(mazeSuite("Labyrinth"), "Labyrinth");
});
